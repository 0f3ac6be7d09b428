/* test_controller_prom.c - resource feedback from a real Prometheus
 * (issue 17, docs/controller.md "Resource feedback from Prometheus").
 *
 * A loopback exporter in this process (libmicrohttpd) exposes request and
 * byte counters of an origin, a shield and a CDN path growing at fixed
 * rates; Debian's prometheus scrapes it every 250 ms on 127.0.0.1 with its
 * own config and data directory (tests/promtool.h).  A grant's step is
 * reviewed by the stepctl binary: a load above the decision's forecast
 * closes issuance (VIOLATION resources_outside_model), a load within it
 * passes and gives the next step's forecast; a stopped Prometheus, an error
 * answer, no series, several series, a slow server and bad answers are
 * UNKNOWN.  The same exporter plays a broken Prometheus where a real one
 * cannot be made to answer badly (slow, 10 MB). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <microhttpd.h>
#include <sqlite3.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "feedback.h"
#include "promtool.h"
#include "serve_rig.h"
#include "test_named.h"

/* ---- the loopback exporter (and broken Prometheus) ------------------------- */

enum fake { FAKE_NONE, FAKE_SLOW, FAKE_BIG, FAKE_HTML };

struct loopback {
    struct MHD_Daemon *d;
    int port;
    struct timespec t0;
    long origin_rps; /* the origin's request rate; bytes: 1000 per request */
    enum fake fake;  /* what /api/v1/query_range answers */
};

static long elapsed_ms(const struct loopback *lb)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - lb->t0.tv_sec) * 1000 + (t.tv_nsec - lb->t0.tv_nsec) / 1000000;
}

static char *metrics_text(const struct loopback *lb)
{
    long ms = elapsed_ms(lb);
    char *b = malloc(2048);
    snprintf(b, 2048,
             "# TYPE exactav_test_requests_total counter\n"
             "exactav_test_requests_total{tier=\"origin\"} %ld\n"
             "exactav_test_requests_total{tier=\"shield\"} %ld\n"
             "# TYPE exactav_test_bytes_total counter\n"
             "exactav_test_bytes_total{tier=\"origin\"} %ld\n"
             "exactav_test_bytes_total{tier=\"shield\"} %ld\n"
             "exactav_test_bytes_total{tier=\"cdn\",path=\"C\"} %ld\n",
             lb->origin_rps * ms / 1000, 2 * lb->origin_rps * ms / 1000, lb->origin_rps * ms,
             2 * lb->origin_rps * ms, 20 * lb->origin_rps * ms);
    return b;
}

static char *fake_answer(const struct loopback *lb, size_t *len)
{
    if (lb->fake == FAKE_SLOW)
        sleep(3); /* the client gives up long before */
    if (lb->fake == FAKE_HTML) {
        *len = strlen("<html><body>502 Bad Gateway</body></html>");
        return strdup("<html><body>502 Bad Gateway</body></html>");
    }
    size_t n = lb->fake == FAKE_BIG ? 10u * 1024 * 1024 : 64;
    char *b = malloc(n + 1);
    memset(b, ' ', n);
    memcpy(b, "{\"status\":\"success\"", 19);
    b[n] = '\0';
    *len = n;
    return b;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_len, void **ctx)
{
    (void)method, (void)version, (void)upload, (void)upload_len, (void)ctx;
    struct loopback *lb = cls;
    size_t len = 0;
    char *body = NULL;
    if (!strcmp(url, "/metrics")) {
        body = metrics_text(lb);
        len = strlen(body);
    } else if (!strcmp(url, "/api/v1/query_range") && lb->fake != FAKE_NONE)
        body = fake_answer(lb, &len);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body ? body : (void *)"",
                                                             body ? MHD_RESPMEM_MUST_FREE
                                                                  : MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok = MHD_queue_response(c, body ? 200 : 404, r);
    MHD_destroy_response(r);
    return ok;
}

