/* qoe_report.c - QoE from stored sessions (see qoe_report.h). */
#include "qoe_report.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmcd.h"
#include "num.h"

#define AUTOPLAY_EVENT "com.exactav-autoplay-refused"
#define EXIT_EVENT "com.exactav-exit-before-start"

/* A decimal of micro-units kept exact: a number as num_json_loadb keeps
 * one (written by num_json_dumps as its digits, read by num_from_json
 * without rounding), never a binary double. */
static json_t *exact_num(int64_t micro)
{
    char buf[48] = "";
    num_format(micro, buf + 1, sizeof buf - 1);
    return json_stringn(buf, strlen(buf + 1) + 1);
}

static int count_of(const json_t *v, enum qoe_count *out)
{
    const char *s = json_string_value(v);
    if (!s)
        return -1;
    *out = !strcmp(s, "failure")    ? QOE_AS_FAILURE
           : !strcmp(s, "excluded") ? QOE_AS_EXCLUDED
           : !strcmp(s, "unknown")  ? QOE_AS_UNKNOWN
                                    : (enum qoe_count)-1;
    return (int)*out < 0 ? -1 : 0;
}

int qoe_rules_from_policy(const json_t *policy, struct qoe_rules *r, const char **missing)
{
    const json_t *q = json_object_get(policy, "qoe"), *c = json_object_get(q, "classes");
    if (count_of(json_object_get(c, "exit_before_start"), &r->exit_before_start) != 0 ||
        count_of(json_object_get(c, "autoplay_refused"), &r->autoplay_refused) != 0) {
        *missing = "qoe_classes_missing";
        return 1;
    }
    if (num_from_json(json_object_get(q, "min_completeness"), 1, &r->min_completeness) != 0 ||
        r->min_completeness < 0 || r->min_completeness > 1000000) {
        *missing = "qoe_min_completeness_missing";
        return 1;
    }
    return 0;
}

/* One stored record as the rules read it: the columns, and the custom
 * keys re-read from its text only when it carries one (fast path). */
static void row_of(sqlite3_stmt *st, struct qoe_row *r, struct cmcd_record *scratch)
{
    memset(r, 0, sizeof *r);
    r->has_sn = sqlite3_column_type(st, 2) != SQLITE_NULL;
    r->sn = sqlite3_column_int64(st, 2);
    r->has_ts = sqlite3_column_type(st, 3) != SQLITE_NULL;
    r->ts = sqlite3_column_int64(st, 3);
    const char *e = (const char *)sqlite3_column_text(st, 4);
    const char *sta = (const char *)sqlite3_column_text(st, 5);
    snprintf(r->e, sizeof r->e, "%s", e ? e : "");
    snprintf(r->sta, sizeof r->sta, "%s", sta ? sta : "");
    r->received_at_ms = sqlite3_column_int64(st, 7);
    const char *text = (const char *)sqlite3_column_text(st, 6);
    if (!text || (!strstr(text, "cen=") && !strstr(text, "com.exactav-rvfc-ms")))
        return;
    cmcd_parse_record(text, strlen(text), scratch);
    r->has_rvfc = scratch->has_rvfc;
    r->rvfc_ms = scratch->rvfc_ms;
    r->autoplay_refused = !strcmp(scratch->cen, AUTOPLAY_EVENT);
    r->exit_before_start = !strcmp(scratch->cen, EXIT_EVENT);
}

/* The sessions of a scope (viewers only): bound by bind_scope. */
#define SCOPE_WHERE                                                                            \
    " WHERE s.kind = 'viewer' AND s.created_at_ms >= ?1 AND s.created_at_ms < ?2 AND (CASE "   \
    "WHEN ?3 IS NOT NULL THEN s.grant_id = ?3 ELSE s.channel = ?4 AND s.region = ?5 AND "      \
    "s.isp = ?6 AND s.client = ?7 AND s.build = ?8 AND s.rendition = ?9 AND s.path_id = ?10 END)"

/* The scope's sessions in id order, each with the rowids of its first and
 * last record (the primary key's index holds them: no table lookup). */
