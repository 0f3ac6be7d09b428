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

/* GET path ("/v1/allocations/ID/..." reaches the session of ID: db) */
static long edge_get(const char *db, int port, const char *path, struct cdn_http *h)
{
    char url[512], sp[384];
    serve_session_path(db, path, sp, sizeof sp);
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, sp);
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

/* A TCP connection to 127.0.0.1:port, or the test fails. */
static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Reads what arrives on fd into out (NUL-terminated) until the peer
 * closes or nothing came for wait_ms; true when it closed. */
static bool raw_read_all(int fd, char *out, size_t cap, int wait_ms)
{
    size_t n = 0;
    out[0] = '\0';
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, wait_ms) <= 0)
            return false;
        ssize_t k = recv(fd, out + n, cap - 1 - n, 0);
        if (k <= 0)
            return k == 0 || errno == ECONNRESET;
        n += (size_t)k;
        out[n] = '\0';
        if (n + 1 >= cap)
            return false;
    }
}

/* Reads one request's head from fd (until the blank line, bounded). */
static void raw_read_request(int fd, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    while (n + 1 < cap && !strstr(out, "\r\n\r\n")) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) <= 0)
            return;
        ssize_t k = recv(fd, out + n, cap - 1 - n, 0);
        if (k <= 0)
            return;
        n += (size_t)k;
        out[n] = '\0';
    }
}

/* Sends text on a new connection and reads every answer until the service
 * closes it (at most 5 s without a byte); true when it closed. */
static bool raw_exchange(int port, const char *text, char *out, size_t cap)
{
    int fd = raw_connect(port);
    size_t len = strlen(text);
    assert_int_equal(send(fd, text, len, MSG_NOSIGNAL), (ssize_t)len);
    bool closed = raw_read_all(fd, out, cap, 5000);
    close(fd);
    return closed;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* An allocation request's body for id (the fixtures' cohort). */
static void alloc_body(const char *id, char *out, size_t cap)
{
    snprintf(out, cap,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"isp-x\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}",
             id);
}

