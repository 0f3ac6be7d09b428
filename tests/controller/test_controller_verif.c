/* Content evidence from the step's own sessions (issue 17; docs/serve.md
 * "Verification sessions", docs/controller.md "policy.loop"): verification
 * allocations through a running `stepctl serve` (their token, their quota,
 * never viewers), and `stepctl next` under policy.loop.content_from
 * "step_sessions" counting only checks delivered under them.  End to end on
 * loopback: real SQLite files, the stepctl binary, the service as a child
 * process, libcurl clients, real Exact-AV reports imported. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "serve_rig.h"

#define VERIF_TOKEN "canary-verification-token-0123456789abcdef"
#define VERIF_AUTH "Authorization: Bearer " VERIF_TOKEN

struct verif {
    struct ctl_world w;
    json_t *sit;
    char d[33], g[33], token_file[160];
    struct server s;
};

/* The world decided (content_from: NULL leaves policy.loop out), granted
 * with a verification quota of quota, the service started with the
 * verification token. */
static void verif_begin(struct verif *v, const char *content_from, int quota)
{
    serve_verification_world(&v->w, content_from, quota, &v->sit, v->d, v->g);
    ctl_write_text(&v->w.t, "verification.token", VERIF_TOKEN "\n", v->token_file,
                   sizeof v->token_file);
    assert_int_equal(chmod(v->token_file, 0600), 0);
    const char *extra[] = {"--verification-token-file", v->token_file, NULL};
    server_start_with(&v->w, &v->s, extra);
}

static void verif_end(struct verif *v)
{
    assert_int_equal(server_stop(&v->s, SIGTERM), 0);
    json_decref(v->sit);
    ctl_world_end(&v->w);
}

/* POST /v1/allocations with the fixtures' cohort, "verification": flag
 * (NULL: the member left out) and header (NULL: none); any answer. */
static void post(const struct verif *v, const char *id, const char *flag, const char *header,
                 struct cdn_http *h)
{
    char url[128], body[640];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations", v->s.port);
    snprintf(body, sizeof body,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"isp-x\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}%s%s}",
             id, flag ? ",\"verification\":" : "", flag ? flag : "");
    assert_int_equal(cdn_http_with("POST", url, NULL, header, body, h), 0);
}

static void expect(const struct verif *v, const char *id, const char *flag, const char *header,
                   long status, const char *error)
{
    struct cdn_http h;
    post(v, id, flag, header, &h);
    if (h.status != status)
        fail_msg("%s: %ld %s (expected %ld)", id, h.status, h.body, status);
    if (error) {
        json_t *b = json_loads(h.body, 0, NULL);
        assert_non_null(b);
        assert_string_equal(json_string_value(json_object_get(b, "error")), error);
        json_decref(b);
    }
    cdn_http_free(&h);
}

#define q(v, ...) ctl_queryf((v)->w.db, __VA_ARGS__) /* ctl_test.h */

/* A real MATCH (or MISMATCH) report of path C observed now, checked under
 * allocation alloc (NULL: none, a check of the path's public URL). */
static void evidence(struct verif *v, const char *id, const char *verdict, const char *alloc)
{
    ctl_world_evidence_under(&v->w, id, "C", NULL, verdict, ctl_now_ms(), true, alloc);
    usleep(2000);
}

/* `next --dry-run --json`: the content condition's reason, and its status. */
static void next_content(struct verif *v, const char *obs, const char *status, const char *reason)
{
    ctl_run(&v->w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run --json", v->g,
            v->w.db, v->w.ev, obs);
    json_t *r = ctl_out_json(&v->w.t);
    const json_t *c = json_object_get(r, "content");
    if (!c || strcmp(json_string_value(json_object_get(c, "reason")), reason))
        fail_msg("content: %s", c ? json_dumps(c, 0) : "(none)");
    assert_string_equal(json_string_value(json_object_get(c, "status")), status);
    assert_string_equal(json_string_value(json_object_get(c, "content_from")), "step_sessions");
    json_decref(r);
}

/* ---- verification allocations ------------------------------------------------ */

