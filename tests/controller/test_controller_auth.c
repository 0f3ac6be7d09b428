/* test_controller_auth.c - who may call what on `stepctl serve`
 * (docs/security.md#who-may-call-what): the operator token on every
 * operator endpoint, /healthz open, listening beyond loopback only with
 * client authentication or --allow-anonymous, allocation bodies only as
 * application/json. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "serve_rig.h"

static long get_with(int port, const char *method, const char *path, const char *header,
                     struct cdn_http *h)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    assert_int_equal(cdn_http_with(method, url, NULL, header, NULL, h), 0);
    return h->status;
}

static bool err_has(const struct ctl_world *w, const char *text)
{
    char *e = ctl_out(&w->t, "err");
    bool has = e && strstr(e, text);
    if (!has)
        printf("stderr: %s\n", e ? e : "(none)");
    free(e);
    return has;
}

/* Runs text as a shell script in the test's folder (stdout, stderr: its
 * out.txt and err.txt); the exit status. */
static int script(struct ctl_world *w, const char *text)
{
    char path[160];
    ctl_write_text(&w->t, "script.sh", text, path, sizeof path);
    return ctl_run_program(&w->t, "/bin/sh", "'%s'", path);
}

/* Issue 19, item 9: anonymous /metrics listed grant ids, GET /v1/grants/ID
 * gave cohort, caps and actor. */
static void ctl_161_operator_endpoints_need_the_token_and_healthz_stays_open(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], path[96];
    serve_world_granted(&w, g);
    struct server s;
    server_start(&w, &s);
    snprintf(path, sizeof path, "/v1/grants/%s", g);
    const char *operator_paths[] = {"/metrics", path};
    const char *wrong[] = {NULL, "Authorization: Bearer not-the-token-0123456789",
                           "Authorization: Basic b3BlcmF0b3I6eA==",
                           "Authorization: Bearer " SERVE_ADMIN_TOKEN "x"};
    struct cdn_http h;
    for (size_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < sizeof wrong / sizeof wrong[0]; k++) {
            assert_int_equal(get_with(s.port, NULL, operator_paths[i], wrong[k], &h), 401);
            assert_non_null(strstr(h.body, "\"error\":\"unauthorized\""));
            assert_null(strstr(h.body, g));
            char *v = cdn_http_header(&h, "WWW-Authenticate");
            assert_non_null(v);
            assert_string_equal(v, "Bearer");
            free(v);
            cdn_http_free(&h);
        }
        assert_int_equal(get_with(s.port, "HEAD", operator_paths[i], NULL, &h), 401);
        cdn_http_free(&h);
        assert_int_equal(get_with(s.port, NULL, operator_paths[i], SERVE_ADMIN_AUTH, &h), 200);
        assert_non_null(strstr(h.body, g)); /* the grant, or the metrics naming it */
        cdn_http_free(&h);
    }
    /* /healthz needs nothing and says nothing of grants. */
    assert_int_equal(get_with(s.port, NULL, "/healthz", NULL, &h), 200);
    assert_null(strstr(h.body, g));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* Without --admin-token-file: 401 to everyone, and said at start. */
    char pf[160];
    ctl_tmp_path(&w.t, "port2", pf, sizeof pf);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' serve --db '%s' --listen 127.0.0.1:0 --port-file '%s' &\n"
                              "pid=$!; for i in $(seq 100); do [ -s '%s' ] && break; sleep 0.05;"
                              " done\ncurl -s -o /dev/null -w '%%{http_code}' -H '%s'"
                              " http://127.0.0.1:$(cat '%s')/metrics\nkill $pid; wait $pid\n",
             CTL_STEPCTL, w.db, pf, pf, SERVE_ADMIN_AUTH, pf);
    assert_int_equal(script(&w, cmd), 0);
    char *out = ctl_out(&w.t, "out");
    assert_string_equal(out, "401");
    free(out);
    assert_true(err_has(&w, "no --admin-token-file"));
    ctl_world_end(&w);
}

/* The token file is a secret like a private key. */
static void ctl_162_admin_token_file_must_be_private_and_long_enough(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char tok[160];
    ctl_write_text(&w.t, "open.token", "a-long-enough-operator-token\n", tok, sizeof tok);
    assert_int_equal(chmod(tok, 0640), 0);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --admin-token-file '%s'",
                             w.db, tok),
                     65);
    assert_true(err_has(&w, "accessible by group or others"));
    ctl_write_text(&w.t, "short.token", "short\n", tok, sizeof tok);
    assert_int_equal(chmod(tok, 0600), 0);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --admin-token-file '%s'",
                             w.db, tok),
                     65);
    assert_true(err_has(&w, "at least 16 bytes"));
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --admin-token-file "
                                   "'%s/none'",
                             w.db, w.t.dir),
                     66);
    ctl_world_end(&w);
}

/* Without client authentication, a non-loopback address only when the
 * operator says --allow-anonymous, loudly. */
