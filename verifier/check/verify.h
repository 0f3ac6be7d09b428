/* verify.h - one Exact-AV v1 check, from bytes to a report.
 *
 * The pipeline: runtime check -> reference scan -> two decoding sides in
 * their own threads -> the comparer on this thread -> verdict -> report
 * (a jansson object; writers in report.h format it).
 */
#ifndef VERIFY_H
#define VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "bsrc.h"
#include "profile.h"

struct verify_request {
    const struct profile *profile;
    struct bsrc_segment *ref_segs;
    size_t n_ref;
    struct bsrc_segment *cand_segs;
    size_t n_cand;
    bool have_interval;
    int64_t start, end;
    int64_t offset;              /* --time-offset */
    int program;                 /* --program: the candidate's program_number, 0: by track set */
    const char *reference_object;   /* what the reference is (binding or file) */
    const char *candidate_object;   /* redacted */
    const char *reference_version;  /* binding digest, or NULL */
    json_t *context;             /* {path_id, channel, rendition, program_version} or NULL */
    json_t *fetches;             /* HTTP fetch records, or NULL for local files */
    int64_t observed_at_ms;      /* when the candidate bytes were fetched; 0: now */
    int64_t observed_end_ms;
    const char *candidate_failure;  /* delivery already known broken (stable code) */
    const char *evidence_id;     /* this check's id (evidence_new_id), or NULL */
    int64_t deadline_ms;         /* wall clock UTC ms the check must end by (deadline_exceeded); 0: none */
    bool candidate_length_unproven;  /* a candidate body had no declared end: missing frames or
                                      * samples are UNKNOWN length_unproven, never MISMATCH */
    bool progress;               /* progress on stderr */
};

/* Runs the check.  Returns the exit code (0/1/2 with *report set, or 65,
 * 66, 70 with a message in err and possibly no report). */
int verify_run(const struct verify_request *rq, json_t **report, char *err, size_t errlen);

#endif