static void loopback_start(struct loopback *lb, long origin_rps, enum fake fake)
{
    memset(lb, 0, sizeof *lb);
    lb->origin_rps = origin_rps;
    lb->fake = fake;
    clock_gettime(CLOCK_MONOTONIC, &lb->t0);
    lb->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                             NULL, NULL, on_request, lb, MHD_OPTION_SOCK_ADDR, NULL,
                             MHD_OPTION_END);
    assert_non_null(lb->d);
    lb->port = MHD_get_daemon_info(lb->d, MHD_DAEMON_INFO_BIND_PORT)->port;
}

static void loopback_stop(struct loopback *lb)
{
    MHD_stop_daemon(lb->d);
}

/* ---- a world with Prometheus --------------------------------------------- */

struct rig {
    struct ctl_world w;
    struct loopback lb;
    pid_t prom;
    int prom_port;
};

static void rig_begin(struct rig *r, long origin_rps)
{
    promtool_skip_unless("prometheus");
    ctl_world_begin(&r->w);
    loopback_start(&r->lb, origin_rps, FAKE_NONE);
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "global: {scrape_interval: 250ms, evaluation_interval: 250ms}\n"
             "scrape_configs:\n"
             "  - job_name: loopback\n"
             "    static_configs: [{targets: ['127.0.0.1:%d']}]\n",
             r->lb.port);
    r->prom = promtool_server_start(r->w.t.dir, yaml, &r->prom_port);
    if (r->prom < 0)
        fail_msg("prometheus did not start: %s", ctl_out(&r->w.t, "prometheus.log"));
    /* the step begins once Prometheus has rates to give */
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/v1/query?query=sum(rate("
                              "exactav_test_requests_total[2s]))", r->prom_port);
    bool ready = false;
    for (int i = 0; i < 120 && !ready; i++) {
        struct cdn_http h = {0};
        ready = cdn_http(NULL, url, NULL, NULL, &h) == 0 && h.status == 200 && h.body &&
                strstr(h.body, "\"value\"");
        cdn_http_free(&h);
        if (!ready)
            usleep(250000);
    }
    assert_true(ready);
}

static void rig_end(struct rig *r)
{
    promtool_server_stop(r->prom);
    loopback_stop(&r->lb);
    ctl_world_end(&r->w);
}

/* The five queries of the forecast; extra replaces the origin rps one. */
static json_t *feedback_policy(int port, const char *origin_rps_promql, int timeout_ms)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    return json_pack(
        "{s:{s:s,s:i,s:i,s:[{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s}]}}",
        "prometheus", "url", url, "timeout_ms", timeout_ms, "step_s", 1, "queries", "resource",
        "origin", "metric", "rps", "promql",
        origin_rps_promql ? origin_rps_promql
                          : "sum(rate(exactav_test_requests_total{tier=\"origin\"}[2s]))",
        "resource", "origin", "metric", "bytes_per_s", "promql",
        "sum(rate(exactav_test_bytes_total{tier=\"origin\"}[2s]))", "resource", "shield",
        "metric", "rps", "promql", "sum(rate(exactav_test_requests_total{tier=\"shield\"}[2s]))",
        "resource", "shield", "metric", "bytes_per_s", "promql",
        "sum(rate(exactav_test_bytes_total{tier=\"shield\"}[2s]))", "resource", "cdn", "metric",
        "bytes_per_s", "promql",
        "sum(rate(exactav_test_bytes_total{tier=\"cdn\",path=\"${path_id}\"}[2s]))");
}

/* C's origin rps forecast in every window: background, commitments, step. */
static void origin_rps_forecast(json_t *sit, int bg, int commitments, int step)
{
    json_t *win, *it;
    size_t i, j;
    json_array_foreach(json_object_get(json_object_get(ctl_cand(sit, "C"), "resources"),
                                       "windows"), i, win)
        json_array_foreach(json_object_get(win, "items"), j, it)
    {
        if (strcmp(json_string_value(json_object_get(it, "resource")), "origin") ||
            strcmp(json_string_value(json_object_get(it, "metric")), "rps"))
            continue;
        json_object_set_new(it, "background_upper", json_integer(bg));
        json_object_set_new(it, "commitments_upper", json_integer(commitments));
        json_object_set_new(it, "step_upper", json_integer(step));
    }
}

