/* Helpers for the controller tests (see ctl_test.h). */
#include "ctl_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

extern const char evidence_schema_v1_sql[];

int ctl_tmp_make(struct ctl_tmp *t)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/ctltest.XXXXXX");
    return mkdtemp(t->dir) ? 0 : -1;
}

void ctl_tmp_remove(struct ctl_tmp *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", t->dir);
}

void ctl_tmp_path(const struct ctl_tmp *t, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", t->dir, name);
}

char *ctl_fixture_text(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CTL_FIXTURE_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    return b;
}

json_t *ctl_fixture_json(const char *name)
{
    char *text = ctl_fixture_text(name);
    json_t *j = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(j);
    return j;
}

json_t *ctl_cand(json_t *sit, const char *path_id)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(sit, "candidates"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "path_id")), path_id))
            return c;
    }
    fail_msg("no candidate %s", path_id);
    return NULL;
}

void ctl_set(json_t *obj, const char *dotted, json_t *v)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", dotted);
    char *key = buf, *dot;
    while ((dot = strchr(key, '.'))) {
        *dot = '\0';
        json_t *next = json_object_get(obj, key);
        if (!json_is_object(next)) {
            next = json_object();
            json_object_set_new(obj, key, next);
        }
        obj = next;
        key = dot + 1;
    }
    if (v)
        json_object_set_new(obj, key, v);
    else
        json_object_del(obj, key);
}

int ctl_evidence_db(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, evidence_schema_v1_sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL);
    if (rc == SQLITE_OK && sql)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        fprintf(stderr, "evidence db: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

void ctl_row(struct evr_set *set, const char *id, const char *path_id, const char *verdict,
             int64_t observed_at_ms)
{
    struct evr_row r;
    memset(&r, 0, sizeof r);
    evr_set_field(&r, r.id, id);
    evr_set_field(&r, r.check_kind, "exact-av-v1");
    evr_set_field(&r, r.reason, "test");
    evr_set_field(&r, r.profile_id, "decode-profile-v1");
    evr_set_field(&r, r.path_id, path_id);
    evr_set_field(&r, r.channel, "news-1");
    evr_set_field(&r, r.rendition, "720p");
    evr_set_field(&r, r.program_version, "pv-42");
    evr_set_field(&r, r.reference_version, "ref-1");
    r.verdict = evr_verdict_parse(verdict);
    r.observed_at_ms = observed_at_ms;
    r.recorded_at_ms = observed_at_ms + 1000;
    assert_int_equal(evr_append(set, &r), 0);
}

void ctl_decide(const json_t *sit, const struct evr_set *rows, struct sit_situation *s,
                struct dcn_result *r)
{
    char *text = json_dumps(sit, JSON_COMPACT);
    char err[256] = "";
    int rc = sit_parse(text, strlen(text), s, err, sizeof err);
    free(text);
    if (rc != 0)
        fail_msg("situation rejected: %s", err);
    assert_int_equal(dcn_decide(s, s->decision_time_ms, rows, r), 0);
}

size_t ctl_idx(const struct dcn_result *r, const char *path_id)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->c[i].path_id, path_id))
            return i;
    fail_msg("no candidate %s in result", path_id);
    return 0;
}

enum cond_status ctl_status(const struct dcn_result *r, const char *path_id, enum cond_kind k)
{
    return r->c[ctl_idx(r, path_id)].cond[k].status;
}

const char *ctl_reason(const struct dcn_result *r, const char *path_id, enum cond_kind k)
{
    return r->c[ctl_idx(r, path_id)].cond[k].reason;
}

void ctl_write_json(const struct ctl_tmp *t, const char *name, const json_t *sit, char *out,
                    size_t n)
{
    ctl_tmp_path(t, name, out, n);
    assert_int_equal(json_dump_file(sit, out, JSON_INDENT(1)), 0);
}

int ctl_run(const struct ctl_tmp *t, const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out.txt' 2>'%s/err.txt'", CTL_STEPCTL, args, t->dir,
             t->dir);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *ctl_out(const struct ctl_tmp *t, const char *which)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.txt", t->dir, which);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 20;
    char *b = calloc(1, cap + 1);
    assert_non_null(b);
    size_t n = fread(b, 1, cap, f);
    b[n] = '\0';
    fclose(f);
    return b;
}

