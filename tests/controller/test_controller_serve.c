/* The admission service end to end on loopback: the stepctl binary serving
 * a real control.db, clients on libcurl in threads.  Concurrency, retries,
 * the cap, refusals, malformed requests, the drain at SIGTERM, and kill -9
 * at random moments checked against the clients' own logs. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sqlite3.h>

#include "ctl_test.h"
#include "dbfile.h"
#include "promtool.h"
#include "serve_rig.h"

/* The server: serve_rig.h (server_start, server_stop, kill_leftovers). */

/* ---- the client ---------------------------------------------------------------- */

struct reply {
    long status; /* 0: no answer (connection failed or cut) */
    char *body;  /* small, unless the caller set a larger buffer */
    size_t cap, len;
    char retry_after[16];
    char small[2048];
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct reply *r = arg;
    size_t len = size * n;
    if (r->len + len < r->cap) {
        memcpy(r->body + r->len, p, len);
        r->len += len;
        r->body[r->len] = '\0';
    }
    return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct reply *r = arg;
    size_t len = size * n;
    if (len > 13 && !strncasecmp(p, "Retry-After: ", 13))
        sscanf(p + 13, "%15s", r->retry_after);
    return len;
}

/* One request; extra: one more header line or NULL. */
static long http(CURL *h, int port, const char *method, const char *path, const char *body,
                 const char *extra, struct reply *r)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    if (!r->body || r->body == r->small) {
        r->body = r->small;
        r->cap = sizeof r->small;
    }
    r->status = 0;
    r->len = 0;
    r->body[0] = r->retry_after[0] = '\0';
    curl_easy_reset(h);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    if (extra)
        hdr = curl_slist_append(hdr, extra);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hdr);
    return r->status;
}

static void body_for(char *buf, size_t n, const char *id, const char *isp)
{
    snprintf(buf, n,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"%s\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}",
             id, isp);
}

static long post(CURL *h, int port, const char *id, struct reply *r)
{
    char b[512];
    body_for(b, sizeof b, id, "isp-x");
    return http(h, port, "POST", "/v1/allocations", b, NULL, r);
}

static const char *error_of(const struct reply *r, char *buf, size_t n)
{
    json_t *j = json_loads(r->body, 0, NULL);
    const char *e = json_string_value(json_object_get(j, "error"));
    snprintf(buf, n, "%s", e ? e : "");
    json_decref(j);
    return buf;
}

/* The stored body of an allocation ("" when there is none). */
static void stored(const char *db, const char *id, char *out, size_t n)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    out[0] = '\0';
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(h, 5000);
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT response FROM allocations WHERE id = ?1", -1,
                                        &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, n, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
}

/* A decided and granted step for cohort isp-x: cap, rate (per s), burst. */
static void grant_step(struct ctl_world *w, int cap, int rate, int burst, char g[33])
{
    json_t *sit = ctl_world_situation(w);
    ctl_set(sit, "action.max_allocations", json_integer(cap));
    ctl_set(sit, "action.max_rate_per_s", json_integer(rate));
    ctl_set(sit, "policy.grant.max_burst", json_integer(burst));
    char d[33], args[64];
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", sit, w->ev, w->db, d), 0);
    snprintf(args, sizeof args, "--max-allocations %d", cap);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, args, g), 0);
    json_decref(sit);
}

/* A world with a granted step for cohort isp-x, its server and a client. */
struct fixture {
    struct ctl_world w;
    char g[33];
    struct server s;
    CURL *h;
};

static void fixture_begin(struct fixture *f, int cap, int rate, int burst)
{
    ctl_world_begin(&f->w);
    grant_step(&f->w, cap, rate, burst, f->g);
    server_start(&f->w, &f->s);
    f->h = curl_easy_init();
}

/* Stops the server with SIGTERM: it must drain and exit 0. */
static void fixture_end(struct fixture *f)
{
    curl_easy_cleanup(f->h);
    assert_int_equal(server_stop(&f->s, SIGTERM), 0);
    ctl_world_end(&f->w);
}

/* ---- clients in threads ---------------------------------------------------------- */

#define MAX_LOG 2048

struct entry {
    char id[48];
    struct reply r;
};