static const char sessions_sql[] =
    "SELECT s.id, s.master_fetched_at_ms IS NOT NULL, s.path_id, "
    "(SELECT r.rowid FROM session_reports r WHERE r.session_id = s.id ORDER BY r.seq LIMIT 1), "
    "(SELECT r.rowid FROM session_reports r WHERE r.session_id = s.id ORDER BY r.seq DESC LIMIT 1) "
    "FROM sessions s" SCOPE_WHERE " ORDER BY s.id";

/* The records between two rowids, in the order stored; the columns as
 * row_of reads them (1 and 8 unused, 9 the path that served an rr). */
static const char records_sql[] =
    "SELECT session_id, NULL, sn, ts, event, sta, record, received_at_ms, NULL, served_by "
    "FROM session_reports WHERE rowid BETWEEN ?1 AND ?2";

static sqlite3_stmt *prepare_scope(sqlite3 *db, const char *sql, const struct qoe_scope *sc)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, sc->since_ms);
    sqlite3_bind_int64(st, 2, sc->until_ms);
    if (sc->grant_id)
        sqlite3_bind_text(st, 3, sc->grant_id, -1, SQLITE_STATIC);
    const struct sit_cohort *c = &sc->cohort;
    const char *v[] = {c->channel, c->region,    c->isp,     c->client,
                       c->build,   c->rendition, sc->path_id ? sc->path_id : ""};
    for (int i = 0; i < 7; i++)
        sqlite3_bind_text(st, 4 + i, v[i], -1, SQLITE_STATIC);
    return st;
}

struct rows {
    struct qoe_row *p;
    size_t n, cap;
};

static int push(struct rows *r)
{
    if (r->n < r->cap)
        return 0;
    size_t cap = r->cap ? 2 * r->cap : 16;
    struct qoe_row *p = realloc(r->p, cap * sizeof *p);
    if (!p)
        return -1;
    r->p = p;
    r->cap = cap;
    return 0;
}

/* One session of the scope and the records read for it. */
struct sess {
    char id[80], path[SIT_STR];
    bool fetched;
    struct rows rows;
};

struct sessions {
    struct sess *p;
    size_t n, cap;
    int64_t lo, hi;   /* the rowids of every record of theirs lie in [lo, hi]; lo > hi: none */
};

static int list_sessions(sqlite3 *db, const struct qoe_scope *sc, struct sessions *out)
{
    sqlite3_stmt *st = prepare_scope(db, sessions_sql, sc);
    if (!st)
        return -1;
    int rc, bad = 0;
    out->lo = INT64_MAX;
    out->hi = INT64_MIN;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->n == out->cap) {
            size_t cap = out->cap ? 2 * out->cap : 64;
            struct sess *p = realloc(out->p, cap * sizeof *p);
            if (!p) {
                bad = -1;
                break;
            }
            out->p = p;
            out->cap = cap;
        }
        struct sess *e = &out->p[out->n++];
        memset(e, 0, sizeof *e);
        snprintf(e->id, sizeof e->id, "%s", (const char *)sqlite3_column_text(st, 0));
        e->fetched = sqlite3_column_int(st, 1) != 0;
        const char *path = (const char *)sqlite3_column_text(st, 2);
        snprintf(e->path, sizeof e->path, "%s", path ? path : "");
        if (sqlite3_column_type(st, 3) == SQLITE_INTEGER) {
            int64_t first = sqlite3_column_int64(st, 3), last = sqlite3_column_int64(st, 4);
            out->lo = first < out->lo ? first : out->lo;
            out->hi = last > out->hi ? last : out->hi;
        }
    }
    if (!bad && rc != SQLITE_DONE)
        bad = -1;
    sqlite3_finalize(st);
    return bad;
}

static int by_id(const void *key, const void *elem)
{
    return strcmp(key, ((const struct sess *)elem)->id);
}

/* Every record of the listed sessions, read once in the order stored (a
 * sequential read of the table between their first and last rowid:
 * reading each session's records through the key's index cost one table
 * lookup per record, most of the time over a million records), handed to
 * its session; other sessions' records in that range are passed over. */
