/* The admission service facing the open internet (issue 19): a paths.json
 * that once crashed the service at the first viewer, the cookie race under
 * concurrent players, request smuggling with raw sockets, slowloris, fail
 * closed on the evidence store, and the smaller list.  Every test runs the
 * stepctl binary on loopback with real SQLite files (serve_rig.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "serve_rig.h"

#define KEY_PAIR_ID "KEDGEPAIRID19"

/* ---- helpers ---------------------------------------------------------------- */

/* An RSA key rsa.pem (mode 0600) in the test's folder. */
static void edge_key(const struct ctl_world *w)
{
    assert_int_equal(ctl_run_program(&w->t, "openssl",
                                     "genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 "
                                     "-out '%s/rsa.pem' && chmod 600 '%s/rsa.pem'",
                                     w->t.dir, w->t.dir),
                     0);
}

/* paths.json: C signs cookies with renditions r360 at c360 and r720 at
 * c720; D and E are open (cdn-d, cdn-e). */
static void cookie_paths(const struct ctl_world *w, const char *c360, const char *c720,
                         char *path, size_t n)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"%s\", \"r720\": \"%s\"}, "
             "\"auth\": {\"type\": \"cloudfront-cookies\", \"key_file\": \"rsa.pem\", "
             "\"key_pair_id\": \"" KEY_PAIR_ID "\"}}, "
             "\"D\": {\"renditions\": {\"r360\": \"http://cdn-d.invalid/ch1/r360/live.m3u8\", "
             "\"r720\": \"http://cdn-d.invalid/ch1/r720/live.m3u8\"}, \"auth\": {\"type\": \"none\"}}, "
             "\"E\": {\"renditions\": {\"r360\": \"http://cdn-e.invalid/ch1/r360/live.m3u8\", "
             "\"r720\": \"http://cdn-e.invalid/ch1/r720/live.m3u8\"}, \"auth\": {\"type\": \"none\"}}}}\n",
             c360, c720);
    ctl_write_text(&w->t, "paths.json", text, path, n);
}

static long edge_get(int port, const char *path, struct cdn_http *h)
{
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, h), 0);
    return h->status;
}

/* How many Set-Cookie headers of h name a CloudFront cookie. */
static size_t cloudfront_cookies(const struct cdn_http *h)
{
    size_t n = 0;
    for (const char *l = h->headers; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += !strncasecmp(l, "Set-Cookie: CloudFront-", 23);
    return n;
}

/* ---- 1. the remote crash ------------------------------------------------------ */

/* A cloudfront-cookies path whose renditions are on two schemes, hosts or
 * ports was accepted, and the first GET .../master.m3u8 crashed the
 * service (the cookie builder found no directory in the wildcard).  Now
 * paths.json is refused at start (65, naming the path); one origin works. */
static void ctl_150_serve_cookies_path_on_two_origins_is_refused_at_start(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256];
    serve_world_granted(&w, g);
    edge_key(&w);
    static const char *const two[][2] = {
        {"http://cdn-c.invalid/ch1/r360/live.m3u8", "https://cdn-c.invalid/ch1/r720/live.m3u8"},
        {"http://cdn-c.invalid/ch1/r360/live.m3u8", "http://cdn-x.invalid/ch1/r720/live.m3u8"},
        {"http://cdn-c.invalid:8080/ch1/r360/live.m3u8", "http://cdn-c.invalid:8081/ch1/r720/live.m3u8"},
        {"http://cdn-c.invalid/ch1/r360/live.m3u8", "http://CDN-C.invalid/ch1/r720/live.m3u8"},
    };
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) {
        cookie_paths(&w, two[i][0], two[i][1], paths, sizeof paths);
        int rc = ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' --evidence '%s'",
                         w.db, paths, w.ev);
        char *err = ctl_out(&w.t, "err");
        if (rc != 65 || !strstr(err, "paths.C.renditions: a cloudfront-cookies path has every "
                                     "rendition on one scheme, host and port"))
            printf("case %zu: exit %d, stderr: %s\n", i, rc, err);
        assert_int_equal(rc, 65);
        assert_non_null(strstr(err, "one scheme, host and port"));
        free(err);
    }
    /* One origin: served, C's three cookies. */
    cookie_paths(&w, "http://cdn-c.invalid/ch1/r360/live.m3u8",
                 "http://cdn-c.invalid/ch1/r720/live.m3u8", paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));
    struct cdn_http h;
    assert_int_equal(edge_get(s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    assert_int_equal(cloudfront_cookies(&h), 3);
    assert_non_null(strstr(h.headers, "Path=/ch1/;"));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* ---- 2. the cookie race ---------------------------------------------------------- */

struct race_client {
    int port, rounds;
    size_t good, bad;
};

static void *race_client_run(void *arg)
{
    struct race_client *c = arg;
    for (int i = 0; i < c->rounds; i++) {
        char url[256];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations/s-%d/master.m3u8", c->port,
                 1 + i % 4);
        struct cdn_http h;
        if (cdn_http(NULL, url, NULL, NULL, &h) == 0 && h.status == 200 &&
            cloudfront_cookies(&h) == 3)
            c->good++;
        else
            c->bad++;
        if (h.status)
            cdn_http_free(&h);
    }
    return NULL;
}

/* The cookie query was split with strtok(), whose position is shared by
 * every thread: under 16 clients some master playlists carried 1, 2 or 4
 * CloudFront cookies.  Every answer must carry exactly C's three (a
 * ThreadSanitizer build cannot see inside glibc, so the count is the
 * assertion). */
static void ctl_151_serve_sixteen_clients_each_get_three_cloudfront_cookies(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256];
    serve_world_granted(&w, g);
    edge_key(&w);
    cookie_paths(&w, "http://cdn-c.invalid/ch1/r360/live.m3u8",
                 "http://cdn-c.invalid/ch1/r720/live.m3u8", paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    for (int i = 1; i <= 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "s-%d", i);
        json_decref(serve_allocate(s.port, id));
    }
    enum { CLIENTS = 16, ROUNDS = 60 };
    struct race_client c[CLIENTS];
    pthread_t th[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = (struct race_client){.port = s.port, .rounds = ROUNDS};
        assert_int_equal(pthread_create(&th[i], NULL, race_client_run, &c[i]), 0);
    }
    size_t good = 0, bad = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        good += c[i].good;
        bad += c[i].bad;
    }
    printf("master playlists: %zu with 3 cookies, %zu otherwise\n", good, bad);
    assert_int_equal(bad, 0);
    assert_int_equal(good, CLIENTS * ROUNDS);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_150_serve_cookies_path_on_two_origins_is_refused_at_start, kill_leftovers),
        cmocka_unit_test_teardown(ctl_151_serve_sixteen_clients_each_get_three_cloudfront_cookies, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
