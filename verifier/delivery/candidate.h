/* candidate.h - where the candidate's bytes come from, and what was observed.
 *
 * A candidate is a local MPEG-TS file, an http(s) URL of an MPEG-TS segment,
 * or an http(s) URL of an HLS media playlist (recognised by content,
 * #EXTM3U, never by name).  For a playlist, the declared media sequence
 * numbers pick the segments (all of them when none is declared); their URIs
 * are resolved against the playlist's effective URL (RFC 3986 5.2: a
 * relative URI does not inherit the playlist's query) and fetched in order,
 * to be decoded as one continuous stream; an fMP4 segment's init segment
 * (EXT-X-MAP) is fetched the same way before the first segment that needs
 * it, and again only where the MAP changes (issue 20).  Every request is recorded
 * (redacted); any failed delivery is kept as the reason the observation is
 * incomplete, so the check can only end UNKNOWN, never MISMATCH.
 */
#ifndef CANDIDATE_H
#define CANDIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "bsrc.h"
#include "fetch.h"

enum candidate_status {
    CANDIDATE_FAILED = 0,        /* internal error */
    CANDIDATE_OK,                /* segments ready (possibly with a delivery failure) */
    CANDIDATE_USAGE,             /* a master playlist (err lists the variants, redacted),
                                  * an unsupported scheme, a URL that does not parse */
    CANDIDATE_NOINPUT,           /* a local path that is not a readable regular file */
};

struct candidate_options {
    const char *location;        /* file path or http(s) URL */
    bool have_sequence;
    uint64_t seq_first, seq_last;
    struct fetch_options fetch;
    int64_t deadline_ms;         /* wall clock UTC ms the whole check must end by; 0: none */
    uint64_t max_total_bytes;    /* all segments together; 0 (and above it): CANDIDATE_MAX_TOTAL_BYTES */
};

#define CANDIDATE_MAX_SEGMENTS 1024
/* All selected segments are held in memory until decoded: their sum is
 * bounded as well as each object (fetch_options.max_bytes), both while the
 * bytes arrive.  One object can therefore never exceed it either. */
#define CANDIDATE_MAX_TOTAL_BYTES ((uint64_t)1 << 30)
#define CANDIDATE_MAX_REDIRECT_HOSTS 16

struct candidate {
    struct bsrc_segment segs[CANDIDATE_MAX_SEGMENTS];
    size_t nsegs;
    struct fetch_result *bodies; /* owned fetch results that hold segment bytes */
    size_t nbodies;
    json_t *fetches;             /* records, NULL for a local file */
    int64_t observed_at_ms, observed_end_ms;   /* 0 for a local file */
    const char *failure;         /* stable reason code of a failed delivery, or NULL */
    char failure_detail[320];
    char *object;                /* what was checked, redacted (owned) */
    bool is_playlist;
    uint64_t total_bytes;
    bool length_unproven;        /* a body of the stream had no declared end (fetch.h) */
    json_t *redirect_hosts;      /* hosts that redirects led to, other than the requested ones */
    bool encrypted;              /* AES-128 segments were decrypted (hlskey.h) */
};

/* True when location has the form of a URL ("scheme://..."), whatever the
 * scheme: such a location is never taken for a local file. */
bool candidate_location_is_url(const char *location);

enum candidate_status candidate_open(const struct candidate_options *opt, struct candidate *c,
                                     char *err, size_t errlen);
void candidate_free(struct candidate *c);

/* What the delivery adds to a check's report (its "candidate" object): the
 * failed delivery {reason, detail} when there was one, redirect_hosts and
 * length_proven.  Shared by `exactav verify` and `exactav canary`, so both
 * write the same report. */
void candidate_annotate_report(json_t *report, const struct candidate *c);

#endif