static const char *s_(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Decides sit (now), grants 20 on C, allocates one through `stepctl serve`,
 * lets the step run for run_s, adds a MATCH observed during the step and
 * reviews it with observations (without resources when no_resources).
 * Returns the answer of next (exit code expected: code); g: the grant. */
static json_t *step_reviewed(struct ctl_world *w, json_t *sit, int run_s, bool no_resources,
                             int code, char g[33])
{
    char d[33], obs[160];
    ctl_fast(sit);
    if (ctl_decide_cli(&w->t, "step.json", sit, w->ev, w->db, d) != 0)
    {
        json_t *j = json_loads(ctl_out(&w->t, "out"), 0, NULL), *c;
        size_t i;
        json_array_foreach(json_object_get(j, "candidates"), i, c)
            if (!strcmp(s_(c, "path_id"), "C"))
                fail_msg("decide: C %s", json_dumps(json_object_get(json_object_get(json_object_get(c, "conditions"), "content"), "detail"), JSON_ENCODE_ANY));
        fail_msg("decide failed: %s", ctl_out(&w->t, "err"));
    }
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "--max-allocations 20", g), 0);
    struct server s;
    server_start(w, &s);
    char id[48];
    snprintf(id, sizeof id, "a-%s", g);
    json_decref(serve_allocate(s.port, id));
    server_stop(&s, SIGTERM);
    sleep((unsigned)run_s);
    ctl_world_evidence(w, g, "C", "MATCH", ctl_now_ms(), true);
    ctl_observations(&w->t, sit, "obs.json", obs, sizeof obs);
    if (no_resources) {
        json_t *o = json_load_file(obs, 0, NULL);
        json_object_del(o, "resources");
        assert_int_equal(json_dump_file(o, obs, 0), 0);
        json_decref(o);
    }
    int rc = ctl_run(&w->t, "next %s --db '%s' --evidence '%s' --input '%s' --json", g, w->db,
                     w->ev, obs);
    char *text = ctl_out(&w->t, "out");
    json_t *j = json_loads(text, 0, NULL);
    if (rc != code)
        fail_msg("next: exit %d, expected %d: %s %s", rc, code, ctl_out(&w->t, "err"),
                 json_string_value(json_object_get(j, "reason")));
    if (!j)
        fail_msg("next printed no JSON: %s", text);
    free(text);
    return j;
}

static void assert_reason(const json_t *r, const char *status, const char *needle)
{
    assert_string_equal(s_(r, "status"), status);
    if (!strstr(s_(r, "reason"), needle))
        fail_msg("reason '%s' lacks '%s'", s_(r, "reason"), needle);
}

/* The recorded feedback recomputed from the record alone (Prometheus may be
 * gone): the same verdict and checks. */
static void assert_recheck_identical(struct ctl_world *w, const char *g, const json_t *r)
{
    const json_t *rec = json_object_get(r, "resource_feedback");
    assert_non_null(rec);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(w->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    struct fb_result again;
    assert_int_equal(fb_for_grant(db, g, json_integer_value(json_object_get(rec, "end_ms")), rec,
                                  &again),
                     0);
    sqlite3_close(db);
    assert_true(again.used);
    assert_true(json_equal(again.record, (json_t *)rec));
    fb_result_free(&again);
}

/* ---- the parser, pure -------------------------------------------------------- */

static int64_t value(const char *s)
{
    int64_t v = -42;
    assert_int_equal(fb_value_micro(s, strlen(s), &v), 0);
    return v;
}

static void ctl_120_prometheus_values_are_read_exactly_and_rounded_up(void **state)
{
    (void)state;
    /* Prometheus's own strings: rounded UP to the micro-unit */
    assert_int_equal(value("0.0024999999999999988"), 2500);
    assert_int_equal(value("9.999999999999997e-07"), 1);
    assert_int_equal(value("0.000001"), 1);
    assert_int_equal(value("12"), 12000000);
    assert_int_equal(value("1e+06"), 1000000000000LL);
    assert_int_equal(value("2.5E-3"), 2500);
    assert_int_equal(value("-0.0000015"), -1); /* up: toward +inf */
    assert_int_equal(value("-3.5"), -3500000);
    assert_int_equal(value("0"), 0);
    assert_int_equal(value("1e400"), FB_SATURATED);
    assert_int_equal(value("1e-400"), 1);
    static const char *const bad[] = {"NaN", "+Inf", "-Inf", "", "1e", "abc", "1.2.3", "0x10",
                                      "1 ", "."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 7;
        assert_int_equal(fb_value_micro(bad[i], strlen(bad[i]), &v), -1);
        assert_int_equal(v, 7);
    }
    struct fb_series s;
    char err[256];
    const char *ok = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":"
                     "[{\"metric\":{},\"values\":[[1764410000.25,\"0.0024999999999999988\"],"
                     "[1764410001,\"9.999999999999997e-07\"]]}]}}";
    assert_int_equal(fb_parse(ok, strlen(ok), &s, err, sizeof err), FB_PARSE_OK);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.pts[0].t_ms, 1764410000250LL);
    assert_int_equal(s.pts[0].micro, 2500);
    assert_string_equal(s.pts[0].text, "0.0024999999999999988");
    assert_int_equal(s.pts[1].micro, 1);
    fb_series_free(&s);
}

