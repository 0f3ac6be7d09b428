/* step_evidence.c - evidence observed during a step (see step_evidence.h). */
#include "step_evidence.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum evidence_rc stev_read(const char *db_path, const struct stev_scope *sc,
                           struct evidence_rows *out, char *err, size_t errlen)
{
    assert(db_path && sc && out);
    memset(out, 0, sizeof *out);
    struct evidence_since q = {{sc->path_id, sc->channel, sc->rendition, sc->program_version},
                               sc->profile_id, sc->after_ms, STEV_MAX_ROWS - 1,
                               sc->allocation_ids};
    struct evidence_db *db = NULL;
    enum evidence_rc rc = evidence_open(db_path, EVIDENCE_OPEN_RO, &db, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = evidence_observed_after(db, &q, out, err, errlen);
    evidence_close(db);
    return rc;
}

int stev_verification_ids(sqlite3 *db, const char *grant_id, char **ids, size_t *n)
{
    static const char sql[] = "SELECT json_group_array(id), count(*) FROM (SELECT id FROM "
                              "allocations WHERE grant_id = ?1 AND verification = 1 ORDER BY seq)";
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        /* before schema 8 (a read-only dry run of an old file): none */
        *ids = strdup("[]");
        return *ids ? 0 : -1;
    }
    sqlite3_bind_text(st, 1, grant_id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        *ids = strdup((const char *)sqlite3_column_text(st, 0));
        *n = (size_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return *ids ? 0 : -1;
}

json_t *stev_rows_json(const struct evidence_rows *rows)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rows->n; i++) {
        const struct evidence_row *e = &rows->rows[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b}", "id", e->id, "verdict",
                              evidence_verdict_name(e->verdict), "video",
                              evidence_verdict_name(e->video), "audio",
                              evidence_verdict_name(e->audio), "reason", e->reason,
                              "reference_version", e->reference_version, "observed_at_ms",
                              (json_int_t)e->observed_at_ms, "recorded_at_ms",
                              (json_int_t)e->recorded_at_ms, "malformed", e->malformed);
        if (o && e->allocation_id[0]) /* issue 17: only where an allocation was followed */
            json_object_set_new(o, "allocation_id", json_string(e->allocation_id));
        if (o && e->pathway[0])
            json_object_set_new(o, "pathway", json_string(e->pathway));
        if (o && e->malformed)
            json_object_set_new(o, "why", json_string(e->why));
        json_array_append_new(a, o);
    }
    return a;
}
