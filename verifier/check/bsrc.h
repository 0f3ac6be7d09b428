/* bsrc.h - the bytes one decoding side reads, and what was observed of them.
 *
 * A source is an ordered list of segments (local files, or bodies already
 * fetched over HTTP held in memory) read as one continuous stream.  Every
 * byte passes through the TS integrity scanner and a SHA-256 per segment
 * before libavformat sees it; segment boundaries reset continuity counting.
 * A segment that could not be read completely (I/O error, short transfer)
 * makes the observation incomplete, never silently shorter.
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
    const char *error;           /* non-NULL: this segment's delivery failed
                                  * after its bytes (stable code, e.g. "http_error") */
    const char *expect_sha256;   /* reference binding: the digest it must have */
    char sha256[65];             /* filled when the segment was read to its end */
    uint64_t bytes_read;
};

struct bsrc {
    struct bsrc_segment *segs;   /* not owned */
    size_t nsegs;
    size_t cur;
    FILE *fp;
    size_t mem_pos;
    EVP_MD_CTX *sha;
    struct tscheck *ts;
    bool eof;
    bool io_error;               /* observation incomplete: could not read */
    char io_reason[64];          /* stable code */
    char io_detail[256];
    uint64_t pos;                /* bytes handed to libavformat */
};

int bsrc_init(struct bsrc *b, struct bsrc_segment *segs, size_t nsegs);
void bsrc_close(struct bsrc *b);

/* libavformat read callback (opaque = struct bsrc *). */
int bsrc_read(void *opaque, uint8_t *buf, int size);

/* Reads the whole source without decoding (digests, integrity only). */
int bsrc_drain(struct bsrc *b);

#endif