static void ctl_196_verification_allocations_need_their_token_and_count_apart(void **state)
{
    (void)state;
    struct verif v;
    verif_begin(&v, NULL, 1);
    /* without the token, or with another one: 401; the token on a
     * viewer's request: 403; a non-boolean flag: 400 */
    expect(&v, "v-1", "true", NULL, 401, "unauthorized");
    expect(&v, "v-1", "true", SERVE_ADMIN_AUTH, 401, "unauthorized");
    expect(&v, "a-0", NULL, VERIF_AUTH, 403, "verification_only");
    expect(&v, "v-1", "\"yes\"", VERIF_AUTH, 400, "bad_request");
    /* the verification session: 201, its own slot above the viewers' */
    struct cdn_http h;
    post(&v, "v-1", "true", VERIF_AUTH, &h);
    assert_int_equal(h.status, 201);
    json_t *b = json_loads(h.body, 0, NULL);
    assert_true(json_is_true(json_object_get(b, "verification")));
    assert_string_equal(json_string_value(json_object_get(b, "path_id")), "C");
    json_decref(b);
    cdn_http_free(&h);
    expect(&v, "v-1", "true", VERIF_AUTH, 200, NULL); /* a retry: the stored answer */
    expect(&v, "v-2", "true", VERIF_AUTH, 403, "verification_quota_exhausted");
    /* viewers are untouched: their count, their first allocation, their slots */
    assert_int_equal(q(&v, "SELECT allocated FROM grants WHERE id = '%s'", v.g), 0);
    assert_int_equal(q(&v, "SELECT first_allocation_ms IS NULL FROM grants"), 1);
    assert_int_equal(q(&v, "SELECT verification_allocated FROM grants"), 1);
    json_decref(serve_allocate(v.s.port, "a-0"));
    assert_int_equal(q(&v, "SELECT seq FROM allocations WHERE id = 'a-0'"), 1);
    assert_int_equal(q(&v, "SELECT seq > (SELECT max_allocations FROM grants) FROM allocations "
                           "WHERE id = 'v-1' AND verification = 1"),
                     1);
    assert_int_equal(q(&v, "SELECT allocated FROM grants"), 1);
    /* the store's invariants hold with both kinds */
    assert_int_equal(ctl_run(&v.w.t, "verify-store --db '%s'", v.w.db), 0);
    /* the operator's view of the grant shows the quota */
    assert_int_equal(ctl_run(&v.w.t, "grants show %s --db '%s' --json", v.g, v.w.db), 0);
    char *out = ctl_out(&v.w.t, "out");
    assert_non_null(strstr(out, "\"verification\""));
    free(out);
    verif_end(&v);
}

/* ---- next under content_from step_sessions -------------------------------------- */

static void ctl_197_next_step_sessions_counts_only_checks_of_verification_allocations(void **state)
{
    (void)state;
    struct verif v;
    verif_begin(&v, "step_sessions", 2);
    json_decref(serve_allocate(v.s.port, "a-0"));
    expect(&v, "v-1", "true", VERIF_AUTH, 201, NULL);
    char obs[160];
    ctl_observations(&v.w.t, v.sit, "obs.json", obs, sizeof obs);
    /* a MATCH of the path's public URL is not the step's own session */
    evidence(&v, "ev-path", "MATCH", NULL);
    next_content(&v, obs, "UNKNOWN", "no_step_session_evidence");
    /* nor is a check under a viewer's allocation id (not a verification one) */
    evidence(&v, "ev-viewer", "MATCH", "a-0");
    next_content(&v, obs, "UNKNOWN", "no_step_session_evidence");
    /* a MATCH delivered under the verification allocation counts */
    evidence(&v, "ev-v1", "MATCH", "v-1");
    next_content(&v, obs, "PASS", "match");
    json_t *r = NULL;
    ctl_run(&v.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run --json", v.g,
            v.w.db, v.w.ev, obs);
    r = ctl_out_json(&v.w.t);
    const json_t *c = json_object_get(r, "content");
    const json_t *rows = json_object_get(c, "evidence");
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "id")), "ev-v1");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(rows, 0), "allocation_id")), "v-1");
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(c, "verification_allocations"), 0)),
        "v-1");
    json_decref(r);
    /* a MISMATCH of the path from any check during the step still closes it */
    evidence(&v, "ev-path-mm", "MISMATCH", NULL);
    next_content(&v, obs, "VIOLATION", "mismatch");
    verif_end(&v);
}

