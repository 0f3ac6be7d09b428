/* Availability probes (schema v2, table `probes`): validate and insert one
 * row, and the newest probe of a scope.  The store decides nothing about a
 * probe: its status is the writer's (docs/canary.md), kept as given. */
#include "evidence_internal.h"

#include <assert.h>
#include <string.h>

const char *evidence_probe_status_name(enum evidence_probe_status s)
{
    switch (s) {
    case EVIDENCE_PROBE_PASS: return "PASS";
    case EVIDENCE_PROBE_VIOLATION: return "VIOLATION";
    case EVIDENCE_PROBE_UNKNOWN: break;
    }
    return "UNKNOWN";
}

bool evidence_probe_status_parse(const char *s, enum evidence_probe_status *out)
{
    static const enum evidence_probe_status all[] = {EVIDENCE_PROBE_UNKNOWN, EVIDENCE_PROBE_PASS,
                                                      EVIDENCE_PROBE_VIOLATION};
    for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, evidence_probe_status_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    return false;
}

static enum evidence_rc invalid(char *err, size_t errlen, const char *field, const char *why)
{
    evidence_seterr(err, errlen, "probe %s: %s", field, why);
    return EVIDENCE_E_INVALID;
}

static enum evidence_rc validate(const struct evidence_probe *p, int64_t now_ms, char *err,
                                 size_t errlen)
{
    if (!evidence_id_valid(p->id))
        return invalid(err, errlen, "id", "required, 1-128 chars of [A-Za-z0-9._:-]");
    if (!p->path_id || !*p->path_id)
        return invalid(err, errlen, "path_id", "required");
    if (!p->object || !*p->object)
        return invalid(err, errlen, "object", "required");
    if (!p->reason || !*p->reason)
        return invalid(err, errlen, "reason", "required");
    if (p->status != EVIDENCE_PROBE_UNKNOWN && p->status != EVIDENCE_PROBE_PASS &&
        p->status != EVIDENCE_PROBE_VIOLATION)
        return invalid(err, errlen, "status", "must be PASS, VIOLATION or UNKNOWN");
    /* the same time rules as evidence rows: freshness counts from observed_at_ms */
    if (p->observed_at_ms <= 0)
        return invalid(err, errlen, "observed_at_ms", "required (UTC ms > 0)");
    if (p->observed_end_ms < p->observed_at_ms)
        return invalid(err, errlen, "observed_end_ms", "earlier than observed_at_ms");
    if (p->observed_at_ms > now_ms + EVIDENCE_MAX_CLOCK_SKEW_MS)
        return invalid(err, errlen, "observed_at_ms", "lies in the future");
    return EVIDENCE_OK;
}

static const char INSERT_PROBE[] =
    "INSERT INTO probes (id, path_id, channel, rendition, object, status, reason,"
    " observed_at_ms, observed_end_ms, recorded_at_ms, playlist_status, playlist_error,"
    " media_sequence, segment, tcp_connect_ms, tcp_error, header_status, header_ttfb_ms,"
    " header_error, download_status, download_bytes, download_ms, download_error)"
    " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)";

static void bind_probe(sqlite3_stmt *st, const struct evidence_probe *p, int64_t recorded_at_ms)
{
    const char *head[] = {p->id, p->path_id, p->channel, p->rendition, p->object,
                          evidence_probe_status_name(p->status), p->reason};
    for (int i = 0; i < 7; i++)
        evidence_bind_text(st, i + 1, head[i]);
    sqlite3_bind_int64(st, 8, p->observed_at_ms);
    sqlite3_bind_int64(st, 9, p->observed_end_ms);
    sqlite3_bind_int64(st, 10, recorded_at_ms);
    evidence_bind_int(st, 11, p->playlist_status);
    evidence_bind_text(st, 12, p->playlist_error);
    evidence_bind_int(st, 13, p->media_sequence);
    evidence_bind_text(st, 14, p->segment);
    evidence_bind_int(st, 15, p->tcp_connect_ms);
    evidence_bind_text(st, 16, p->tcp_error);
    evidence_bind_int(st, 17, p->header_status);
    evidence_bind_int(st, 18, p->header_ttfb_ms);
    evidence_bind_text(st, 19, p->header_error);
    evidence_bind_int(st, 20, p->download_status);
    evidence_bind_int(st, 21, p->download_bytes);
    evidence_bind_int(st, 22, p->download_ms);
    evidence_bind_text(st, 23, p->download_error);
}

enum evidence_rc evidence_probe_insert(struct evidence_db *db, const struct evidence_probe *p,
                                       char *err, size_t errlen)
{
    assert(db && p);
    int64_t now = evidence_now_ms();
    enum evidence_rc rc = validate(p, now, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    if (db->schema_version < 2) {
        evidence_seterr(err, errlen, "this store (schema version %d) has no probes table", db->schema_version);
        return EVIDENCE_E_VERSION;
    }
    if ((rc = evidence_begin_immediate(db->sql, err, errlen)) != EVIDENCE_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db->sql, INSERT_PROBE, -1, &st, NULL);
    if (src == SQLITE_OK) {
        bind_probe(st, p, p->recorded_at_ms ? p->recorded_at_ms : now);
        src = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) {
        evidence_seterr(err, errlen, "probes: %s", sqlite3_errmsg(db->sql));
        evidence_rollback(db->sql);
        return (src & 0xff) == SQLITE_CONSTRAINT ? EVIDENCE_E_CONFLICT : EVIDENCE_E_INTERNAL;
    }
    return evidence_commit(db->sql, err, errlen);
}

/* NULL scope strings match NULL columns ("IS", not "="). */
static const char NEWEST_PROBE[] =
    "SELECT * FROM probes WHERE path_id = ?1 AND channel IS ?2 AND rendition IS ?3"
    " AND observed_at_ms <= ?4"
    " ORDER BY observed_at_ms DESC, status = 'PASS' ASC, recorded_at_ms DESC, id DESC LIMIT 1";

enum evidence_rc evidence_probe_newest(struct evidence_db *db, const char *path_id,
                                       const char *channel, const char *rendition, int64_t at_ms,
                                       json_t **row, char *err, size_t errlen)
{
    assert(db && row);
    *row = NULL;
    if (!path_id) {
        evidence_seterr(err, errlen, "no path id");
        return EVIDENCE_E_INVALID;
    }
    if (db->schema_version < 2)
        return EVIDENCE_OK; /* a version-1 store has no probes */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, NEWEST_PROBE, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    evidence_bind_text(st, 1, path_id);
    evidence_bind_text(st, 2, channel);
    evidence_bind_text(st, 3, rendition);
    sqlite3_bind_int64(st, 4, at_ms);
    json_t *rows = NULL;
    enum evidence_rc rc = evidence_collect_rows(db->sql, st, &rows, err, errlen);
    sqlite3_finalize(st);
    if (rc == EVIDENCE_OK)
        rc = evidence_read_done(db, err, errlen); /* an immutable read is still valid */
    if (rc == EVIDENCE_OK && json_array_size(rows) == 1)
        *row = json_incref(json_array_get(rows, 0));
    json_decref(rows);
    return rc;
}