static int read_records(sqlite3 *db, struct sessions *ss)
{
    if (ss->lo > ss->hi)
        return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, records_sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, ss->lo);
    sqlite3_bind_int64(st, 2, ss->hi);
    struct cmcd_record *scratch = malloc(sizeof *scratch);
    int rc, bad = scratch ? 0 : -1;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct sess *e = bsearch(sqlite3_column_text(st, 0), ss->p, ss->n, sizeof *ss->p, by_id);
        if (!e || (bad = push(&e->rows)) != 0)
            continue;
        struct qoe_row *r = &e->rows.p[e->rows.n++];
        row_of(st, r, scratch);
        const char *served = (const char *)sqlite3_column_text(st, 9);
        r->elsewhere = served && strcmp(served, e->path) != 0;
    }
    if (!bad && rc != SQLITE_DONE)
        bad = -1;
    free(scratch);
    sqlite3_finalize(st);
    return bad;
}

/* Every session of the scope into a, in id order, in one read
 * transaction; 0 or -1. */
static int aggregate(sqlite3 *db, const struct qoe_scope *sc, const struct qoe_rules *rules,
                     struct qoe_agg *a)
{
    /* Reading a million records: mapped pages instead of a read() each. */
    sqlite3_exec(db, "PRAGMA mmap_size = 1073741824", NULL, NULL, NULL);
    bool own = sqlite3_get_autocommit(db) && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    struct sessions ss = {0};
    int bad = list_sessions(db, sc, &ss);
    if (!bad)
        bad = read_records(db, &ss);
    for (size_t i = 0; i < ss.n; i++) {
        struct qoe_session out;
        if (!bad) {
            qoe_session_outcome(ss.p[i].fetched, ss.p[i].rows.p, ss.p[i].rows.n, &out);
            bad = qoe_agg_add(a, rules, &out) != 0 ? -1 : 0;
        }
        free(ss.p[i].rows.p);
    }
    free(ss.p);
    if (own)
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return bad;
}

/* Report totals of the scope's sessions. */
static json_t *report_totals(sqlite3 *db, const struct qoe_scope *sc)
{
    static const char sql[] =
        "SELECT count(*), coalesce(sum(reports),0), coalesce(sum(invalid_values),0), "
        "coalesce(sum(refused_records),0) FROM sessions s" SCOPE_WHERE;
    sqlite3_stmt *st = prepare_scope(db, sql, sc);
    json_t *o = NULL;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        o = json_pack("{s:I,s:I,s:I,s:I}", "sessions", (json_int_t)sqlite3_column_int64(st, 0),
                      "records", (json_int_t)sqlite3_column_int64(st, 1), "invalid_values",
                      (json_int_t)sqlite3_column_int64(st, 2), "refused_records",
                      (json_int_t)sqlite3_column_int64(st, 3));
    sqlite3_finalize(st);
    return o;
}

long long qoe_count_sessions(sqlite3 *db, const struct qoe_scope *sc)
{
    static const char sql[] = "SELECT count(*) FROM sessions s" SCOPE_WHERE;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sessions", -1, &st, NULL) != SQLITE_OK)
        return 0; /* schema 1 or 2: no session */
    sqlite3_finalize(st);
    st = prepare_scope(db, sql, sc);
    long long n = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}

static const char *count_name(enum qoe_count c)
{
    return c == QOE_AS_FAILURE ? "failure" : c == QOE_AS_EXCLUDED ? "excluded" : "unknown";
}

static json_t *cohort_json(const struct sit_cohort *c)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "channel", c->channel, "region", c->region,
                     "isp", c->isp, "client", c->client, "build", c->build, "rendition",
                     c->rendition);
}