static void ctl_163_non_loopback_listen_needs_client_auth_or_allow_anonymous(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 0.0.0.0:0", w.db), 64);
    assert_true(err_has(&w, "without --client-auth"));
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen '[::]:0'", w.db), 64);
    char pf[160];
    ctl_tmp_path(&w.t, "port", pf, sizeof pf);
    const char *const starts[] = {"--allow-anonymous", "--client-auth client-auth.json"};
    char secret[160], cfg[160];
    ctl_write_text(&w.t, "secret.bin", "0123456789abcdef0123456789abcdef", secret, sizeof secret);
    assert_int_equal(chmod(secret, 0600), 0);
    ctl_write_text(&w.t, "client-auth.json",
                   "{\"alg\":\"HS256\",\"key_file\":\"secret.bin\",\"audience\":\"a\","
                   "\"per_subject_cap\":1}",
                   cfg, sizeof cfg);
    for (size_t i = 0; i < 2; i++) {
        unlink(pf);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s' serve --db '%s' --listen 0.0.0.0:0 "
                                  "--port-file '%s' %s &\npid=$!; for i in $(seq 100); do "
                                  "[ -s '%s' ] && break; sleep 0.05; done; kill $pid; wait $pid\n",
                 w.t.dir, CTL_STEPCTL, w.db, pf, starts[i], pf);
        assert_int_equal(script(&w, cmd), 0);
        assert_true(access(pf, F_OK) == 0); /* it listened */
        if (i == 0)
            assert_true(err_has(&w, "WARNING: --allow-anonymous"));
    }
    ctl_world_end(&w);
}

/* A text/plain POST is a cross-site request no preflight guards. */
static void ctl_164_allocation_bodies_only_as_application_json(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    serve_world_granted(&w, g);
    struct server s;
    server_start(&w, &s);
    static const char body[] =
        "{\"allocation_id\":\"ct-%d\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
        "\"isp\":\"isp-x\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
        "\"720p\"}}";
    const char *types[] = {"Content-Type: text/plain", "Content-Type: application/x-www-form-urlencoded",
                           "Content-Type: application/jsonx", "Content-Type: application/json; charset=utf-8",
                           "Content-Type: APPLICATION/JSON"};
    const long want[] = {415, 415, 415, 201, 201};
    for (int i = 0; i < 5; i++) {
        char text[512], url[96];
        snprintf(text, sizeof text, body, i);
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations", s.port);
        CURL *c = curl_easy_init();
        struct curl_slist *hd = curl_slist_append(NULL, types[i]);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fwrite);
        FILE *sink = fopen("/dev/null", "w");
        curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
        assert_int_equal(curl_easy_perform(c), CURLE_OK);
        long st = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
        fclose(sink);
        curl_slist_free_all(hd);
        curl_easy_cleanup(c);
        if (st != want[i])
            printf("%s: %ld\n", types[i], st);
        assert_int_equal(st, want[i]);
    }
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), 2);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* An allocation POSTed as a page of origin would send it (Origin NULL:
 * none); the answer in *h. */
static void post_as_page(int port, const char *id, const char *origin, struct cdn_http *h)
{
    char url[96], body[512], hdr[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations", port);
    snprintf(body, sizeof body,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"isp-x\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}",
             id);
    snprintf(hdr, sizeof hdr, "Origin: %s", origin ? origin : "http://unused.example");
    assert_int_equal(cdn_http_with("POST", url, NULL, origin ? hdr : NULL, body, h), 0);
}

/* The value of header name in h, "" when absent (compared, then freed). */
static void assert_header(const struct cdn_http *h, const char *name, const char *want)
{
    char *v = cdn_http_header(h, name);
    if (!want)
        assert_null(v);
    else
        assert_string_equal(v ? v : "(absent)", want);
    free(v);
}

/* Issue 19, item 9: Access-Control-Allow-Origin: * on every answer let
 * any page read them.  Now: no CORS header by default; with
 * --cors-origin, only the pages of those origins (a preflight allowing
 * Authorization and Content-Type); '*' only when said, alone, and without
 * credentials.  The browser's side of it: player_05. */
static void ctl_165_cors_only_for_the_configured_origins(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    serve_world_granted(&w, g);
    struct server s;
    struct cdn_http h;
    server_start(&w, &s); /* no --cors-origin */
    post_as_page(s.port, "c-0", "http://player.example", &h);
    assert_int_equal(h.status, 201);
    assert_header(&h, "Access-Control-Allow-Origin", NULL);
    assert_header(&h, "Vary", NULL);
    cdn_http_free(&h);
    assert_int_equal(get_with(s.port, "OPTIONS", "/v1/allocations",
                              "Origin: http://player.example", &h),
                     204);
    assert_header(&h, "Access-Control-Allow-Origin", NULL);
    assert_header(&h, "Access-Control-Allow-Methods", NULL);
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    const char *two[] = {"--cors-origin", "http://player.example", "--cors-origin",
                         "https://Other.example:8443", NULL};
    server_start_with(&w, &s, two);
    const char *origins[] = {"http://player.example", "https://other.example:8443",
                             "http://evil.example", "http://player.example.evil", "null", NULL};
    const bool allowed[] = {true, true, false, false, false, false};
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "c-%d", i + 1);
        post_as_page(s.port, id, origins[i], &h);
        assert_int_equal(h.status, 201);
        assert_header(&h, "Access-Control-Allow-Origin", allowed[i] ? origins[i] : NULL);
        assert_header(&h, "Access-Control-Allow-Credentials", allowed[i] ? "true" : NULL);
        assert_header(&h, "Vary", "Origin"); /* the answer depends on it, for every cache */
        cdn_http_free(&h);
        char hdr[96];
        snprintf(hdr, sizeof hdr, "Origin: %s", origins[i] ? origins[i] : "");
        assert_int_equal(get_with(s.port, "OPTIONS", "/v1/allocations", origins[i] ? hdr : NULL,
                                  &h),
                         204);
        assert_header(&h, "Access-Control-Allow-Origin", allowed[i] ? origins[i] : NULL);
        assert_header(&h, "Access-Control-Allow-Headers",
                      allowed[i] ? "Authorization, Content-Type" : NULL);
        assert_header(&h, "Access-Control-Allow-Methods", allowed[i] ? "GET, POST, OPTIONS" : NULL);
        cdn_http_free(&h);
    }
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    const char *star[] = {"--cors-origin", "*", NULL};
    server_start_with(&w, &s, star);
    post_as_page(s.port, "c-9", "http://anyone.example", &h);
    assert_int_equal(h.status, 201);
    assert_header(&h, "Access-Control-Allow-Origin", "*");
    assert_header(&h, "Access-Control-Allow-Credentials", NULL);
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* What is not an origin, '*' among others, more than 16: 64. */
    const char *bad[] = {"--cors-origin http://player.example/", "--cors-origin http://p.example/app",
                         "--cors-origin '*' --cors-origin http://p.example",
                         "--cors-origin ftp://p.example", "--cors-origin"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 %s", w.db, bad[i]), 64);
    char many[2048] = "";
    for (int i = 0; i < 17; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many),
                 " --cors-origin http://p%d.example", i);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0%s", w.db, many), 64);
    assert_true(err_has(&w, "at most 16"));
    ctl_world_end(&w);
}