static long long allocations_named(const struct ctl_world *w, const char *id)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM allocations WHERE id = '%s'", id);
    return ctl_query_int(w->db, sql);
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
    assert_int_equal(edge_get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    assert_int_equal(cloudfront_cookies(&h), 3);
    assert_non_null(strstr(h.headers, "Path=/ch1/;"));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* ---- 2. the cookie race ---------------------------------------------------------- */

struct race_client {
    const char *db; /* control.db: the allocations' session ids */
    int port, rounds;
    size_t good, bad;
};

static void *race_client_run(void *arg)
{
    struct race_client *c = arg;
    for (int i = 0; i < c->rounds; i++) {
        char url[512], path[128], sp[384];
        snprintf(path, sizeof path, "/v1/allocations/s-%d/master.m3u8", 1 + i % 4);
        serve_session_path(c->db, path, sp, sizeof sp);
        snprintf(url, sizeof url, "http://127.0.0.1:%d%s", c->port, sp);
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
        c[i] = (struct race_client){.db = w.db, .port = s.port, .rounds = ROUNDS};
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

/* ---- 3. request smuggling -------------------------------------------------------- */

/* Two Content-Length headers were framed by the first (libmicrohttpd
 * 0.9.75) and the rest of the body ran as a second request, which stored
 * an allocation; likewise Transfer-Encoding with Content-Length.  Now 400,
 * the connection closed, nothing of either request stored.  A plain
 * pipelined pair on the same kind of socket shows that a second request
 * would be seen: both answered, both stored. */
static void ctl_152_serve_ambiguous_framing_is_400_and_closes_nothing_smuggled(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    serve_world_granted(&w, g);
    struct server s;
    server_start(&w, &s);
    char first[512], hidden[512], inner[1024], text[4096], got[16384];
    alloc_body("s-first", first, sizeof first);
    alloc_body("s-smuggled", hidden, sizeof hidden);
    snprintf(inner, sizeof inner,
             "POST /v1/allocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             strlen(hidden), hidden);

    /* Content-Length twice: the first frames the JSON, the second the
     * JSON and the hidden request. */
    snprintf(text, sizeof text,
             "POST /v1/allocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nContent-Length: %zu\r\n\r\n%s%s",
             strlen(first), strlen(first) + strlen(inner), first, inner);
    assert_true(raw_exchange(s.port, text, got, sizeof got));
    if (strncmp(got, "HTTP/1.1 400", 12))
        printf("answer: %s\n", got);
    assert_memory_equal(got, "HTTP/1.1 400", 12);
    assert_int_equal(count_of(got, "HTTP/1.1 "), 1);
    assert_non_null(strstr(got, "RFC 9112 6.3"));
    assert_int_equal(allocations_named(&w, "s-first"), 0);
    assert_int_equal(allocations_named(&w, "s-smuggled"), 0);

    /* Transfer-Encoding: chunked with a Content-Length that frames only
     * the first chunk's header. */
    snprintf(text, sizeof text,
             "POST /v1/allocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n%s",
             strlen(first), first, inner);
    assert_true(raw_exchange(s.port, text, got, sizeof got));
    assert_memory_equal(got, "HTTP/1.1 400", 12);
    assert_int_equal(count_of(got, "HTTP/1.1 "), 1);
    assert_int_equal(allocations_named(&w, "s-first"), 0);
    assert_int_equal(allocations_named(&w, "s-smuggled"), 0);

    /* A Content-Length that is not a number. */
    snprintf(text, sizeof text,
             "POST /v1/allocations HTTP/1.1\r\nHost: x\r\nContent-Length: +%zu\r\n\r\n%s",
             strlen(first), first);
    assert_true(raw_exchange(s.port, text, got, sizeof got));
    assert_memory_equal(got, "HTTP/1.1 400", 12);
    assert_int_equal(allocations_named(&w, "s-first"), 0);

    /* The control: one Content-Length, then the second request pipelined
     * and Connection: close on it; two answers, two rows. */
    snprintf(text, sizeof text,
             "POST /v1/allocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n%sPOST /v1/allocations HTTP/1.1\r\nHost: x\r\n"
             "Connection: close\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(first), first, strlen(hidden), hidden);
    assert_true(raw_exchange(s.port, text, got, sizeof got));
    assert_int_equal(count_of(got, "HTTP/1.1 201"), 2);
    assert_int_equal(allocations_named(&w, "s-first"), 1);
    assert_int_equal(allocations_named(&w, "s-smuggled"), 1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* ---- 4. slowloris ------------------------------------------------------------------ */

/* A TCP connection to 127.0.0.1:port from the loopback address src (the
 * whole of 127/8 is this host's): another client address. */
static int raw_connect_from(int port, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in from = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, src, &from.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Has the service closed fd (end of stream or reset)?  Reads what is
 * there without waiting. */
static bool raw_closed(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
        return false;
    char b[512];
    ssize_t k = recv(fd, b, sizeof b, MSG_DONTWAIT);
    return k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* A client holding requests open by sending a byte now and then never
 * reached libmicrohttpd's idle timeout, and enough of them blocked
 * everyone.  Now one address has at most --max-connections-per-ip
 * connections (more are closed at once), and a request still arriving
 * --request-timeout after its connection was accepted is cut off, in its
 * headers or in its body.  Asserted: an honest client is answered while
 * the tricklers are connected, and every trickler is closed long before it
 * would have finished (the trickle is bounded: 15 s). */
static void ctl_153_serve_tricklers_are_cut_off_and_an_honest_client_is_answered(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    serve_world_granted(&w, g);
    const char *extra[] = {"--max-connections-per-ip", "8", "--request-timeout", "3", NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    enum { TRICKLERS = 24, LIMIT = 8, HEADERS = TRICKLERS, BODY = TRICKLERS + 1, ALL };
    int fd[ALL];
    bool closed[ALL] = {false};
    static const char head[] = "POST /v1/allocations HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < TRICKLERS; i++) { /* in their headers, from 127.0.0.2 */
        fd[i] = raw_connect_from(s.port, "127.0.0.2");
        send(fd[i], head, sizeof head - 1, MSG_NOSIGNAL);
    }
    /* in its body, from 127.0.0.3 (one in the headers there too) */
    fd[HEADERS] = raw_connect_from(s.port, "127.0.0.3");
    send(fd[HEADERS], head, sizeof head - 1, MSG_NOSIGNAL);
    fd[BODY] = raw_connect_from(s.port, "127.0.0.3");
    static const char body_head[] = "POST /v1/allocations HTTP/1.1\r\nHost: x\r\n"
                                    "Content-Type: application/json\r\nContent-Length: 300\r\n\r\n{";
    send(fd[BODY], body_head, sizeof body_head - 1, MSG_NOSIGNAL);
    usleep(200000);
    /* The service closed what is over the limit; the rest is held. */
    int held = 0;
    for (int i = 0; i < ALL; i++)
        held += !(closed[i] = raw_closed(fd[i]));
    printf("%d of %d tricklers held before the honest client\n", held, (int)ALL);
    assert_true(held >= 2 && held <= LIMIT + 2);
    json_t *a = serve_allocate(s.port, "s-honest");
    json_decref(a);
    /* Trickle a byte every 200 ms to every connection still open. */
    int open = held;
    for (int round = 0; round < 75 && open > 0; round++) {
        usleep(200000);
        open = 0;
        for (int i = 0; i < ALL; i++) {
            if (closed[i])
                continue;
            send(fd[i], i == BODY ? " " : "X", 1, MSG_NOSIGNAL);
            open += !(closed[i] = raw_closed(fd[i]));
        }
    }
    assert_int_equal(open, 0);
    for (int i = 0; i < ALL; i++)
        close(fd[i]);
    /* Counted: the held ones were cut by the deadline. */
    struct cdn_http h;
    char murl[96];
    snprintf(murl, sizeof murl, "http://127.0.0.1:%d/metrics", s.port);
    assert_int_equal(cdn_http_with(NULL, murl, NULL, SERVE_ADMIN_AUTH, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    const char *cut = strstr(h.body, "\nstepctl_connections_cut_total ");
    assert_non_null(cut);
    long long n_cut = strtoll(cut + 31, NULL, 10);
    printf("stepctl_connections_cut_total %lld\n", n_cut);
    assert_true(n_cut >= 1 && n_cut <= held);
    cdn_http_free(&h);
    /* Served after, too; nothing of the tricklers stored. */
    json_decref(serve_allocate(s.port, "s-honest-2"));
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), 2);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* ---- 5. fail closed ----------------------------------------------------------------- */

/* Moves a SQLite file and its -wal and -shm to the same names + suffix
 * (away) or back: a WAL file holds pages the main file may not have yet,
 * so the three go together. */
static void move_store(const char *db, const char *suffix, bool away)
{
    static const char *const parts[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char here[300], there[320];
        snprintf(here, sizeof here, "%s%s", db, parts[i]);
        snprintf(there, sizeof there, "%s%s", here, suffix);
        rename(away ? here : there, away ? there : here);
    }
}

static int serve_exit(struct ctl_world *w, const char *args)
{
    return ctl_run(&w->t, "serve --db '%s' --listen 127.0.0.1:0 %s", w->db, args);
}

/* With --evidence missing or not SQLite the service started and listed a
 * fallback again that an earlier MISMATCH had removed.  Now: --paths
 * without --evidence is a usage error (64), a store that cannot be opened
 * refuses the start (66); a store that becomes unreadable later lists no
 * fallback until it can be read again; a removal recorded in control.db
 * survives a restart on a fresh evidence.db that never saw the MISMATCH. */
static void ctl_154_serve_fails_closed_without_readable_evidence(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256], args[1024], bad[256];
    serve_world_granted(&w, g);
    serve_paths_unsigned(&w, paths, sizeof paths);
    snprintf(args, sizeof args, "--paths '%s'", paths);
    assert_int_equal(serve_exit(&w, args), 64);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "--paths needs --evidence"));
    free(err);
    ctl_write_text(&w.t, "not-sqlite.db", "this is not a database\n", bad, sizeof bad);
    const char *const unusable[] = {bad, w.t.dir, "/nonexistent/evidence.db"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "--paths '%s' --evidence '%s'", paths, unusable[i]);
        assert_int_equal(serve_exit(&w, args), 66);
        err = ctl_out(&w.t, "err");
        assert_non_null(strstr(err, "refusing to start"));
        free(err);
    }

    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));
    char list[128];
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");
    /* The store becomes unreadable: no fallback; readable again: back. */
    move_store(w.ev, ".bak", true);
    assert_int_equal(link(bad, w.ev), 0);
    sleep(2); /* a pathway's evidence is read at most once a second */
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C");
    assert_int_equal(unlink(w.ev), 0);
    move_store(w.ev, ".bak", false);
    sleep(2);
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");
    /* D's MISMATCH removes it, recorded in control.db ... */
    ctl_world_evidence(&w, "ev-d-bad", "D", "MISMATCH", ctl_now_ms(), true);
    sleep(2);
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,E");
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM delivery_removals WHERE path_id = 'D'"), 1);
    /* ... so a restart on a fresh evidence.db (with E's MATCH only) keeps
     * D out. */
    static const char *const parts[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char f[300];
        snprintf(f, sizeof f, "%s%s", w.ev, parts[i]);
        unlink(f);
    }
    ctl_evidence_store(w.ev, NULL);
    ctl_world_evidence(&w, "ev-e-again", "E", "MATCH", ctl_now_ms() - 1000, true);
    server_start_with(&w, &s, extra);
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,E");
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* ---- 6. the smaller list ------------------------------------------------------------- */

/* One request on its own connection (Connection: close); the answer. */
static void raw_once(int port, const char *method, const char *target, char *out, size_t cap)
{
    char text[1024];
    snprintf(text, sizeof text,
             "%s %s HTTP/1.1\r\nHost: x\r\n" SERVE_ADMIN_AUTH "\r\nConnection: close\r\n\r\n",
             method, target);
    assert_true(raw_exchange(port, text, out, cap));
}

/* The body of a raw answer: what follows the blank line. */
static const char *raw_body(const char *answer)
{
    const char *b = strstr(answer, "\r\n\r\n");
    assert_non_null(b);
    return b + 4;
}

/* HEAD was answered 405; allocation ids "." and ".." were accepted and
 * their playback URLs normalize away.  Now HEAD is answered as GET is,
 * without a body, and dot-segments are refused: 400 in a body, 404 in a
 * path. */
static void ctl_155_serve_head_is_get_without_body_and_dot_segment_ids_are_refused(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256], got[16384], get_answer[16384];
    serve_world_granted(&w, g);
    serve_paths_unsigned(&w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));
    static const char *const targets[] = {"/healthz", "/v1/allocations/s-1/steering",
                                          "/v1/allocations/s-1/master.m3u8", "/metrics"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        char target[384];
        serve_session_path(w.db, targets[i], target, sizeof target);
        raw_once(s.port, "HEAD", target, got, sizeof got);
        if (strncmp(got, "HTTP/1.1 200", 12))
            printf("HEAD %s: %s\n", target, got);
        assert_memory_equal(got, "HTTP/1.1 200", 12);
        assert_string_equal(raw_body(got), "");
        raw_once(s.port, "GET", target, get_answer, sizeof get_answer);
        assert_memory_equal(get_answer, "HTTP/1.1 200", 12);
        assert_true(strlen(raw_body(get_answer)) > 0);
    }
    /* HEAD where only POST is: 405, Allow says so; Allow of a GET path
     * names HEAD. */
    raw_once(s.port, "HEAD", "/v1/allocations", got, sizeof got);
    assert_memory_equal(got, "HTTP/1.1 405", 12);
    assert_non_null(strstr(got, "\r\nAllow: POST\r\n"));
    raw_once(s.port, "DELETE", "/healthz", got, sizeof got);
    assert_memory_equal(got, "HTTP/1.1 405", 12);
    assert_non_null(strstr(got, "\r\nAllow: GET, HEAD\r\n"));

    /* "." and ".." as allocation ids: 400, nothing stored. */
    static const char *const dots[] = {".", ".."};
    for (size_t i = 0; i < 2; i++) {
        struct cdn_http h;
        serve_post_allocation(s.port, dots[i], &h);
        assert_int_equal(h.status, 400);
        assert_non_null(strstr(h.body, "dot-segments"));
        cdn_http_free(&h);
        assert_int_equal(allocations_named(&w, dots[i]), 0);
    }
    /* In a path (sent as is: a client would normalize it): no route. */
    static const char *const dot_paths[] = {"/v1/allocations/./steering",
                                            "/v1/allocations/../steering",
                                            "/v1/allocations/s-1/./r360.m3u8",
                                            "/v1/allocations/s-1/C/.."};
    for (size_t i = 0; i < sizeof dot_paths / sizeof dot_paths[0]; i++) {
        char target[384]; /* the delivery routes: /v1/sessions/SID/... */
        serve_session_path(w.db, dot_paths[i], target, sizeof target);
        raw_once(s.port, "GET", target, got, sizeof got);
        assert_memory_equal(got, "HTTP/1.1 404", 12);
        assert_non_null(strstr(got, "not_found"));
    }
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* A command of stepctl bounded by timeout(1): a hang is exit 124, not a
 * test that never ends. */
#define BOUNDED "20 '" CTL_STEPCTL "' "

/* FIFO inputs (decide --input, next --input, a paths.json key_file,
 * sign-url --key, paths.json itself) hung the command; private keys that
 * group or others could read were used silently.  Now a FIFO is refused
 * at once (66, "not a regular file"), and a private key with any group or
 * other permission is refused (65, naming the mode); mode 0600 signs. */
static void ctl_156_fifo_inputs_are_refused_and_keys_open_to_others_too(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], fifo[256], paths[256], text[2048];
    serve_world_granted(&w, g);
    edge_key(&w);
    ctl_tmp_path(&w.t, "fifo", fifo, sizeof fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char cmd[4][1024];
    snprintf(cmd[0], sizeof cmd[0], BOUNDED "decide --input '%s' --evidence '%s' --db '%s'", fifo,
             w.ev, w.db);
    snprintf(cmd[1], sizeof cmd[1], BOUNDED "next %s --input '%s' --evidence '%s' --db '%s'", g,
             fifo, w.ev, w.db);
    snprintf(cmd[2], sizeof cmd[2],
             BOUNDED "sign-url --key '%s' --key-pair-id K --url http://a/b --expires 9", fifo);
    snprintf(cmd[3], sizeof cmd[3],
             BOUNDED "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' --evidence '%s'", w.db, fifo,
             w.ev);
    for (size_t i = 0; i < 4; i++) {
        int rc = ctl_run_program(&w.t, "timeout", "%s", cmd[i]);
        char *err = ctl_out(&w.t, "err");
        if (rc != 66 || !strstr(err, "not a regular file"))
            printf("case %zu: exit %d: %s\n", i, rc, err);
        assert_int_equal(rc, 66);
        assert_non_null(strstr(err, "not a regular file"));
        free(err);
    }
    /* A key_file that is a FIFO. */
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"http://cdn-c.invalid/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-url\", \"key_file\": \"fifo\", \"key_pair_id\": \"K\"}}}}\n");
    ctl_write_text(&w.t, "paths.json", text, paths, sizeof paths);
    assert_int_equal(ctl_run_program(&w.t, "timeout",
                                     BOUNDED "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' "
                                     "--evidence '%s'", w.db, paths, w.ev),
                     66);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "paths.C.auth.key_file"));
    assert_non_null(strstr(err, "not a regular file"));
    free(err);

    /* Keys open to group or others. */
    char key[256];
    ctl_tmp_path(&w.t, "rsa.pem", key, sizeof key);
    static const mode_t open_modes[] = {0644, 0640, 0604, 0620};
    for (size_t i = 0; i < sizeof open_modes / sizeof open_modes[0]; i++) {
        assert_int_equal(chmod(key, open_modes[i]), 0);
        assert_int_equal(ctl_run(&w.t, "sign-url --key '%s' --key-pair-id K --url http://a/b "
                                       "--expires 9999999999", key),
                         65);
        err = ctl_out(&w.t, "err");
        char mode[32];
        snprintf(mode, sizeof mode, "(mode %04o)", (unsigned)open_modes[i]);
        assert_non_null(strstr(err, "accessible by group or others"));
        assert_non_null(strstr(err, mode));
        free(err);
    }
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"http://cdn-c.invalid/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-url\", \"key_file\": \"rsa.pem\", \"key_pair_id\": \"K\"}}}}\n");
    ctl_write_text(&w.t, "paths.json", text, paths, sizeof paths);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' --evidence '%s'",
                             w.db, paths, w.ev),
                     65);
    assert_int_equal(chmod(key, 0600), 0);
    assert_int_equal(ctl_run(&w.t, "sign-url --key '%s' --key-pair-id K --url http://a/b "
                                   "--expires 9999999999", key),
                     0);
    ctl_world_end(&w);
}