/* Bad answers: HTML, 10 MB, garbage JSON, "NaN", "+Inf", missing values,
 * an error, no series, several series: UNKNOWN named by metric, never a
 * pass (the comparison itself writes nothing). */
static void ctl_121_bad_prometheus_answers_are_unknown(void **state)
{
    (void)state;
    static const char head[] = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                               "\"result\":";
    char nan[256], inf[256], novalues[256], several[256], none[256];
    snprintf(nan, sizeof nan, "%s[{\"metric\":{},\"values\":[[%lld,\"NaN\"]]}]}}", head,
             (long long)(CTL_T / 1000));
    snprintf(inf, sizeof inf, "%s[{\"metric\":{},\"values\":[[%lld,\"+Inf\"]]}]}}", head,
             (long long)(CTL_T / 1000));
    snprintf(novalues, sizeof novalues, "%s[{\"metric\":{}}]}}", head);
    snprintf(several, sizeof several, "%s[{\"metric\":{},\"values\":[]},{\"metric\":{},"
                                      "\"values\":[]}]}}", head);
    snprintf(none, sizeof none, "%s[]}}", head);
    char stale[256]; /* the series stopped 10 s before the end of the step */
    snprintf(stale, sizeof stale, "%s[{\"metric\":{},\"values\":[[%lld,\"1\"]]}]}}", head,
             (long long)(CTL_T / 1000 - 10));
    size_t big_n = 10u * 1024 * 1024;
    char *big = malloc(big_n);
    memset(big, ' ', big_n);
    struct {
        const char *body;
        size_t len;
        const char *reason;
    } cases[] = {
        {"<html><body>502</body></html>", 0, "resources_feedback_error"},
        {big, big_n, "resources_feedback_error"},
        {"{\"status\":\"success\",\"data\":{\"resul", 0, "resources_feedback_error"},
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}", 0,
         "resources_feedback_error"},
        {nan, 0, "resources_feedback_nan"},
        {inf, 0, "resources_feedback_nan"},
        {novalues, 0, "resources_feedback_error"},
        {several, 0, "resources_feedback_several_series"},
        {none, 0, "resources_feedback_no_data"},
        {stale, 0, "resources_feedback_stale"},
    };
    char *sit = ctl_fixture_text("main_situation.json"), perr[256];
    struct sit_situation s;
    assert_int_equal(sit_parse(sit, strlen(sit), &s, perr, sizeof perr), 0);
    const struct sit_candidate *c = NULL;
    for (size_t i = 0; i < s.n_candidates; i++)
        c = !strcmp(s.candidates[i].path_id, "C") ? &s.candidates[i] : c;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fb_obs o = {SIT_RES_ORIGIN, SIT_MET_RPS, "up", 200, cases[i].body,
                           cases[i].len ? cases[i].len : strlen(cases[i].body), ""};
        struct fb_verdict v;
        int64_t max = -1;
        json_t *checks = json_array();
        fb_check_one(c, &o, CTL_T - 20000, CTL_T, 1, checks, &v, &max);
        assert_int_equal(v.status, COND_UNKNOWN);
        assert_string_equal(v.reason, cases[i].reason);
        assert_non_null(strstr(v.detail, "origin/rps"));
        assert_int_equal(json_array_size(checks), 0);
        json_decref(checks);
    }
    free(big);
    sit_free(&s);
    free(sit);
}

