/* record.c - control.db (see record.h). */
#include "record.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/rand.h>

#include "dbfile.h"
#include "evidence_text.h"
#include "migrate_v2.h"
#include "migrate_v3.h"
#include "migrate_v4.h"
#include "migrate_v5.h"
#include "migrate_v6.h"
#include "migrate_v7.h"
#include "migrate_v8.h"
#include "migrate_v9.h"
#include "cliutil.h"
#include "smac.h"
#include "smac_keyed.h"

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

/* The file's identity (evidence/dbfile.h): our application_id, the schema
 * version this build knows, the tables of schema v1 (a control.db made
 * before application_id existed is recognised by them and adopted), and the
 * oldest version a reader reads as it is (schema 1: readers never migrate;
 * the tables schema 2 added are then simply absent). */
static const char *const rec_legacy_tables[] = {"decisions", "decision_evidence",
                                                "decision_conditions", NULL};
static const struct dbfile_spec rec_store = {"a control.db", DBFILE_APPID_CONTROL,
                                             REC_SCHEMA_VERSION, rec_legacy_tables, 1};

/* Creates schema v1 in a new file, adopts a control.db from before
 * application_id, and migrates v1 to v2 (migrate_v2.h), under an exclusive
 * lock so two first runs cannot both do it, in one transaction, so a file is
 * never left between versions.  The file is classified again inside the
 * lock: another process may have created, adopted or migrated it since it
 * was opened.  A file that is not ours is refused before anything is
 * written (the classification above comes first). */
static enum rec_status migrate(sqlite3 *db, char *err, size_t len)
{
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, len, "begin");
    struct dbfile_found found = {0};
    enum dbfile_rc dr = dbfile_classify(db, &rec_store, &found, err, len);
    int rc = dr == DBFILE_OK ? SQLITE_OK : SQLITE_ERROR;
    if (rc == SQLITE_OK && found.state == DBFILE_NEW)
        rc = sqlite3_exec(db, rec_schema_v1, NULL, NULL, NULL);
    if (rc == SQLITE_OK && found.state != DBFILE_OURS)
        rc = dbfile_mark(db, &rec_store);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 1)
        rc = migrate_v2(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 2)
        rc = migrate_v3(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 3)
        rc = migrate_v4(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 4)
        rc = migrate_v5(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 5)
        rc = migrate_v6(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 6)
        rc = migrate_v7(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 7)
        rc = migrate_v8(db);
    if (rc == SQLITE_OK && dbfile_user_version(db) == 8)
        rc = migrate_v9(db);
    if (rc != SQLITE_OK) {
        enum rec_status st = dr == DBFILE_E_VERSION ? REC_BAD_VERSION
                             : dr != DBFILE_OK      ? REC_OPEN_FAILED
                                                    : failed(db, REC_FAILED, err, len,
                                                             "create or migrate schema");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return st;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return failed(db, REC_FAILED, err, len, "commit schema");
    return REC_OK;
}

/* Opening the file: a writer classifies it before anything is written,
 * then creates (REC_CREATE only), adopts and migrates it; a reader opens it
 * read-only (it may be on a read-only mount or belong to another user).
 * See evidence/dbfile.h. */
static enum rec_status open_store(const char *path, enum rec_mode mode,
                                  const struct store_key *key, sqlite3 **out, char *err,
                                  size_t errlen)
{
    struct dbfile_found found;
    char why[768] = "";
    struct stat st_path;
    if (mode == REC_WRITE && path && stat(path, &st_path) != 0 && errno == ENOENT) {
        snprintf(err, errlen, "%s: no such file (only stepctl decide and stepctl serve create "
                              "a control.db)", path);
        return REC_OPEN_FAILED;
    }
    enum dbfile_rc dr = mode != REC_READ
                            ? dbfile_open_rw(path, &rec_store, out, &found, why, sizeof why)
                            : dbfile_open_ro(path, &rec_store, out, &found, why, sizeof why);
    if (dr == DBFILE_OK && mode == REC_WRITE && found.state == DBFILE_NEW) {
        snprintf(why, sizeof why, "an empty file, not a control.db (only stepctl decide and "
                                  "stepctl serve create one)");
        sqlite3_close(*out);
        *out = NULL;
        dr = DBFILE_E_FOREIGN;
    }
    if (dr != DBFILE_OK) {
        snprintf(err, errlen, "%s: %s", path, why);
        return dr == DBFILE_E_VERSION ? REC_BAD_VERSION : REC_OPEN_FAILED;
    }
    sqlite3_busy_timeout(*out, REC_BUSY_MS);
    /* Registered before anything is written: a keyed store's triggers call
     * it (smac.h); without a key it fails, and the write with it. */
    if (smac_attach(*out, key) != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot register stepctl_mac", path);
        sqlite3_close(*out);
        *out = NULL;
        return REC_FAILED;
    }
    if (mode == REC_READ)
        return REC_OK;
    enum rec_status st = REC_OK;
    if (sqlite3_exec(*out, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                           "PRAGMA foreign_keys=ON;", NULL, NULL, NULL) != SQLITE_OK)
        st = failed(*out, REC_OPEN_FAILED, err, errlen, path);
    if (st == REC_OK && (st = migrate(*out, why, sizeof why)) != REC_OK && why[0])
        snprintf(err, errlen, "%s: %s", path, why);
    if (st != REC_OK) {
        sqlite3_close(*out);
        *out = NULL;
    }
    return st;
}