/* `next --actor` was not bounded like grant, revoke and release (a longer
 * one was cut to 127 bytes where it is recorded).  Now empty or longer
 * than 127 bytes is 64, and nothing is written; 127 bytes are taken. */
static void ctl_157_next_actor_is_bounded_like_grant(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], long_actor[130];
    serve_world_granted(&w, g);
    long long before = ctl_query_int(w.db, "SELECT count(*) FROM grant_events") +
                       ctl_query_int(w.db, "SELECT count(*) FROM decisions");
    memset(long_actor, 'a', 128);
    long_actor[128] = '\0';
    const char *const bad[] = {"", long_actor};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --actor '%s'", g, w.db,
                                 w.ev, bad[i]),
                         64);
        char *err = ctl_out(&w.t, "err");
        assert_non_null(strstr(err, "stepctl next: --actor must be 1 to 127 bytes"));
        free(err);
    }
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM grant_events") +
                         ctl_query_int(w.db, "SELECT count(*) FROM decisions"),
                     before);
    long_actor[127] = '\0';
    assert_int_not_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --actor '%s' --dry-run",
                                 g, w.db, w.ev, long_actor),
                         64);
    ctl_world_end(&w);
}

/* A loopback upstream that answers every request with one fixed answer
 * (switched by the test): the CDN of a cloudfront-url path. */
