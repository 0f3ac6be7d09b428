/* Retention (`exactav evidence prune`, docs/evidence.md#retention): deletes
 * old rows in bounded transactions, then gives the space back.
 *
 * What is never deleted, whatever its age: the newest evidence row of each
 * scope (path, channel, rendition, program version; the rule of "newest"
 * is evidence_newest's, so stepctl decide reads the same row before and
 * after a prune), a MISMATCH observed within keep_mismatch_ms, and the
 * newest probe of each (path, channel, rendition) (decide's access).
 * Each batch is its own BEGIN IMMEDIATE transaction, so a canary writing at
 * the same time waits at most for one batch, never for the whole prune. */
#include "evidence_internal.h"

#include <assert.h>
#include <string.h>

#define DAY_MS (24 * 3600 * INT64_C(1000))
#define MAX_DURATION_MS (36500 * DAY_MS) /* 100 years: larger is a typo */
#define VACUUM_STEP_PAGES 1024           /* pages freed per incremental_vacuum transaction */

bool evidence_duration_parse(const char *s, int64_t *ms)
{
    static const struct { char unit; int64_t ms; } units[] = {
        {'s', 1000}, {'m', 60 * 1000}, {'h', 3600 * 1000}, {'d', DAY_MS}};
    if (!s || *s < '0' || *s > '9')
        return false;
    int64_t n = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        n = n * 10 + (*s - '0');
        if (n > MAX_DURATION_MS)
            return false;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (s[0] == units[i].unit && s[1] == '\0' && n <= MAX_DURATION_MS / units[i].ms) {
            *ms = n * units[i].ms;
            return true;
        }
    return false;
}

/* The evidence rows a batch may delete: older than the cut, not a MISMATCH
 * younger than the mismatch cut, not the newest row of its scope (the
 * correlated subquery is evidence_newest's, served by evidence_scope). */
static const char PICK_EVIDENCE[] =
    "INSERT INTO temp.prune_ids SELECT e.id FROM evidence e"
    " WHERE e.observed_at_ms < ?1"
    " AND NOT (e.verdict = 'MISMATCH' AND e.observed_at_ms >= ?2)"
    " AND e.id IS NOT (SELECT id FROM evidence n WHERE n.path_id IS e.path_id"
    "  AND n.channel IS e.channel AND n.rendition IS e.rendition"
    "  AND n.program_version IS e.program_version ORDER BY " EVIDENCE_NEWEST_ORDER " LIMIT 1)"
    " ORDER BY e.observed_at_ms LIMIT ?3";
static const char PICK_PROBES[] =
    "INSERT INTO temp.prune_ids SELECT p.id FROM probes p WHERE p.observed_at_ms < ?1"
    " AND p.id IS NOT (SELECT id FROM probes n WHERE n.path_id IS p.path_id"
    "  AND n.channel IS p.channel AND n.rendition IS p.rendition"
    "  ORDER BY observed_at_ms DESC, status = 'PASS' ASC, recorded_at_ms DESC, id DESC LIMIT 1)"
    " ORDER BY p.observed_at_ms LIMIT ?3";
/* reference_decodes is a cache of clean decodes (never a verdict): an old
 * one is simply decoded again. */
static const char PICK_DECODES[] =
    "INSERT INTO temp.prune_ids SELECT rowid FROM reference_decodes"
    " WHERE decoded_at_ms < ?1 LIMIT ?3";

struct prune_table {
    const char *pick;
    const char *const *deletes; /* NULL-terminated; the last one's changes are counted */
    int64_t *count;
};

static enum evidence_rc sql_fail(sqlite3 *sql, const char *what, char *err, size_t errlen)
{
    evidence_seterr(err, errlen, "prune: %s: %s", what, sqlite3_errmsg(sql));
    return EVIDENCE_E_INTERNAL;
}

static int64_t pragma_int(sqlite3 *sql, const char *stmt)
{
    return dbfile_query_int(sql, stmt);
}

static int64_t file_bytes(sqlite3 *sql)
{
    return pragma_int(sql, "PRAGMA page_count") * pragma_int(sql, "PRAGMA page_size");
}