struct client {
    pthread_t thread;
    int port, index, count;
    bool until_error; /* keep going (new ids) until the server stops answering */
    bool retry_first; /* send the first id again at the end */
    volatile int *stop;
    struct entry *log;
    int n;
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    CURL *h = curl_easy_init();
    for (int i = 0; (c->until_error || i < c->count) && c->n < MAX_LOG - 1; i++) {
        if (c->stop && *c->stop)
            break;
        struct entry *e = &c->log[c->n++];
        snprintf(e->id, sizeof e->id, "c%d-%d", c->index, i);
        post(h, c->port, e->id, &e->r);
        if (c->until_error && e->r.status == 0)
            break;
    }
    if (c->retry_first && c->n > 0) {
        struct entry *e = &c->log[c->n++];
        memmove(e->id, c->log[0].id, sizeof e->id); /* e is never log[0] */
        post(h, c->port, e->id, &e->r);
    }
    curl_easy_cleanup(h);
    return NULL;
}

static void clients_run(struct client *cs, int n, int base, int port, int count,
                        bool until_error, bool retry_first, volatile int *stop)
{
    for (int i = 0; i < n; i++) {
        cs[i] = (struct client){.port = port, .index = base + i, .count = count,
                                .until_error = until_error, .retry_first = retry_first,
                                .stop = stop};
        cs[i].log = calloc(MAX_LOG, sizeof *cs[i].log);
        assert_non_null(cs[i].log);
        assert_int_equal(pthread_create(&cs[i].thread, NULL, client_main, &cs[i]), 0);
    }
}

static void clients_join(struct client *cs, int n)
{
    for (int i = 0; i < n; i++)
        pthread_join(cs[i].thread, NULL);
}

static void clients_free(struct client *cs, int n)
{
    for (int i = 0; i < n; i++)
        free(cs[i].log);
}

/* ---- the tests -------------------------------------------------------------------- */

static void ctl_52_serve_end_to_end_cap_retries_and_closing_the_loop(void **state)
{
    (void)state;
    struct fixture f;
    fixture_begin(&f, 20, 100000, 100000);
    /* 30 distinct allocation ids from 6 concurrent clients, each client also
     * retrying its first id: exactly 20 allocations. */
    struct client cs[6];
    clients_run(cs, 6, 0, f.s.port, 5, false, true, NULL);
    clients_join(cs, 6);
    int created = 0, exhausted = 0;
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < 5; k++) {
            struct reply *r = &cs[i].log[k].r;
            char err[64];
            created += r->status == 201;
            exhausted += r->status == 403 && !strcmp(error_of(r, err, sizeof err),
                                                     "quota_exhausted");
        }
        struct reply *first = &cs[i].log[0].r, *retry = &cs[i].log[5].r;
        if (first->status == 201) { /* the retry: 200, the same bytes */
            assert_int_equal(retry->status, 200);
            assert_string_equal(retry->body, first->body);
        } else {
            assert_int_equal(retry->status, 403);
        }
    }
    assert_int_equal(created, 20);
    assert_int_equal(exhausted, 10);
    assert_int_equal(ctl_query_int(f.w.db, "SELECT count(*) FROM allocations"), 20);
    char sql[200], body[4096];
    snprintf(sql, sizeof sql, "SELECT allocated FROM grants WHERE id = '%s'", f.g);
    assert_int_equal(ctl_query_int(f.w.db, sql), 20);
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 5; k++)
            if (cs[i].log[k].r.status == 201) {
                stored(f.w.db, cs[i].log[k].id, body, sizeof body);
                assert_string_equal(body, cs[i].log[k].r.body);
            }
    clients_free(cs, 6);
    struct reply r = {0};
    char path[96], grant_text[8192];
    snprintf(path, sizeof path, "/v1/grants/%s", f.g);
    r.body = grant_text;
    r.cap = sizeof grant_text;
    /* an operator endpoint: 401 without the token, with WWW-Authenticate */
    assert_int_equal(http(f.h, f.s.port, "GET", path, NULL, NULL, &r), 401);
    assert_non_null(strstr(r.body, "unauthorized"));
    assert_int_equal(http(f.h, f.s.port, "GET", path, NULL, "Authorization: Bearer wrong-token-0123456789", &r), 401);
    r.body = grant_text;
    r.cap = sizeof grant_text;
    assert_int_equal(http(f.h, f.s.port, "GET", path, NULL, SERVE_ADMIN_AUTH, &r), 200);
    json_t *gj = json_loads(r.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(gj, "used")), 20);
    assert_int_equal(json_integer_value(json_object_get(gj, "remaining")), 0);
    assert_string_equal(json_string_value(json_object_get(gj, "state")), "exhausted");
    json_decref(gj);
    r.body = NULL;
    /* New MISMATCH evidence of the step: next closes issuance. */
    usleep(2000);
    ctl_world_evidence(&f.w, "ev-step-bad", "C", "MISMATCH", ctl_now_ms(), true);
    assert_int_equal(ctl_run(&f.w.t, "next %s --db '%s' --evidence '%s'", f.g, f.w.db, f.w.ev), 4);
    char err[64];
    assert_int_equal(post(f.h, f.s.port, "late-1", &r), 403);
    assert_string_equal(error_of(&r, err, sizeof err), "grant_revoked");
    assert_non_null(strstr(r.body, "mismatch"));
    assert_non_null(strstr(r.body, "ev-step-bad"));
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM grants WHERE id = '%s' AND status = 'closed' AND "
             "close_status = 'VIOLATION' AND close_reason LIKE '%%ev-step-bad%%'",
             f.g);
    assert_int_equal(ctl_query_int(f.w.db, sql), 1);
    fixture_end(&f);
}

