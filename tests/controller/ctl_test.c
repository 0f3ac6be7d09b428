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
#include <stdbool.h>

#include <cmocka.h>
#include <sqlite3.h>


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

json_t *ctl_report(const char *rel)
{
    char path[512];
    json_error_t je;
    snprintf(path, sizeof path, "%s/%s", CTL_FIXTURE_DIR, rel);
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("%s: %s", path, je.text);
    return j;
}

void ctl_import(const char *db_path, const json_t *report)
{
    struct evidence_db *db = NULL;
    char err[512] = "";
    if (evidence_open(db_path, EVIDENCE_OPEN_RW, &db, err, sizeof err) != EVIDENCE_OK)
        fail_msg("%s: %s", db_path, err);
    char *text = json_dumps(report, JSON_COMPACT);
    int inserted = 0;
    assert_non_null(text);
    if (evidence_import_report(db, text, strlen(text), &inserted, err, sizeof err) != EVIDENCE_OK)
        fail_msg("import refused: %s", err);
    free(text);
    evidence_close(db);
}

void ctl_evidence_store(const char *db_path, const char *dir)
{
    static const char *const names[] = {"a-old.json", "a-new.json", "c.json", "d.json"};
    struct evidence_db *db = NULL;
    char err[512] = "";
    if (evidence_open(db_path, EVIDENCE_OPEN_RW, &db, err, sizeof err) != EVIDENCE_OK)
        fail_msg("%s: %s", db_path, err);
    evidence_close(db);
    for (size_t i = 0; dir && i < sizeof names / sizeof names[0]; i++) {
        char rel[256], path[512];
        snprintf(rel, sizeof rel, "%s/%s", dir, names[i]);
        snprintf(path, sizeof path, "%s/%s", CTL_FIXTURE_DIR, rel);
        if (access(path, R_OK) != 0)
            continue;
        json_t *r = ctl_report(rel);
        ctl_import(db_path, r);
        json_decref(r);
    }
}

int ctl_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

void ctl_row(struct evidence_rows *set, const char *id, const char *path_id, const char *verdict,
             int64_t observed_at_ms)
{
    struct evidence_row r;
    memset(&r, 0, sizeof r);
    evidence_row_set(&r, r.id, id);
    evidence_row_set(&r, r.check_kind, "exact-av-v1");
    evidence_row_set(&r, r.reason, !strcmp(verdict, "MATCH")      ? "identical"
                                   : !strcmp(verdict, "MISMATCH") ? "video_pixels"
                                                                  : "continuity_gap");
    evidence_row_set(&r, r.profile_id, "exact-av-v1");
    evidence_row_set(&r, r.path_id, path_id);
    evidence_row_set(&r, r.channel, "news-1");
    evidence_row_set(&r, r.rendition, "720p");
    evidence_row_set(&r, r.program_version, "pv-42");
    evidence_row_set(&r, r.reference_version, "ref-1");
    assert_true(evidence_verdict_parse(verdict, &r.verdict));
    r.observed_at_ms = observed_at_ms;
    r.recorded_at_ms = observed_at_ms + 1000;
    assert_int_equal(evidence_rows_append(set, &r), 0);
}

