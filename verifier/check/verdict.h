/* verdict.h - the Exact-AV v1 verdict lattice.
 *
 * UNKNOWN is the zero value on purpose: a verdict nobody computed is never
 * MATCH.  Per track: a confirmed difference gives MISMATCH; otherwise any
 * incomplete observation or invalid decode gives UNKNOWN; otherwise MATCH.
 * Across tracks: any MISMATCH wins; otherwise any UNKNOWN; otherwise MATCH.
 */
#ifndef VERDICT_H
#define VERDICT_H

#include <stddef.h>

enum verdict {
    VERDICT_UNKNOWN = 0,
    VERDICT_MATCH,
    VERDICT_MISMATCH,
};

struct track_verdict {
    enum verdict verdict;
    const char *reason;          /* stable code; NULL when not decided */
};

/* Combines the tracks that exist (n >= 1).  The reason is the one of the
 * first track (in the given order) that carries the combined verdict. */
struct track_verdict verdict_combine(const struct track_verdict *tracks, size_t n);

const char *verdict_name(enum verdict v);

/* Process exit code of a verdict: 0 MATCH, 1 MISMATCH, 2 UNKNOWN. */
int verdict_exit_code(enum verdict v);

#endif