static void ctl_53_serve_refuses_bad_requests_and_writes_nothing(void **state)
{
    (void)state;
    struct fixture f;
    fixture_begin(&f, 20, 100000, 100000);
    struct reply r = {0};
    char big[6000], err[64];
    memset(big, ' ', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memcpy(big, "{\"allocation_id\":\"b\"", 20);
    const char *bad[] = {"", "{", "[]", "{\"allocation_id\":\"a\"}",
                         "{\"allocation_id\":\"a\",\"cohort\":{},\"more\":1}",
                         "{\"allocation_id\":\"a\",\"allocation_id\":\"a\",\"cohort\":{}}",
                         "{\"allocation_id\":\"a b\",\"cohort\":{\"channel\":\"news-1\","
                         "\"region\":\"eu-west\",\"isp\":\"isp-x\",\"client\":\"web-hlsjs\","
                         "\"build\":\"2026.11.3\",\"rendition\":\"720p\",\"x\":1}}",
                         big};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(http(f.h, f.s.port, "POST", "/v1/allocations", bad[i], NULL, &r), 400);
        assert_true(!strcmp(error_of(&r, err, sizeof err), "bad_request") ||
                    !strcmp(err, "body_too_large"));
    }
    /* Oversized without a declared length (chunked): still 400. */
    assert_int_equal(http(f.h, f.s.port, "POST", "/v1/allocations", big, "Transfer-Encoding: chunked",
                          &r),
                     400);
    assert_string_equal(error_of(&r, err, sizeof err), "body_too_large");
    char sql[200];
    assert_int_equal(ctl_query_int(f.w.db, "SELECT count(*) FROM allocations"), 0);
    snprintf(sql, sizeof sql, "SELECT allocated FROM grants WHERE id = '%s'", f.g);
    assert_int_equal(ctl_query_int(f.w.db, sql), 0);
    assert_int_equal(ctl_query_int(f.w.db, "SELECT count(*) FROM grant_events"), 1);
    /* Routing. */
    assert_int_equal(http(f.h, f.s.port, "GET", "/v1/nothing", NULL, NULL, &r), 404);
    assert_int_equal(http(f.h, f.s.port, "GET", "/v1/allocations", NULL, NULL, &r), 405);
    assert_int_equal(http(f.h, f.s.port, "GET", "/v1/grants/0123456789abcdef0123456789abcdef", NULL,
                          SERVE_ADMIN_AUTH, &r),
                     404);
    assert_int_equal(http(f.h, f.s.port, "GET", "/v1/grants/a%20b", NULL, NULL, &r), 404);
    assert_int_equal(http(f.h, f.s.port, "GET", "/healthz", NULL, NULL, &r), 200);
    assert_non_null(strstr(r.body, "\"ok\""));
    assert_int_equal(post(f.h, f.s.port, "good-1", &r), 201);
    char *text = malloc(1 << 16);
    assert_non_null(text);
    r.body = text;
    r.cap = 1 << 16;
    assert_int_equal(http(f.h, f.s.port, "GET", "/metrics", NULL, SERVE_ADMIN_AUTH, &r), 200);
    const char *names[] = {"stepctl_allocations_total{result=\"created\"} 1",
                           "stepctl_allocations_total{result=\"bad_request\"} 9",
                           "stepctl_grant_remaining{grant_id=\"",
                           "stepctl_request_duration_seconds_bucket{route=\"allocations\",le=\"+Inf\"}",
                           "stepctl_request_duration_seconds_count{route=\"allocations\"} 10",
                           "stepctl_batches_total "};
    for (int i = 0; i < 6; i++)
        if (!strstr(r.body, names[i]))
            fail_msg("/metrics lacks %s:\n%s", names[i], r.body);
    assert_non_null(strstr(r.body, "\"} 19\n")); /* remaining under the grant */
    free(text);
    fixture_end(&f);
}