/* ---- a real Prometheus -------------------------------------------------------- */

/* 50 origin rps observed; the decision forecast 10 + 5 + 5: the step ran
 * outside the model.  Issuance is closed, the answers are in the record,
 * and the verdict is recomputed from it with Prometheus stopped. */
static void ctl_122_load_above_the_forecast_closes_issuance(void **state)
{
    (void)state;
    struct rig r;
    rig_begin(&r, 50);
    json_t *sit = ctl_world_situation(&r.w);
    ctl_set(sit, "policy.feedback", feedback_policy(r.prom_port, NULL, 5000));
    origin_rps_forecast(sit, 10, 5, 5);
    char g[33];
    json_t *a = step_reviewed(&r.w, sit, 3, false, 4, g);
    assert_string_equal(s_(a, "branch"), "negative");
    assert_reason(a, "VIOLATION", "resources_outside_model");
    assert_non_null(strstr(s_(a, "reason"), "origin/rps"));
    const json_t *fb = json_object_get(a, "resource_feedback");
    assert_int_equal(json_array_size(json_object_get(fb, "queries")), 5);
    const json_t *q0 = json_array_get(json_object_get(fb, "queries"), 0);
    assert_true(strstr(s_(q0, "answer"), "\"resultType\":\"matrix\"") != NULL);
    assert_int_equal(ctl_query_int(r.w.db, "SELECT count(*) FROM grants WHERE status = 'closed' "
                                           "AND close_status = 'VIOLATION'"),
                     1);
    /* the record holds it, and it is recomputed without Prometheus */
    promtool_server_stop(r.prom);
    r.prom = -1;
    assert_recheck_identical(&r.w, g, a);
    /* stepctl replay of the review: identical; an edited record: different */
    assert_int_equal(ctl_run(&r.w.t, "replay %s --db '%s'", s_(a, "next_id"), r.w.db), 0);
    char *out = ctl_out(&r.w.t, "out");
    assert_non_null(strstr(out, "resource feedback identical (VIOLATION resources_outside_model)"));
    free(out);
    assert_int_equal(ctl_sql(r.w.db, "UPDATE next_decisions SET result = json_set(result, "
                                     "'$.resource_feedback.checks[0].observed_max', '0')"),
                     0);
    assert_int_equal(ctl_run(&r.w.t, "replay %s --db '%s'", s_(a, "next_id"), r.w.db), 3);
    json_decref(a);
    json_decref(sit);
    rig_end(&r);
}

/* The same load within the forecast: PASS, the next step proposed with a
 * forecast taken from Prometheus (background = the observed maximum, the
 * step scaled per allocation), and the proposal replays. */
static void ctl_123_load_within_the_forecast_passes_and_forecasts_the_next_step(void **state)
{
    (void)state;
    struct rig r;
    rig_begin(&r, 50);
    json_t *sit = ctl_world_situation(&r.w);
    ctl_set(sit, "policy.feedback", feedback_policy(r.prom_port, NULL, 5000));
    char g[33];
    json_t *a = step_reviewed(&r.w, sit, 3, true, 0, g);
    assert_string_equal(s_(a, "branch"), "positive");
    const json_t *fb = json_object_get(a, "resource_feedback");
    assert_string_equal(s_(fb, "status"), "PASS");
    assert_true(json_array_size(json_object_get(fb, "checks")) >= 5);
    assert_recheck_identical(&r.w, g, a);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM decisions WHERE id = '%s' AND "
                              "json_extract(situation, '$.candidates[0].resources.windows[0]."
                              "items[0].resource') = 'origin'",
             s_(a, "next_decision_id"));
    assert_int_equal(ctl_query_int(r.w.db, sql), 1);
    /* step_upper: 50 rps for 20 allocations, scaled to the next 40 */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM decisions WHERE id = '%s' AND "
                              "json_extract(situation, '$.candidates[0].resources.windows[0]."
                              "items[0].step_upper') = '100'",
             s_(a, "next_decision_id"));
    assert_int_equal(ctl_query_int(r.w.db, sql), 1);
    assert_int_equal(ctl_run(&r.w.t, "replay %s --db '%s'", s_(a, "next_decision_id"), r.w.db), 0);
    json_decref(a);
    json_decref(sit);
    rig_end(&r);
}