void ctl_decide(const json_t *sit, const struct evidence_rows *rows, struct sit_situation *s,
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

/* Runs "[prefix] PROGRAM args" through /bin/sh, stdout and stderr to
 * dir/out.txt and dir/err.txt (the shell opens them, not the program). */
static int run_sh(const struct ctl_tmp *t, const char *prefix, const char *program,
                  const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s'%s' %s >'%s/out.txt' 2>'%s/err.txt'", prefix, program, args,
             t->dir, t->dir);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int vrun(const struct ctl_tmp *t, const char *prefix, const char *program, const char *fmt,
                va_list ap)
{
    char args[4096];
    vsnprintf(args, sizeof args, fmt, ap);
    return run_sh(t, prefix, program, args);
}

int ctl_run(const struct ctl_tmp *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vrun(t, "", CTL_STEPCTL, fmt, ap);
    va_end(ap);
    return rc;
}

int ctl_run_program(const struct ctl_tmp *t, const char *program, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vrun(t, "", program, fmt, ap);
    va_end(ap);
    return rc;
}

bool ctl_reader_is_other_user(void)
{
    return geteuid() == 0 && system("command -v setpriv >/dev/null 2>&1") == 0;
}

int ctl_run_reader(const struct ctl_tmp *t, const char *fmt, ...)
{
    /* root passes every permission check: read as user nobody instead */
    const char *as = ctl_reader_is_other_user() ? "setpriv --reuid=65534 --regid=65534 --clear-groups "
                                                : "";
    va_list ap;
    va_start(ap, fmt);
    int rc = vrun(t, as, CTL_STEPCTL, fmt, ap);
    va_end(ap);
    return rc;
}

int ctl_run_ro_mount(const struct ctl_tmp *t, const char *dir, const char *fmt, ...)
{
    char args[4096], script[128];
    if (geteuid() != 0 || system("unshare -m true >/dev/null 2>&1") != 0)
        return -2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(script, sizeof script, "%s/ro-mount.sh", t->dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "mount --bind '%s' '%s' && mount -o remount,bind,ro '%s' '%s' || exit 200\n"
               "exec '%s' %s\n", dir, dir, dir, dir, CTL_STEPCTL, args);
    fclose(f);
    int rc = run_sh(t, "unshare -m sh ", script, "");
    return rc == 200 ? -2 : rc; /* 200: no right to mount here */
}

void ctl_assert_seven_answers(const char *out)
{
    for (int k = 1; k <= 7; k++) {
        char h[8];
        snprintf(h, sizeof h, "\n%d. ", k);
        if (!strstr(out, h))
            fail_msg("explain lacks answer %d:\n%s", k, out);
    }
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
             "'exact-av-v1', 'fp-1', '%s', 'news-1', '720p', 'pv-42', 'ref-1', 'obj', 0, 1, "
             "%lld, %lld, %lld, '%s');",
             id, verdict, !strcmp(verdict, "MATCH") ? "identical" : "video_pixels", path_id,
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

long long ctl_queryf(const char *db, const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof sql);
    return ctl_query_int(db, sql);
}

void ctl_world_evidence(struct ctl_world *w, const char *id, const char *path,
                        const char *verdict, int64_t at, bool tracks)
{
    ctl_world_evidence_of(w, id, path, NULL, verdict, at, tracks);
}

void ctl_world_evidence_of(struct ctl_world *w, const char *id, const char *path,
                           const char *rendition, const char *verdict, int64_t at, bool tracks)
{
    ctl_world_evidence_under(w, id, path, rendition, verdict, at, tracks, NULL);
}

void ctl_world_evidence_under(struct ctl_world *w, const char *id, const char *path,
                              const char *rendition, const char *verdict, int64_t at, bool tracks,
                              const char *alloc)
{
    /* A real `exactav verify` report (fixtures/controller/README.md) moved to
     * this id, path and time, which the rules of a valid report leave free. */
    bool mismatch = !strcmp(verdict, "MISMATCH");
    if (!mismatch && strcmp(verdict, "MATCH"))
        fail_msg("ctl_world_evidence: %s: only MATCH and MISMATCH reports are fixtures", verdict);
    json_t *rep = ctl_report(mismatch ? "main_evidence/a-new.json" : "main_evidence/c.json");
    char iso[40];
    time_t sec = (time_t)(at / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t k = strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(iso + k, sizeof iso - k, ".%03dZ", (int)(at % 1000));
    json_object_set_new(rep, "evidence_id", json_string(id));
    ctl_set(rep, "context.path_id", json_string(path));
    if (rendition)
        ctl_set(rep, "context.rendition", json_string(rendition));
    if (alloc) { /* a check delivered under an allocation (evidence schema v6) */
        ctl_set(rep, "context.allocation_id", json_string(alloc));
        ctl_set(rep, "context.pathway", json_string(path));
    }
    json_object_set_new(rep, "observed_at", json_string(iso));
    json_object_set_new(rep, "observed_at_ms", json_integer(at));
    json_object_set_new(rep, "observed_end_ms", json_integer(at + 150));
    if (!tracks) /* a reference without audio: only the video track is shown */
        json_object_set_new(rep, "audio", json_null());
    ctl_import(w->ev, rep);
    json_decref(rep);
}

void ctl_world_forged(struct ctl_world *w, const char *id, const char *path, const char *verdict,
                      int64_t at)
{
    char sql[1024];
    ctl_evidence_sql(sql, sizeof sql, id, path, verdict, at, true);
    assert_int_equal(ctl_sql(w->ev, sql), 0);
}

void ctl_world_begin(struct ctl_world *w)
{
    assert_int_equal(ctl_tmp_make(&w->t), 0);
    ctl_tmp_path(&w->t, "evidence.db", w->ev, sizeof w->ev);
    ctl_tmp_path(&w->t, "control.db", w->db, sizeof w->db);
    ctl_evidence_store(w->ev, NULL);
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

void ctl_observations(const struct ctl_tmp *t, const json_t *sit, const char *name, char *path,
                      size_t n)
{
    json_t *c = json_deep_copy(ctl_cand((json_t *)sit, "C"));
    int64_t now = ctl_now_ms();
    json_t *obs = json_pack("{s:O,s:O,s:O}", "access", json_object_get(c, "access"), "qoe",
                            json_object_get(c, "qoe"), "resources",
                            json_object_get(c, "resources"));
    json_decref(c);
    int64_t latest = 0;
    const char *k;
    json_t *v;
    json_object_foreach(obs, k, v)
    {
        int64_t at = json_integer_value(json_object_get(v, "observed_at_ms"));
        latest = at > latest ? at : latest;
    }
    ctl_shift_ms(obs, now - 10 - latest); /* the newest observation: just now */
    ctl_write_json(t, name, obs, path, n);
    json_decref(obs);
}

void ctl_tune_c(json_t *sit, bool drop, int step_rps)
{
    json_t *c = ctl_cand(sit, "C"), *win, *it;
    size_t i, j;
    json_array_foreach(json_object_get(json_object_get(c, "resources"), "windows"), i, win)
        json_array_foreach(json_object_get(win, "items"), j, it)
    {
        if (drop)
            json_object_del(it, "commitments_upper");
        if (step_rps >= 0 && !strcmp(json_string_value(json_object_get(it, "resource")), "origin") &&
            !strcmp(json_string_value(json_object_get(it, "metric")), "rps"))
            json_object_set_new(it, "step_upper", json_integer(step_rps));
    }
}

void ctl_other_isp(json_t *sit, const char *isp)
{
    ctl_set(sit, "action.cohort.isp", json_string(isp));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(sit, "candidates"), i, c)
        ctl_set(c, "qoe.cohort.isp", json_string(isp));
}

void ctl_fast(json_t *sit)
{
    ctl_set(sit, "action.max_rate_per_s", json_integer(100000));
    ctl_set(sit, "policy.grant.max_burst", json_integer(100000));
}

json_t *ctl_out_json(const struct ctl_tmp *t)
{
    char *text = ctl_out(t, "out");
    json_t *j = json_loads(text, 0, NULL);
    if (!j)
        fail_msg("stdout is not JSON: %s", text);
    free(text);
    return j;
}

void ctl_write_text(const struct ctl_tmp *t, const char *name, const char *text, char *path,
                    size_t n)
{
    ctl_tmp_path(t, name, path, n);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}