struct same_id {
    pthread_t thread;
    int port;
    const char *id;
    struct reply r;
    pthread_barrier_t *go;
};

static void *same_id_main(void *arg)
{
    struct same_id *c = arg;
    CURL *h = curl_easy_init();
    pthread_barrier_wait(c->go);
    post(h, c->port, c->id, &c->r);
    curl_easy_cleanup(h);
    return NULL;
}

static void ctl_54_serve_idempotency_under_concurrency(void **state)
{
    (void)state;
    struct fixture f;
    fixture_begin(&f, 100, 100000, 100000);
    enum { N = 8 };
    int conflicts = 0;
    for (int round = 0; round < 10; round++) {
        char id[32];
        snprintf(id, sizeof id, "same-%d", round);
        struct same_id c[N];
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, N);
        for (int i = 0; i < N; i++) {
            c[i] = (struct same_id){.port = f.s.port, .id = id, .go = &go};
            assert_int_equal(pthread_create(&c[i].thread, NULL, same_id_main, &c[i]), 0);
        }
        int created = 0;
        const char *body = NULL;
        for (int i = 0; i < N; i++)
            pthread_join(c[i].thread, NULL);
        pthread_barrier_destroy(&go);
        for (int i = 0; i < N; i++) {
            long st = c[i].r.status;
            assert_true(st == 201 || st == 200 || st == 409);
            created += st == 201;
            conflicts += st == 409;
            if (st == 201 || st == 200) {
                if (body)
                    assert_string_equal(body, c[i].r.body); /* byte-identical */
                body = c[i].r.body;
            }
        }
        assert_int_equal(created, 1);
    }
    print_message("409 in flight: %d of %d concurrent repeats\n", conflicts, 10 * (N - 1));
    assert_int_equal(ctl_query_int(f.w.db, "SELECT count(*) FROM allocations"), 10);
    /* The same id with another body: 422, and still one allocation. */
    struct reply r = {0};
    char b[512], err[64];
    body_for(b, sizeof b, "same-0", "isp-other");
    assert_int_equal(http(f.h, f.s.port, "POST", "/v1/allocations", b, NULL, &r), 422);
    assert_string_equal(error_of(&r, err, sizeof err), "idempotency_key_reused");
    assert_int_equal(ctl_query_int(f.w.db, "SELECT count(*) FROM allocations"), 10);
    fixture_end(&f);
}

static void ctl_55_serve_rate_limit_429_with_retry_after(void **state)
{
    (void)state;
    struct fixture f;
    fixture_begin(&f, 100, 2, 2);
    struct reply r = {0};
    char err[64];
    assert_int_equal(post(f.h, f.s.port, "r-1", &r), 201);
    assert_int_equal(post(f.h, f.s.port, "r-2", &r), 201);
    assert_int_equal(post(f.h, f.s.port, "r-3", &r), 429);
    assert_string_equal(error_of(&r, err, sizeof err), "rate_limited");
    int after = atoi(r.retry_after);
    assert_true(after >= 1 && after <= 1);
    sleep((unsigned)after);
    assert_int_equal(post(f.h, f.s.port, "r-3", &r), 201); /* the retry of a 429 is a new try */
    assert_int_equal(ctl_query_int(f.w.db, "SELECT count(*) FROM allocations"), 3);
    fixture_end(&f);
}

static int count_status(struct client *cs, int n, long status)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < cs[i].n; j++)
            k += cs[i].log[j].r.status == status;
    return k;
}