struct fixed_upstream {
    int fd, port;
    pthread_t thread;
    pthread_mutex_t mu;
    char answer[2048];
    bool stop;
    bool hold;       /* a request read is answered only once hold is cleared */
    int requests;    /* requests read */
};

static void *fixed_upstream_run(void *arg)
{
    struct fixed_upstream *u = arg;
    for (;;) {
        pthread_mutex_lock(&u->mu);
        bool stop = u->stop;
        pthread_mutex_unlock(&u->mu);
        struct pollfd p = {.fd = u->fd, .events = POLLIN};
        if (stop)
            return NULL;
        if (poll(&p, 1, 100) <= 0)
            continue;
        int c = accept(u->fd, NULL, NULL);
        if (c < 0)
            continue;
        char req[4096];
        raw_read_request(c, req, sizeof req);
        pthread_mutex_lock(&u->mu);
        u->requests++;
        while (u->hold && !u->stop) {
            pthread_mutex_unlock(&u->mu);
            usleep(10000);
            pthread_mutex_lock(&u->mu);
        }
        send(c, u->answer, strlen(u->answer), MSG_NOSIGNAL);
        pthread_mutex_unlock(&u->mu);
        close(c);
    }
}

static void fixed_upstream_set(struct fixed_upstream *u, const char *status, const char *body)
{
    pthread_mutex_lock(&u->mu);
    snprintf(u->answer, sizeof u->answer,
             "HTTP/1.1 %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", status,
             strlen(body), body);
    pthread_mutex_unlock(&u->mu);
}

