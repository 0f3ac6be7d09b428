/* evidence_timeline.c - what `exactav report` draws: the checks and probes
 * observed since a time, in one read transaction (one snapshot). */
#include "evidence_internal.h"

#include <assert.h>
#include <stdio.h>

/* Only the columns a timeline shows, and the report's diff_images (the
 * pictures a MISMATCH named), never the whole report. */
#define TIMELINE_CHECKS                                                                             \
    "SELECT id, path_id, channel, rendition, program_version, verdict, reason, %s AS media_sequence," \
    " observed_at_ms, json_extract(report, '$.diff_images') AS diff_images FROM evidence"            \
    " WHERE observed_at_ms >= ?1 ORDER BY path_id, channel, rendition, program_version,"            \
    " observed_at_ms, id LIMIT ?2"
#define TIMELINE_PROBES                                                                             \
    "SELECT id, path_id, channel, rendition, object, status, reason, observed_at_ms, playlist_status," \
    " header_status, download_status, tcp_connect_ms, header_ttfb_ms, download_ms FROM probes"        \
    " WHERE observed_at_ms >= ?1 ORDER BY path_id, channel, rendition, observed_at_ms DESC, id LIMIT ?2"

static enum evidence_rc collect(struct evidence_db *db, const char *sql, int64_t since_ms, int64_t limit,
                                json_t **rows, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    sqlite3_bind_int64(st, 1, since_ms);
    sqlite3_bind_int64(st, 2, limit);
    enum evidence_rc rc = evidence_collect_rows(db->sql, st, rows, err, errlen);
    sqlite3_finalize(st);
    return rc;
}

static enum evidence_rc timeline_in_txn(struct evidence_db *db, int64_t since_ms, int64_t limit, json_t **checks,
                                        json_t **probes, char *err, size_t errlen)
{
    char sql[1024];
    /* a version-1 store has no media_sequence column and no probes table */
    snprintf(sql, sizeof sql, TIMELINE_CHECKS, db->schema_version >= 2 ? "media_sequence" : "NULL");
    enum evidence_rc rc = collect(db, sql, since_ms, limit, checks, err, errlen);
    if (rc == EVIDENCE_OK && db->schema_version >= 2)
        rc = collect(db, TIMELINE_PROBES, since_ms, limit, probes, err, errlen);
    else if (rc == EVIDENCE_OK)
        *probes = json_array();
    return rc;
}

enum evidence_rc evidence_timeline(struct evidence_db *db, int64_t since_ms, int64_t limit, json_t **checks,
                                   json_t **probes, char *err, size_t errlen)
{
    assert(db && checks && probes && limit > 0);
    *checks = *probes = NULL;
    if (sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "BEGIN: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    enum evidence_rc rc = timeline_in_txn(db, since_ms, limit, checks, probes, err, errlen);
    evidence_rollback(db->sql); /* read-only transaction: nothing to commit */
    if (rc == EVIDENCE_OK)
        rc = evidence_read_done(db, err, errlen);
    if (rc != EVIDENCE_OK) {
        json_decref(*checks);
        json_decref(*probes);
        *checks = *probes = NULL;
    }
    return rc;
}