static void ctl_56_serve_sigterm_drains_in_flight_requests(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char g[33];
    grant_step(&w, 100000, 100000, 100000, g);
    struct server s;
    server_start(&w, &s);
    struct client cs[8];
    clients_run(cs, 8, 0, s.port, 0, true, false, NULL);
    usleep(300000);
    assert_int_equal(server_stop(&s, SIGTERM), 0); /* drained, then exit 0 */
    clients_join(cs, 8);
    /* Every answer was 201 or a 503 during the drain; every 201 is in the
     * database with the bytes the client got, and nothing else is. */
    int created = count_status(cs, 8, 201), draining = count_status(cs, 8, 503);
    int failed = count_status(cs, 8, 0), total = 0;
    for (int i = 0; i < 8; i++)
        total += cs[i].n;
    assert_int_equal(created + draining + failed, total);
    assert_true(created > 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), created);
    char body[4096];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < cs[i].n; j++)
            if (cs[i].log[j].r.status == 201) {
                stored(w.db, cs[i].log[j].id, body, sizeof body);
                assert_string_equal(body, cs[i].log[j].r.body);
            }
    print_message("drain: %d created, %d 503 while draining, %d refused connections\n", created,
                  draining, failed);
    clients_free(cs, 8);
    ctl_world_end(&w);
}

/* After a restart: every answer a client got is what the database holds,
 * every request that got no answer is settled by retrying it, the count
 * never passes the cap. */
static void verify_round(struct ctl_world *w, struct client *cs, int n, int port, int cap,
                         int *lost_answers)
{
    CURL *h = curl_easy_init();
    char body[4096], err[64];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < cs[i].n; j++) {
            struct entry *e = &cs[i].log[j];
            stored(w->db, e->id, body, sizeof body);
            struct reply again = {0};
            post(h, port, e->id, &again);
            if (e->r.status == 201 || e->r.status == 200) {
                assert_string_equal(body, e->r.body); /* never lost */
                assert_int_equal(again.status, 200);
                assert_string_equal(again.body, e->r.body);
            } else if (e->r.status == 0 && body[0]) {
                /* committed, answer cut by the kill: the retry returns it */
                (*lost_answers)++;
                assert_int_equal(again.status, 200);
                assert_string_equal(again.body, body);
            } else {
                assert_true(e->r.status == 0 || e->r.status == 403);
                assert_false(body[0] && e->r.status == 403);
                assert_true(again.status == 201 ||
                            (again.status == 403 &&
                             !strcmp(error_of(&again, err, sizeof err), "quota_exhausted")));
            }
        }
    curl_easy_cleanup(h);
    char sql[200];
    long long count = ctl_query_int(w->db, "SELECT count(*) FROM allocations");
    snprintf(sql, sizeof sql, "SELECT allocated FROM grants");
    assert_int_equal(ctl_query_int(w->db, sql), count);
    assert_true(count <= cap);
}

static void integrity_ok(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(h);
}

static void ctl_57_serve_kill9_at_random_moments_loses_and_duplicates_nothing(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    enum { CAP = 4000, ROUNDS = 6, CLIENTS = 8 };
    char g[33];
    grant_step(&w, CAP, 100000, 100000, g);
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    print_message("kill -9 test seed %u\n", seed);
    int lost = 0, created = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct server s;
        server_start(&w, &s);
        struct client cs[CLIENTS];
        clients_run(cs, CLIENTS, round * 100, s.port, 0, true, false, NULL); /* ids unique */
        usleep(20000 + (useconds_t)(rand() % 250) * 1000);
        assert_int_equal(server_stop(&s, SIGKILL), 128 + SIGKILL);
        clients_join(cs, CLIENTS);
        created += count_status(cs, CLIENTS, 201);
        struct server again;
        server_start(&w, &again);
        verify_round(&w, cs, CLIENTS, again.port, CAP, &lost);
        assert_int_equal(server_stop(&again, SIGTERM), 0);
        clients_free(cs, CLIENTS);
    }
    print_message("kill -9: %d rounds, %d created, %d answers cut after commit (recovered by "
                  "retry), %lld allocations\n",
                  ROUNDS, created, lost, ctl_query_int(w.db, "SELECT count(*) FROM allocations"));
    integrity_ok(w.db);
    ctl_world_end(&w);
}

/* Runs `exactav verify` of a fixture candidate against ref.json for path C,
 * writing (and, the first time, creating) the world's evidence.db. */
static void verify_c(struct ctl_world *w, const char *bind)
{
    assert_int_equal(ctl_run_program(&w->t, CTL_EXACTAV,
                                     "verify --no-progress --reference '%s' --candidate "
                                     "'%s/cand_copy.ts' --path-id C --evidence '%s'",
                                     bind, CTL_MEDIA_DIR, w->ev),
                     0);
}

