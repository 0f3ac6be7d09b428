/* evidence_keyed.c - keyed tamper evidence of evidence.db (schema v8,
 * schema_v8.sql; see evidence.h and docs/security.md#tamper-evidence).
 *
 * Two SQL functions on every connection the store opens: exactav_mac(tbl,
 * val...), the MAC of store_key.h under the connection's key (without one
 * it fails, naming --store-key-file, so that a keyed store written without
 * the key fails closed; plain sqlite3 has no such function and fails too),
 * and exactav_sum(a, b), a + b mod 2^256 over 64 hex digits.  Keying
 * creates two triggers that call them:
 *   evidence_mac_insert  AFTER INSERT ON evidence_rows: the row's MAC into
 *                        evidence_macs, the head advanced (only from a head
 *                        that verifies: one changed by hand stays named);
 *   evidence_mac_delete  AFTER DELETE ON evidence_rows: the row's MAC added
 *                        to the newest checkpoint (only one that verifies),
 *                        then removed from evidence_macs.
 * So at any time: head.n = rows with a MAC + the checkpoints' n, and
 * head.sum = their MACs' sum + the checkpoints' sums.  A row deleted by
 * anyone without the key breaks that; a head or checkpoint changed by them
 * no longer verifies. */
#include "evidence_internal.h"
#include "dbfile.h"
#include "store_key.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_ID_LABEL "exactav evidence key id v1"
#define ZERO_SUM "0000000000000000000000000000000000000000000000000000000000000000"
#define SUM_BYTES 32

/* The columns of the view `evidence`, in its order (schema_v7.sql). */
static const char *const VIEW_COLS[] = {
    "id", "check_kind", "verdict", "reason", "profile_id", "profile_fingerprint", "path_id",
    "channel", "rendition", "program_version", "reference_version", "object", "interval_start",
    "interval_end", "observed_at_ms", "observed_end_ms", "recorded_at_ms", "report",
    "media_sequence", "container", "part_index", "allocation_id", "pathway"};
#define N_VIEW_COLS (sizeof VIEW_COLS / sizeof VIEW_COLS[0])

/* The report as the view rebuilds it, from the new row of evidence_rows. */
#define REPORT_OF_NEW                                                                              \
    "CASE WHEN NEW.profile_digest IS NULL THEN NEW.report ELSE NEW.report || (SELECT document "  \
    "FROM profiles WHERE digest = NEW.profile_digest) || NEW.report_tail END"

/* ---- the SQL functions ------------------------------------------------------------------ */

static void mac_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *tbl = argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
    const char *const heads[] = {tbl ? tbl : ""};
    store_key_sql_mac(ctx, "evidence.db is keyed (docs/security.md#tamper-evidence): "
                           "--store-key-file is needed to write it",
                      heads, 1, argv + (argc > 0), argc > 0 ? argc - 1 : -1);
}