/* A stopped Prometheus, an error answer (bad PromQL), no series and
 * several series: UNKNOWN, named by metric; issuance closed as UNKNOWN. */
static void ctl_124_stopped_error_or_missing_series_is_unknown(void **state)
{
    (void)state;
    struct rig r;
    rig_begin(&r, 50);
    struct {
        int port; /* 0: the real one */
        const char *promql, *reason;
    } cases[] = {
        {0, "sum(rate(exactav_test_requests_total{tier=\"origin\"}[2s]", "Prometheus: "},
        {0, "sum(rate(exactav_test_requests_total{tier=\"nowhere\"}[2s]))",
         "resources_feedback_no_data"},
        {0, "rate(exactav_test_requests_total[2s])", "resources_feedback_several_series"},
        {promtool_free_port(), NULL, "resources_feedback_error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        usleep(1200000); /* the decision after the previous step's evidence */
        r.w.now = ctl_now_ms();
        json_t *sit = ctl_world_situation(&r.w);
        ctl_set(sit, "policy.feedback",
                feedback_policy(cases[i].port ? cases[i].port : r.prom_port, cases[i].promql,
                                5000));
        char g[33];
        json_t *a = step_reviewed(&r.w, sit, 1, false, 4, g);
        assert_reason(a, "UNKNOWN", cases[i].reason);
        assert_non_null(strstr(s_(a, "reason"), "origin/"));
        json_decref(a);
        json_decref(sit);
    }
    rig_end(&r);
}

/* A server that answers after 3 s is cut off at timeout_ms (300); one that
 * sends 10 MB is cut off at the body bound; HTML is not an answer. */
static void ctl_125_slow_huge_or_html_prometheus_is_cut_off(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    static const enum fake fakes[] = {FAKE_SLOW, FAKE_BIG, FAKE_HTML};
    static const char *const needles[] = {"Timeout", "larger than", "not a JSON object"};
    for (size_t i = 0; i < 3; i++) {
        struct loopback lb;
        loopback_start(&lb, 1, fakes[i]);
        usleep(1200000); /* the decision after the previous step's evidence */
        w.now = ctl_now_ms();
        json_t *sit = ctl_world_situation(&w);
        ctl_set(sit, "policy.feedback", feedback_policy(lb.port, NULL, 300));
        char g[33];
        json_t *a = step_reviewed(&w, sit, 0, false, 4, g);
        assert_reason(a, "UNKNOWN", "resources_feedback_error");
        if (!strstr(s_(a, "reason"), needles[i]))
            fail_msg("reason '%s' lacks '%s'", s_(a, "reason"), needles[i]);
        /* the bounded record: no 10 MB answer stored */
        assert_true(ctl_query_int(w.db, "SELECT max(length(result)) FROM next_decisions") <
                    FB_MAX_BODY);
        json_decref(a);
        json_decref(sit);
        loopback_stop(&lb);
    }
    ctl_world_end(&w);
}

/* A policy.feedback or policy.loop.per_allocation_upper that cannot be
 * used is refused by decide (exit 65, the field named), nothing written. */
static void ctl_126_invalid_feedback_policy_is_refused_by_decide(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    static const struct {
        const char *dotted, *value, *field;
    } cases[] = {
        {"policy.feedback", "[]", "policy.feedback"},
        {"policy.feedback.prometheus.url", "\"ftp://127.0.0.1\"", "policy.feedback.prometheus.url"},
        {"policy.feedback.prometheus.timeout_ms", "0", "timeout_ms"},
        {"policy.feedback.prometheus.step_s", "\"1\"", "step_s"},
        {"policy.feedback.prometheus.queries", "[]", "queries"},
        {"policy.feedback.prometheus.queries",
         "[{\"resource\":\"edge\",\"metric\":\"rps\",\"promql\":\"up\"}]", "queries[0]"},
        {"policy.feedback.prometheus.queries",
         "[{\"resource\":\"origin\",\"metric\":\"rps\",\"promql\":\"\"}]", "promql"},
        {"policy.feedback.prometheus.queries",
         "[{\"resource\":\"origin\",\"metric\":\"rps\",\"promql\":\"up\"},"
         "{\"resource\":\"origin\",\"metric\":\"rps\",\"promql\":\"up\"}]", "queries[1]"},
        {"policy.loop.per_allocation_upper", "{\"origin\":{\"rps\":\"0.0000001\"}}",
         "per_allocation_upper"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *sit = ctl_world_situation(&w);
        ctl_set(sit, "policy.feedback", feedback_policy(9, NULL, 1000));
        ctl_set(sit, cases[i].dotted, json_loads(cases[i].value, JSON_DECODE_ANY, NULL));
        char d[33];
        assert_int_equal(ctl_decide_cli(&w.t, "bad.json", sit, w.ev, w.db, d), 65);
        char *err = ctl_out(&w.t, "err");
        if (!strstr(err, cases[i].field))
            fail_msg("case %zu: stderr lacks '%s': %s", i, cases[i].field, err);
        free(err);
        json_decref(sit);
    }
    assert_true(ctl_query_int(w.db, "SELECT count(*) FROM decisions") <= 0);
    ctl_world_end(&w);
}
/* decide takes a left-out background_upper from the declared background
 * query (its maximum over range_s, times the factor, rounded up), records
 * the query and answer in the situation it decided, and that replays;
 * with Prometheus stopped it is refused (65), nothing written. */
static void ctl_127_decide_takes_background_upper_from_prometheus(void **state)
{
    (void)state;
    struct rig r;
    rig_begin(&r, 50);
    sleep(2);
    r.w.now = ctl_now_ms(); /* decided (1 s ago) once Prometheus has had rates */
    json_t *sit = ctl_world_situation(&r.w), *fb = feedback_policy(r.prom_port, NULL, 5000);
    json_object_set_new(json_object_get(fb, "prometheus"), "background",
                        json_pack("{s:i,s:s,s:[{s:s,s:s,s:s}]}", "range_s", 60, "factor", "1.5",
                                  "queries", "resource", "origin", "metric", "rps", "promql",
                                  "sum(rate(exactav_test_requests_total{tier=\"origin\"}[2s]))"));
    ctl_set(sit, "policy.feedback", fb);
    json_t *win, *it;
    size_t i, j;
    json_array_foreach(json_object_get(json_object_get(ctl_cand(sit, "C"), "resources"),
                                       "windows"), i, win)
        json_array_foreach(json_object_get(win, "items"), j, it)
            if (!strcmp(s_(it, "resource"), "origin") && !strcmp(s_(it, "metric"), "rps"))
                json_object_del(it, "background_upper");
    char d[33];
    if (ctl_decide_cli(&r.w.t, "bg.json", sit, r.w.ev, r.w.db, d) != 0)
        fail_msg("decide: %s", ctl_out(&r.w.t, "err"));
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM decisions, json_each(json_extract(situation, "
             "'$.candidates')) c, json_each(json_extract(c.value, '$.resources.windows')) w, "
             "json_each(json_extract(w.value, '$.items')) it WHERE decisions.id = '%s' AND "
             "json_extract(c.value, '$.path_id') = 'C' AND json_extract(it.value, "
             "'$.background_source.promql') LIKE 'sum(rate(%%' AND CAST(json_extract(it.value, "
             "'$.background_upper') AS REAL) >= 1 AND json_extract(it.value, "
             "'$.background_source.answer') LIKE '%%matrix%%'", d);
    assert_int_equal(ctl_query_int(r.w.db, sql), 2); /* both windows */
    promtool_server_stop(r.prom);
    r.prom = -1;
    assert_int_equal(ctl_run(&r.w.t, "replay %s --db '%s'", d, r.w.db), 0);
    long long before = ctl_query_int(r.w.db, "SELECT count(*) FROM decisions");
    assert_int_equal(ctl_decide_cli(&r.w.t, "bg.json", sit, r.w.ev, r.w.db, d), 65);
    char *err = ctl_out(&r.w.t, "err");
    assert_non_null(strstr(err, "background_upper of C origin/rps from Prometheus"));
    free(err);
    assert_int_equal(ctl_query_int(r.w.db, "SELECT count(*) FROM decisions"), before);
    json_decref(sit);
    rig_end(&r);
}
/* The next step's forecast from the feedback, recomputed from a record
 * (no Prometheus): background_upper the step's observed maximum,
 * step_upper policy.loop.per_allocation_upper x the next allocations where
 * given, else the decision's step_upper scaled per allocation (rounded up);
 * no commitments_upper (the ledger's); one window from the review time. */
static void ctl_128_next_forecast_uses_per_allocation_upper(void **state)
{
    (void)state;
    json_t *sit = ctl_fixture_json("main_situation.json");
    ctl_set(sit, "policy.feedback", feedback_policy(9, NULL, 1000));
    ctl_set(sit, "policy.loop.per_allocation_upper",
            json_pack("{s:{s:s}}", "origin", "rps", "0.5"));
    char *text = json_dumps(sit, JSON_COMPACT), perr[256];
    struct sit_situation s;
    assert_int_equal(sit_parse(text, strlen(text), &s, perr, sizeof perr), 0);
    json_t *queries = json_array();
    for (int i = 0; i < 5; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{"
                 "\"metric\":{},\"values\":[[%lld,\"2\"],[%lld,\"3.0000001\"],[%lld,\"1\"]]}]}}",
                 (long long)(CTL_T / 1000 + 1), (long long)(CTL_T / 1000 + 2),
                 (long long)(CTL_T / 1000 + 3));
        json_array_append_new(queries, json_pack("{s:s,s:i,s:s,s:I}", "promql", "x",
                                                 "http_status", 200, "answer", body,
                                                 "queried_at_ms", (json_int_t)CTL_T + 3000));
    }
    json_t *rec = json_pack("{s:i,s:o}", "step_s", 1, "queries", queries);
    struct fb_step st = {text, strlen(text), &s, "C", CTL_T, CTL_T + 3000, 20, 40,
                         s.action.window_s};
    struct fb_result out;
    assert_int_equal(fb_recheck(&st, rec, &out), 0);
    assert_int_equal(out.status, COND_PASS);
    const json_t *w = json_array_get(json_object_get(out.resources, "windows"), 0);
    assert_int_equal(json_integer_value(json_object_get(w, "start_ms")), CTL_T + 3000);
    const json_t *it;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(w, "items"), i, it)
    {
        assert_null(json_object_get(it, "commitments_upper"));
        assert_string_equal(s_(it, "background_upper"), "3.000001"); /* rounded up */
        bool orps = !strcmp(s_(it, "resource"), "origin") && !strcmp(s_(it, "metric"), "rps");
        bool obytes = !strcmp(s_(it, "resource"), "origin") && !strcmp(s_(it, "metric"),
                                                                       "bytes_per_s");
        if (orps)
            assert_string_equal(s_(it, "step_upper"), "20"); /* 0.5 x 40 */
        if (obytes)
            assert_string_equal(s_(it, "step_upper"), "200000000"); /* 1e8 / 20 x 40 */
        seen += orps + obytes;
    }
    assert_int_equal(seen, 2);
    fb_result_free(&out);
    json_decref(rec);
    sit_free(&s);
    free(text);
    json_decref(sit);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_120_prometheus_values_are_read_exactly_and_rounded_up),
        cmocka_unit_test(ctl_121_bad_prometheus_answers_are_unknown),
        cmocka_unit_test_teardown(ctl_122_load_above_the_forecast_closes_issuance, kill_leftovers),
        cmocka_unit_test_teardown(ctl_123_load_within_the_forecast_passes_and_forecasts_the_next_step,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_124_stopped_error_or_missing_series_is_unknown,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_125_slow_huge_or_html_prometheus_is_cut_off,
                                  kill_leftovers),
        cmocka_unit_test(ctl_126_invalid_feedback_policy_is_refused_by_decide),
        cmocka_unit_test_teardown(ctl_127_decide_takes_background_upper_from_prometheus,
                                  kill_leftovers),
        cmocka_unit_test(ctl_128_next_forecast_uses_per_allocation_upper),
    };
    return test_run_named("controller_prom", tests, sizeof tests / sizeof tests[0], argc, argv);
}