static void fixed_upstream_start(struct fixed_upstream *u)
{
    memset(u, 0, sizeof *u);
    pthread_mutex_init(&u->mu, NULL);
    u->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(u->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(u->fd, 16), 0);
    assert_int_equal(getsockname(u->fd, (struct sockaddr *)&a, &len), 0);
    u->port = ntohs(a.sin_port);
    fixed_upstream_set(u, "200 OK", "#EXTM3U\n");
    assert_int_equal(pthread_create(&u->thread, NULL, fixed_upstream_run, u), 0);
}

static void fixed_upstream_stop(struct fixed_upstream *u)
{
    pthread_mutex_lock(&u->mu);
    u->stop = true;
    pthread_mutex_unlock(&u->mu);
    pthread_join(u->thread, NULL);
    close(u->fd);
    pthread_mutex_destroy(&u->mu);
}

/* paths.json: C signed by the service from the upstream at port, D unsigned. */
static void upstream_paths(struct ctl_world *w, int port, int cache_ms, char *paths, size_t n)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"http://127.0.0.1:%d/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-url\", \"key_file\": \"rsa.pem\", \"key_pair_id\": \"K\"}}, "
             "\"D\": {\"renditions\": {\"r360\": \"http://cdn-d.invalid/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"none\"}}}, \"playlist_cache_ms\": %d}\n",
             port, cache_ms);
    ctl_write_text(&w->t, "paths.json", text, paths, n);
}

