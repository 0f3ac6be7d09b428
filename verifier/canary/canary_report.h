/* canary_report.h - what the canary adds to a check's report, and the
 * report of a check that could not run.
 *
 * A check that ran is `exactav verify`'s report (verify.h) plus:
 *   media_sequence          the media sequence number checked (column media_sequence)
 *   context.reference_version  the digest `exactav bind --media-sequence N:N` gives
 *                           the reference segment (docs/canary.md)
 *   canary {target, decoded, reference_segment}
 * A check that could not run (a playlist that cannot be read, a reference
 * lacking the segment, a stall, an interruption...) is recorded UNKNOWN in
 * the same shape: the same top-level fields (profile with its document and
 * runtime, so that it passes the store's rules of a valid report like
 * verify's), video UNKNOWN with the reason and zero counts, audio null,
 * interval without start and end (nothing was scanned: only time_offset),
 * canary.decoded false.
 */
#ifndef CANARY_REPORT_H
#define CANARY_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "canary_config.h"
#include "canary_fetch.h"
#include "profile.h"

/* What every report of a run carries. */
struct canary_run_info {
    const struct profile *profile;
    json_t *runtime;             /* profile_runtime_description() */
    char fingerprint[65];
    enum verify_compare compare; /* of every check (verify.h) */
    const char *diff_dir;        /* --diff-dir: pictures of a MISMATCH, one folder per target; or NULL */
};

struct canary_unknown {
    const char *evidence_id;
    const struct canary_target *target;
    const char *reason;          /* stable code */
    const char *detail;          /* one line, secret-free */
    bool have_seq;
    uint64_t seq;
    int64_t observed_at_ms, observed_end_ms;
    const char *candidate_object;   /* redacted, or NULL */
    const char *reference_object;   /* redacted, or NULL */
    json_t *fetches;             /* borrowed array of fetch records, or NULL */
};

/* A report's context: path_id, channel, rendition, program_version, and
 * for a check that followed an allocation (issue 17) allocation_id and
 * pathway.  NULL on out of memory. */
json_t *canary_report_context(const struct canary_target *t);

/* The UNKNOWN report of a check that could not run.  NULL on out of memory. */
json_t *canary_report_unknown(const struct canary_run_info *run, const struct canary_unknown *u);

/* Adds media_sequence, canary{...} and context.reference_version (derived
 * from the report's interval and the reference segment) to the report of a
 * check that ran.  0, or -1 on out of memory. */
int canary_report_annotate(json_t *report, const struct canary_run_info *run, const struct canary_target *t,
                           const struct canary_segment *ref);

/* The reference_version of one reference segment: binding_document() of
 * {channel, program_version, rendition, profile, the report's interval and
 * decode boundaries, media_sequence seq:seq, files [{name, sha256, bytes}]}.
 * -1 when the report lacks the interval. */
int canary_reference_version(const json_t *report, const struct canary_target *t, const char *profile_id,
                             const struct canary_segment *ref, char out[65]);

#endif
