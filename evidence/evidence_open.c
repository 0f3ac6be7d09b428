/* Opening the store: pragmas, schema versioning and forward migrations,
 * and the transaction helpers every writer uses. */
#include "evidence_internal.h"
#include "dbfile.h"
#include "store_key.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char evidence_schema_v1_sql[];
extern const char evidence_schema_v2_sql[];
extern const char evidence_schema_v3_sql[];
extern const char evidence_schema_v4_sql[];
extern const char evidence_schema_v5_sql[];
extern const char evidence_schema_v6_sql[];
extern const char evidence_schema_v7_sql[];
extern const char evidence_schema_v8_sql[];

/* The file's identity (dbfile.h): our application_id, the versions this
 * build knows, and the tables of schema v1 (a store made before
 * application_id existed is recognised by them and adopted). */
static const char *const LEGACY_TABLES[] = {"evidence", "fetches", NULL};
static const struct dbfile_spec STORE = {"an evidence store", DBFILE_APPID_EVIDENCE,
                                         EVIDENCE_SCHEMA_VERSION, LEGACY_TABLES,
                                         EVIDENCE_OLDEST_READABLE};

/* Forward migrations, applied in order inside one BEGIN IMMEDIATE
 * transaction.  Step i takes the file from version i to version i + 1;
 * each step is one SQL file (schema_vN.sql, embedded at build time). */
static const char *const MIGRATIONS[] = {
    evidence_schema_v1_sql, /* 0 -> 1 */
    evidence_schema_v2_sql, /* 1 -> 2: evidence.media_sequence, probes (schema_v2.sql) */
    evidence_schema_v3_sql, /* 2 -> 3: reference_decodes (schema_v3.sql) */
    evidence_schema_v4_sql, /* 3 -> 4: evidence.container (schema_v4.sql) */
    evidence_schema_v5_sql, /* 4 -> 5: evidence.part_index (schema_v5.sql) */
    evidence_schema_v6_sql, /* 5 -> 6: evidence.allocation_id, pathway (schema_v6.sql) */
    evidence_schema_v7_sql, /* 6 -> 7: profiles stored once, evidence a view (schema_v7.sql) */
    evidence_schema_v8_sql, /* 7 -> 8: keyed tamper evidence, empty until keyed (schema_v8.sql) */
};
#define MIGRATION_COUNT ((int)(sizeof MIGRATIONS / sizeof MIGRATIONS[0]))
_Static_assert(sizeof MIGRATIONS / sizeof MIGRATIONS[0] == EVIDENCE_SCHEMA_VERSION,
               "one migration step per schema version");

void evidence_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void evidence_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static bool is_busy(int rc)
{
    int primary = rc & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

/* Runs one statement, retrying while the database is busy: the busy
 * handler does not cover every case (WAL recovery, journal mode change). */
static int exec_retry(sqlite3 *sql, const char *stmt)
{
    int64_t deadline = evidence_now_ms() + EVIDENCE_LOCK_DEADLINE_MS;
    int delay = 1;
    for (;;) {
        int rc = sqlite3_exec(sql, stmt, NULL, NULL, NULL);
        if (!is_busy(rc) || evidence_now_ms() >= deadline)
            return rc;
        evidence_sleep_ms(delay);
        delay = delay < 64 ? delay * 2 : 64;
    }
}

enum evidence_rc evidence_begin_immediate(sqlite3 *sql, char *err, size_t errlen)
{
    int rc = exec_retry(sql, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK)
        return EVIDENCE_OK;
    evidence_seterr(err, errlen, "BEGIN IMMEDIATE: %s", sqlite3_errmsg(sql));
    return EVIDENCE_E_INTERNAL;
}

enum evidence_rc evidence_commit(sqlite3 *sql, char *err, size_t errlen)
{
    int rc = exec_retry(sql, "COMMIT");
    if (rc == SQLITE_OK)
        return EVIDENCE_OK;
    evidence_seterr(err, errlen, "COMMIT: %s", sqlite3_errmsg(sql));
    evidence_rollback(sql);
    return EVIDENCE_E_INTERNAL;
}

void evidence_rollback(sqlite3 *sql)
{
    if (!sqlite3_get_autocommit(sql))
        sqlite3_exec(sql, "ROLLBACK", NULL, NULL, NULL);
}

/* PRAGMA journal_mode=WAL answers with the resulting mode; anything other
 * than "wal" (e.g. a file system without shared memory) is refused, because
 * concurrent writers would then block readers. */
static enum evidence_rc set_wal(sqlite3 *sql, char *err, size_t errlen)
{
    int64_t deadline = evidence_now_ms() + EVIDENCE_LOCK_DEADLINE_MS;
    for (;;) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(sql, "PRAGMA journal_mode=WAL", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const char *mode = (const char *)sqlite3_column_text(st, 0);
            bool wal = mode && strcmp(mode, "wal") == 0;
            sqlite3_finalize(st);
            if (wal)
                return EVIDENCE_OK;
            evidence_seterr(err, errlen, "cannot switch to WAL journal mode");
            return EVIDENCE_E_OPEN;
        }
        sqlite3_finalize(st);
        if (!is_busy(rc) || evidence_now_ms() >= deadline) {
            evidence_seterr(err, errlen, "PRAGMA journal_mode=WAL: %s", sqlite3_errmsg(sql));
            return EVIDENCE_E_OPEN;
        }
        evidence_sleep_ms(5);
    }
}

