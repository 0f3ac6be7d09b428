/* canary_parts.h - the Low-Latency HLS parts of one candidate segment
 * (issue 20, stage 3): fetching them, placing a time in one of them, and
 * folding the checks of the parts into the segment's one evidence row.
 *
 * When the candidate's media playlist lists parts (EXT-X-PART) for a
 * complete segment, the canary checks that segment three ways (docs/canary.md,
 * "LL-HLS parts"): the segment as today, the parts (concatenated: TS bytes
 * end to end; fMP4: the init segment, then the parts' fragments) against
 * the reference, and the parts against the parent segment as delivered
 * (RFC 8216bis: "a parent segment and all its parts MUST contain the same
 * set of media samples").  This file knows nothing of decoding: the checks
 * are verify_run's, called by canary_check.c; here the parts are fetched
 * through the same fetch path (same bounds, same redaction, every request
 * recorded) into a struct candidate, so that verify_run and
 * candidate_annotate_report read them like any candidate.
 */
#ifndef CANARY_PARTS_H
#define CANARY_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "candidate.h"
#include "canary_fetch.h"
#include "fetch.h"

struct canary_parts {
    struct candidate c;          /* the parts as one candidate: segs[], fetches (the cycle's
                                  * playlist request first), failure, object (the first part) */
    size_t count;                /* parts of the segment */
    uint64_t *end_ticks;         /* end of part j, 90 kHz ticks from the segment's start: the
                                  * exact sum of the EXT-X-PART DURATIONs 0..j */
    json_t *durations;           /* the DURATIONs as written */
    long failed_index;           /* the first part that could not be had (GAP, fetch), or -1 */
    json_t *delivery;            /* delivery facts, never content verdicts: [{fact "part_late",
                                  * part_index, waited_ms, part_target_ms}] */
    int64_t part_target_ms;      /* EXT-X-PART-INF:PART-TARGET */
    int64_t wait_bound_ms;       /* how long a listed part that answers 404/410 is waited for */
    bool fmp4;                   /* the segment has an init segment (EXT-X-MAP) */
};

/* The segment seq of an ok candidate playlist has parts the canary checks:
 * listed, and its segment not AES-128 (its parts' encryption is not read). */
bool canary_parts_listed(const struct canary_playlist *pl, uint64_t seq);

/* Fetches every part of segment seq (after its init segment for fMP4) with
 * fo, each request limited to what is left until deadline_ms.  A GAP part
 * is not requested: the delivery fails with "part_gap".  A listed part
 * that answers 404 or 410 is asked again (every quarter part target) for
 * up to one target duration from its first answer (its lifetime as the
 * canary counts it), within the deadline: arriving more than one part
 * target after that first answer, it is a delivery fact ("part_late",
 * in ->delivery); never arriving, the delivery fails with "part_missing".
 * Another failure keeps its fetch code (all UNKNOWN, never MISMATCH).
 * Only the last request for a part is in ->c.fetches (a MATCH holds no
 * failed request); the fact counts the others.  0, or -1 out of memory
 * (free it anyway). */
int canary_parts_fetch(const struct canary_playlist *pl, uint64_t seq, const struct fetch_options *fo,
                       int64_t deadline_ms, struct canary_parts *out);
void canary_parts_free(struct canary_parts *p);

/* Sets p->count, end_ticks and durations from segment s of pl (what
 * canary_parts_fetch does first; for the tests).  0, or -1 out of memory. */
int canary_parts_place(struct canary_parts *p, const struct hls_playlist *pl, const struct hls_segment *s);

/* The part whose time span [end(j-1), end(j)) holds ticks (from the
 * segment's start); before the first, the first; after the last, the last. */
size_t canary_parts_index_at(const struct canary_parts *p, int64_t ticks);

/* True when the parts' bytes end to end are the parent's (parent: the
 * whole-segment candidate). */
bool canary_parts_same_bytes(const struct canary_parts *p, const struct candidate *parent);

/* The three checks of one segment, as their reports (NULL: not run).
 * against_segment_by: "decode" (R2 ran), "bytes" (the parts are the
 * parent's bytes), "transitivity" (segment and parts both MATCH the
 * reference), or NULL (not run). */
struct canary_parts_checks {
    json_t *segment;             /* the whole-segment check, annotated (required) */
    json_t *against_reference;
    json_t *against_segment;
    const char *against_segment_by;
};

/* The report of the segment's one evidence row: the worst of the three
 * (MISMATCH, then UNKNOWN, then MATCH; among equals the segment's, then the
 * parts against the segment, then against the reference), with a member
 * "parts" describing them all and part_index placed (docs/canary.md).  A
 * MISMATCH of the parts against the segment gets the reason
 * parts_differ_from_segment.  Returns a new reference to the chosen one
 * (the caller still owns the three); NULL out of memory. */
json_t *canary_parts_combine(const struct canary_parts_checks *k, const struct canary_parts *p);

#endif
