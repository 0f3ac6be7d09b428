/* nftw() is XSI */
#define _XOPEN_SOURCE 700
#include "ev_test.h"
#include "evidence_fingerprint.h"

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

/* Reports handed out stay reachable here until the process ends (records
 * point into them; the tests never outlive a few hundred). */
static char *POOL[1024];
static size_t NPOOL;

static const char *keep(char *text)
{
    if (text && NPOOL < sizeof POOL / sizeof POOL[0])
        POOL[NPOOL++] = text;
    return text;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *int_or_null(struct evidence_int v)
{
    return v.present ? json_integer(v.value) : json_null();
}

/* The profile object: a document, a runtime matching its pins, and the
 * fingerprint recomputed from both (what exactav verify writes). */
static json_t *sample_profile(void)
{
    json_t *pins = json_pack("{s:s, s:s, s:s, s:s, s:s}", "libavcodec", "59.37.100",
                             "libavformat", "59.27.100", "libavutil", "57.28.100",
                             "libswresample", "4.7.100", "ffmpeg_configuration_sha256",
                             "37c631bc64b18346ac4efba13027be0a8a1d348d5233616b2be31fb59c21d58f");
    json_t *runtime = json_deep_copy(pins);
    json_object_set_new(runtime, "arch", json_string("x86_64"));
    json_t *doc = json_pack("{s:s, s:i, s:s, s:o}", "id", "exact-av-v1", "version", 1,
                            "container", "mpegts", "runtime", pins);
    char fp[65];
    evidence_fingerprint(doc, runtime, fp);
    return json_pack("{s:s, s:i, s:s, s:s, s:o, s:o}", "id", "exact-av-v1", "version", 1,
                     "fingerprint", fp, "source", "embedded", "runtime", runtime, "document", doc);
}

static json_t *track_obs(void)
{
    return json_pack("{s:b, s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:i, s:i, s:i, s:s}",
                     "present", 1, "codec", "h264", "decode_boundary_found", 1, "decoder_error", 0,
                     "corrupt_frames", 0, "lost_packets", 0, "frames_dropped", 0,
                     "params_changed", 0, "missing_timestamps", 0, "packets", 150, "frames", 150,
                     "in_interval", 150, "first_error", "");
}

static json_t *side(const char *object)
{
    return json_pack("{s:s, s:b, s:i, s:b, s:s, s:o, s:o}", "object", object, "opened", 1,
                     "bytes", 1880000, "transport_complete", 1, "transport_issue", "none",
                     "video", track_obs(), "audio", track_obs());
}

/* The tracks of a report with the given verdict (MATCH / MISMATCH:
 * video_pixels / UNKNOWN: continuity_gap); the top reason in *reason. */
static void sample_tracks(json_t *r, const char *verdict, const char **reason)
{
    bool mismatch = !strcmp(verdict, "MISMATCH"), unknown = !strcmp(verdict, "UNKNOWN");
    *reason = mismatch ? "video_pixels" : unknown ? "continuity_gap" : "identical";
    json_t *fm = mismatch ? json_pack("{s:i, s:i, s:s, s:i, s:i}", "index", 60, "pts", 312000,
                                      "plane", "Y", "x", 200, "y", 120)
                          : json_null();
    json_object_set_new(r, "video",
                        json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:b, s:{s:i, s:i}}", "verdict",
                                  mismatch || unknown ? verdict : "MATCH", "reason", *reason,
                                  "reference_frames", 150, "candidate_frames", 150,
                                  "compared_frames", 150, "first_mismatch", fm,
                                  "unconfirmed_differences", unknown, "reference_size", "width",
                                  1280, "height", 720));
    json_object_set_new(r, "audio",
                        json_pack("{s:s, s:s, s:i, s:i, s:n, s:b, s:i, s:i}", "verdict", "MATCH",
                                  "reason", "identical", "reference_samples", 288000,
                                  "candidate_samples", 288000, "first_mismatch",
                                  "unconfirmed_differences", 0, "sample_rate", 48000, "channels", 2));
}

