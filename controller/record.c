/* record.c - control.db (see record.h). */
#include "record.h"
#include "migrate_v2.h"
#include "sqlutil.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#define REC_BUSY_MS 5000

static const char rec_schema_v1[] =
    "CREATE TABLE decisions ("
    " id TEXT PRIMARY KEY,"
    " recorded_at_ms INTEGER NOT NULL,"
    " decision_time_ms INTEGER NOT NULL,"
    " tool_version TEXT NOT NULL,"
    " policy_id TEXT NOT NULL, policy_version TEXT NOT NULL, intent_version TEXT NOT NULL,"
    " channel TEXT NOT NULL, rendition TEXT NOT NULL, program_version TEXT NOT NULL,"
    " outcome TEXT NOT NULL CHECK (outcome IN ('step_proposed','no_eligible_path')),"
    " chosen TEXT,"
    " chosen_by TEXT CHECK (chosen_by IS NULL OR chosen_by IN ('cost','qoe','order')),"
    " refusal_id TEXT,"
    " situation TEXT NOT NULL,"
    " result TEXT NOT NULL);"
    "CREATE TABLE decision_evidence ("
    " decision_id TEXT NOT NULL REFERENCES decisions(id),"
    " seq INTEGER NOT NULL,"
    " evidence_id TEXT NOT NULL, check_kind TEXT NOT NULL, verdict TEXT NOT NULL,"
    " reason TEXT NOT NULL, profile_id TEXT NOT NULL, path_id TEXT NOT NULL,"
    " channel TEXT NOT NULL, rendition TEXT NOT NULL, program_version TEXT NOT NULL,"
    " reference_version TEXT NOT NULL, observed_at_ms INTEGER NOT NULL,"
    " recorded_at_ms INTEGER NOT NULL, malformed INTEGER NOT NULL,"
    " PRIMARY KEY (decision_id, seq));"
    "CREATE TABLE decision_conditions ("
    " decision_id TEXT NOT NULL REFERENCES decisions(id),"
    " path_id TEXT NOT NULL, condition TEXT NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN ('PASS','VIOLATION','UNKNOWN')),"
    " reason TEXT NOT NULL, detail TEXT NOT NULL, eligible INTEGER NOT NULL,"
    " data TEXT NOT NULL,"
    " PRIMARY KEY (decision_id, path_id, condition));"
    "CREATE INDEX decisions_time ON decisions (recorded_at_ms DESC);"
    "PRAGMA user_version = 1;";

static enum rec_status failed(sqlite3 *db, enum rec_status st, char *err, size_t len,
                              const char *what)
{
    snprintf(err, len, "control.db: %s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
    return st;
}

/* Creates schema v1 in an empty database and migrates v1 to v2, under an
 * exclusive lock so two first runs cannot both do it; one transaction, so a
 * file is never left between versions. */
static enum rec_status migrate(sqlite3 *db, char *err, size_t len)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, len, "begin");
    int v = sqlutil_user_version(db);
    if ((v == 0 && sqlite3_exec(db, rec_schema_v1, NULL, NULL, NULL) != SQLITE_OK) ||
        ((v == 0 || v == 1) && migrate_v2(db) != SQLITE_OK)) {
        failed(db, REC_FAILED, err, len, "create or migrate schema");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return REC_FAILED;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, len, "commit schema");
    return REC_OK;
}

enum rec_status rec_open(const char *path, bool create, sqlite3 **out, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    *out = NULL;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        failed(db, REC_OPEN_FAILED, err, errlen, path);
        sqlite3_close(db);
        return REC_OPEN_FAILED;
    }
    sqlite3_busy_timeout(db, REC_BUSY_MS);
    enum rec_status st = REC_OK;
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                         "PRAGMA foreign_keys=ON;", NULL, NULL, NULL) != SQLITE_OK)
        st = failed(db, REC_OPEN_FAILED, err, errlen, path);
    int v = st == REC_OK ? sqlutil_user_version(db) : -1;
    if ((create && v == 0) || v == 1)
        st = migrate(db, err, errlen);
    if (st == REC_OK && sqlutil_user_version(db) != REC_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s is not a control.db of schema version %d (user_version %d)",
                 path, REC_SCHEMA_VERSION, sqlutil_user_version(db));
        st = REC_BAD_VERSION;
    }
    if (st != REC_OK) {
        sqlite3_close(db);
        return st;
    }
    *out = db;
    return REC_OK;
}

