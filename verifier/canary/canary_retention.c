/* canary_retention.c - see canary_retention.h. */
#include "canary_retention.h"

#include <stdlib.h>

#include "evidence.h"

int canary_retention_run(const char *evidence_path, const struct canary_retention *r, int64_t now_ms,
                         const struct canary_log *log)
{
    struct evidence_db *db = NULL;
    char err[512] = "";
    struct evidence_prune_opts o = {now_ms, r->keep_ms, r->keep_mismatch_ms, 0};
    struct evidence_prune_result res;
    enum evidence_rc rc = evidence_open(evidence_path, EVIDENCE_OPEN_RW, &db, err, sizeof err);
    if (rc == EVIDENCE_OK)
        rc = evidence_prune(db, &o, &res, err, sizeof err);
    evidence_close(db);
    if (rc != EVIDENCE_OK) {
        canary_log_event(log, "prune_failed", "%s", err);
        return -1;
    }
    json_t *j = evidence_prune_json(&res);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    canary_log_event(log, "prune", "%s", text ? text : "done");
    free(text);
    json_decref(j);
    return 0;
}