/* A report as exactav verify writes it, with these columns. */
static char *report_text(const char *id, const char *verdict, int64_t observed_at_ms,
                         int64_t observed_end_ms, const char *path_id, const char *channel,
                         const char *rendition, const char *program_version,
                         const char *reference_version, const char *object,
                         struct evidence_int interval_start, struct evidence_int interval_end)
{
    const char *reason;
    bool match = !strcmp(verdict, "MATCH");
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:{s:o, s:o, s:o, s:o, s:o}, s:{s:o, s:o}, s:I,"
        " s:s, s:I, s:I}",
        "tool", "exactav 0.1.0", "check_kind", "exact-av-v1", "evidence_id", id, "verdict",
        verdict, "reason", "", "profile", sample_profile(), "context", "path_id",
        str_or_null(path_id), "channel", str_or_null(channel), "rendition", str_or_null(rendition),
        "program_version", str_or_null(program_version), "reference_version",
        str_or_null(reference_version), "interval", "start", int_or_null(interval_start), "end",
        int_or_null(interval_end), "time_offset", (json_int_t)0, "observed_at",
        "2026-01-01T00:00:00Z", "observed_at_ms", (json_int_t)observed_at_ms, "observed_end_ms",
        (json_int_t)observed_end_ms);
    sample_tracks(r, verdict, &reason);
    json_object_set_new(r, "reason", json_string(reason));
    json_object_set_new(r, "reference", side("ref.json"));
    json_t *cand = side(object ? object : "cand.ts");
    if (object)
        json_object_set_new(cand, "object", json_string(object));
    json_object_set_new(r, "candidate", cand);
    json_object_set_new(
        r, "fetches",
        json_pack("[{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:[s], s:{s:s, s:[s,s], s:n, s:s, s:s, s:s}, s:n},"
                  " {s:I, s:s, s:n, s:n, s:n, s:n, s:n, s:n, s:[], s:{}, s:o}]",
                  "seq", (json_int_t)0, "url", "https://cdn-c.example/a.m3u8", "effective_url",
                  "https://e.cdn-c.example/a.m3u8", "http_status", (json_int_t)200, "bytes",
                  (json_int_t)300, "content_length", (json_int_t)300, "started_at_ms",
                  (json_int_t)observed_at_ms, "ended_at_ms", (json_int_t)(observed_at_ms + 20),
                  "redirects", "https://e.cdn-c.example/a.m3u8", "headers", "age", "3", "via",
                  "1.1 a", "1.1 b", "x_cache", "server", "nginx", "etag", "\"e1\"",
                  "content_type", "application/x-mpegURL", "error",
                  "seq", (json_int_t)1, "url", "https://e.cdn-c.example/s1.ts", "effective_url",
                  "http_status", "bytes", "content_length", "started_at_ms", "ended_at_ms",
                  "redirects", "headers", "error",
                  match ? json_null() : json_string("connect timeout")));
    json_object_set_new(r, "elapsed_ms", json_integer(700));
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    return text;
}

void ev_refresh_report(struct evidence_record *r)
{
    r->report = keep(report_text(r->id ? r->id : "", evidence_verdict_name(r->verdict),
                                 r->observed_at_ms, r->observed_end_ms, r->path_id, r->channel,
                                 r->rendition, r->program_version, r->reference_version,
                                 r->object, r->interval_start, r->interval_end));
    json_t *j = json_loads(r->report, 0, NULL);
    if (r->media_sequence.present) { /* schema v2: the column equals the report's */
        json_object_set_new(j, "media_sequence", json_integer(r->media_sequence.value));
        r->report = keep(json_dumps(j, JSON_COMPACT));
    }
    static char fp[8][65]; /* the fingerprint column equals the report's */
    static int next;
    char *slot = fp[next++ % 8];
    snprintf(slot, 65, "%s", json_string_value(json_object_get(json_object_get(j, "profile"), "fingerprint")));
    r->profile_fingerprint = slot;
    r->reason = r->verdict == EVIDENCE_VERDICT_MATCH      ? "identical"
                : r->verdict == EVIDENCE_VERDICT_MISMATCH ? "video_pixels"
                                                          : "continuity_gap";
    json_decref(j);
}

struct evidence_record ev_sample_record(const char *id, int64_t observed_at_ms)
{
    struct evidence_record r = {
        .id = id, .check_kind = EVIDENCE_CHECK_KIND, .verdict = EVIDENCE_VERDICT_MATCH,
        .reason = "identical", .profile_id = "exact-av-v1",
        .path_id = "cdn-c", .channel = "ch1", .rendition = "720p", .program_version = "pv7",
        .reference_version = "sha256:ref", .object = "https://cdn-c.example/live/index.m3u8",
        .interval_start = {true, 900000}, .interval_end = {true, 1440000},
        .observed_at_ms = observed_at_ms, .observed_end_ms = observed_at_ms + 500,
        .fetch_count = 2, .fetches = SAMPLE_FETCHES};
    ev_refresh_report(&r);
    return r;
}

char *ev_sample_report(const char *id, const char *verdict, int64_t observed_at_ms,
                       const char *path_id, const char *channel, const char *rendition,
                       const char *program_version)
{
    return report_text(id, verdict, observed_at_ms, observed_at_ms + 700, path_id, channel,
                       rendition, program_version, "sha256:ref",
                       "https://cdn-c.example/live/index.m3u8?Signature=REDACTED",
                       (struct evidence_int){true, 900000}, (struct evidence_int){true, 1440000});
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
