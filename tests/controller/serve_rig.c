/* serve_rig.c - `stepctl serve` as a child of a test (see serve_rig.h). */
#include "serve_rig.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "cdn_rig.h"

/* Servers still running: a failing assertion leaves its test early, and the
 * teardown must not leave a server behind (ctest would wait for it). */
static pid_t live[16];

static void track(pid_t pid, bool alive)
{
    for (int i = 0; i < 16; i++)
        if (alive ? live[i] == 0 : live[i] == pid) {
            live[i] = alive ? pid : 0;
            return;
        }
}

int kill_leftovers(void **state)
{
    (void)state;
    for (int i = 0; i < 16; i++)
        if (live[i]) {
            kill(live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
            live[i] = 0;
        }
    return 0;
}

void server_start_with(struct ctl_world *w, struct server *s, const char *const *extra)
{
    char pf[160], log[160];
    ctl_tmp_path(&w->t, "port", pf, sizeof pf);
    ctl_tmp_path(&w->t, "serve.log", log, sizeof log);
    unlink(pf);
    char token[160];
    ctl_tmp_path(&w->t, "admin.token", token, sizeof token);
    FILE *tf = fopen(token, "w");
    assert_non_null(tf);
    fputs(SERVE_ADMIN_TOKEN "\n", tf);
    fclose(tf);
    assert_int_equal(chmod(token, 0600), 0);
    const char *argv[32] = {"stepctl", "serve", "--db", w->db, "--listen", "127.0.0.1:0",
                            "--port-file", pf, "--threads", "4", "--admin-token-file", token};
    size_t n = 12;
    for (size_t i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        if (!freopen(log, "a", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(97);
        execv(CTL_STEPCTL, (char *const *)argv);
        _exit(98);
    }
    track(s->pid, true);
    s->port = 0;
    for (int i = 0; i < 500 && !s->port; i++) {
        FILE *f = fopen(pf, "r");
        if (f) {
            if (fscanf(f, "%d", &s->port) != 1)
                s->port = 0;
            fclose(f);
        }
        if (!s->port)
            usleep(10000);
    }
    assert_true(s->port > 0);
}

void server_start(struct ctl_world *w, struct server *s)
{
    server_start_with(w, s, NULL);
}

int server_stop(struct server *s, int sig)
{
    int st;
    kill(s->pid, sig);
    assert_int_equal(waitpid(s->pid, &st, 0), s->pid);
    track(s->pid, false);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- a world with five paths, granted ------------------------------------------- */

/* The main situation with D and E, copies of C, after C in the order. */
json_t *serve_situation(const struct ctl_world *w, const char *const order[5])
{
    json_t *sit = ctl_world_situation(w);
    ctl_fast(sit);
    json_t *cands = json_object_get(sit, "candidates");
    static const char *const copies[] = {"D", "E"};
    for (size_t i = 0; i < 2; i++) {
        json_t *c = json_deep_copy(ctl_cand(sit, "C"));
        json_object_set_new(c, "path_id", json_string(copies[i]));
        json_array_append_new(cands, c);
    }
    json_t *o = json_array();
    for (int i = 0; i < 5; i++)
        json_array_append_new(o, json_string(order[i]));
    ctl_set(sit, "policy.order", o);
    return sit;
}

const char *const SERVE_ORDER_CDE[5] = {"C", "D", "E", "A", "B"};

/* World, evidence for D and E, decision and grant (grant id into g). */
void serve_world_granted(struct ctl_world *w, char g[33])
{
    ctl_world_begin(w);
    ctl_world_evidence(w, "ev-d-pre", "D", "MATCH", w->now - 300000, true);
    ctl_world_evidence(w, "ev-e-pre", "E", "MATCH", w->now - 300000, true);
    json_t *sit = serve_situation(w, SERVE_ORDER_CDE);
    char d[33];
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", sit, w->ev, w->db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "", g), 0);
}

/* POST an allocation for the fixtures' cohort with isp, any answer (the
 * caller frees h). */
static void post_allocation_isp(int port, const char *id, const char *isp, struct cdn_http *h)
{
    char url[128], body[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations", port);
    snprintf(body, sizeof body,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"%s\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}",
             id, isp);
    assert_int_equal(cdn_http("POST", url, NULL, body, h), 0);
}

void serve_post_allocation(int port, const char *id, struct cdn_http *h)
{
    post_allocation_isp(port, id, "isp-x", h);
}

/* POST an allocation for the fixtures' cohort; the 201 body (caller decrefs). */
json_t *serve_allocate(int port, const char *id)
{
    return serve_allocate_isp(port, id, "isp-x");
}

json_t *serve_allocate_isp(int port, const char *id, const char *isp)
{
    struct cdn_http h;
    post_allocation_isp(port, id, isp, &h);
    if (h.status != 201)
        printf("allocation %s: %ld %s\n", id, h.status, h.body);
    assert_int_equal(h.status, 201);
    json_t *j = json_loads(h.body, 0, NULL);
    assert_non_null(j);
    cdn_http_free(&h);
    return j;
}

/* paths.json with every path A..E delivered without signatures. */
void serve_verification_world(struct ctl_world *w, const char *content_from, int quota, json_t **sit,
                              char d[33], char g[33])
{
    ctl_world_begin(w);
    ctl_world_evidence(w, "ev-d-pre", "D", "MATCH", w->now - 300000, true);
    ctl_world_evidence(w, "ev-e-pre", "E", "MATCH", w->now - 300000, true);
    *sit = serve_situation(w, SERVE_ORDER_CDE);
    if (content_from)
        ctl_set(*sit, "policy.loop.content_from", json_string(content_from));
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", *sit, w->ev, w->db, d), 0);
    char args[64];
    snprintf(args, sizeof args, "--verification-allocations %d", quota);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, args, g), 0);
}

void serve_paths_unsigned(const struct ctl_world *w, char *path, size_t n)
{
    char text[4096];
    int k = snprintf(text, sizeof text, "{\"paths\": {");
    for (char id = 'A'; id <= 'E'; id++)
        k += snprintf(text + k, sizeof text - (size_t)k,
                      "%s\"%c\": {\"renditions\": {\"r360\": {\"url\": "
                      "\"http://cdn-%c.invalid/ch1/r360/live.m3u8\", \"bandwidth\": 900000, "
                      "\"codecs\": \"avc1.4d401e,mp4a.40.2\", \"resolution\": \"640x360\"}, "
                      "\"r720\": \"http://cdn-%c.invalid/ch1/r720/live.m3u8\"}, "
                      "\"auth\": {\"type\": \"none\"}}",
                      id == 'A' ? "" : ", ", id, id + 32, id + 32);
    snprintf(text + k, sizeof text - (size_t)k, "}, \"steering_ttl_s\": 7}\n");
    ctl_write_text(&w->t, "paths.json", text, path, n);
}

void serve_session_path(const char *db, const char *path, char *out, size_t n)
{
    static const char prefix[] = "/v1/allocations/";
    const char *id = !strncmp(path, prefix, sizeof prefix - 1) ? path + sizeof prefix - 1 : NULL;
    const char *rest = id ? strchr(id, '/') : NULL;
    if (!rest) {
        snprintf(out, n, "%s", path);
        return;
    }
    char sql[512], sid[160] = "";
    snprintf(sql, sizeof sql, "SELECT id FROM sessions WHERE allocation_id = '%.*s'",
             (int)(rest - id), id);
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        snprintf(sid, sizeof sid, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    if (!sid[0]) /* no such allocation: the id itself, which no session has */
        snprintf(sid, sizeof sid, "%.*s", (int)(rest - id), id);
    snprintf(out, n, "/v1/sessions/%s%s", sid, rest);
}

void serve_session_text(const char *db, const char *alloc, const char *text, char *out, size_t n)
{
    char from[200], path[256], to[400];
    snprintf(from, sizeof from, "/v1/allocations/%s/", alloc);
    snprintf(path, sizeof path, "%sx", from);
    serve_session_path(db, path, to, sizeof to);
    to[strlen(to) - 1] = '\0'; /* "/v1/sessions/SID/" */
    size_t k = 0;
    for (const char *t = text; *t && k + 1 < n;) {
        if (!strncmp(t, from, strlen(from)) && k + strlen(to) + 1 < n) {
            memcpy(out + k, to, strlen(to));
            k += strlen(to);
            t += strlen(from);
        } else {
            out[k++] = *t++;
        }
    }
    out[k] = '\0';
}

void serve_priority(const char *db, int port, const char *alloc, char *out, size_t n)
{
    char path[256], sp[384], url[512];
    snprintf(path, sizeof path, "/v1/allocations/%s/steering", alloc);
    serve_session_path(db, path, sp, sizeof sp);
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, sp);
    struct cdn_http h;
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    json_t *j = json_loads(h.body, 0, NULL), *v;
    assert_int_equal(json_integer_value(json_object_get(j, "VERSION")), 1);
    size_t i, k = 0;
    out[0] = '\0';
    json_array_foreach(json_object_get(j, "PATHWAY-PRIORITY"), i, v)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? "," : "", json_string_value(v));
    json_decref(j);
    cdn_http_free(&h);
}