int64_t ctl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ctl_shift_ms(json_t *j, int64_t delta)
{
    const char *k;
    json_t *v;
    size_t i;
    if (json_is_array(j)) {
        json_array_foreach(j, i, v) ctl_shift_ms(v, delta);
        return;
    }
    if (!json_is_object(j))
        return;
    json_object_foreach(j, k, v)
    {
        /* Times only: startup_p90_ms and the like are durations. */
        bool time = !strcmp(k, "decision_time_ms") || !strcmp(k, "observed_at_ms") ||
                    !strcmp(k, "start_ms") || !strcmp(k, "end_ms");
        if (json_is_integer(v) && time)
            json_integer_set(v, json_integer_value(v) + delta);
        else
            ctl_shift_ms(v, delta);
    }
}

json_t *ctl_situation_at(const char *name, int64_t at_ms)
{
    json_t *s = ctl_fixture_json(name);
    ctl_shift_ms(s, at_ms - json_integer_value(json_object_get(s, "decision_time_ms")));
    return s;
}

void ctl_evidence_sql(char *buf, size_t n, const char *id, const char *path_id,
                      const char *verdict, int64_t observed_at_ms, bool tracks)
{
    char report[160] = "{}";
    if (tracks)
        snprintf(report, sizeof report,
                 "{\"video\":{\"verdict\":\"%s\"},\"audio\":{\"verdict\":\"%s\"}}", verdict,
                 verdict);
    snprintf(buf, n,
             "INSERT INTO evidence (id, check_kind, verdict, reason, profile_id, "
             "profile_fingerprint, path_id, channel, rendition, program_version, "
             "reference_version, object, interval_start, interval_end, observed_at_ms, "
             "observed_end_ms, recorded_at_ms, report) VALUES ('%s', 'exact-av-v1', '%s', '%s', "
             "'decode-profile-v1', 'fp-1', '%s', 'news-1', '720p', 'pv-42', 'ref-1', 'obj', 0, 1, "
             "%lld, %lld, %lld, '%s');",
             id, verdict, !strcmp(verdict, "MATCH") ? "match" : "video_plane_differs", path_id,
             (long long)observed_at_ms, (long long)observed_at_ms + 1,
             (long long)observed_at_ms + 2, report);
}

int ctl_decide_cli(const struct ctl_tmp *t, const char *name, const json_t *sit, const char *ev,
                   const char *db, char id[33])
{
    char path[256];
    ctl_write_json(t, name, sit, path, sizeof path);
    int rc = ctl_run(t, "decide --input '%s' --evidence '%s' --db '%s' --json", path, ev, db);
    id[0] = '\0';
    if (rc == 0 || rc == 4) {
        char *out = ctl_out(t, "out");
        json_t *j = json_loads(out, 0, NULL);
        snprintf(id, 33, "%s", json_string_value(json_object_get(j, "decision_id")));
        json_decref(j);
        free(out);
    }
    return rc;
}

int ctl_grant_cli(const struct ctl_tmp *t, const char *db, const char *decision,
                  const char *args, char id[33])
{
    int rc = ctl_run(t, "grant %s --db '%s' %s", decision, db, args ? args : "");
    char *out = ctl_out(t, "out");
    id[0] = '\0';
    if (rc == 0)
        sscanf(out, "%32s", id);
    free(out);
    return rc;
}

long long ctl_query_int(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

void ctl_world_evidence(struct ctl_world *w, const char *id, const char *path,
                        const char *verdict, int64_t at, bool tracks)
{
    char sql[1024];
    ctl_evidence_sql(sql, sizeof sql, id, path, verdict, at, tracks);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(w->ev, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

void ctl_world_begin(struct ctl_world *w)
{
    assert_int_equal(ctl_tmp_make(&w->t), 0);
    ctl_tmp_path(&w->t, "evidence.db", w->ev, sizeof w->ev);
    ctl_tmp_path(&w->t, "control.db", w->db, sizeof w->db);
    assert_int_equal(ctl_evidence_db(w->ev, NULL), 0);
    w->now = ctl_now_ms();
    ctl_world_evidence(w, "ev-c-pre", "C", "MATCH", w->now - 300000, true);
    ctl_world_evidence(w, "ev-a-pre", "A", "MISMATCH", w->now - 120000, true);
}

void ctl_world_end(struct ctl_world *w)
{
    ctl_tmp_remove(&w->t);
}

json_t *ctl_world_situation(const struct ctl_world *w)
{
    return ctl_situation_at("main_situation.json", w->now - 1000);
}

void ctl_fast(json_t *sit)
{
    ctl_set(sit, "action.max_rate_per_s", json_integer(100000));
    ctl_set(sit, "policy.grant.max_burst", json_integer(100000));
}