static void ctl_198_a_policy_without_policy_loop_keeps_the_path_rule(void **state)
{
    (void)state;
    struct verif v;
    verif_begin(&v, NULL, 0);
    json_decref(serve_allocate(v.s.port, "a-0"));
    char obs[160];
    ctl_observations(&v.w.t, v.sit, "obs.json", obs, sizeof obs);
    evidence(&v, "ev-path", "MATCH", NULL);
    ctl_run(&v.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run --json", v.g,
            v.w.db, v.w.ev, obs);
    json_t *r = ctl_out_json(&v.w.t);
    const json_t *c = json_object_get(r, "content");
    assert_string_equal(json_string_value(json_object_get(c, "reason")), "match");
    assert_null(json_object_get(c, "content_from")); /* a new member only where used */
    assert_null(json_object_get(json_array_get(json_object_get(c, "evidence"), 0),
                                "allocation_id"));
    json_decref(r);
    /* a grant without a quota answers why */
    expect(&v, "v-1", "true", VERIF_AUTH, 403, "verification_quota_exhausted");
    /* a bad content_from is refused by decide (65), naming the field */
    json_t *bad = json_deep_copy(v.sit);
    ctl_set(bad, "policy.loop.content_from", json_string("sessions"));
    char d[33];
    assert_int_equal(ctl_decide_cli(&v.w.t, "bad.json", bad, v.w.ev, v.w.db, d), 65);
    char *err = ctl_out(&v.w.t, "err");
    assert_non_null(strstr(err, "policy.loop.content_from"));
    free(err);
    json_decref(bad);
    verif_end(&v);
}

/* ---- the token bucket in verify-store ------------------------------------------- */

/* verify-store --json: exit 3 naming rule, or 0 with rule NULL. */
static void expect_store(struct verif *v, const char *rule)
{
    int rc = ctl_run(&v->w.t, "verify-store --db '%s' --json", v->w.db);
    json_t *o = ctl_out_json(&v->w.t);
    if (rule && rc == 3)
        assert_string_equal(json_string_value(json_object_get(o, "rule")), rule);
    if (!rule || rc != 3)
        printf("verify-store: %d %s\n", rc, json_string_value(json_object_get(o, "detail")));
    assert_int_equal(rc, rule ? 3 : 0);
    json_decref(o);
}

/* Issue 19 ("the token bucket recomputed from them"): the bucket's content
 * is a mutable column, so verify-store replays it from the grant's creation
 * over the viewers' allocations (a verification session takes no token): a
 * bucket refilled by hand, or allocations faster than the grant's rate, are
 * named grant_token_bucket. */
static void ctl_199_verify_store_recomputes_the_token_bucket(void **state)
{
    (void)state;
    struct verif v;
    verif_begin(&v, NULL, 1);
    json_decref(serve_allocate(v.s.port, "a-0"));
    struct cdn_http h;
    post(&v, "v-1", "true", VERIF_AUTH, &h);
    assert_int_equal(h.status, 201);
    cdn_http_free(&h);
    json_decref(serve_allocate(v.s.port, "a-1"));
    assert_int_equal(server_stop(&v.s, SIGTERM), 0);
    expect_store(&v, NULL); /* as serve wrote it: it holds */

    /* a bucket refilled by hand (one token more, or a later refill time) */
    assert_int_equal(ctl_sql(v.w.db, "UPDATE grants SET bucket_tokens_nano = "
                                     "bucket_tokens_nano + 1000000000"),
                     0);
    expect_store(&v, "grant_token_bucket");
    assert_int_equal(ctl_sql(v.w.db, "UPDATE grants SET bucket_tokens_nano = bucket_tokens_nano "
                                     "- 1000000000, bucket_at_ms = bucket_at_ms - 1"),
                     0);
    expect_store(&v, "grant_token_bucket");
    assert_int_equal(ctl_sql(v.w.db, "UPDATE grants SET bucket_at_ms = bucket_at_ms + 1"), 0);
    expect_store(&v, NULL);

    /* the caps made smaller than the allocations took (one token, one
     * micro-token a second): the second viewer found no token */
    assert_int_equal(ctl_sql(v.w.db, "DROP TRIGGER grants_caps_fixed; UPDATE grants SET burst = 1, "
                                     "max_rate_micro = 1"),
                     0);
    expect_store(&v, "grant_token_bucket");
    int rc = ctl_run(&v.w.t, "verify-store --db '%s'", v.w.db);
    assert_int_equal(rc, 3);
    char *out = ctl_out(&v.w.t, "out");
    char *err = ctl_out(&v.w.t, "err");
    assert_true(strstr(out, "found no token") || strstr(err, "found no token"));
    free(out);
    free(err);
    /* serve refuses such a store at start */
    assert_int_equal(ctl_run(&v.w.t, "serve --db '%s' --listen 127.0.0.1:0", v.w.db), 66);
    json_decref(v.sit);
    ctl_world_end(&v.w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(
            ctl_196_verification_allocations_need_their_token_and_count_apart, kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_197_next_step_sessions_counts_only_checks_of_verification_allocations,
            kill_leftovers),
        cmocka_unit_test_teardown(ctl_198_a_policy_without_policy_loop_keeps_the_path_rule,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_199_verify_store_recomputes_the_token_bucket,
                                  kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
