/* step_evidence.h - the content evidence of one granted step.
 *
 * `stepctl next` counts only Exact-AV v1 checks of the granted path, the
 * cohort's channel and rendition, the program version and the policy's
 * DecodeProfile whose observation time is AFTER the grant's first
 * allocation: a pre-flight report, however recent, or an old report
 * imported again (it keeps its observation time) is never step feedback.
 * The query and the rules of a valid row are evidence/'s
 * (evidence_observed_after): evidence.db is opened read-only, every row is
 * checked, and a row that breaks a rule comes back malformed (never
 * applicable).  Newest first, at most STEV_MAX_ROWS.
 */
#ifndef STEP_EVIDENCE_H
#define STEP_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "evidence.h"

#define STEV_MAX_ROWS 256

struct stev_scope {
    const char *path_id, *channel, *rendition, *program_version, *profile_id;
    int64_t after_ms; /* observed_at_ms must be greater */
    const char *allocation_ids; /* JSON array: only rows of these allocations; NULL: any */
};

/* EVIDENCE_OK with *out filled (evidence_rows_free); otherwise err says
 * why: EVIDENCE_E_OPEN / EVIDENCE_E_VERSION for a store that is missing,
 * not an evidence store or of another version, anything else for a failed
 * read. */
enum evidence_rc stev_read(const char *db_path, const struct stev_scope *sc,
                           struct evidence_rows *out, char *err, size_t errlen);

/* The ids of the grant's verification allocations (issue 17, schema 8:
 * allocations.verification = 1), oldest first, as a JSON array text in
 * *ids (free()) and their count in *n.  A control.db before schema 8 has
 * none ("[]").  0, or -1 on a failed read. */
int stev_verification_ids(sqlite3 *db, const char *grant_id, char **ids, size_t *n);

/* The rows as read, with their track verdicts (a JSON array). */
json_t *stev_rows_json(const struct evidence_rows *rows);

#endif