static enum evidence_rc set_pragmas_rw(sqlite3 *sql, char *err, size_t errlen)
{
    enum evidence_rc rc = set_wal(sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    /* FULL: a committed verdict survives a power loss (WAL + NORMAL could
     * lose the last commits, and evidence must not silently vanish). */
    if (exec_retry(sql, "PRAGMA synchronous=FULL") != SQLITE_OK ||
        exec_retry(sql, "PRAGMA foreign_keys=ON") != SQLITE_OK) {
        evidence_seterr(err, errlen, "pragma: %s", sqlite3_errmsg(sql));
        return EVIDENCE_E_OPEN;
    }
    return EVIDENCE_OK;
}

static enum evidence_rc apply_migrations(sqlite3 *sql, int from, char *err, size_t errlen)
{
    for (int v = from; v < MIGRATION_COUNT; v++) {
        char setv[64];
        snprintf(setv, sizeof setv, "PRAGMA user_version=%d", v + 1);
        if (sqlite3_exec(sql, MIGRATIONS[v], NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(sql, setv, NULL, NULL, NULL) != SQLITE_OK) {
            evidence_seterr(err, errlen, "migration to v%d: %s", v + 1, sqlite3_errmsg(sql));
            return EVIDENCE_E_INTERNAL;
        }
    }
    return EVIDENCE_OK;
}

sqlite3 *evidence_reference_schema(void)
{
    sqlite3 *ref = NULL;
    char err[256];
    if (sqlite3_open(":memory:", &ref) != SQLITE_OK ||
        apply_migrations(ref, 0, err, sizeof err) != EVIDENCE_OK ||
        evidence_keyed_triggers(ref) != SQLITE_OK) {
        sqlite3_close(ref);
        return NULL;
    }
    return ref;
}

static enum evidence_rc from_dbfile(enum dbfile_rc rc)
{
    switch (rc) {
    case DBFILE_OK: return EVIDENCE_OK;
    case DBFILE_E_VERSION: return EVIDENCE_E_VERSION;
    case DBFILE_E_MISSING:
    case DBFILE_E_FOREIGN:
    case DBFILE_E_OPEN: return EVIDENCE_E_OPEN;
    case DBFILE_E_INTERNAL: break;
    }
    return EVIDENCE_E_INTERNAL;
}

/* Inside BEGIN IMMEDIATE so that concurrent first openers of a new file
 * migrate it exactly once; the file is classified again here because
 * another process may have created or adopted it since dbfile_open_rw.  A
 * new file gets schema v1 and our application_id in one transaction; a
 * store from before application_id gets the id (it is adopted). */
static enum evidence_rc migrate(struct evidence_db *db, char *err, size_t errlen)
{
    enum evidence_rc rc = evidence_begin_immediate(db->sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    struct dbfile_found found = {0};
    rc = from_dbfile(dbfile_classify(db->sql, &STORE, &found, err, errlen));
    int from = found.state == DBFILE_NEW ? 0 : found.version;
    if (rc == EVIDENCE_OK && found.state != DBFILE_OURS && dbfile_mark(db->sql, &STORE) != SQLITE_OK) {
        evidence_seterr(err, errlen, "application_id: %s", sqlite3_errmsg(db->sql));
        rc = EVIDENCE_E_INTERNAL;
    }
    if (rc == EVIDENCE_OK)
        rc = apply_migrations(db->sql, from, err, errlen);
    if (rc != EVIDENCE_OK) {
        evidence_rollback(db->sql);
        return rc;
    }
    rc = evidence_commit(db->sql, err, errlen);
    db->schema_version = EVIDENCE_SCHEMA_VERSION;
    return rc;
}

/* After the file is open (and, for a writer, migrated): the MAC functions,
 * with the key or failing without it, and the keyed state.  A writer with
 * the key keys the store or checks its key; a writer without it refuses a
 * keyed store (nothing written); a reader only learns whether it is. */
static enum evidence_rc enter_keyed(struct evidence_db *db, const struct store_key *key,
                                    char *err, size_t errlen)
{
    if (key && !(db->key = malloc(sizeof *db->key))) {
        evidence_seterr(err, errlen, "out of memory");
        return EVIDENCE_E_INTERNAL;
    }
    if (key)
        memcpy(db->key, key, sizeof *db->key);
    if (evidence_keyed_attach(db->sql, key) != SQLITE_OK) {
        evidence_seterr(err, errlen, "exactav_mac: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    if (db->mode == EVIDENCE_OPEN_RW && key)
        return evidence_keyed_enter(db, key, err, errlen);
    int keyed = evidence_keyed_probe(db->sql, db->schema_version);
    if (keyed < 0) {
        evidence_seterr(err, errlen, "keyed: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    db->keyed = keyed > 0;
    if (db->keyed && db->mode == EVIDENCE_OPEN_RW) {
        evidence_seterr(err, errlen, "the store is keyed (docs/security.md#tamper-evidence): "
                                     "--store-key-file (or $" EVIDENCE_KEY_ENV ") is needed to "
                                     "write it; nothing written");
        return EVIDENCE_E_KEY;
    }
    return EVIDENCE_OK;
}

enum evidence_rc evidence_open_keyed(const char *path, enum evidence_open_mode mode,
                                     const struct store_key *key, struct evidence_db **out,
                                     char *err, size_t errlen)
{
    assert(out);
    *out = NULL;
    struct evidence_db *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path ? path : ""))) {
        free(db);
        evidence_seterr(err, errlen, "out of memory");
        return EVIDENCE_E_INTERNAL;
    }
    db->mode = mode;
    /* Nothing is written to a file before it is known to be ours (dbfile.h). */
    enum evidence_rc rc = from_dbfile(
        mode == EVIDENCE_OPEN_RW ? dbfile_open_rw(path, &STORE, &db->sql, &db->found, err, errlen)
                                 : dbfile_open_ro(path, &STORE, &db->sql, &db->found, err, errlen));
    if (rc == EVIDENCE_OK) {
        sqlite3_busy_timeout(db->sql, EVIDENCE_BUSY_TIMEOUT_MS);
        db->schema_version = db->found.version;
        if (mode == EVIDENCE_OPEN_RW) {
            rc = set_pragmas_rw(db->sql, err, errlen);
            if (rc == EVIDENCE_OK)
                rc = migrate(db, err, errlen);
        }
    }
    if (rc == EVIDENCE_OK)
        rc = enter_keyed(db, key, err, errlen);
    if (rc != EVIDENCE_OK) {
        evidence_close(db);
        return rc;
    }
    *out = db;
    return EVIDENCE_OK;
}

enum evidence_rc evidence_open(const char *path, enum evidence_open_mode mode,
                               struct evidence_db **out, char *err, size_t errlen)
{
    return evidence_open_keyed(path, mode, NULL, out, err, errlen);
}

enum evidence_rc evidence_read_done(struct evidence_db *db, char *err, size_t errlen)
{
    if (dbfile_read_still_valid(db->path, &db->found))
        return EVIDENCE_OK;
    evidence_seterr(err, errlen, "a writer started while the store was read without locks "
                                 "(immutable, see docs/evidence.md): read it again");
    return EVIDENCE_E_OPEN;
}

void evidence_close(struct evidence_db *db)
{
    if (!db)
        return;
    sqlite3_close_v2(db->sql);
    if (db->key) {
        store_key_wipe(db->key);
        free(db->key);
    }
    free(db->path);
    free(db);
}

int evidence_schema_version(const struct evidence_db *db)
{
    return db ? db->schema_version : -1;
}