enum rec_status rec_open(const char *path, enum rec_mode mode, sqlite3 **out, char *err,
                         size_t errlen)
{
    return rec_open_keyed(path, mode, NULL, out, err, errlen);
}

sqlite3 *rec_reference_schema(void)
{
    sqlite3 *db = NULL;
    char err[256];
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || migrate(db, err, sizeof err) != REC_OK ||
        smac_create_triggers(db) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

enum rec_status rec_open_keyed(const char *path, enum rec_mode mode, const struct store_key *key,
                               sqlite3 **out, char *err, size_t errlen)
{
    *out = NULL;
    enum rec_status st = open_store(path, mode, key, out, err, errlen);
    if (st != REC_OK || !key)
        return st;
    sqlite3 *ref = mode != REC_READ ? rec_reference_schema() : NULL;
    if (mode != REC_READ && !ref) {
        snprintf(err, errlen, "%s: cannot build the reference schema", path);
        st = REC_FAILED;
    } else {
        enum smac_enter_rc e = smac_enter(*out, ref, key, mode != REC_READ, cli_now_ms(), err,
                                          errlen);
        st = e == SMAC_ENTER_OK           ? REC_OK
             : e == SMAC_ENTER_WRONG_KEY ? REC_BAD_KEY
             : e == SMAC_ENTER_FOREIGN   ? REC_TAMPERED
                                         : REC_FAILED;
    }
    sqlite3_close(ref);
    if (st != REC_OK) {
        sqlite3_close(*out);
        *out = NULL;
    }
    return st;
}

int rec_schema_version(sqlite3 *db)
{
    return dbfile_user_version(db);
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

const char *const rec_column_names[REC_N_COLUMNS] = {
    "policy_id", "policy_version", "intent_version", "channel", "rendition",
    "program_version", "outcome", "chosen", "chosen_by", "refusal_id"};

void rec_columns_of(const json_t *res, const char *out[REC_N_COLUMNS])
{
    const json_t *pol = json_object_get(res, "policy"), *act = json_object_get(res, "action");
    const json_t *coh = json_object_get(act, "cohort");
    const char *v[REC_N_COLUMNS] = {
        jstr(pol, "id"), jstr(pol, "version"), jstr(pol, "intent_version"), jstr(coh, "channel"),
        jstr(coh, "rendition"), jstr(act, "program_version"), jstr(res, "outcome"),
        json_string_value(json_object_get(res, "chosen")),
        json_string_value(json_object_get(res, "chosen_by")),
        json_string_value(json_object_get(json_object_get(res, "refusal"), "id"))};
    memcpy(out, v, sizeof v);
}

json_t *rec_conditions_of(const json_t *res)
{
    json_t *rows = json_object();
    size_t i;
    const json_t *cand;
    json_array_foreach(json_object_get(res, "candidates"), i, cand)
    {
        const char *name;
        json_t *c;
        json_object_foreach(json_object_get(cand, "conditions"), name, c)
        {
            char key[2 * 256 + 2];
            snprintf(key, sizeof key, "%s/%s", jstr(cand, "path_id"), name);
            json_object_set_new(rows, key,
                                json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:O}", "path_id",
                                          jstr(cand, "path_id"), "condition", name, "status",
                                          jstr(c, "status"), "reason", jstr(c, "reason"), "detail",
                                          jstr(c, "detail"), "eligible",
                                          json_is_true(json_object_get(cand, "eligible")), "data",
                                          c));
        }
    }
    return rows;
}