/* Issues 10 and 11 on one evidence.db written by the current exactav
 * (schema 2): decide completes C's access from the newest probe and its
 * commitments from the ledger (another cohort's grant holds 300 origin
 * rps), records both and replays; the step is granted, served over HTTP up
 * to its cap, and `next` reads the MATCH exactav wrote during the step from
 * that store and proposes the next step.  No stepctl command writes the
 * store or changes its version. */
static void ctl_65_loop_on_an_evidence_db_written_by_the_current_exactav(void **state)
{
    (void)state;
    struct ctl_world w;
    assert_int_equal(ctl_tmp_make(&w.t), 0);
    ctl_tmp_path(&w.t, "evidence.db", w.ev, sizeof w.ev);
    ctl_tmp_path(&w.t, "control.db", w.db, sizeof w.db);
    char bind[160];
    ctl_tmp_path(&w.t, "ref.json", bind, sizeof bind);
    assert_int_equal(ctl_run_program(&w.t, CTL_EXACTAV,
                                     "bind --channel news-1 --program-version pv-42 --rendition "
                                     "720p --out '%s' '%s/ref.ts'",
                                     bind, CTL_MEDIA_DIR),
                     0);
    verify_c(&w, bind);
    assert_int_equal(ctl_query_int(w.ev, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ctl_query_int(w.ev, "PRAGMA application_id"), DBFILE_APPID_EVIDENCE);
    struct evidence_db *e = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(w.ev, EVIDENCE_OPEN_RW, &e, err, sizeof err), EVIDENCE_OK);
    struct evidence_probe p = {
        .id = "probe-c", .path_id = "C", .channel = "news-1", .rendition = "720p",
        .object = "https://cdn-c.example/live/720p.m3u8", .status = EVIDENCE_PROBE_PASS,
        .reason = "ok", .observed_at_ms = ctl_now_ms() - 1000,
        .observed_end_ms = ctl_now_ms() - 990,
    };
    assert_int_equal(evidence_probe_insert(e, &p, err, sizeof err), EVIDENCE_OK);
    evidence_close(e);
    w.now = ctl_now_ms() + 1000; /* decisions at now: after the evidence and the probe */
    /* Another cohort's step of 300 origin rps, granted: the ledger holds it. */
    json_t *other = ctl_world_situation(&w);
    ctl_tune_c(other, true, 300);
    ctl_other_isp(other, "isp-y");
    char d1[33], g1[33];
    assert_int_equal(ctl_decide_cli(&w.t, "other.json", other, w.ev, w.db, d1), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d1, NULL, g1), 0);
    json_decref(other);
    /* This cohort: C gives neither access nor commitments. */
    json_t *sit = ctl_world_situation(&w), *seen = json_deep_copy(sit);
    ctl_fast(sit);
    ctl_tune_c(sit, true, -1);
    ctl_tune_c(seen, true, -1);
    json_object_del(ctl_cand(sit, "C"), "access");
    char d2[33];
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d2), 0);
    char *out = ctl_out(&w.t, "out");
    json_t *d = json_loads(out, 0, NULL);
    free(out);
    assert_string_equal(json_string_value(json_object_get(d, "chosen")), "C");
    json_t *conds = json_object_get(json_array_get(json_object_get(d, "candidates"), 2),
                                    "conditions");
    json_t *acc = json_object_get(conds, "access");
    assert_string_equal(json_string_value(json_object_get(acc, "reason")), "access_compatible");
    assert_int_equal(json_integer_value(json_object_get(acc, "observed_at_ms")),
                     p.observed_at_ms);
    json_t *chk = json_array_get(json_object_get(json_object_get(conds, "resources"), "checks"), 0);
    assert_string_equal(json_string_value(json_object_get(chk, "commitments_source")), "ledger");
    assert_true(json_number_value(json_object_get(chk, "commitments_upper")) == 300.0);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(conds, "content"), "reason")),
                        "match");
    json_decref(d);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM decisions WHERE id = '%s' AND situation LIKE '%%probe-c%%'", d2);
    assert_int_equal(ctl_query_int(w.db, sql), 1);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM decision_commitments WHERE decision_id = '%s' AND "
             "resource = 'origin' AND metric = 'rps' AND commitments_micro = 300000000", d2);
    assert_int_equal(ctl_query_int(w.db, sql), 2);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d2, w.db), 0);
    /* Granted, served up to its cap. */
    char g2[33];
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, "--max-allocations 5", g2), 0);
    struct server s;
    server_start(&w, &s);
    CURL *h = curl_easy_init();
    struct reply r = {0};
    char id[16], why[64];
    for (int i = 0; i < 7; i++) {
        snprintf(id, sizeof id, "v2-%d", i);
        assert_int_equal(post(h, s.port, id, &r), i < 5 ? 201 : 403);
        if (i >= 5)
            assert_string_equal(error_of(&r, why, sizeof why), "quota_exhausted");
    }
    /* exactav checks the step; next reads that row from the same store. */
    usleep(2000);
    long long rows = ctl_query_int(w.ev, "SELECT count(*) FROM evidence");
    verify_c(&w, bind);
    assert_int_equal(ctl_query_int(w.ev, "SELECT count(*) FROM evidence"), rows + 1);
    char obs[160];
    ctl_observations(&w.t, seen, "obs.json", obs, sizeof obs);
    assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s' --json", g2,
                             w.db, w.ev, obs),
                     0);
    out = ctl_out(&w.t, "out");
    d = json_loads(out, 0, NULL);
    free(out);
    assert_string_equal(json_string_value(json_object_get(d, "branch")), "positive");
    json_t *content = json_object_get(d, "content");
    assert_string_equal(json_string_value(json_object_get(content, "status")), "PASS");
    assert_int_equal(json_array_size(json_object_get(content, "evidence")), 1);
    json_decref(d);
    assert_int_equal(post(h, s.port, "v2-late", &r), 403);
    assert_string_equal(error_of(&r, why, sizeof why), "grant_revoked");
    curl_easy_cleanup(h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    assert_int_equal(ctl_query_int(w.ev, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ctl_query_int(w.ev, "SELECT count(*) FROM probes"), 1);
    json_decref(seen);
    json_decref(sit);
    ctl_world_end(&w);
}

/* The lines of an access log: one per answer, every member of
 * docs/serve.md in order, and none of the secrets the requests carried. */
static void access_lines_ok(const char *log, int want, const char *const *secrets)
{
    static const char *const members[] = {"time", "method", "route", "status", "bytes",
                                          "duration_s", "client"};
    int lines = 0;
    for (const char *l = log; *l; lines++) {
        const char *end = strchr(l, '\n');
        assert_non_null(end);
        json_t *o = json_loadb(l, (size_t)(end - l), 0, NULL);
        assert_non_null(o);
        assert_int_equal(json_object_size(o), 7);
        const char *k;
        json_t *v;
        size_t i = 0;
        json_object_foreach(o, k, v) assert_string_equal(k, members[i++]);
        assert_string_equal(json_string_value(json_object_get(o, "client")), "127.0.0.1");
        json_decref(o);
        l = end + 1;
    }
    assert_int_equal(lines, want);
    for (size_t i = 0; secrets[i]; i++)
        if (strstr(log, secrets[i]))
            fail_msg("the access log holds %s:\n%s", secrets[i], log);
}

static void ctl_98_serve_metrics_pass_promtool_and_the_access_log_redacts(void **state)
{
    (void)state;
    promtool_skip_unless("promtool");
    struct fixture f;
    ctl_world_begin(&f.w);
    grant_step(&f.w, 2, 100000, 100000, f.g);
    char log_path[160], moved[160], path[256];
    ctl_tmp_path(&f.w.t, "access.txt", log_path, sizeof log_path);
    ctl_tmp_path(&f.w.t, "access-1.txt", moved, sizeof moved);
    const char *extra[] = {"--access-log", log_path, NULL};
    server_start_with(&f.w, &f.s, extra);
    f.h = curl_easy_init();
    struct reply r = {0};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "secret-alloc-%d", i);
        assert_int_equal(post(f.h, f.s.port, path, &r), i < 2 ? 201 : 403);
    }
    /* a player's request with every kind of credential a CDN uses */
    assert_int_equal(http(f.h, f.s.port, "GET",
                          "/v1/sessions/secret-alloc-0/master.m3u8?Policy=SECRETPOLICY&"
                          "Signature=SECRETSIG&Key-Pair-Id=SECRETKPID",
                          NULL, "Cookie: CloudFront-Signature=SECRETCOOKIE", &r),
                     404);
    assert_int_equal(http(f.h, f.s.port, "GET", "/v1/nothing?token=SECRETTOKEN", NULL,
                          "Authorization: Bearer SECRETBEARER", &r),
                     404);
    assert_int_equal(http(f.h, f.s.port, "OPTIONS", "/v1/allocations", NULL, NULL, &r), 204);
    /* logrotate: the file moved, SIGHUP, the next line goes to a new file */
    assert_int_equal(rename(log_path, moved), 0);
    kill(f.s.pid, SIGHUP);
    for (int i = 0; i < 500 && access(log_path, F_OK) != 0; i++)
        usleep(10000);
    assert_int_equal(http(f.h, f.s.port, "GET", "/healthz", NULL, NULL, &r), 200);
    char *text = malloc(1 << 16);
    assert_non_null(text);
    r.body = text;
    r.cap = 1 << 16;
    assert_int_equal(http(f.h, f.s.port, "GET", "/metrics", NULL, SERVE_ADMIN_AUTH, &r), 200);
    const char *names[] = {"stepctl_build_info{version=\"" STEPCTL_VERSION "\",commit=\"",
                           "stepctl_requests_total{route=\"allocations\",status=\"201\"} 2\n",
                           "stepctl_requests_total{route=\"allocations\",status=\"403\"} 1\n",
                           "stepctl_requests_total{route=\"master\",status=\"404\"} 1\n",
                           "stepctl_requests_total{route=\"unmatched\",status=\"404\"} 1\n",
                           "stepctl_requests_total{route=\"preflight\",status=\"204\"} 1\n",
                           "stepctl_requests_total{route=\"healthz\",status=\"200\"} 1\n",
                           "stepctl_allocations_total{result=\"refused\",error=\"quota_exhausted\"} 1\n",
                           "\"} 0\n" /* nothing left under the grant */};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strstr(r.body, names[i]))
            fail_msg("/metrics lacks %s:\n%s", names[i], r.body);
    char metrics[160], lint[160];
    ctl_tmp_path(&f.w.t, "metrics.txt", metrics, sizeof metrics);
    ctl_tmp_path(&f.w.t, "promtool.txt", lint, sizeof lint);
    FILE *m = fopen(metrics, "w");
    assert_non_null(m);
    fputs(r.body, m);
    fclose(m);
    free(text);
    if (promtool_check_metrics(metrics, lint) != 0) {
        char *said = ctl_out(&f.w.t, "promtool");
        fail_msg("promtool check metrics:\n%s", said);
    }
    curl_easy_cleanup(f.h);
    assert_int_equal(server_stop(&f.s, SIGTERM), 0);
    /* 3 allocations, 2 players' requests, the preflight; then the health
     * check and /metrics after the reopen */
    static const char *const secrets[] = {"secret-alloc", "SECRET", "Signature", "Policy",
                                          "Cookie", "token", "Bearer", "/v1/", NULL};
    char *before = ctl_out(&f.w.t, "access-1"), *after = ctl_out(&f.w.t, "access");
    access_lines_ok(before, 6, secrets);
    access_lines_ok(after, 2, secrets);
    assert_non_null(strstr(before, "\"method\":\"GET\",\"route\":\"master\",\"status\":404,"));
    assert_non_null(strstr(before, "\"route\":\"unmatched\",\"status\":404,"));
    assert_non_null(strstr(after, "\"route\":\"metrics\",\"status\":200,"));
    free(before);
    free(after);
    ctl_world_end(&f.w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_52_serve_end_to_end_cap_retries_and_closing_the_loop, kill_leftovers),
        cmocka_unit_test_teardown(ctl_53_serve_refuses_bad_requests_and_writes_nothing, kill_leftovers),
        cmocka_unit_test_teardown(ctl_54_serve_idempotency_under_concurrency, kill_leftovers),
        cmocka_unit_test_teardown(ctl_55_serve_rate_limit_429_with_retry_after, kill_leftovers),
        cmocka_unit_test_teardown(ctl_56_serve_sigterm_drains_in_flight_requests, kill_leftovers),
        cmocka_unit_test_teardown(ctl_57_serve_kill9_at_random_moments_loses_and_duplicates_nothing, kill_leftovers),
        cmocka_unit_test_teardown(ctl_65_loop_on_an_evidence_db_written_by_the_current_exactav, kill_leftovers),
        cmocka_unit_test_teardown(ctl_98_serve_metrics_pass_promtool_and_the_access_log_redacts, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