/* Invalid upstream content (not a playlist, a multivariant playlist, a
 * control byte, a URI outside the rendition) was answered
 * upstream_unavailable: upstream_invalid was never produced.  Now it is,
 * and upstream_unavailable stays for an upstream that does not answer 200. */
static void ctl_158_serve_invalid_upstream_content_is_upstream_invalid(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256];
    serve_world_granted(&w, g);
    edge_key(&w);
    struct fixed_upstream up;
    fixed_upstream_start(&up);
    upstream_paths(&w, up.port, 0, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));
    static const struct {
        const char *status, *body, *code;
    } cases[] = {
        {"200 OK", "<html>not a playlist</html>", "upstream_invalid"},
        {"200 OK", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n", "upstream_invalid"},
        {"200 OK", "#EXTM3U\n#EXTINF:4,\nhttp://elsewhere.invalid/x/0.ts\n", "upstream_invalid"},
        {"503 Service Unavailable", "busy", "upstream_unavailable"},
        {"200 OK", "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixed_upstream_set(&up, cases[i].status, cases[i].body);
        struct cdn_http h;
        long st;
        /* a fetch still under way is 503 upstream_pending (Retry-After), as on a
         * loaded machine: asked again, as a player asks (at most 10 s) */
        for (int k = 0;; k++) {
            st = edge_get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h);
            if (st != 503 || !strstr(h.body, "upstream_pending") || k == 100)
                break;
            cdn_http_free(&h);
            usleep(100 * 1000);
        }
        if (cases[i].code && (st != 502 || !strstr(h.body, cases[i].code)))
            printf("case %zu: %ld %s\n", i, st, h.body);
        if (cases[i].code) {
            assert_int_equal(st, 502);
            assert_non_null(strstr(h.body, cases[i].code));
        } else {
            assert_int_equal(st, 200);
            assert_non_null(strstr(h.body, "/ch1/r360/seg0.ts?Policy="));
        }
        cdn_http_free(&h);
    }
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    fixed_upstream_stop(&up);
    ctl_world_end(&w);
}