/* One batch of one table in one transaction; *n the rows deleted. */
static enum evidence_rc prune_batch(sqlite3 *sql, const struct prune_table *t,
                                    const struct evidence_prune_opts *o, int64_t *n, char *err,
                                    size_t errlen)
{
    enum evidence_rc rc = evidence_begin_immediate(sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(sql, t->pick, -1, &st, NULL);
    if (src == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, o->now_ms - o->keep_ms);
        sqlite3_bind_int64(st, 2, o->now_ms - o->keep_mismatch_ms);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)o->batch);
        src = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    *n = 0;
    for (size_t i = 0; src == SQLITE_OK && t->deletes[i]; i++) {
        src = sqlite3_exec(sql, t->deletes[i], NULL, NULL, NULL);
        *n = sqlite3_changes(sql);
    }
    if (src == SQLITE_OK)
        src = sqlite3_exec(sql, "DELETE FROM temp.prune_ids", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        rc = sql_fail(sql, "delete", err, errlen);
        evidence_rollback(sql);
        return rc;
    }
    return evidence_commit(sql, err, errlen);
}

static enum evidence_rc prune_table(sqlite3 *sql, const struct prune_table *t,
                                    const struct evidence_prune_opts *o,
                                    struct evidence_prune_result *r, char *err, size_t errlen)
{
    for (;;) {
        int64_t n = 0;
        enum evidence_rc rc = prune_batch(sql, t, o, &n, err, errlen);
        if (rc != EVIDENCE_OK)
            return rc;
        r->transactions++;
        *t->count += n;
        if (n < (int64_t)o->batch)
            return EVIDENCE_OK;
    }
}

/* Space: SQLite puts deleted pages on a free list (reused by later rows,
 * the file does not shrink).  An auto_vacuum=INCREMENTAL store gives them
 * back in short transactions of VACUUM_STEP_PAGES pages each; a store that
 * is not one yet (every store made before retention) is converted once by
 * a full VACUUM, which holds the write lock while it rebuilds the file -
 * after that, prunes never rebuild the whole file again. */
