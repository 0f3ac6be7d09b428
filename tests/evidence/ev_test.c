/* nftw() is XSI */
#define _XOPEN_SOURCE 700
#include "ev_test.h"

#include <ftw.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ev_tmp_make(struct ev_tmp *t)
{
    const char *base = getenv("TMPDIR");
    snprintf(t->dir, sizeof t->dir, "%s/evtest-XXXXXX", base && strlen(base) < 40 ? base : "/tmp");
    if (!mkdtemp(t->dir))
        return -1;
    ev_tmp_path(t, "evidence.db", t->db, sizeof t->db);
    return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

void ev_tmp_remove(struct ev_tmp *t)
{
    if (t->dir[0])
        nftw(t->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

void ev_tmp_path(const struct ev_tmp *t, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", t->dir, name);
}

int ev_write_file(const struct ev_tmp *t, const char *name, const char *text, char *out, size_t n)
{
    ev_tmp_path(t, name, out, n);
    FILE *f = fopen(out, "wb");
    if (!f)
        return -1;
    size_t len = strlen(text);
    int rc = fwrite(text, 1, len, f) == len ? 0 : -1;
    return fclose(f) == 0 ? rc : -1;
}

static const struct evidence_fetch SAMPLE_FETCHES[2] = {
    {.seq = 0, .url = "https://cdn-c.example/live/index.m3u8?Signature=REDACTED",
     .effective_url = "https://edge1.cdn-c.example/live/index.m3u8?Signature=REDACTED",
     .http_status = {true, 200}, .bytes = {true, 512}, .content_length = {true, 512},
     .started_at_ms = {true, 1000}, .ended_at_ms = {true, 1040},
     .redirects_json = "[\"https://edge1.cdn-c.example/live/index.m3u8?Signature=REDACTED\"]",
     .age = "12", .via = "1.1 cache", .x_cache = "Hit from cloudfront", .server = "CloudFront",
     .etag = "\"abc\"", .content_type = "application/vnd.apple.mpegurl"},
    {.seq = 1, .url = "https://edge1.cdn-c.example/live/seg28.ts",
     .http_status = {true, 200}, .bytes = {true, 1880000}, .content_length = {true, 1880000},
     .started_at_ms = {true, 1041}, .ended_at_ms = {true, 1500}, .error = NULL},
};

struct evidence_record ev_sample_record(const char *id, int64_t observed_at_ms)
{
    return (struct evidence_record){
        .id = id, .check_kind = EVIDENCE_CHECK_KIND, .verdict = EVIDENCE_VERDICT_MATCH,
        .reason = "identical", .profile_id = "exact-av-v1", .profile_fingerprint = "ab12",
        .path_id = "cdn-c", .channel = "ch1", .rendition = "720p", .program_version = "pv7",
        .reference_version = "sha256:ref", .object = "https://cdn-c.example/live/index.m3u8",
        .interval_start = {true, 900000}, .interval_end = {true, 1440000},
        .observed_at_ms = observed_at_ms, .observed_end_ms = observed_at_ms + 500,
        .report = "{\"check_kind\":\"exact-av-v1\"}",
        .fetch_count = 2, .fetches = SAMPLE_FETCHES};
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

char *ev_sample_report(const char *id, const char *verdict, int64_t observed_at_ms,
                       const char *path_id, const char *channel, const char *rendition,
                       const char *program_version)
{
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:o, s:o, s:o, s:o, s:s},"
        " s:{s:s}, s:{s:I, s:I}, s:s, s:I, s:I,"
        " s:[{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:[s], s:{s:s, s:[s,s], s:n, s:s, s:s, s:s}, s:n},"
        "    {s:I, s:s, s:n, s:n, s:n, s:n, s:n, s:n, s:[], s:{}, s:s}],"
        " s:{s:i}}",
        "check_kind", "exact-av-v1", "evidence_id", id, "verdict", verdict, "reason", "identical",
        "profile", "id", "exact-av-v1", "fingerprint", "ab12", "decoder", "ffmpeg 5.1",
        "context", "path_id", str_or_null(path_id), "channel", str_or_null(channel),
        "rendition", str_or_null(rendition), "program_version", str_or_null(program_version),
        "reference_version", "sha256:ref",
        "candidate", "object", "https://cdn-c.example/live/index.m3u8?Signature=REDACTED",
        "interval", "start", (json_int_t)900000, "end", (json_int_t)1440000,
        "observed_at", "2026-01-01T00:00:00Z", "observed_at_ms", (json_int_t)observed_at_ms,
        "observed_end_ms", (json_int_t)(observed_at_ms + 700),
        "fetches",
        "seq", (json_int_t)0, "url", "https://cdn-c.example/a.m3u8", "effective_url",
        "https://e.cdn-c.example/a.m3u8", "http_status", (json_int_t)200, "bytes", (json_int_t)300,
        "content_length", (json_int_t)300, "started_at_ms", (json_int_t)observed_at_ms,
        "ended_at_ms", (json_int_t)(observed_at_ms + 20), "redirects",
        "https://e.cdn-c.example/a.m3u8", "headers", "age", "3", "via", "1.1 a", "1.1 b",
        "x_cache", "server", "nginx", "etag", "\"e1\"", "content_type", "application/x-mpegURL",
        "error",
        "seq", (json_int_t)1, "url", "https://e.cdn-c.example/s1.ts", "effective_url",
        "http_status", "bytes", "content_length", "started_at_ms", "ended_at_ms", "redirects",
        "headers", "error", "connect timeout",
        "video", "frames", 150);
    char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
    json_decref(r);
    return text;
}

static int count_cb(void *arg, int n, char **vals, char **names)
{
    (void)n; (void)names;
    *(long long *)arg = vals[0] ? atoll(vals[0]) : -1;
    return 0;
}

long long ev_count(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    long long n = -1;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 5000);
        sqlite3_exec(db, sql, count_cb, &n, NULL);
    }
    sqlite3_close(db);
    return n;
}