/* A slow CDN stalled admission: HTTP threads fetched upstream playlists
 * themselves.  Now a fetcher thread does, one in flight per playlist: while
 * the CDN holds its answer, every media playlist request is answered at
 * once (503 upstream_pending, Retry-After) and allocations are answered
 * (their latency printed, not asserted); the CDN sees one request; once it
 * answers, the signed playlist is served, and served from that copy while
 * the next refresh is held. */
struct media_load {
    const char *db;
    int port;
    long status[4];
    char retry_after[4];
};

static void *media_client(void *arg)
{
    struct media_load *m = arg;
    for (int i = 0; i < 4; i++) {
        struct cdn_http h;
        char url[512], sp[384];
        serve_session_path(m->db, "/v1/allocations/s-1/C/r360.m3u8", sp, sizeof sp);
        snprintf(url, sizeof url, "http://127.0.0.1:%d%s", m->port, sp);
        if (cdn_http(NULL, url, NULL, NULL, &h) == 0) {
            m->status[i] = h.status;
            m->retry_after[i] = h.headers && strstr(h.headers, "\nRetry-After: 1") ? 1 : 0;
            if (h.status == 503 && !strstr(h.body, "upstream_pending"))
                m->status[i] = -503;
            cdn_http_free(&h);
        }
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void ctl_160_serve_a_slow_cdn_never_holds_an_http_thread(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256];
    serve_world_granted(&w, g);
    edge_key(&w);
    struct fixed_upstream up;
    fixed_upstream_start(&up);
    fixed_upstream_set(&up, "200 OK", "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n");
    pthread_mutex_lock(&up.mu);
    up.hold = true;
    pthread_mutex_unlock(&up.mu);
    upstream_paths(&w, up.port, 1000, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));
    struct media_load m[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        m[i] = (struct media_load){.db = w.db, .port = s.port};
        assert_int_equal(pthread_create(&th[i], NULL, media_client, &m[i]), 0);
    }
    double ms[6];
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "s-%d", i + 2);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        json_decref(serve_allocate(s.port, id));
        clock_gettime(CLOCK_MONOTONIC, &b);
        ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_lock(&up.mu);
    int held_requests = up.requests;
    bool still_held = up.hold;
    up.hold = false;
    pthread_mutex_unlock(&up.mu);
    qsort(ms, 6, sizeof ms[0], cmp_double);
    printf("allocations while the CDN holds its playlist: median %.1f ms, max %.1f ms; CDN requests %d\n",
           ms[2], ms[5], held_requests);
    assert_true(still_held);
    assert_int_equal(held_requests, 1);      /* one fetch in flight, whatever the load */
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 4; k++) {
            assert_int_equal(m[i].status[k], 503);
            assert_true(m[i].retry_after[k]);
        }
    /* the CDN answers: the signed playlist is served */
    struct cdn_http h;
    long st = 0;
    for (int i = 0; i < 100 && st != 200; i++) {
        usleep(50000);
        st = edge_get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h);
        if (st != 200)
            cdn_http_free(&h);
    }
    assert_int_equal(st, 200);
    assert_non_null(strstr(h.body, "/ch1/r360/seg0.ts?Policy="));
    cdn_http_free(&h);
    /* the next refresh is held: that copy answers meanwhile */
    pthread_mutex_lock(&up.mu);
    up.hold = true;
    pthread_mutex_unlock(&up.mu);
    usleep(1200 * 1000);   /* past playlist_cache_ms: the next request starts a refresh */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(edge_get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h), 200);
        cdn_http_free(&h);
    }
    pthread_mutex_lock(&up.mu);
    up.hold = false;
    pthread_mutex_unlock(&up.mu);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    fixed_upstream_stop(&up);
    ctl_world_end(&w);
}

