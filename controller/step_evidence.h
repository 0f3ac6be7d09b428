/* step_evidence.h - the content evidence of one granted step.
 *
 * `stepctl next` counts only Exact-AV v1 checks of the granted path, the
 * cohort's channel and rendition, the program version and the policy's
 * DecodeProfile whose observation time is AFTER the grant's first
 * allocation: a pre-flight report, however recent, or an old report
 * imported again (it keeps its observation time) is never step feedback.
 * evidence.db is opened read-only.  Newest first (the tie rule of
 * `exactav evidence latest`), at most STEV_MAX_ROWS.
 */
#ifndef STEP_EVIDENCE_H
#define STEP_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "evidence_read.h"

#define STEV_MAX_ROWS 256

struct stev_scope {
    const char *path_id, *channel, *rendition, *program_version, *profile_id;
    int64_t after_ms; /* observed_at_ms must be greater */
};

/* Track verdicts of each row, parallel to the rows (UNKNOWN when the report
 * does not say: such a row never proves MATCH on both tracks). */
struct stev_tracks {
    enum evr_verdict video, audio;
};

struct stev_set {
    struct evr_set rows;
    struct stev_tracks tracks[STEV_MAX_ROWS];
};

/* 0, or the evr_status of the failure with err saying why. */
enum evr_status stev_read(const char *db_path, const struct stev_scope *sc, struct stev_set *out,
                          char *err, size_t errlen);

/* The rows as read, with their track verdicts (a JSON array). */
json_t *stev_rows_json(const struct stev_set *set);

#endif