/* Issue 19: --admin-listen serves the operators' endpoints on a second
 * address too (the token needed there as well), and nothing a viewer uses. */
static void ctl_166_admin_listen_serves_operator_endpoints_only(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], apf[160], grant_path[96];
    serve_world_granted(&w, g);
    ctl_tmp_path(&w.t, "admin.port", apf, sizeof apf);
    const char *extra[] = {"--admin-listen", "127.0.0.1:0", "--admin-port-file", apf, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    FILE *f = fopen(apf, "r");
    int admin = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &admin), 1);
    fclose(f); /* written before the main port file: there already */
    assert_true(admin > 0 && admin != s.port);
    struct cdn_http h;
    snprintf(grant_path, sizeof grant_path, "/v1/grants/%s", g);
    const char *ops[] = {"/metrics", grant_path};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(get_with(admin, NULL, ops[i], NULL, &h), 401);
        cdn_http_free(&h);
        assert_int_equal(get_with(admin, NULL, ops[i], SERVE_ADMIN_AUTH, &h), 200);
        cdn_http_free(&h);
        assert_int_equal(get_with(s.port, NULL, ops[i], SERVE_ADMIN_AUTH, &h), 200);
        cdn_http_free(&h);
    }
    assert_int_equal(get_with(admin, NULL, "/healthz", NULL, &h), 200);
    cdn_http_free(&h);
    /* No allocation, no session route there: 404, nothing stored. */
    post_as_page(admin, "adm-1", NULL, &h);
    assert_int_equal(h.status, 404);
    cdn_http_free(&h);
    assert_int_equal(get_with(admin, NULL, "/v1/sessions/x/steering", NULL, &h), 404);
    cdn_http_free(&h);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), 0);
    post_as_page(s.port, "adm-2", NULL, &h);
    assert_int_equal(h.status, 201);
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* --admin-port-file alone, a bad address, an address taken: 64, 64, 66. */
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --admin-port-file '%s'",
                             w.db, apf),
                     64);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --admin-listen nowhere",
                             w.db),
                     64);
    server_start(&w, &s);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --admin-listen "
                                   "127.0.0.1:%d",
                             w.db, s.port),
                     66);
    assert_true(err_has(&w, "--admin-listen"));
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_161_operator_endpoints_need_the_token_and_healthz_stays_open, kill_leftovers),
        cmocka_unit_test_teardown(ctl_162_admin_token_file_must_be_private_and_long_enough, kill_leftovers),
        cmocka_unit_test_teardown(ctl_163_non_loopback_listen_needs_client_auth_or_allow_anonymous, kill_leftovers),
        cmocka_unit_test_teardown(ctl_164_allocation_bodies_only_as_application_json, kill_leftovers),
        cmocka_unit_test_teardown(ctl_165_cors_only_for_the_configured_origins, kill_leftovers),
        cmocka_unit_test_teardown(ctl_166_admin_listen_serves_operator_endpoints_only, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
