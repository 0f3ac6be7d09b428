/* canary_live.c - helpers of the canary's end-to-end tests (see canary_live.h). */
#include "canary_live.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fetch.h"
#include "testd_run.h"

/* What a failed test leaves behind (its stack is gone after cmocka's
 * longjmp): the server, canaries still running, the directory. */
static struct live g_live;
static pid_t g_children[16];

static void child_add(pid_t pid)
{
    for (size_t i = 0; i < sizeof g_children / sizeof g_children[0]; i++)
        if (!g_children[i]) {
            g_children[i] = pid;
            return;
        }
}

static void child_remove(pid_t pid)
{
    for (size_t i = 0; i < sizeof g_children / sizeof g_children[0]; i++)
        if (g_children[i] == pid)
            g_children[i] = 0;
}

int live_teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_children / sizeof g_children[0]; i++)
        if (g_children[i]) {
            kill(g_children[i], SIGKILL);
            waitpid(g_children[i], NULL, 0);
            g_children[i] = 0;
        }
    if (g_live.dir[0]) { /* the test failed before its own live_stop: show what the canary said */
        live_sh("for f in %s/*.err; do [ -f \"$f\" ] && echo \"== $f\" && tail -n 40 \"$f\"; done >&2", g_live.dir);
        live_stop(&g_live);
    }
    return 0;
}

int live_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void live_path(const struct live *l, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", l->dir, name);
}

void live_write(const struct live *l, const char *name, const char *text)
{
    char path[256];
    live_path(l, name, path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

char *live_read(const struct live *l, const char *name)
{
    char path[256];
    live_path(l, name, path, sizeof path);
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int c;
    while (f && (c = fgetc(f)) != EOF)
        fputc(c, mem);
    if (f)
        fclose(f);
    fclose(mem);
    return buf;
}

void live_start(struct live *l, const char *live_playlist)
{
    live_start_ll(l, live_playlist, 0);
}

void live_start_ll(struct live *l, const char *live_playlist, unsigned ll_parts)
{
    memset(l, 0, sizeof *l);
    snprintf(l->dir, sizeof l->dir, "/tmp/exactav-canary-XXXXXX");
    assert_non_null(mkdtemp(l->dir));
    g_live = *l; /* removed by live_teardown even if the server never starts */
    char playlist[256];
    snprintf(playlist, sizeof playlist, "%s", live_playlist ? live_playlist : "");
    char parts[16];
    snprintf(parts, sizeof parts, "%u", ll_parts);
    const char *const live_args[] = {"--live", playlist, "--live-window", "4", ll_parts ? "--ll-parts" : NULL, parts,
                                     NULL};
    l->port = testd_run_start_args(TESTD_BIN, l->dir, live_playlist ? live_args : NULL, &l->testd);
    g_live.testd = l->testd;
    assert_true(l->port > 0);
    g_live = *l;
}

void live_stop(struct live *l)
{
    if (l->testd > 0)
        testd_run_stop(l->testd);
    live_sh("rm -rf %s", l->dir);
    memset(&g_live, 0, sizeof g_live);
}

char *live_get(const char *url, long *status)
{
    struct fetch_options o = fetch_options_default();
    o.total_timeout_ms = 10000;
    struct fetch_result res;
    fetch_get(&o, url, &res);
    *status = res.http_status;
    char *body = res.data ? strndup((const char *)res.data, res.size) : NULL;
    fetch_result_free(&res);
    return body;
}

json_t *live_get_json(const struct live *l, const char *fmt, ...)
{
    char path[1024], url[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/%s", l->port, path);
    long status = 0;
    char *body = live_get(url, &status);
    if (status != 200)
        print_error("GET %s: %ld %s\n", url, status, body ? body : "");
    assert_int_equal(status, 200);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    assert_non_null(j);
    return j;
}

void live_tamper_segment(const char *src, const char *dst)
{
    assert_int_equal(live_sh("ffmpeg -nostdin -hide_banner -loglevel error -y -copyts -i '%s' -map 0 -c:a copy "
                             "-c:v libx264 -preset ultrafast -vf drawbox=x=100:y=100:w=8:h=8:color=red:t=fill "
                             "-muxdelay 0 -muxpreload 0 -avoid_negative_ts disabled -f mpegts '%s'", src, dst), 0);
}

pid_t live_canary_start(const struct live *l, const char *tag, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s canary %s", EXACTAV_BIN, args);
    return live_spawn(l, tag, cmd);
}

pid_t live_spawn(const struct live *l, const char *tag, const char *command)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s >%s/%s.out 2>%s/%s.err", command, l->dir, tag, l->dir, tag);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    child_add(pid);
    return pid;
}

int live_canary_wait(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    child_remove(pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int live_canary_run(const struct live *l, const char *tag, const char *args)
{
    return live_canary_wait(live_canary_start(l, tag, args));
}

static sqlite3 *open_db(const struct live *l)
{
    char path[256];
    live_path(l, "ev.db", path, sizeof path);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    return db;
}

static json_t *rows_v(const struct live *l, const char *fmt, va_list ap)
{
    char sql[4096];
    vsnprintf(sql, sizeof sql, fmt, ap);
    json_t *rows = json_array();
    sqlite3 *db = open_db(l);
    sqlite3_stmt *st = NULL;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return rows; /* no store yet: no rows */
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            json_t *v;
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_INTEGER: v = json_integer(sqlite3_column_int64(st, i)); break;
            case SQLITE_NULL: v = json_null(); break;
            default: v = json_string((const char *)sqlite3_column_text(st, i)); break;
            }
            json_object_set_new(o, sqlite3_column_name(st, i), v ? v : json_null());
        }
        json_array_append_new(rows, o);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rows;
}

json_t *live_rows(const struct live *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *r = rows_v(l, fmt, ap);
    va_end(ap);
    return r;
}

long long live_q(const struct live *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *r = rows_v(l, fmt, ap);
    va_end(ap);
    json_t *first = json_array_get(r, 0);
    const char *key;
    json_t *v;
    long long out = 0;
    json_object_foreach(first, key, v) {
        out = json_integer_value(v);
        break;
    }
    json_decref(r);
    return out;
}

void live_wait_count(const struct live *l, long long want, int max_s, const char *sql)
{
    long long got = 0;
    for (int i = 0; i < max_s * 5; i++) {
        if ((got = live_q(l, "%s", sql)) >= want)
            return;
        usleep(200000);
    }
    print_error("waited %d s for %lld rows of: %s (got %lld)\n", max_s, want, sql, got);
    fail();
}

static bool text_holds(const char *text, const char *needle)
{
    return text && strstr(text, needle);
}

bool live_anywhere(const struct live *l, const char *needle, const char *const files[])
{
    static const char *const tables[] = {"evidence", "fetches", "probes"};
    bool found = false;
    for (size_t t = 0; t < 3 && !found; t++) {
        json_t *rows = live_rows(l, "SELECT * FROM %s", tables[t]);
        char *text = json_dumps(rows, 0);
        found = text_holds(text, needle);
        free(text);
        json_decref(rows);
    }
    for (size_t i = 0; files && files[i] && !found; i++) {
        char *text = live_read(l, files[i]);
        found = text_holds(text, needle);
        free(text);
    }
    return found;
}