static enum evidence_rc reclaim(sqlite3 *sql, struct evidence_prune_result *r, char *err,
                                size_t errlen)
{
    if (pragma_int(sql, "PRAGMA auto_vacuum") != 2) {
        r->vacuum = "full";
        if (sqlite3_exec(sql, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(sql, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
            return sql_fail(sql, "VACUUM", err, errlen);
    } else {
        r->vacuum = "incremental";
        char step[64];
        snprintf(step, sizeof step, "PRAGMA incremental_vacuum(%d)", VACUUM_STEP_PAGES);
        while (pragma_int(sql, "PRAGMA freelist_count") > 0)
            if (sqlite3_exec(sql, step, NULL, NULL, NULL) != SQLITE_OK)
                return sql_fail(sql, "incremental_vacuum", err, errlen);
    }
    /* best effort: a reader holding an old snapshot only delays the truncation */
    sqlite3_exec(sql, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    return EVIDENCE_OK;
}

/* What was kept only because of the two rules (for the report). */
static void count_kept(sqlite3 *sql, const struct evidence_prune_opts *o,
                       struct evidence_prune_result *r)
{
    static const char old[] = "SELECT count(*) FROM evidence WHERE observed_at_ms < ?1";
    static const char mismatch[] = "SELECT count(*) FROM evidence WHERE observed_at_ms < ?1"
                                   " AND verdict = 'MISMATCH' AND observed_at_ms >= ?2";
    const char *sqls[] = {old, mismatch};
    int64_t v[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(sql, sqls[i], -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, o->now_ms - o->keep_ms);
            sqlite3_bind_int64(st, 2, o->now_ms - o->keep_mismatch_ms);
            if (sqlite3_step(st) == SQLITE_ROW)
                v[i] = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
    }
    r->kept_mismatch = v[1];
    r->kept_newest = v[0] - v[1];
}

static const char *const DEL_PROBES[] = {"DELETE FROM probes WHERE id IN temp.prune_ids", NULL};
static const char *const DEL_DECODES[] = {
    "DELETE FROM reference_decodes WHERE rowid IN temp.prune_ids", NULL};

static enum evidence_rc prune_all(sqlite3 *sql, const struct evidence_prune_opts *o,
                                  struct evidence_prune_result *r, char *err, size_t errlen)
{
    /* fetches go first (foreign key), in the same transaction as their rows;
     * the rows are deleted from the view's table (schema v7: a writer always
     * migrates first), so that sqlite3_changes counts them */
    static const char *const del_evidence[] = {
        "DELETE FROM fetches WHERE evidence_id IN temp.prune_ids",
        "DELETE FROM evidence_rows WHERE id IN temp.prune_ids", NULL};
    const struct prune_table tables[] = {{PICK_EVIDENCE, del_evidence, &r->evidence_rows},
                                         {PICK_PROBES, DEL_PROBES, &r->probe_rows},
                                         {PICK_DECODES, DEL_DECODES, &r->decode_rows}};
    int64_t fetches_before = pragma_int(sql, "SELECT count(*) FROM fetches");
    enum evidence_rc rc = EVIDENCE_OK;
    for (size_t i = 0; rc == EVIDENCE_OK && i < sizeof tables / sizeof tables[0]; i++)
        rc = prune_table(sql, &tables[i], o, r, err, errlen);
    r->fetch_rows = fetches_before - pragma_int(sql, "SELECT count(*) FROM fetches");
    return rc;
}

enum evidence_rc evidence_prune(struct evidence_db *db, const struct evidence_prune_opts *opts,
                                struct evidence_prune_result *r, char *err, size_t errlen)
{
    assert(db && opts && r);
    memset(r, 0, sizeof *r);
    r->vacuum = "none";
    if (db->mode != EVIDENCE_OPEN_RW) {
        evidence_seterr(err, errlen, "prune needs a read-write store");
        return EVIDENCE_E_OPEN;
    }
    struct evidence_prune_opts o = *opts;
    if (o.batch == 0)
        o.batch = EVIDENCE_PRUNE_BATCH;
    if (o.keep_ms < 0 || o.keep_mismatch_ms < 0 || o.now_ms <= 0) {
        evidence_seterr(err, errlen, "prune: durations must be >= 0 and now set");
        return EVIDENCE_E_INVALID;
    }
    if (sqlite3_exec(db->sql, "CREATE TEMP TABLE IF NOT EXISTS prune_ids (id PRIMARY KEY)",
                     NULL, NULL, NULL) != SQLITE_OK)
        return sql_fail(db->sql, "temp table", err, errlen);
    r->bytes_before = file_bytes(db->sql);
    /* keyed (schema v8): what is deleted is counted by a checkpoint */
    enum evidence_rc rc = db->keyed ? evidence_keyed_checkpoint(db, o.now_ms, err, errlen)
                                    : EVIDENCE_OK;
    if (rc == EVIDENCE_OK)
        rc = prune_all(db->sql, &o, r, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = reclaim(db->sql, r, err, errlen);
    count_kept(db->sql, &o, r);
    r->bytes_after = file_bytes(db->sql);
    return rc;
}

json_t *evidence_prune_json(const struct evidence_prune_result *r)
{
    return json_pack("{s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I}, s:I, s:I, s:I, s:I, s:s}",
                     "deleted", "evidence", (json_int_t)r->evidence_rows, "fetches",
                     (json_int_t)r->fetch_rows, "probes", (json_int_t)r->probe_rows,
                     "reference_decodes", (json_int_t)r->decode_rows, "kept", "newest",
                     (json_int_t)r->kept_newest, "mismatch", (json_int_t)r->kept_mismatch,
                     "transactions", (json_int_t)r->transactions, "bytes_before",
                     (json_int_t)r->bytes_before, "bytes_after", (json_int_t)r->bytes_after,
                     "bytes_reclaimed", (json_int_t)(r->bytes_before - r->bytes_after), "vacuum",
                     r->vacuum ? r->vacuum : "none");
}