/* --public-url with a path prefix (a reverse proxy serving the service
 * below /svc) gave playback URLs under it, but the multivariant
 * playlist's SERVER-URI and the signed variants' URIs were root-relative
 * without it: the player asked the proxy's root.  Now they carry the
 * prefix; without one nothing changes; a query in --public-url is 64. */
static void ctl_159_serve_public_url_path_prefix_reaches_steering_and_variants(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256], text[2048];
    serve_world_granted(&w, g);
    edge_key(&w);
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"http://cdn-c.invalid/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-url\", \"key_file\": \"rsa.pem\", \"key_pair_id\": \"K\"}}, "
             "\"D\": {\"renditions\": {\"r360\": \"http://cdn-d.invalid/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"none\"}}}}\n");
    ctl_write_text(&w.t, "paths.json", text, paths, sizeof paths);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' --evidence "
                                   "'%s' --public-url 'https://edge.example/svc?x=1'",
                             w.db, paths, w.ev),
                     64);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, "--public-url",
                           "https://edge.example/svc/", NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_t *a = serve_allocate(s.port, "s-1");
    char want[512];
    serve_session_text(w.db, "s-1", "https://edge.example/svc/v1/allocations/s-1/master.m3u8", want,
                       sizeof want);
    assert_string_equal(json_string_value(json_object_get(a, "playback_url")), want);
    json_decref(a);
    struct cdn_http h;
    assert_int_equal(edge_get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    serve_session_text(w.db, "s-1", "SERVER-URI=\"/svc/v1/allocations/s-1/steering\"", want,
                       sizeof want);
    assert_non_null(strstr(h.body, want));
    serve_session_text(w.db, "s-1", "PATHWAY-ID=\"C\"\n/svc/v1/allocations/s-1/C/r360.m3u8\n", want,
                       sizeof want);
    assert_non_null(strstr(h.body, want));
    assert_non_null(strstr(h.body, "PATHWAY-ID=\"D\"\nhttp://cdn-d.invalid/ch1/r360/live.m3u8\n"));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    /* Without a path: as before. */
    const char *plain[] = {"--paths", paths, "--evidence", w.ev, "--public-url",
                           "https://edge.example/", NULL};
    server_start_with(&w, &s, plain);
    assert_int_equal(edge_get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    serve_session_text(w.db, "s-1", "SERVER-URI=\"/v1/allocations/s-1/steering\"", want,
                       sizeof want);
    assert_non_null(strstr(h.body, want));
    serve_session_text(w.db, "s-1", "PATHWAY-ID=\"C\"\n/v1/allocations/s-1/C/r360.m3u8\n", want,
                       sizeof want);
    assert_non_null(strstr(h.body, want));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_150_serve_cookies_path_on_two_origins_is_refused_at_start, kill_leftovers),
        cmocka_unit_test_teardown(ctl_151_serve_sixteen_clients_each_get_three_cloudfront_cookies, kill_leftovers),
        cmocka_unit_test_teardown(ctl_152_serve_ambiguous_framing_is_400_and_closes_nothing_smuggled, kill_leftovers),
        cmocka_unit_test_teardown(ctl_153_serve_tricklers_are_cut_off_and_an_honest_client_is_answered, kill_leftovers),
        cmocka_unit_test_teardown(ctl_154_serve_fails_closed_without_readable_evidence, kill_leftovers),
        cmocka_unit_test_teardown(ctl_155_serve_head_is_get_without_body_and_dot_segment_ids_are_refused, kill_leftovers),
        cmocka_unit_test_teardown(ctl_156_fifo_inputs_are_refused_and_keys_open_to_others_too, kill_leftovers),
        cmocka_unit_test_teardown(ctl_157_next_actor_is_bounded_like_grant, kill_leftovers),
        cmocka_unit_test_teardown(ctl_158_serve_invalid_upstream_content_is_upstream_invalid, kill_leftovers),
        cmocka_unit_test_teardown(ctl_159_serve_public_url_path_prefix_reaches_steering_and_variants, kill_leftovers),
        cmocka_unit_test_teardown(ctl_160_serve_a_slow_cdn_never_holds_an_http_thread, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