static json_t *provenance(const struct qoe_scope *sc, const struct qoe_rules *r,
                          struct qoe_agg *a, json_t *totals)
{
    json_t *classes = json_object();
    for (int c = QOE_UNKNOWN; c < QOE_N_CLASSES; c++)
        json_object_set_new(classes, qoe_class_name((enum qoe_class)c),
                            json_integer(a->by_class[c]));
    json_t *startup = json_pack("{s:I}", "n", (json_int_t)a->n_startups);
    if (a->n_startups) {
        json_object_set_new(startup, "p50_ms", json_integer(qoe_agg_percentile(a, 50)));
        json_object_set_new(startup, "p90_ms", json_integer(qoe_agg_percentile(a, 90)));
        json_object_set_new(startup, "p99_ms", json_integer(qoe_agg_percentile(a, 99)));
    }
    int64_t ratio = 0;
    json_t *rebuffer = json_pack("{s:o,s:o,s:I,s:I,s:I,s:I}", "ratio",
                                 qoe_agg_rebuffer_ratio(a, &ratio) ? exact_num(ratio) : json_null(),
                                 "completeness", exact_num(qoe_agg_completeness(a)),
                                 "observed_ms", (json_int_t)a->observed_ms, "span_ms",
                                 (json_int_t)a->span_ms, "playing_ms", (json_int_t)a->playing_ms,
                                 "rebuffering_ms", (json_int_t)a->rebuffer_ms);
    return json_pack("{s:s,s:s?,s:s?,s:{s:I,s:I},s:o,s:I,s:I,s:I,s:o,s:o,s:o,s:{s:s,s:s,s:o}}",
                     "source", "sessions", "grant_id", sc->grant_id, "path_id", sc->path_id,
                     "window", "since_ms", (json_int_t)sc->since_ms, "until_ms",
                     (json_int_t)sc->until_ms, "classes", classes, "unused",
                     (json_int_t)a->by_class[QOE_UNUSED], "excluded", (json_int_t)a->excluded,
                     "sessions_with_sn_gaps", (json_int_t)a->sn_gaps, "reports",
                     totals ? totals : json_null(), "startup", startup, "rebuffer", rebuffer,
                     "policy", "exit_before_start", count_name(r->exit_before_start),
                     "autoplay_refused", count_name(r->autoplay_refused), "min_completeness",
                     exact_num(r->min_completeness));
}

/* The members decide reads, in the situation's order; a metric that
 * cannot be computed is left out. */
static json_t *qoe_object(const struct sit_cohort *cohort, const struct qoe_rules *r,
                          struct qoe_agg *a)
{
    json_t *o = json_object();
    if (a->observed_at_ms)
        json_object_set_new(o, "observed_at_ms", json_integer(a->observed_at_ms));
    json_object_set_new(o, "cohort", cohort_json(cohort));
    json_object_set_new(o, "attempts", json_integer(a->attempts));
    json_object_set_new(o, "successes", json_integer(a->successes));
    json_object_set_new(o, "failures", json_integer(a->failures));
    json_object_set_new(o, "unknown", json_integer(a->unknown));
    if (a->n_startups) {
        json_object_set_new(o, "startup_p50_ms", exact_num(qoe_agg_percentile(a, 50) * 1000000));
        json_object_set_new(o, "startup_p90_ms", exact_num(qoe_agg_percentile(a, 90) * 1000000));
    }
    int64_t ratio;
    if (qoe_agg_rebuffer_ratio(a, &ratio))
        json_object_set_new(o, "rebuffer_ratio", exact_num(ratio));
    json_object_set_new(o, "complete",
                        json_boolean(qoe_agg_completeness(a) >= r->min_completeness));
    json_object_set_new(o, "unused", json_integer(a->by_class[QOE_UNUSED]));
    json_object_set_new(o, "out_of_context", json_integer(a->out_of_context));
    return o;
}

/* The cohort of a grant's sessions (for the object), from the grants row. */
static int grant_cohort(sqlite3 *db, const char *grant_id, struct sit_cohort *c)
{
    static const char sql[] = "SELECT channel, region, isp, client, build, rendition FROM "
                              "grants WHERE id = ?1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, grant_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    char *f[] = {c->channel, c->region, c->isp, c->client, c->build, c->rendition};
    for (int i = 0; rc == 0 && i < 6; i++)
        snprintf(f[i], SIT_STR, "%s", (const char *)sqlite3_column_text(st, i));
    sqlite3_finalize(st);
    return rc;
}

json_t *qoe_report(sqlite3 *db, const struct qoe_scope *scope, const struct qoe_rules *rules,
                   char *err, size_t errlen)
{
    struct qoe_agg a = {0};
    struct sit_cohort cohort = scope->cohort;
    if ((scope->grant_id && grant_cohort(db, scope->grant_id, &cohort) != 0) ||
        aggregate(db, scope, rules, &a) != 0) {
        snprintf(err, errlen, "control.db: sessions: %s", sqlite3_errmsg(db));
        qoe_agg_free(&a);
        return NULL;
    }
    json_t *o = qoe_object(&cohort, rules, &a);
    json_object_set_new(o, "provenance", provenance(scope, rules, &a, report_totals(db, scope)));
    qoe_agg_free(&a);
    return o;
}