static int insert_decision(sqlite3 *db, const struct rec_record *r)
{
    static const char sql[] =
        "INSERT INTO decisions VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)";
    const json_t *res = r->result;
    const char *cols[REC_N_COLUMNS];
    rec_columns_of(res, cols);
    char *body = json_dumps(res, JSON_COMPACT);
    sqlite3_stmt *st = NULL;
    int rc = body ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
        bind_txt(st, 1, r->id);
        sqlite3_bind_int64(st, 2, r->recorded_at_ms);
        sqlite3_bind_int64(st, 3, json_integer_value(json_object_get(res, "decision_time_ms")));
        bind_txt(st, 4, jstr(res, "tool_version"));
        for (int c = 0; c < REC_N_COLUMNS; c++)
            bind_txt(st, 5 + c, cols[c]);
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
        const struct evidence_row *e = &r->rows->rows[i];
        sqlite3_reset(st);
        bind_txt(st, 1, r->id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        bind_txt(st, 3, e->id);
        bind_txt(st, 4, e->check_kind);
        bind_txt(st, 5, evidence_verdict_name(e->verdict));
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

/* One row per (candidate, condition), taken from the answer itself
 * (rec_conditions_of) so the table and the JSON can never disagree. */
static int insert_conditions(sqlite3 *db, const struct rec_record *r)
{
    static const char sql[] = "INSERT INTO decision_conditions VALUES (?1,?2,?3,?4,?5,?6,?7,?8)";
    sqlite3_stmt *st = NULL;
    json_t *rows = rec_conditions_of(r->result);
    if (!rows || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        json_decref(rows);
        return SQLITE_ERROR;
    }
    int rc = SQLITE_OK;
    const char *key;
    json_t *row;
    json_object_foreach(rows, key, row)
    {
        if (rc != SQLITE_OK)
            break;
        char *data = json_dumps(json_object_get(row, "data"), JSON_COMPACT);
        sqlite3_reset(st);
        bind_txt(st, 1, r->id);
        bind_txt(st, 2, jstr(row, "path_id"));
        bind_txt(st, 3, jstr(row, "condition"));
        bind_txt(st, 4, jstr(row, "status"));
        bind_txt(st, 5, jstr(row, "reason"));
        bind_txt(st, 6, jstr(row, "detail"));
        sqlite3_bind_int(st, 7, json_is_true(json_object_get(row, "eligible")));
        bind_txt(st, 8, data ? data : "{}");
        rc = data && sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        free(data);
    }
    sqlite3_finalize(st);
    json_decref(rows);
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

/* Prepares sql with the decision id bound as ?1. SQLITE_OK or not. */
static int by_id(sqlite3 *db, const char *sql, const char *id, sqlite3_stmt **st)
{
    *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
    if (rc == SQLITE_OK)
        sqlite3_bind_text(*st, 1, id, -1, SQLITE_STATIC);
    return rc;
}

static int load_rows(sqlite3 *db, const char *id, struct evidence_rows *set)
{
    static const char sql[] =
        "SELECT evidence_id, check_kind, verdict, reason, profile_id, path_id, channel, "
        "rendition, program_version, reference_version, observed_at_ms, recorded_at_ms, "
        "malformed FROM decision_evidence WHERE decision_id = ?1 ORDER BY seq";
    sqlite3_stmt *st;
    if (by_id(db, sql, id, &st) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct evidence_row e;
        memset(&e, 0, sizeof e);
        char *dst[] = {e.id,      e.check_kind, NULL,        e.reason,          e.profile_id,
                       e.path_id, e.channel,    e.rendition, e.program_version, e.reference_version};
        for (int c = 0; c < 10; c++)
            if (dst[c])
                evidence_row_set(&e, dst[c], (const char *)sqlite3_column_text(st, c));
        if (!evidence_verdict_parse((const char *)sqlite3_column_text(st, 2), &e.verdict))
            e.verdict = EVIDENCE_VERDICT_UNKNOWN;
        e.observed_at_ms = sqlite3_column_int64(st, 10);
        e.recorded_at_ms = sqlite3_column_int64(st, 11);
        e.malformed = e.malformed || sqlite3_column_int(st, 12);
        if (evidence_rows_append(set, &e) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* A stored value as JSON, as it is (a tampered type stays visible). */
static json_t *column_json(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_NULL: return json_null();
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, c));
    default: break;
    }
    const char *t = (const char *)sqlite3_column_text(st, c);
    return json_stringn(t ? t : "", (size_t)sqlite3_column_bytes(st, c));
}

json_t *rec_rows_json(sqlite3 *db, const char *sql, const char *param)
{
    sqlite3_stmt *st = NULL;
    if (by_id(db, sql, param, &st) != SQLITE_OK) {
        sqlite3_finalize(st);
        return NULL;
    }
    json_t *a = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int c = 0; c < sqlite3_column_count(st); c++)
            json_object_set_new(o, sqlite3_column_name(st, c), column_json(st, c));
        json_array_append_new(a, o);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static bool table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    bool yes = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

/* The stored decision_conditions rows, keyed like rec_conditions_of. */
static int load_conditions(sqlite3 *db, const char *id, json_t *rows)
{
    static const char sql[] = "SELECT path_id, condition, status, reason, detail, eligible, data "
                              "FROM decision_conditions WHERE decision_id = ?1";
    sqlite3_stmt *st;
    if (by_id(db, sql, id, &st) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char key[2 * 256 + 2];
        snprintf(key, sizeof key, "%s/%s", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
        const char *data = (const char *)sqlite3_column_text(st, 6);
        json_t *parsed = data ? json_loads(data, JSON_DECODE_ANY, NULL) : NULL;
        json_t *eligible = column_json(st, 5);
        if (json_is_integer(eligible) && (json_integer_value(eligible) | 1) == 1) {
            bool b = json_integer_value(eligible);
            json_decref(eligible);
            eligible = json_boolean(b);
        }
        json_object_set_new(rows, key,
                            json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "path_id", column_json(st, 0),
                                      "condition", column_json(st, 1), "status", column_json(st, 2),
                                      "reason", column_json(st, 3), "detail", column_json(st, 4),
                                      "eligible", eligible, "data",
                                      parsed ? parsed : column_json(st, 6)));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* What replay compares besides the answer: the decisions columns and the
 * condition rows as stored.  A dropped table is reported, not fatal. */
static int load_stored(sqlite3 *db, const char *id, struct rec_loaded *out)
{
    char sql[512] = "SELECT ";
    for (int c = 0; c < REC_N_COLUMNS; c++)
        snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "%s%s", c ? ", " : "",
                 rec_column_names[c]);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), " FROM decisions WHERE id = ?1");
    sqlite3_stmt *st;
    out->columns = json_object();
    if (by_id(db, sql, id, &st) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    for (int c = 0; rc == SQLITE_ROW && c < REC_N_COLUMNS; c++)
        json_object_set_new(out->columns, rec_column_names[c], column_json(st, c));
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return -1;
    if (!table_exists(db, "decision_conditions"))
        return 0; /* out->conditions stays NULL: replay reports it */
    out->conditions = json_object();
    return load_conditions(db, id, out->conditions);
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
    /* A dropped decision_evidence is reported by replay, which then sees no
     * evidence rows (the recomputation will differ as well).  The ledger
     * values exist from schema 2 on: a v1 file (read as it is) has none. */
    bool v2 = dbfile_user_version(db) >= 2;
    out->evidence_missing = !table_exists(db, "decision_evidence");
    out->commitments_missing = v2 && !table_exists(db, "decision_commitments");
    if (!out->situation || !out->result ||
        (!out->evidence_missing && load_rows(db, id, &out->rows) < 0) ||
        (v2 && !out->commitments_missing && ldg_load_fills(db, id, &out->fills) < 0) ||
        load_stored(db, id, out) < 0) {
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
    json_decref(l->columns);
    json_decref(l->conditions);
    evidence_rows_free(&l->rows);
    ldg_fills_free(&l->fills);
    memset(l, 0, sizeof *l);
}

/* One line of `decisions list`: stored text, printed escaped (evidence_text.h). */
static void list_line(FILE *out, const char *const t[10])
{
    char e[10][256];
    for (int c = 0; c < 10; c++)
        evidence_text_escape(t[c], false, e[c], sizeof e[c]);
    fprintf(out, "%s  %s  %s/%s  policy %s@%s  %s%s%s\n", e[0], e[2], e[5], e[6], e[3], e[4], e[7],
            t[8] ? " " : "", t[8] ? e[8] : "");
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
            list_line(out, t);
    }
    sqlite3_finalize(st);
    if (json) {
        json_dumpf(arr, out, JSON_INDENT(2));
        fputc('\n', out);
    }
    json_decref(arr);
    return rc == SQLITE_DONE ? REC_OK : failed(db, REC_FAILED, err, errlen, "list");
}
