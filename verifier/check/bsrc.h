/* bsrc.h - the bytes one decoding side reads, and what was observed of them.
 *
 * A source is an ordered list of segments (local files, or bodies already
 * fetched over HTTP held in memory) read as one continuous stream.  Every
 * byte passes through the TS integrity scanner and a SHA-256 per segment
 * before the demuxer sees it.  A join between two segments is invisible
 * above this layer: it only tells the scanner that continuity counters may
 * restart there (separately muxed segments restart them), and a byte range
 * that directly continues the previous one of the same resource is no join
 * at all.  A segment that could not be read completely (I/O error, short
 * transfer) makes the observation incomplete, never silently shorter.
 */
#ifndef BSRC_H
#define BSRC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/evp.h>

#include "tscheck.h"

struct bsrc_segment {
    const char *path;            /* local file, or NULL for memory */
    const uint8_t *data;         /* memory body (not owned) */
    size_t len;
    bool joins_previous;         /* continues the previous segment's bytes (a
                                  * byte range right after it in the same
                                  * resource): no segment boundary */
    const char *error;           /* non-NULL: this segment's delivery failed
                                  * after its bytes (stable code, e.g. "http_error") */
    const char *expect_sha256;   /* reference binding: the digest it must have */
    bool want_sha256;            /* fill sha256 (`exactav bind`) */
    char sha256[65];             /* when expect_sha256 or want_sha256 is set and the
                                  * source does not skip digests (skip_sha256): filled
                                  * when the segment was read to its end */
    uint64_t bytes_read;
};

struct bsrc {
    struct bsrc_segment *segs;   /* not owned */
    size_t nsegs;
    EVP_MD_CTX *sha;
    bool skip_sha256;            /* no segment digest at all: the decoding sides,
                                  * after the reference scan checked the reference */
    struct tscheck *ts;
    bool stop;                   /* set by the consumer: read nothing more */
    bool io_error;               /* observation incomplete: could not read */
    char io_reason[64];          /* stable code */
    char io_detail[256];
};

int bsrc_init(struct bsrc *b, struct bsrc_segment *segs, size_t nsegs);
void bsrc_close(struct bsrc *b);

/* Reads every segment in order, handing each packet to fn (NULL: none)
 * through the scanner, then finishes the scan.  Stops early when the
 * consumer sets b->stop.  0, or -1 when a segment could not be read. */
int bsrc_run(struct bsrc *b, tscheck_packet_fn fn, void *opaque);

/* An observation failure found above this layer (e.g. the demuxer's); the
 * first one wins. */
void bsrc_fail(struct bsrc *b, const char *reason, const char *detail);

#endif