static int hex_val(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 64 lowercase hex digits into a big-endian number; false otherwise. */
static bool sum_parse(const char *hex, unsigned char v[SUM_BYTES])
{
    if (!hex || strlen(hex) != 2 * SUM_BYTES)
        return false;
    for (int i = 0; i < SUM_BYTES; i++) {
        int hi = hex_val(hex[2 * i]), lo = hex_val(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        v[i] = (unsigned char)(hi << 4 | lo);
    }
    return true;
}

static void sum_add(unsigned char acc[SUM_BYTES], const unsigned char b[SUM_BYTES])
{
    unsigned carry = 0;
    for (int i = SUM_BYTES - 1; i >= 0; i--) {
        unsigned t = (unsigned)acc[i] + b[i] + carry;
        acc[i] = (unsigned char)t;
        carry = t >> 8;
    }
}

static void sum_hex(const unsigned char v[SUM_BYTES], char hex[STORE_KEY_HEX])
{
    for (int i = 0; i < SUM_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", v[i]);
}

static void sum_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    unsigned char a[SUM_BYTES], b[SUM_BYTES];
    if (!sum_parse((const char *)sqlite3_value_text(argv[0]), a) ||
        !sum_parse((const char *)sqlite3_value_text(argv[1]), b)) {
        sqlite3_result_error(ctx, "exactav_sum: 64 hex digits expected", -1);
        return;
    }
    sum_add(a, b);
    char hex[STORE_KEY_HEX];
    sum_hex(a, hex);
    sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
}

int evidence_keyed_attach(sqlite3 *sql, const struct store_key *key)
{
    int rc = store_key_attach(sql, "exactav_mac", key, mac_fn);
    return rc == SQLITE_OK ? sqlite3_create_function_v2(sql, "exactav_sum", 2, SQLITE_UTF8, NULL,
                                                        sum_fn, NULL, NULL, NULL)
                           : rc;
}

int evidence_key_load(const char *who, const char *given, struct store_key *k, bool *have)
{
    const char *file = store_key_file(given, EVIDENCE_KEY_ENV);
    *have = file != NULL;
    memset(k, 0, sizeof *k);
    return file ? store_key_load(who, "--store-key-file", file, k) : 0;
}

/* ---- SQL text ---------------------------------------------------------------------------- */

/* "P.id, P.check_kind, ..." (P empty: bare names), the report as report
 * (NULL: P.report). */
static int cols_sql(const char *p, const char *report, char *out, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < N_VIEW_COLS; i++) {
        bool rep = report && !strcmp(VIEW_COLS[i], "report");
        int n = snprintf(out + len, cap - len, "%s%s%s%s", i ? ", " : "", rep ? "" : p,
                         rep || !*p ? "" : ".", rep ? report : VIEW_COLS[i]);
        if (n < 0 || (size_t)n >= cap - len)
            return -1;
        len += (size_t)n;
    }
    return 0;
}

static const char DELETE_TRIGGER[] =
    "CREATE TRIGGER IF NOT EXISTS evidence_mac_delete AFTER DELETE ON evidence_rows BEGIN "
    "SELECT exactav_mac('evidence_delete', OLD.id); "
    "UPDATE evidence_checkpoints SET n = n + 1, sum = exactav_sum(sum, m.mac), "
    "mac = exactav_mac('evidence_checkpoints', seq, at_ms, n + 1, exactav_sum(sum, m.mac)) "
    "FROM (SELECT mac FROM evidence_macs WHERE id = OLD.id) AS m "
    "WHERE seq = (SELECT MAX(seq) FROM evidence_checkpoints) AND evidence_checkpoints.mac = "
    "exactav_mac('evidence_checkpoints', seq, at_ms, n, sum); "
    "DELETE FROM evidence_macs WHERE id = OLD.id; END";

int evidence_keyed_triggers(sqlite3 *sql)
{
    char cols[2048], ins[4096];
    if (cols_sql("NEW", REPORT_OF_NEW, cols, sizeof cols) != 0)
        return SQLITE_ERROR;
    int n = snprintf(
        ins, sizeof ins,
        "CREATE TRIGGER IF NOT EXISTS evidence_mac_insert AFTER INSERT ON evidence_rows BEGIN "
        "INSERT INTO evidence_macs (id, mac) VALUES (NEW.id, exactav_mac('evidence', %s)); "
        "UPDATE evidence_head SET n = n + 1, sum = exactav_sum(sum, m.mac), "
        "head_mac = exactav_mac('evidence_head', n + 1, exactav_sum(sum, m.mac)) "
        "FROM (SELECT mac FROM evidence_macs WHERE id = NEW.id) AS m "
        "WHERE evidence_head.head_mac = exactav_mac('evidence_head', evidence_head.n, "
        "evidence_head.sum); END",
        cols);
    if (n < 0 || (size_t)n >= sizeof ins)
        return SQLITE_ERROR;
    int rc = sqlite3_exec(sql, ins, NULL, NULL, NULL);
    return rc == SQLITE_OK ? sqlite3_exec(sql, DELETE_TRIGGER, NULL, NULL, NULL) : rc;
}

/* ---- keying ------------------------------------------------------------------------------ */

int evidence_keyed_probe(sqlite3 *sql, int version)
{
    if (version < 8)
        return 0;
    static const char q[] =
        "SELECT EXISTS (SELECT 1 FROM evidence_keying) OR EXISTS (SELECT 1 FROM evidence_macs) "
        "OR EXISTS (SELECT 1 FROM evidence_head) OR EXISTS (SELECT 1 FROM evidence_checkpoints) "
        "OR EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name IN "
        "('evidence_mac_insert', 'evidence_mac_delete'))";
    int64_t v = dbfile_query_int(sql, q);
    return v < 0 ? -1 : v != 0;
}

/* The number of MACs q selects (one column) and their sum.  0 or -1. */
static int macs_total(sqlite3 *sql, const char *q, int64_t *n, unsigned char sum[SUM_BYTES])
{
    sqlite3_stmt *st = NULL;
    *n = 0;
    memset(sum, 0, SUM_BYTES);
    if (sqlite3_prepare_v2(sql, q, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        unsigned char v[SUM_BYTES];
        if (!sum_parse((const char *)sqlite3_column_text(st, 0), v)) {
            rc = SQLITE_ERROR;
            break;
        }
        sum_add(sum, v);
        (*n)++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Runs q with ?1 a text, ?2 and ?3 integers, ?4 a text; SQLITE_OK or not. */
static int run4(sqlite3 *sql, const char *q, const char *t1, int64_t i2, int64_t i3,
                const char *t4)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, q, -1, &st, NULL) != SQLITE_OK)
        return SQLITE_ERROR;
    sqlite3_bind_text(st, 1, t1, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, i2);
    sqlite3_bind_int64(st, 3, i3);
    sqlite3_bind_text(st, 4, t4, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
}

/* In the writer's transaction: the triggers, every row's MAC, the head, the
 * keying row and checkpoint 1. */
static int key_store(sqlite3 *sql, const struct store_key *k, int64_t now_ms)
{
    char cols[1024], q[1400], id[STORE_KEY_HEX], sum[STORE_KEY_HEX];
    unsigned char total[SUM_BYTES];
    int64_t n = 0;
    if (evidence_keyed_triggers(sql) != SQLITE_OK || cols_sql("e", NULL, cols, sizeof cols) != 0)
        return SQLITE_ERROR;
    snprintf(q, sizeof q, "INSERT INTO evidence_macs (id, mac) SELECT e.id, "
                          "exactav_mac('evidence', %s) FROM evidence e ORDER BY e.rowid", cols);
    if (sqlite3_exec(sql, q, NULL, NULL, NULL) != SQLITE_OK ||
        macs_total(sql, "SELECT mac FROM evidence_macs", &n, total) != 0)
        return SQLITE_ERROR;
    sum_hex(total, sum);
    store_key_id(k, KEY_ID_LABEL, id);
    int rc = run4(sql, "INSERT INTO evidence_head (id, n, sum, head_mac) VALUES (1, ?2, ?4, "
                       "exactav_mac('evidence_head', ?2, ?4))", "", n, 0, sum);
    if (rc == SQLITE_OK)
        rc = run4(sql, "INSERT INTO evidence_keying (id, key_id, keyed_at_ms, rows, sum, mac) "
                       "VALUES (1, ?1, ?2, ?3, ?4, exactav_mac('evidence_keying', ?1, ?2, ?3, ?4))",
                  id, now_ms, n, sum);
    if (rc == SQLITE_OK)
        rc = run4(sql, "INSERT INTO evidence_checkpoints (seq, at_ms, n, sum, mac) VALUES (1, ?2, "
                       "0, ?4, exactav_mac('evidence_checkpoints', 1, ?2, 0, ?4))", "", now_ms, 0,
                  ZERO_SUM);
    return rc;
}

/* 1 the key is the store's, 0 not, 2 no keying row, -1 error. */
static int key_matches(sqlite3 *sql, const struct store_key *k)
{
    return store_key_matches(sql, "SELECT key_id FROM evidence_keying", k, KEY_ID_LABEL);
}

/* The first trigger (or anything naming exactav_mac) of sql that this
 * build does not create: 1 (its name), 0 none, -1 error. */
static int foreign_object(sqlite3 *sql, char *name, size_t cap)
{
    sqlite3 *ref = evidence_reference_schema();
    int res = ref ? store_key_foreign_object(sql, ref, "exactav_mac", name, cap) : -1;
    sqlite3_close(ref);
    return res;
}

#define WRONG_KEY "--store-key-file: the key does not match evidence.db's key id"

enum evidence_rc evidence_keyed_enter(struct evidence_db *db, const struct store_key *key,
                                      char *err, size_t errlen)
{
    enum evidence_rc rc = evidence_begin_immediate(db->sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    int keyed = evidence_keyed_probe(db->sql, db->schema_version), m = 1;
    char name[256] = "";
    int foreign = 0;
    if (keyed < 0 || (keyed && (m = key_matches(db->sql, key)) < 0) ||
        (m == 1 && (foreign = foreign_object(db->sql, name, sizeof name)) < 0)) {
        evidence_seterr(err, errlen, "keying: %s", sqlite3_errmsg(db->sql));
        rc = EVIDENCE_E_INTERNAL;
    } else if (foreign) {
        evidence_seterr(err, errlen, "store_tampered: %s: not exactav's, it could make exactav MAC "
                                     "rows of another's choosing; refusing to write (exactav "
                                     "evidence verify-store)", name);
        rc = EVIDENCE_E_OPEN;
    } else if (m == 0) {
        evidence_seterr(err, errlen, WRONG_KEY);
        rc = EVIDENCE_E_KEY;
    } else if (m == 2) {
        evidence_seterr(err, errlen, "store_tampered: evidence_keying was removed, its MACs "
                                     "remain; refusing to write (exactav evidence verify-store)");
        rc = EVIDENCE_E_OPEN;
    } else if ((keyed ? evidence_keyed_triggers(db->sql) /* a dropped trigger comes back */
                      : key_store(db->sql, key, evidence_now_ms())) != SQLITE_OK) {
        evidence_seterr(err, errlen, "keying: %s", sqlite3_errmsg(db->sql));
        rc = EVIDENCE_E_INTERNAL;
    }
    if (rc != EVIDENCE_OK) {
        evidence_rollback(db->sql);
        return rc;
    }
    rc = evidence_commit(db->sql, err, errlen);
    db->keyed = rc == EVIDENCE_OK;
    return rc;
}

enum evidence_rc evidence_keyed_checkpoint(struct evidence_db *db, int64_t now_ms, char *err,
                                           size_t errlen)
{
    /* an empty newest checkpoint (a prune that deleted nothing) is reused,
     * so that a canary pruning every hour adds a row only when it deletes */
    static const char reuse[] =
        "UPDATE evidence_checkpoints SET at_ms = ?2, mac = exactav_mac('evidence_checkpoints', "
        "seq, ?2, n, sum) WHERE seq = (SELECT MAX(seq) FROM evidence_checkpoints) AND seq > 1 "
        "AND n = 0 AND mac = exactav_mac('evidence_checkpoints', seq, at_ms, n, sum)";
    static const char add[] =
        "INSERT INTO evidence_checkpoints (seq, at_ms, n, sum, mac) SELECT s, ?2, 0, ?4, "
        "exactav_mac('evidence_checkpoints', s, ?2, 0, ?4) FROM (SELECT COALESCE(MAX(seq), 0) + 1 "
        "AS s FROM evidence_checkpoints)";
    enum evidence_rc rc = evidence_begin_immediate(db->sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    int src = run4(db->sql, reuse, "", now_ms, 0, ZERO_SUM);
    if (src == SQLITE_OK && sqlite3_changes(db->sql) == 0)
        src = run4(db->sql, add, "", now_ms, 0, ZERO_SUM);
    if (src != SQLITE_OK) {
        evidence_seterr(err, errlen, "checkpoint: %s", sqlite3_errmsg(db->sql));
        evidence_rollback(db->sql);
        return EVIDENCE_E_INTERNAL;
    }
    return evidence_commit(db->sql, err, errlen);
}

bool evidence_is_keyed(const struct evidence_db *db)
{
    return db && db->keyed;
}

/* ---- the check --------------------------------------------------------------------------- */

static void finding(struct evidence_mac_check *c, const char *table, const char *row,
                    const char *rule, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void finding(struct evidence_mac_check *c, const char *table, const char *row,
                    const char *rule, const char *fmt, ...)
{
    c->tampered = true;
    snprintf(c->table, sizeof c->table, "%s", table);
    snprintf(c->row, sizeof c->row, "%s", row ? row : "");
    snprintf(c->rule, sizeof c->rule, "%s", rule);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
}

/* A count of MACs and their sum. */
struct tally {
    int64_t n;
    unsigned char sum[SUM_BYTES];
};

/* One check as it goes: the finding, the key's id, what was read. */
struct checking {
    struct evidence_mac_check *c;
    char key_id[STORE_KEY_HEX];
    bool wrong_key;
    struct tally head, seen; /* seen: the checkpoints', then the rows' added */
};

typedef void (*row_fn)(sqlite3_stmt *st, struct checking *k);

static const char *col(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

static bool stop(const struct checking *k)
{
    return k->c->tampered || k->wrong_key;
}

/* Hands every row of q to each until a finding (or a wrong key); none,
 * when q has no row at all, is called with st NULL.  0 or -1. */
static int each_row(sqlite3 *sql, const char *q, struct checking *k, row_fn each, row_fn none)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, q, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = SQLITE_DONE;
    int64_t n = 0;
    while (!stop(k) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        each(st, k);
        n++;
    }
    sqlite3_finalize(st);
    if (!stop(k) && rc == SQLITE_DONE && n == 0 && none)
        none(NULL, k);
    return stop(k) || rc == SQLITE_DONE ? 0 : -1;
}

/* SELECT key_id, mac, its MAC now FROM evidence_keying */
static void keying_row(sqlite3_stmt *st, struct checking *k)
{
    if (!store_key_hex_same(col(st, 0), k->key_id))
        k->wrong_key = true;
    else if (!store_key_hex_same(col(st, 1), col(st, 2)))
        finding(k->c, "evidence_keying", "1", "checkpoint_mismatch",
                "the keying row does not verify under the key (changed by hand)");
}

static void keying_none(sqlite3_stmt *st, struct checking *k)
{
    (void)st;
    finding(k->c, "evidence_keying", "1", "keying_removed",
            "the store is keyed (MACs, head or triggers remain) but its keying row is gone");
}

/* SELECT n, sum, head_mac, its MAC now FROM evidence_head */
static void head_row(sqlite3_stmt *st, struct checking *k)
{
    if (!store_key_hex_same(col(st, 2), col(st, 3)) || !sum_parse(col(st, 1), k->head.sum))
        finding(k->c, "evidence_head", "1", "head_mismatch",
                "the keyed head does not verify under the key (changed by hand)");
    k->head.n = sqlite3_column_int64(st, 0);
}

static void head_none(sqlite3_stmt *st, struct checking *k)
{
    (void)st;
    finding(k->c, "evidence_head", "1", "head_mismatch", "the keyed head is missing");
}

/* SELECT seq, n, sum, mac, its MAC now FROM evidence_checkpoints ORDER BY
 * seq: 1, 2, ... without a gap, each verifying. */
static void checkpoint_row(sqlite3_stmt *st, struct checking *k)
{
    int64_t seq = sqlite3_column_int64(st, 0), want = (int64_t)k->c->checkpoints + 1;
    char row[32];
    unsigned char v[SUM_BYTES];
    snprintf(row, sizeof row, "%lld", (long long)seq);
    if (seq != want)
        finding(k->c, "evidence_checkpoints", row, "checkpoint_mismatch",
                "checkpoint %lld is missing", (long long)want);
    else if (!store_key_hex_same(col(st, 3), col(st, 4)) || !sum_parse(col(st, 2), v))
        finding(k->c, "evidence_checkpoints", row, "checkpoint_mismatch",
                "the checkpoint does not verify under the key (changed by hand)");
    else {
        sum_add(k->seen.sum, v);
        k->seen.n += sqlite3_column_int64(st, 1);
        k->c->checkpoints++;
    }
}

static void checkpoint_none(sqlite3_stmt *st, struct checking *k)
{
    (void)st;
    finding(k->c, "evidence_checkpoints", "1", "checkpoint_mismatch",
            "checkpoint 1 (made at keying) is missing");
}

/* SELECT id, its stored MAC, its MAC now FROM evidence (every row as the
 * view returns it, in the order stored) */
static void evidence_row(sqlite3_stmt *st, struct checking *k)
{
    unsigned char v[SUM_BYTES];
    if (!col(st, 1))
        finding(k->c, "evidence", col(st, 0), "row_mac_missing",
                "the row has no MAC: added without the key");
    else if (!store_key_hex_same(col(st, 1), col(st, 2)) || !sum_parse(col(st, 1), v))
        finding(k->c, "evidence", col(st, 0), "row_mac_mismatch",
                "the row does not match its MAC: a column or the report changed");
    else {
        sum_add(k->seen.sum, v);
        k->seen.n++;
        k->c->rows++;
    }
}

/* SELECT id FROM evidence_macs whose row is gone */
static void orphan_row(sqlite3_stmt *st, struct checking *k)
{
    finding(k->c, "evidence", col(st, 0), "row_deleted",
            "the row was deleted without the key: its MAC remains");
}

/* The head against what the rows and checkpoints hold. */
static void check_totals(struct checking *k)
{
    const struct tally *h = &k->head, *s = &k->seen;
    if (stop(k) || (s->n == h->n && memcmp(s->sum, h->sum, SUM_BYTES) == 0))
        return;
    if (s->n > h->n) /* more MACs than the head counts: it was set back */
        finding(k->c, "evidence_head", "1", "head_mismatch",
                "the head counts %lld row MACs, the rows and checkpoints %lld: an older head "
                "(put back by hand)", (long long)h->n, (long long)s->n);
    else
        finding(k->c, "evidence_head", "1", "row_deleted",
                "the head counts %lld row MACs, the rows and checkpoints %lld%s: rows were "
                "removed without the key", (long long)h->n, (long long)s->n,
                s->n == h->n ? " (their sums differ)" : "");
}

enum evidence_rc evidence_check_macs(struct evidence_db *db, struct evidence_mac_check *c,
                                     char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    char cols[1024], rows_q[1600];
    if (!db->key) {
        evidence_seterr(err, errlen, "the MACs need --store-key-file");
        return EVIDENCE_E_KEY;
    }
    if (cols_sql("e", NULL, cols, sizeof cols) != 0 ||
        sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "BEGIN: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    snprintf(rows_q, sizeof rows_q, "SELECT e.id, (SELECT mac FROM evidence_macs m WHERE m.id = "
                                    "e.id), exactav_mac('evidence', %s) FROM evidence e ORDER BY "
                                    "e.rowid", cols);
    const struct {
        const char *q;
        row_fn each, none;
    } steps[] = {
        {"SELECT key_id, mac, exactav_mac('evidence_keying', key_id, keyed_at_ms, rows, sum) "
         "FROM evidence_keying", keying_row, keying_none},
        {"SELECT n, sum, head_mac, exactav_mac('evidence_head', n, sum) FROM evidence_head",
         head_row, head_none},
        {"SELECT seq, n, sum, mac, exactav_mac('evidence_checkpoints', seq, at_ms, n, sum) FROM "
         "evidence_checkpoints ORDER BY seq", checkpoint_row, checkpoint_none},
        {rows_q, evidence_row, NULL},
        {"SELECT id FROM evidence_macs WHERE id NOT IN (SELECT id FROM evidence_rows) LIMIT 1",
         orphan_row, NULL},
    };
    struct checking k = {.c = c};
    store_key_id(db->key, KEY_ID_LABEL, k.key_id);
    int keyed = evidence_keyed_probe(db->sql, db->schema_version), res = keyed < 0 ? -1 : 0;
    c->keyed = keyed > 0;
    if (keyed == 0)
        finding(c, "evidence_keying", "1", "store_not_keyed",
                "a key was given but the store is not keyed (never, or everything of its keying "
                "was removed)");
    char name[256];
    for (size_t i = 0; res == 0 && !stop(&k) && i < sizeof steps / sizeof steps[0]; i++) {
        int foreign = i == 1 ? foreign_object(db->sql, name, sizeof name) : 0; /* after the key */
        if (foreign > 0)
            finding(c, "sqlite_master", name, "foreign_schema_object",
                    "not created by exactav; it could make exactav MAC rows of another's choosing");
        res = foreign < 0 ? -1 : foreign ? 0 : each_row(db->sql, steps[i].q, &k, steps[i].each,
                                                         steps[i].none);
    }
    if (res == 0)
        check_totals(&k);
    if (res < 0)
        evidence_seterr(err, errlen, "keyed check: %s", sqlite3_errmsg(db->sql));
    else if (k.wrong_key)
        evidence_seterr(err, errlen, WRONG_KEY);
    evidence_rollback(db->sql); /* a read transaction */
    enum evidence_rc rc = res < 0 ? EVIDENCE_E_INTERNAL : k.wrong_key ? EVIDENCE_E_KEY : EVIDENCE_OK;
    return rc == EVIDENCE_OK ? evidence_read_done(db, err, errlen) : rc;
}