int rec_new_id(char id[REC_ID_LEN])
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1)
        return -1;
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(id + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int bind_txt(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int insert_decision(sqlite3 *db, const struct rec_record *r)
{
    static const char sql[] =
        "INSERT INTO decisions VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)";
    const json_t *res = r->result, *pol = json_object_get(res, "policy");
    const json_t *act = json_object_get(res, "action"), *coh = json_object_get(act, "cohort");
    char *body = json_dumps(res, JSON_COMPACT);
    sqlite3_stmt *st = NULL;
    int rc = body ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
        bind_txt(st, 1, r->id);
        sqlite3_bind_int64(st, 2, r->recorded_at_ms);
        sqlite3_bind_int64(st, 3, json_integer_value(json_object_get(res, "decision_time_ms")));
        bind_txt(st, 4, jstr(res, "tool_version"));
        bind_txt(st, 5, jstr(pol, "id"));
        bind_txt(st, 6, jstr(pol, "version"));
        bind_txt(st, 7, jstr(pol, "intent_version"));
        bind_txt(st, 8, jstr(coh, "channel"));
        bind_txt(st, 9, jstr(coh, "rendition"));
        bind_txt(st, 10, jstr(act, "program_version"));
        bind_txt(st, 11, jstr(res, "outcome"));
        bind_txt(st, 12, json_string_value(json_object_get(res, "chosen")));
        bind_txt(st, 13, json_string_value(json_object_get(res, "chosen_by")));
        bind_txt(st, 14, json_string_value(json_object_get(json_object_get(res, "refusal"), "id")));
        sqlite3_bind_text(st, 15, r->situation, (int)r->situation_len, SQLITE_STATIC);
        sqlite3_bind_text(st, 16, body, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    free(body);
    return rc;
}

static int insert_rows(sqlite3 *db, const struct rec_record *r)
{
    static const char sql[] = "INSERT INTO decision_evidence VALUES "
                              "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return SQLITE_ERROR;
    int rc = SQLITE_OK;
    for (size_t i = 0; i < r->rows->n && rc == SQLITE_OK; i++) {
        const struct evr_row *e = &r->rows->rows[i];
        sqlite3_reset(st);
        bind_txt(st, 1, r->id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        bind_txt(st, 3, e->id);
        bind_txt(st, 4, e->check_kind);
        bind_txt(st, 5, evr_verdict_name(e->verdict));
        bind_txt(st, 6, e->reason);
        bind_txt(st, 7, e->profile_id);
        bind_txt(st, 8, e->path_id);
        bind_txt(st, 9, e->channel);
        bind_txt(st, 10, e->rendition);
        bind_txt(st, 11, e->program_version);
        bind_txt(st, 12, e->reference_version);
        sqlite3_bind_int64(st, 13, e->observed_at_ms);
        sqlite3_bind_int64(st, 14, e->recorded_at_ms);
        sqlite3_bind_int(st, 15, e->malformed);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    return rc;
}

/* One row per (candidate, condition), taken from the answer itself so the
 * table and the JSON can never disagree. */
static int insert_conditions(sqlite3 *db, const struct rec_record *r)
{
    static const char sql[] = "INSERT INTO decision_conditions VALUES (?1,?2,?3,?4,?5,?6,?7,?8)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return SQLITE_ERROR;
    int rc = SQLITE_OK;
    size_t i;
    const json_t *cand;
    json_array_foreach(json_object_get(r->result, "candidates"), i, cand)
    {
        const char *name;
        json_t *c;
        json_object_foreach(json_object_get(cand, "conditions"), name, c)
        {
            if (rc != SQLITE_OK)
                break;
            char *data = json_dumps(c, JSON_COMPACT);
            sqlite3_reset(st);
            bind_txt(st, 1, r->id);
            bind_txt(st, 2, jstr(cand, "path_id"));
            bind_txt(st, 3, name);
            bind_txt(st, 4, jstr(c, "status"));
            bind_txt(st, 5, jstr(c, "reason"));
            bind_txt(st, 6, jstr(c, "detail"));
            sqlite3_bind_int(st, 7, json_is_true(json_object_get(cand, "eligible")));
            bind_txt(st, 8, data ? data : "{}");
            rc = data && sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
            free(data);
        }
    }
    sqlite3_finalize(st);
    return rc;
}

enum rec_status rec_insert(sqlite3 *db, const struct rec_record *r, char *err, size_t errlen)
{
    return rec_insert_fills(db, r, NULL, err, errlen);
}

enum rec_status rec_write(sqlite3 *db, const struct rec_record *r, const struct ldg_fills *fills,
                          char *err, size_t errlen)
{
    assert(db && r && r->id && r->situation && r->rows && r->result);
    assert(sqlite3_get_autocommit(db) == 0);
    if (insert_decision(db, r) != SQLITE_OK || insert_rows(db, r) != SQLITE_OK ||
        insert_conditions(db, r) != SQLITE_OK ||
        (fills && ldg_store_fills(db, r->id, fills) != 0))
        return failed(db, REC_FAILED, err, errlen, "write decision");
    return REC_OK;
}

enum rec_status rec_insert_fills(sqlite3 *db, const struct rec_record *r,
                                 const struct ldg_fills *fills, char *err, size_t errlen)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, errlen, "begin");
    if (rec_write(db, r, fills, err, errlen) != REC_OK) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return REC_FAILED;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        failed(db, REC_FAILED, err, errlen, "commit");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return REC_FAILED;
    }
    return REC_OK;
}

static int load_rows(sqlite3 *db, const char *id, struct evr_set *set)
{
    static const char sql[] =
        "SELECT evidence_id, check_kind, verdict, reason, profile_id, path_id, channel, "
        "rendition, program_version, reference_version, observed_at_ms, recorded_at_ms, "
        "malformed FROM decision_evidence WHERE decision_id = ?1 ORDER BY seq";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct evr_row e;
        memset(&e, 0, sizeof e);
        char *dst[] = {e.id,      e.check_kind, NULL,        e.reason,          e.profile_id,
                       e.path_id, e.channel,    e.rendition, e.program_version, e.reference_version};
        for (int c = 0; c < 10; c++)
            if (dst[c])
                evr_set_field(&e, dst[c], (const char *)sqlite3_column_text(st, c));
        e.verdict = evr_verdict_parse((const char *)sqlite3_column_text(st, 2));
        e.observed_at_ms = sqlite3_column_int64(st, 10);
        e.recorded_at_ms = sqlite3_column_int64(st, 11);
        e.malformed = e.malformed || sqlite3_column_int(st, 12);
        if (evr_append(set, &e) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

enum rec_status rec_load(sqlite3 *db, const char *id, struct rec_loaded *out, char *err,
                         size_t errlen)
{
    static const char sql[] =
        "SELECT situation, decision_time_ms, result, tool_version FROM decisions WHERE id = ?1";
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, errlen, "load");
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE) {
            snprintf(err, errlen, "no decision with id '%s'", id);
            return REC_NOT_FOUND;
        }
        return failed(db, REC_FAILED, err, errlen, "load");
    }
    int n = sqlite3_column_bytes(st, 0);
    out->situation = malloc((size_t)n + 1);
    if (out->situation) {
        memcpy(out->situation, sqlite3_column_text(st, 0), (size_t)n);
        out->situation[n] = '\0';
    }
    out->situation_len = (size_t)n;
    out->decision_time_ms = sqlite3_column_int64(st, 1);
    out->result = json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
    snprintf(out->tool_version, sizeof out->tool_version, "%s", sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
    if (!out->situation || !out->result || load_rows(db, id, &out->rows) < 0 ||
        ldg_load_fills(db, id, &out->fills) < 0) {
        rec_loaded_free(out);
        snprintf(err, errlen, "decision '%s' cannot be read back (corrupt record?)", id);
        return REC_FAILED;
    }
    return REC_OK;
}

void rec_loaded_free(struct rec_loaded *l)
{
    free(l->situation);
    json_decref(l->result);
    evr_free(&l->rows);
    ldg_fills_free(&l->fills);
    memset(l, 0, sizeof *l);
}

enum rec_status rec_list(sqlite3 *db, FILE *out, bool json, char *err, size_t errlen)
{
    static const char sql[] =
        "SELECT id, recorded_at_ms, decision_time_ms, policy_id, policy_version, channel, "
        "rendition, outcome, chosen, chosen_by FROM decisions ORDER BY recorded_at_ms DESC, id";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, errlen, "list");
    json_t *arr = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t[10];
        for (int c = 0; c < 10; c++)
            t[c] = (const char *)sqlite3_column_text(st, c);
        if (json)
            json_array_append_new(
                arr, json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:s,s:s,s:s?,s:s?}", "decision_id", t[0],
                               "recorded_at_ms", (json_int_t)sqlite3_column_int64(st, 1),
                               "decision_time_ms", (json_int_t)sqlite3_column_int64(st, 2),
                               "policy_id", t[3], "policy_version", t[4], "channel", t[5],
                               "rendition", t[6], "outcome", t[7], "chosen", t[8], "chosen_by",
                               t[9]));
        else
            fprintf(out, "%s  %s  %s/%s  policy %s@%s  %s%s%s\n", t[0], t[2], t[5], t[6], t[3],
                    t[4], t[7], t[8] ? " " : "", t[8] ? t[8] : "");
    }
    sqlite3_finalize(st);
    if (json) {
        json_dumpf(arr, out, JSON_INDENT(2));
        fputc('\n', out);
    }
    json_decref(arr);
    return rc == SQLITE_DONE ? REC_OK : failed(db, REC_FAILED, err, errlen, "list");
}
