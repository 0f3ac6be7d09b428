/* `exactav canary` end to end on loopback: exactav-testd serves a live
 * window sliding over the real segments of the corpus (the PTS wraps in
 * one of them) as the reference and as CDN paths, with tampering, outages,
 * frozen and late playlists on command; the canary runs as a process and
 * the tests read evidence.db.  Nothing here asserts on durations: waits
 * poll for rows, and times are only compared with each other. */
#include "canary_test.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "canary_live.h"
#include "canary_sched.h"
#include "evidence.h"
#include "fetch.h"
#include "promtool.h"
#include "test_skip.h"

/* Without the corpus the process exits 77 (tests/test_skip.h): ctest
 * reports the test as skipped, never as passed. */
#define SKIP_WITHOUT_CORPUS() test_skip_unless(LIVE_PLAYLIST)

/* Slack around an outage's edges for a request in flight at that moment. */
#define EDGE_MS 200

static bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    return a0 <= b1 && b0 <= a1;
}

static int64_t jint(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* One target of a config. */
static void target(char *buf, size_t n, const char *path_id, const char *candidate, const char *reference,
                   const char *extra)
{
    snprintf(buf, n,
             "{\"path_id\": \"%s\", \"channel\": \"live\", \"rendition\": \"360p\", \"program_version\": \"v1\","
             " \"candidate\": \"%s\", \"reference\": \"%s\"%s}",
             path_id, candidate, reference, extra ? extra : "");
}

static int64_t publish_ms(const struct live *l, int64_t seq)
{
    json_t *s = live_get_json(l, "_control/status?seq=%lld", (long long)seq);
    int64_t t = jint(s, "publish_ms");
    json_decref(s);
    return t;
}

/* Each path's rows are one per media sequence number, without gaps. */
static void one_row_per_segment(const json_t *rows, const char *path_id, long long *first, long long *last)
{
    long long prev = -1;
    size_t i;
    json_t *r;
    *first = -1;
    json_array_foreach(rows, i, r) {
        if (strcmp(jstr(r, "path_id"), path_id))
            continue;
        assert_true(json_is_integer(json_object_get(r, "media_sequence")));
        long long seq = jint(r, "media_sequence");
        if (prev >= 0 && seq != prev + 1)
            print_error("%s: media sequence %lld after %lld\n", path_id, seq, prev);
        assert_true(prev < 0 || seq == prev + 1);
        if (*first < 0)
            *first = seq;
        prev = seq;
    }
    *last = prev;
}

static void canary_21_live_simulation_tamper_and_outage(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    char tampered[256], t1[1024], t2[1024], cfg[4096], u1[256], u2[256], ref[256];
    /* live segment 5 is source segment 5 (...029.ts), just after the PTS wrap */
    live_path(&l, "tampered-5.ts", tampered, sizeof tampered);
    live_tamper_segment(LIVE_SOURCE "/360p30_h264_48k_160_aac_ts-0000000029.ts", tampered);
    json_decref(live_get_json(&l, "_control/tamper?path=b&seq=5&file=tampered-5.ts"));
    snprintf(u1, sizeof u1, "http://127.0.0.1:%d/_live/a/playlist.m3u8?Policy=SECRETP&Signature=SECRETS&Key-Pair-Id=SECRETK", l.port);
    snprintf(u2, sizeof u2, "http://127.0.0.1:%d/_live/b/playlist.m3u8", l.port);
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    target(t1, sizeof t1, "cdn-a", u1, ref, NULL);
    target(t2, sizeof t2, "cdn-b", u2, ref, NULL);
    snprintf(cfg, sizeof cfg,
             "{\"concurrency\": 2, \"period_s\": 2, \"timeout_s\": 6, \"lag_segments\": 1, \"probe_period_s\": 2,"
             " \"max_backoff_s\": 2, \"targets\": [%s, %s]}", t1, t2);
    live_write(&l, "canary.json", cfg);
    char args[512];
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    /* after the tampered segment, a 6-second outage of path b */
    live_wait_count(&l, 1, 90, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-b' AND media_sequence >= 6");
    json_t *outage = live_get_json(&l, "_control/outage?path=b&ms=6000");
    int64_t o0 = jint(outage, "start_ms"), o1 = jint(outage, "end_ms");
    json_decref(outage);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-b' AND verdict = 'MATCH' "
             "AND observed_at_ms > %lld", (long long)o1);
    live_wait_count(&l, 2, 90, sql);
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);

    json_t *rows = live_rows(&l, "SELECT path_id, media_sequence, verdict, reason, observed_at_ms, observed_end_ms,"
                                 " recorded_at_ms, json_extract(report, '$.canary.decoded') AS decoded,"
                                 " json_extract(report, '$.video.first_mismatch.plane') AS plane"
                                 " FROM evidence ORDER BY path_id, media_sequence");
    long long a0, a1, b0, b1;
    one_row_per_segment(rows, "cdn-a", &a0, &a1);
    one_row_per_segment(rows, "cdn-b", &b0, &b1);
    assert_true(a1 >= 11 && b1 >= 11);
    size_t i;
    json_t *r;
    int unknown = 0, after = 0, mismatch = 0;
    json_array_foreach(rows, i, r) {
        const char *path = jstr(r, "path_id"), *v = jstr(r, "verdict");
        int64_t seq = jint(r, "media_sequence"), at = jint(r, "observed_at_ms"), end = jint(r, "observed_end_ms");
        /* observed no earlier than the segment after it existed (lag_segments 1) */
        assert_true(at >= publish_ms(&l, seq + 1));
        assert_true(at <= end && end <= jint(r, "recorded_at_ms"));
        if (!strcmp(path, "cdn-a")) {
            assert_string_equal(v, "MATCH");
            continue;
        }
        if (seq == 5) {
            assert_string_equal(v, "MISMATCH");
            assert_string_equal(jstr(r, "reason"), "video_pixels");
            assert_string_equal(jstr(r, "plane"), "Y");
            mismatch++;
        } else if (!strcmp(v, "UNKNOWN")) {
            assert_true(overlaps(at, end, o0 - EDGE_MS, o1 + EDGE_MS));
            assert_string_equal(jstr(r, "reason"), "http_error");
            unknown++;
        } else {
            assert_string_equal(v, "MATCH");
            assert_false(overlaps(at, end, o0 + EDGE_MS, o1 - EDGE_MS));
            after += at > o1;
        }
    }
    assert_int_equal(mismatch, 1);
    assert_true(unknown >= 2);
    assert_true(after >= 2);
    /* the probes show the outage, and only on path b */
    json_t *probes = live_rows(&l, "SELECT path_id, status, reason, playlist_status, observed_at_ms, observed_end_ms,"
                                   " tcp_connect_ms, header_status, download_bytes FROM probes");
    int violations = 0;
    json_array_foreach(probes, i, r) {
        int64_t at = jint(r, "observed_at_ms"), end = jint(r, "observed_end_ms");
        if (!strcmp(jstr(r, "status"), "VIOLATION")) {
            assert_string_equal(jstr(r, "path_id"), "cdn-b");
            assert_true(overlaps(at, end, o0 - EDGE_MS, o1 + EDGE_MS));
            assert_int_equal(jint(r, "playlist_status"), 503);
            violations++;
        } else {
            assert_string_equal(jstr(r, "status"), "PASS");
            assert_false(overlaps(at, end, o0 + EDGE_MS, o1 - EDGE_MS) && !strcmp(jstr(r, "path_id"), "cdn-b"));
            assert_int_equal(jint(r, "header_status"), 200);
            assert_true(jint(r, "download_bytes") >= 63168); /* the smallest corpus segment */
        }
    }
    assert_true(violations >= 1);
    /* the reference of a media sequence was read once for both paths */
    long long decoded = live_q(&l, "SELECT count(DISTINCT media_sequence) FROM evidence "
                                   "WHERE json_extract(report, '$.canary.decoded')");
    json_t *st = live_get_json(&l, "_control/status?path=ref");
    assert_int_equal(jint(st, "segment_requests"), decoded);
    json_decref(st);
    /* one log line per check; no secret anywhere */
    char *log = live_read(&l, "run.err");
    int lines = 0;
    for (const char *p = log; (p = strstr(p, "\"event\":\"check\"")); p++)
        lines++;
    assert_int_equal(lines, (int)json_array_size(rows));
    free(log);
    const char *files[] = {"run.err", "run.out", NULL};
    assert_false(live_anywhere(&l, "SECRET", files));
    char *out = live_read(&l, "run.out");
    json_t *summary = json_loads(out, 0, NULL);
    free(out);
    assert_string_equal(jstr(summary, "kind"), "exactav-canary-session");
    assert_int_equal(json_array_size(json_object_get(summary, "targets")), 2);
    json_t *sb = json_object_get(json_array_get(json_object_get(summary, "targets"), 1), "stored");
    assert_int_equal(json_integer_value(json_object_get(sb, "MISMATCH")), 1);
    assert_int_equal(json_integer_value(json_object_get(sb, "UNKNOWN")), unknown);
    json_decref(summary);
    json_decref(probes);
    json_decref(rows);
    live_stop(&l);
}

/* Static copies of the corpus: a (as delivered), b (segment 8 tampered). */
static void static_paths(struct live *l)
{
    assert_int_equal(live_sh("cp -r %s %s/a && cp -r %s %s/b", LIVE_SOURCE, l->dir, LIVE_SOURCE, l->dir), 0);
    char dst[256];
    live_path(l, "b/360p30_h264_48k_160_aac_ts-0000000032.ts", dst, sizeof dst);
    live_tamper_segment(LIVE_SOURCE "/360p30_h264_48k_160_aac_ts-0000000032.ts", dst);
}

static void canary_22_once_is_a_preflight_session(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    static_paths(&l);
    char ta[1024], tb[1024], tc[1024], url[256], cfg[4096], args[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, LIVE_SOURCE, NULL); /* the reference: a directory */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/b/playlist.m3u8", l.port);
    target(tb, sizeof tb, "cdn-b", url, LIVE_SOURCE, NULL);
    target(tc, sizeof tc, "cdn-c", "http://127.0.0.1:1/c/playlist.m3u8", LIVE_SOURCE, NULL);
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s, %s, %s]}", ta, tb, tc);
    live_write(&l, "three.json", cfg);
    snprintf(args, sizeof args, "--once --json --config %s/three.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "three", args), 1);
    char *out = live_read(&l, "three.out");
    json_t *s = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(s);
    assert_int_equal(jint(s, "exit"), 1);
    assert_string_equal(jstr(s, "verdict"), "MISMATCH");
    json_t *targets = json_object_get(s, "targets");
    assert_int_equal(json_array_size(targets), 3);
    static const char *want[3][3] = {{"cdn-a", "MATCH", "identical"}, {"cdn-b", "MISMATCH", "video_pixels"},
                                     {"cdn-c", "UNKNOWN", "connect_error"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *t = json_array_get(targets, i);
        assert_string_equal(jstr(t, "path_id"), want[i][0]);
        assert_string_equal(jstr(t, "verdict"), want[i][1]);
        assert_string_equal(jstr(t, "reason"), want[i][2]);
        assert_int_equal(jint(t, "media_sequence"), 8); /* newest common (9) minus lag_segments (1) */
        assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE id = '%s' AND verdict = '%s' "
                                    "AND media_sequence = 8", jstr(t, "evidence_id"), want[i][1]), 1);
    }
    json_decref(s);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence"), 3);
    /* one probe per target: the unreachable path could not be observed */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE status = 'PASS'"), 2);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-c' AND status = 'UNKNOWN' "
                                "AND reason = 'playlist_connect_error'"), 1);
    /* the stored reference_version is what `exactav bind` gives that segment */
    assert_int_equal(live_sh("mkdir %s/bind && cp %s/360p30_h264_48k_160_aac_ts-0000000032.ts %s/bind/ && "
                             "%s bind --channel live --program-version v1 --rendition 360p --media-sequence 8 "
                             "--out %s/bind/b.json %s/bind/360p30_h264_48k_160_aac_ts-0000000032.ts >/dev/null",
                             l.dir, LIVE_SOURCE, l.dir, EXACTAV_BIN, l.dir, l.dir), 0);
    assert_int_equal(live_sh("test \"$(sqlite3 %s/ev.db \"SELECT DISTINCT reference_version FROM evidence "
                             "WHERE verdict != 'UNKNOWN'\")\" = \"$(grep -o '\"reference_version\": \"[0-9a-f]*' "
                             "%s/bind/b.json | cut -d'\"' -f4)\"", l.dir, l.dir), 0);
    /* every target MATCH: 0; nothing confirmed: 2; the table names each target */
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s]}", ta);
    live_write(&l, "one.json", cfg);
    snprintf(args, sizeof args, "--once --config %s/one.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "one", args), 0);
    out = live_read(&l, "one.out");
    assert_non_null(strstr(out, "MEDIA_SEQ"));
    assert_non_null(strstr(out, "cdn-a"));
    assert_non_null(strstr(out, "session: 1 target(s), newest records MATCH; stored 1 MATCH, 0 MISMATCH, "
                                "0 UNKNOWN (exit 0)"));
    free(out);
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s]}", tc);
    live_write(&l, "down.json", cfg);
    snprintf(args, sizeof args, "--once --config %s/down.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "down", args), 2);
    live_stop(&l);
}

/* Starts the canary over targets (no probes) with its metrics endpoint and
 * waits until query gives want; its pid, and the endpoint's port. */
static pid_t start_with_metrics(struct live *l, const char *targets, long long want, const char *query, int *port)
{
    char cfg[4096], args[512];
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"targets\": [%s]}", targets);
    live_write(l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json --metrics-listen 127.0.0.1:0",
             l->dir, l->dir);
    pid_t pid = live_canary_start(l, "run", args);
    live_wait_count(l, want, 60, query);
    char *log = live_read(l, "run.err");
    const char *m = strstr(log, "serving http://");
    assert_non_null(m);
    *port = atoi(strchr(m + strlen("serving http://"), ':') + 1);
    free(log);
    return pid;
}

static void canary_23_metrics_reload_and_drain(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    char ta[1024], tc[1024], url[256], ref[256], cfg[4096];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/c/playlist.m3u8", l.port);
    target(tc, sizeof tc, "cdn-c", url, ref, NULL);
    int port;
    pid_t pid = start_with_metrics(&l, ta, 2, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND verdict = 'MATCH'",
                                   &port);
    char metrics[128], health[128], *log;
    snprintf(metrics, sizeof metrics, "http://127.0.0.1:%d/metrics", port);
    snprintf(health, sizeof health, "http://127.0.0.1:%d/healthz", port);
    long status = 0;
    char *body = live_get(health, &status);
    assert_int_equal(status, 200);
    assert_string_equal(body, "ok\n");
    free(body);
    body = live_get(metrics, &status);
    assert_int_equal(status, 200);
    static const char *const series[] = {
        "exactav_canary_up 1", "exactav_canary_targets 1",
        "exactav_canary_checks_total{path_id=\"cdn-a\",channel=\"live\",rendition=\"360p\",verdict=\"MATCH\"} ",
        "exactav_canary_check_duration_seconds_bucket{path_id=\"cdn-a\",channel=\"live\",rendition=\"360p\",le=\"+Inf\"} ",
        "exactav_canary_lag_segments{path_id=\"cdn-a\",channel=\"live\",rendition=\"360p\"} ",
        "exactav_canary_last_match_timestamp_seconds{path_id=\"cdn-a\",channel=\"live\",rendition=\"360p\"} ",
        "# TYPE exactav_canary_check_duration_seconds histogram"};
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++) {
        if (!strstr(body, series[i]))
            print_error("no '%s' in:\n%s\n", series[i], body);
        assert_non_null(strstr(body, series[i]));
    }
    const char *n = strstr(body, series[2]) + strlen(series[2]);
    assert_true(atoll(n) >= 2);
    free(body);
    /* an invalid configuration is refused and the old one keeps running */
    live_write(&l, "canary.json", "{\"targets\": [], \"bogus\": 1}");
    kill(pid, SIGHUP);
    long long before = live_q(&l, "SELECT count(*) FROM evidence");
    live_wait_count(&l, before + 2, 60, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a'");
    log = live_read(&l, "run.err");
    assert_non_null(strstr(log, "\"event\":\"reload_refused\""));
    assert_non_null(strstr(log, "bogus: unknown key"));
    free(log);
    /* a valid one is taken between cycles */
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"targets\": [%s, %s]}", ta, tc);
    live_write(&l, "canary.json", cfg);
    kill(pid, SIGHUP);
    live_wait_count(&l, 2, 60, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-c' AND verdict = 'MATCH'");
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    log = live_read(&l, "run.err");
    assert_non_null(strstr(log, "\"event\":\"reload\""));
    assert_non_null(strstr(log, "\"event\":\"stop\""));
    free(log);
    /* cdn-a's numbering went on across the reload: no segment twice */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM (SELECT media_sequence FROM evidence WHERE path_id = 'cdn-a' "
                                "GROUP BY media_sequence HAVING count(*) > 1)"), 0);
    live_stop(&l);
}

static void canary_24_stalled_and_regressed_playlists(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    char ts[1024], tr[1024], url[256], ref[256], cfg[4096], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/s/playlist.m3u8", l.port);
    target(ts, sizeof ts, "cdn-s", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/r/playlist.m3u8", l.port);
    target(tr, sizeof tr, "cdn-r", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"period_s\": 1, \"targets\": [%s, %s]}", ts, tr);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    /* once the live edge is past the first window, so that 3 segments back is below what r listed */
    live_wait_count(&l, 2, 60, "SELECT count(DISTINCT path_id) FROM evidence WHERE media_sequence >= 5");
    /* s: the packager stops for 9 s (> 3 target durations); r: a cache serves a playlist 3 segments old */
    json_t *fz = live_get_json(&l, "_control/freeze?path=s&ms=9000");
    int64_t f1 = jint(fz, "end_ms");
    json_decref(fz);
    json_decref(live_get_json(&l, "_control/behind?path=r&segments=3"));
    live_wait_count(&l, 1, 60, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-r' AND reason = 'playlist_regressed'");
    json_decref(live_get_json(&l, "_control/behind?path=r&segments=0"));
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-s' AND verdict = 'MATCH' "
             "AND observed_at_ms > %lld", (long long)f1);
    live_wait_count(&l, 1, 60, sql);
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-s' AND reason = 'playlist_stalled' "
                                "AND verdict = 'UNKNOWN' AND media_sequence IS NULL"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-r' AND reason = 'playlist_regressed' "
                                "AND verdict = 'UNKNOWN' AND media_sequence IS NULL"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE verdict = 'MISMATCH'"), 0);
    /* the frozen playlist fell behind the reference's live edge (2 s bound:
     * one target duration) once, at its one frozen number; r, 3 segments
     * old, at each of its numbers while it lagged */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-s' AND "
                                "reason = 'candidate_behind_live_edge' AND verdict = 'UNKNOWN'"), 1);
    assert_true(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-r' AND "
                           "reason = 'candidate_behind_live_edge'") >= 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND reason NOT IN "
                                "('playlist_stalled', 'playlist_regressed', 'candidate_behind_live_edge', "
                                "'segment_given_up')"), 0);
    /* every number from the first checked to the last is on record: the
     * ones that left the window during the freeze as segment_given_up */
    assert_int_equal(live_q(&l, "SELECT max(media_sequence) - min(media_sequence) + 1 - count(DISTINCT "
                                "media_sequence) FROM evidence WHERE path_id = 'cdn-s'"), 0);
    live_stop(&l);
}

/* Per-target credentials (a token-header and signed-cookie CDN) reach the
 * candidate's checks and probes and nothing records them; probes check what
 * a browser at each configured player origin is allowed (CORS). */
static void canary_32_credentials_and_browser_access(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    assert_int_equal(live_sh("cp -r %s %s/a", LIVE_SOURCE, l.dir), 0);
    char t[5][1024], url[256], cfg[8192], args[512];
    static const char creds[] = ", \"headers\": [\"X-Token: tok-1\"], \"cookies\": [\"sess=ck-1\"]";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/credential/a/playlist.m3u8", l.port);
    target(t[0], sizeof t[0], "cdn-k", url, LIVE_SOURCE, creds);
    target(t[1], sizeof t[1], "cdn-x", url, LIVE_SOURCE, NULL); /* the same CDN without them */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/nocors/a/playlist.m3u8", l.port);
    target(t[2], sizeof t[2], "cdn-n", url, LIVE_SOURCE, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    target(t[3], sizeof t[3], "cdn-a", url, LIVE_SOURCE, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/originfail/a/playlist.m3u8", l.port);
    target(t[4], sizeof t[4], "cdn-o", url, LIVE_SOURCE, NULL);
    snprintf(cfg, sizeof cfg, "{\"player_origins\": [\"https://player.example\"], \"targets\": [%s, %s, %s, %s, %s]}",
             t[0], t[1], t[2], t[3], t[4]);
    live_write(&l, "creds.json", cfg);
    snprintf(args, sizeof args, "--once --config %s/creds.json --evidence %s/ev.db", l.dir, l.dir);
    live_canary_run(&l, "creds", args);
    /* content: the credentials open the CDN; without them it refuses */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-k' AND verdict = 'MATCH'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-x' AND verdict = 'UNKNOWN' "
                                "AND reason = 'http_error'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id IN ('cdn-n', 'cdn-a') "
                                "AND verdict = 'MATCH'"), 2);
    /* access: a browser at the origin is refused by the CDN that sends no
     * Access-Control-Allow-Origin, and by the cookie CDN that answers "*"
     * (a request with cookies needs its own origin named) */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-n' AND status = 'VIOLATION' AND "
                                "reason = 'cors_playlist_refused' AND playlist_error LIKE "
                                "'cors: a player at https://player.example is refused: no Access-Control-Allow-Origin'"),
                     1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-k' AND status = 'VIOLATION' AND "
                                "reason = 'cors_playlist_refused' AND playlist_error LIKE '%%carries cookies'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-x' AND status = 'VIOLATION' AND "
                                "reason = 'playlist_http_error'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-a' AND status = 'PASS'"), 1);
    /* a request with Origin that fails is no CORS answer: never a PASS */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-o' AND status = 'VIOLATION' AND "
                                "reason = 'cors_http_error' AND playlist_error = 'cors: a player at "
                                "https://player.example: its request failed: http_error: HTTP status 403'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-o' AND verdict = 'MATCH'"), 1);
    /* the credentials are nowhere */
    static const char *const files[] = {"creds.out", "creds.err", NULL};
    assert_false(live_anywhere(&l, "tok-1", files));
    assert_false(live_anywhere(&l, "ck-1", files));
    /* a credential the canary cannot send is refused at load, naming only its name */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    target(t[0], sizeof t[0], "cdn-k", url, LIVE_SOURCE, ", \"cookies\": [\"sess=ck;-1\"]");
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s]}", t[0]);
    live_write(&l, "bad.json", cfg);
    snprintf(args, sizeof args, "--once --config %s/bad.json --evidence %s/ev2.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "bad", args), 64);
    char *err = live_read(&l, "bad.err");
    assert_non_null(strstr(err, "targets[0].cookies[0]: sess: the value has a character a cookie cannot send"));
    assert_null(strstr(err, "ck;-1"));
    free(err);
    live_stop(&l);
}

/* A pre-flight (--once) on a CDN whose live playlist is frozen 20 s behind
 * the origin: never MATCH ("may start"), the delivery fact names the side
 * that lags and by how much; the reference is not blamed. */
static void canary_31_a_frozen_candidate_fails_preflight(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    char tf[1024], url[256], ref[256], cfg[2048], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/f/playlist.m3u8", l.port);
    target(tf, sizeof tf, "cdn-f", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"targets\": [%s]}", tf);
    live_write(&l, "frozen.json", cfg);
    json_decref(live_get_json(&l, "_control/freeze?path=f&ms=60000"));
    sleep(5); /* the reference publishes 2 more segments (2 s each) */
    snprintf(args, sizeof args, "--once --json --config %s/frozen.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "frozen", args), 2);
    char *out = live_read(&l, "frozen.out");
    json_t *s = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(s);
    json_t *t = json_array_get(json_object_get(s, "targets"), 0);
    assert_string_equal(jstr(t, "verdict"), "UNKNOWN");
    assert_string_equal(jstr(t, "reason"), "candidate_behind_live_edge");
    json_decref(s);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE reason = 'candidate_behind_live_edge' AND "
                                "json_extract(report, '$.candidate.delivery_failure.detail') LIKE "
                                "'the candidate lags: %%ms behind the reference''s live edge (bound 2000 ms)'"), 1);
    /* a bound the lag is within: the same frozen candidate is checked (MATCH;
     * lag 0: the two windows may share only the frozen edge) */
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"max_behind_s\": 600, \"lag_segments\": 0, "
             "\"targets\": [%s]}", tf);
    live_write(&l, "loose.json", cfg);
    snprintf(args, sizeof args, "--once --config %s/loose.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "loose", args), 0);
    live_stop(&l);
}

static void canary_25_candidate_command_output_is_redacted(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    assert_int_equal(live_sh("cp -r %s %s/a", LIVE_SOURCE, l.dir), 0);
    char sign[256], fails[256], ta[1024], tf[1024], cfg[4096], args[512], url[256], extra[512];
    live_path(&l, "sign-url", sign, sizeof sign);
    live_path(&l, "sign-fails", fails, sizeof fails);
    live_write(&l, "sign-url", "#!/bin/sh\necho SECRET-stderr >&2\n"
                               "printf '%s?Policy=SECRET1&Signature=SECRET2&Key-Pair-Id=SECRET3&token=SECRET4&sid=SECRET7"
                               "&other=SECRET8&keep=1\\n' "
                               "\"$EXACTAV_CANDIDATE\"\n");
    live_write(&l, "sign-fails", "#!/bin/sh\necho https://x.example/?Signature=SECRET5; echo SECRET6 >&2; exit 3\n");
    assert_int_equal(live_sh("chmod +x %s %s", sign, fails), 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    snprintf(extra, sizeof extra, ", \"candidate_command\": [\"%s\"]", sign);
    target(ta, sizeof ta, "cdn-a", url, LIVE_SOURCE, extra);
    snprintf(extra, sizeof extra, ", \"candidate_command\": [\"%s\", \"--key\", \"K1\"]", fails);
    target(tf, sizeof tf, "cdn-f", url, LIVE_SOURCE, extra);
    /* every query value is redacted unless kept (keep_params, as --keep-param);
     * redact_params wins over keep_params */
    snprintf(cfg, sizeof cfg, "{\"redact_params\": [\"sid\"], \"keep_params\": [\"keep\", \"sid\"], "
                              "\"targets\": [%s, %s]}", ta, tf);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--once --json --config %s/canary.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "run", args), 2);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND verdict = 'MATCH' "
                                "AND object LIKE '%%Signature=REDACTED%%token=REDACTED&sid=REDACTED&other=REDACTED&keep=1'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-f' AND verdict = 'UNKNOWN' "
                                "AND reason = 'candidate_command_failed' AND media_sequence = 8"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-f' AND status = 'UNKNOWN' "
                                "AND reason = 'candidate_command_failed'"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM probes WHERE path_id = 'cdn-a' AND status = 'PASS'"), 1);
    const char *files[] = {"run.err", "run.out", NULL};
    assert_false(live_anywhere(&l, "SECRET", files));
    live_stop(&l);
}

static void canary_26_shards_split_one_config(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    assert_int_equal(live_sh("cp -r %s %s/a", LIVE_SOURCE, l.dir), 0);
    char cfg[8192] = "{\"probe_period_s\": 0, \"targets\": [", t[1024], url[256], path[16], args[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "cdn-%d", i);
        target(t, sizeof t, path, url, LIVE_SOURCE, NULL);
        strcat(cfg, i ? ", " : "");
        strcat(cfg, t);
    }
    strcat(cfg, "]}");
    live_write(&l, "canary.json", cfg);
    int seen[6] = {0};
    for (unsigned k = 0; k < 2; k++) {
        char tag[8];
        snprintf(tag, sizeof tag, "s%u", k);
        snprintf(args, sizeof args, "--once --json --shard %u/2 --config %s/canary.json --evidence %s/ev.db", k, l.dir,
                 l.dir);
        int rc = live_canary_run(&l, tag, args);
        char name[16];
        snprintf(name, sizeof name, "%s.out", tag);
        char *out = live_read(&l, name);
        json_t *s = json_loads(out, 0, NULL);
        free(out);
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(s, "targets"), i, o) {
            int n = atoi(jstr(o, "path_id") + 4);
            char key[64];
            snprintf(key, sizeof key, "cdn-%d/live/360p", n);
            assert_true(canary_in_shard(key, k, 2)); /* the documented hash decides */
            seen[n]++;
        }
        assert_int_equal(rc, json_array_size(json_object_get(s, "targets")) ? 0 : 2);
        json_decref(s);
    }
    for (int i = 0; i < 6; i++)
        assert_int_equal(seen[i], 1); /* every target in exactly one shard */
    live_stop(&l);
}

/* A port that accepts connections and never answers. */
static int blackhole(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 64), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void canary_27_one_bad_target_never_delays_the_others(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    int hole_port = 0, hole = blackhole(&hole_port);
    char ta[1024], tx[1024], url[256], ref[256], cfg[4096], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/live/x.m3u8", hole_port);
    target(tx, sizeof tx, "cdn-x", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"concurrency\": 1, \"timeout_s\": 5, \"probe_period_s\": 0, \"targets\": [%s, %s]}",
             tx, ta);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    live_wait_count(&l, 1, 60, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-x'");
    live_wait_count(&l, 4, 60, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a'");
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    close(hole);
    json_t *x = live_rows(&l, "SELECT observed_at_ms, observed_end_ms, reason FROM evidence WHERE path_id = 'cdn-x' "
                              "ORDER BY observed_at_ms LIMIT 1");
    json_t *first = json_array_get(x, 0);
    assert_string_equal(jstr(first, "reason"), "timeout");
    /* while cdn-x's playlist hung, cdn-a went on checking (each target has its own thread and deadline) */
    assert_true(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND verdict = 'MATCH' AND "
                           "observed_at_ms BETWEEN %lld AND %lld", (long long)jint(first, "observed_at_ms"),
                       (long long)jint(first, "observed_end_ms")) >= 1);
    long long a0, a1;
    json_t *rows = live_rows(&l, "SELECT path_id, media_sequence FROM evidence WHERE path_id = 'cdn-a' "
                                 "ORDER BY media_sequence");
    one_row_per_segment(rows, "cdn-a", &a0, &a1);
    json_decref(rows);
    json_decref(x);
    live_stop(&l);
}

/* One long segment: 2 s of 1280x720 30 fps encoded once and repeated to
 * 120 s without re-encoding (cheap to make, 3600 pictures a side to decode),
 * so its check outlasts the 1-second drain even on a fast machine; the live
 * edge stays put while the test runs. */
static void long_segment(struct live *l)
{
    assert_int_equal(live_sh("mkdir %s/long && cd %s/long && ffmpeg -nostdin -hide_banner -loglevel error "
                             "-f lavfi -i testsrc2=size=1280x720:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 "
                             "-t 2 -map 0:v -map 1:a -c:v libx264 -preset ultrafast -b:v 800k -g 60 -c:a aac -ac 2 -f mpegts two.ts && "
                             "ffmpeg -nostdin -hide_banner -loglevel error -stream_loop 59 -i two.ts -map 0 -c copy -f mpegts long.ts && "
                             "printf '#EXTM3U\\n#EXT-X-TARGETDURATION:120\\n#EXTINF:120.000000,\\nlong.ts\\n' > playlist.m3u8",
                             l->dir, l->dir), 0);
}

static void canary_28_checks_still_running_at_the_end_are_interrupted(void **state)
{
    (void)state;
    struct live l;
    /* the source playlist lives outside the server's root: made first */
    struct live tmp = {0};
    snprintf(tmp.dir, sizeof tmp.dir, "/tmp/exactav-canary-long-XXXXXX");
    assert_non_null(mkdtemp(tmp.dir));
    long_segment(&tmp);
    char playlist[128];
    snprintf(playlist, sizeof playlist, "%s/long/playlist.m3u8", tmp.dir);
    live_start(&l, playlist);
    char ta[1024], url[256], ref[256], cfg[2048], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"timeout_s\": 1, \"probe_period_s\": 0, \"targets\": [%s]}", ta);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    /* the candidate segment was delivered: the check is decoding now */
    for (int i = 0; i < 600; i++) {
        json_t *st = live_get_json(&l, "_control/status?path=a");
        int64_t n = jint(st, "segment_requests");
        json_decref(st);
        if (n >= 1)
            break;
        usleep(100000);
    }
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    /* one row for that segment: UNKNOWN interrupted; its late result was refused */
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND reason = 'interrupted' "
                                "AND media_sequence = 2"), 1);
    char *out = live_read(&l, "run.out");
    json_t *s = json_loads(out, 0, NULL);
    free(out);
    json_t *t = json_array_get(json_object_get(s, "targets"), 0);
    assert_string_equal(jstr(t, "reason"), "interrupted");
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE id = '%s'", jstr(t, "evidence_id")), 1);
    json_decref(s);
    char *log = live_read(&l, "run.err");
    assert_non_null(strstr(log, "recorded UNKNOWN interrupted"));
    free(log);
    live_stop(&l);
    live_sh("rm -rf %s", tmp.dir);
}

/* A result the store refuses (here every insert: a trigger, as for a report
 * that breaks the rules of a valid report) is no evidence: the session
 * reports it UNKNOWN not_stored, never MATCH, and --once does not exit 0. */
static void canary_29_a_result_the_store_refuses_never_counts(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    assert_int_equal(live_sh("cp -r %s %s/a", LIVE_SOURCE, l.dir), 0);
    char ta[1024], url[256], cfg[2048], args[512], db[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, LIVE_SOURCE, NULL);
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"targets\": [%s]}", ta);
    live_write(&l, "canary.json", cfg);
    /* a store of this build, then a trigger refusing every evidence row */
    live_path(&l, "ev.db", db, sizeof db);
    struct evidence_db *e = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(db, EVIDENCE_OPEN_RW, &e, err, sizeof err), EVIDENCE_OK);
    evidence_close(e);
    assert_int_equal(live_sh("sqlite3 %s \"CREATE TRIGGER refuse BEFORE INSERT ON evidence_rows "
                             "BEGIN SELECT RAISE(ABORT, 'refused'); END;\"", db), 0);
    snprintf(args, sizeof args, "--once --json --config %s/canary.json --evidence %s", l.dir, db);
    assert_int_equal(live_canary_run(&l, "run", args), 2);
    char *out = live_read(&l, "run.out");
    json_t *s = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(s);
    assert_string_equal(jstr(s, "verdict"), "UNKNOWN");
    json_t *t = json_array_get(json_object_get(s, "targets"), 0);
    assert_string_equal(jstr(t, "verdict"), "UNKNOWN");
    assert_string_equal(jstr(t, "reason"), "not_stored");
    assert_true(json_is_null(json_object_get(t, "evidence_id")));
    json_decref(s);
    char *log = live_read(&l, "run.err");
    assert_non_null(strstr(log, "store_failed"));
    assert_non_null(strstr(log, "\"verdict\":\"MATCH\"")); /* what was refused was a MATCH */
    free(log);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence"), 0);
    live_stop(&l);
}

/* Three unmodified paths of one rendition: every check is a MATCH by
 * decoder input, and each reference segment is decoded at most once for
 * all of them (the metrics count both). */
static void canary_30_unmodified_paths_decode_the_reference_once(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    char t[3][1024], url[256], ref[256];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    static const char *const ids[3] = {"cdn-a", "cdn-a2", "cdn-a3"};
    for (int i = 0; i < 3; i++)
        target(t[i], sizeof t[i], ids[i], url, ref, NULL);
    char all[3200], metrics[128];
    snprintf(all, sizeof all, "%s, %s, %s", t[0], t[1], t[2]);
    int port;
    pid_t pid = start_with_metrics(&l, all, 6, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH'", &port);
    snprintf(metrics, sizeof metrics, "http://127.0.0.1:%d/metrics", port);
    long status = 0;
    char *body = live_get(metrics, &status);
    assert_int_equal(status, 200);
    const char *fast = strstr(body, "exactav_canary_checks_by_compare_total{compare=\"decoder-input\"} ");
    const char *decodes = strstr(body, "\nexactav_canary_reference_decodes_total ");
    assert_non_null(fast);
    assert_non_null(decodes);
    long long nfast = atoll(strchr(fast, '}') + 2), ndecodes = atoll(strchr(decodes, ' ') + 1);
    free(body);
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    long long seqs = live_q(&l, "SELECT count(DISTINCT media_sequence) FROM evidence");
    print_message("%lld decoder-input checks, %lld reference decodes, %lld segments\n", nfast, ndecodes, seqs);
    assert_true(nfast >= 6);
    /* once per segment (checks of a segment in flight: at most the concurrency more) */
    assert_true(ndecodes >= 1 && ndecodes <= seqs);
    assert_true(ndecodes < nfast);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE verdict != 'MATCH'"), 0);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE json_extract(report, '$.compare') = 'full' "
                                "AND verdict = 'MATCH'"), 0);
    /* each clean decode is stored once (reference_decodes, schema v3), for a
     * restarted canary or another process; every fast-path MATCH names how
     * the reference's decode was known */
    long long stored = live_q(&l, "SELECT count(*) FROM reference_decodes");
    assert_true(stored >= 1 && stored <= seqs);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE json_extract(report, '$.reference_decode') "
                                "NOT IN ('decoded', 'remembered', 'stored')"), 0);
    assert_true(live_q(&l, "SELECT count(*) FROM evidence WHERE json_extract(report, '$.reference_decode') "
                           "= 'remembered'") >= 1);
    live_stop(&l);
}

/* The canary's /metrics as Prometheus itself reads them: `promtool check
 * metrics` finds nothing to lint, and a real Prometheus scraping the worker
 * with docs/examples/alerts.yml loaded fires ExactavCanaryMismatch for the
 * tampered path only (read through its HTTP API). */
static json_t *firing_alerts(int prom_port)
{
    char url[128];
    long status = 0;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/v1/alerts", prom_port);
    char *body = live_get(url, &status);
    json_t *j = status == 200 && body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    json_t *alerts = json_incref(json_object_get(json_object_get(j, "data"), "alerts"));
    json_decref(j);
    return alerts;
}

static bool mismatch_fired(int prom_port, const char *path_id, int max_s)
{
    for (int i = 0; i < max_s * 4; i++) {
        json_t *alerts = firing_alerts(prom_port), *a;
        size_t k;
        bool seen = false;
        json_array_foreach(alerts, k, a) {
            json_t *lb = json_object_get(a, "labels");
            seen |= !strcmp(jstr(lb, "alertname"), "ExactavCanaryMismatch") && !strcmp(jstr(a, "state"), "firing") &&
                    !strcmp(jstr(lb, "path_id"), path_id);
        }
        json_decref(alerts);
        if (seen)
            return true;
        usleep(250000);
    }
    return false;
}

static void canary_33_metrics_pass_promtool_and_prometheus_fires_on_a_mismatch(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    promtool_skip_unless("promtool");
    promtool_skip_unless("prometheus");
    struct live l;
    live_start(&l, LIVE_PLAYLIST);
    /* live segments 5 and 6 of path b tampered: a MISMATCH that stays the
     * newest verdict for two segments (Prometheus scrapes every 250 ms) */
    static const char *const sources[2] = {LIVE_SOURCE "/360p30_h264_48k_160_aac_ts-0000000029.ts",
                                           LIVE_SOURCE "/360p30_h264_48k_160_aac_ts-0000000030.ts"};
    char tampered[256], ta[1024], tb[1024], url[256], ref[256], cfg[4096], args[512];
    for (int i = 0; i < 2; i++) {
        snprintf(url, sizeof url, "tampered-%d.ts", 5 + i);
        live_path(&l, url, tampered, sizeof tampered);
        live_tamper_segment(sources[i], tampered);
        json_decref(live_get_json(&l, "_control/tamper?path=b&seq=%d&file=tampered-%d.ts", 5 + i, 5 + i));
    }
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/b/playlist.m3u8", l.port);
    target(tb, sizeof tb, "cdn-b", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"concurrency\": 2, \"probe_period_s\": 1, \"targets\": [%s, %s]}", ta, tb);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json --metrics-listen 127.0.0.1:0",
             l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    live_wait_count(&l, 1, 60, "SELECT count(*) FROM evidence");
    char *log = live_read(&l, "run.err");
    const char *m = strstr(log, "serving http://");
    assert_non_null(m);
    int port = atoi(strchr(m + strlen("serving http://"), ':') + 1);
    free(log);
    /* Prometheus on a free port, scraping the worker, the rules loaded */
    int prom_port = 0;
    char prom_cfg[1024];
    snprintf(prom_cfg, sizeof prom_cfg,
             "global: {scrape_interval: 250ms, evaluation_interval: 250ms}\n"
             "rule_files: ['" EXAMPLES_DIR "/alerts.yml']\n"
             "scrape_configs:\n"
             "  - job_name: exactav-canary\n"
             "    static_configs: [{targets: ['127.0.0.1:%d']}]\n", port);
    pid_t prom = promtool_server_start(l.dir, prom_cfg, &prom_port); /* tests/promtool.h */
    assert_true(prom > 0);
    live_wait_count(&l, 1, 90, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-b' AND verdict = 'MISMATCH'");
    live_wait_count(&l, 2, 60, "SELECT count(*) FROM probes");
    bool fired = mismatch_fired(prom_port, "cdn-b", 60);
    /* what Prometheus scraped, linted by promtool */
    char metrics[128], file[256], lint[256];
    snprintf(metrics, sizeof metrics, "http://127.0.0.1:%d/metrics", port);
    long status = 0;
    char *body = live_get(metrics, &status);
    assert_int_equal(status, 200);
    static const char *const series[] = {
        "exactav_build_info{version=\"" EXACTAV_VERSION "\",commit=\"",
        "exactav_canary_last_verdict{path_id=\"cdn-b\",channel=\"live\",rendition=\"360p\",verdict=\"MISMATCH\"} ",
        "exactav_canary_last_verdict_timestamp_seconds{path_id=\"cdn-b\",channel=\"live\",rendition=\"360p\"} ",
        "exactav_canary_unknown_streak{path_id=\"cdn-a\",channel=\"live\",rendition=\"360p\"} ",
        "exactav_canary_probe_duration_seconds_bucket{path_id=\"cdn-a\",channel=\"live\",rendition=\"360p\",le=\"+Inf\"} ",
        "# TYPE exactav_canary_probe_duration_seconds histogram"};
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
        if (!strstr(body, series[i]))
            fail_msg("no '%s' in:\n%s", series[i], body);
    assert_non_null(strstr(body, ",ffmpeg=\""));
    live_write(&l, "metrics.txt", body);
    free(body);
    live_path(&l, "metrics.txt", file, sizeof file);
    live_path(&l, "promtool.err", lint, sizeof lint);
    if (promtool_check_metrics(file, lint) != 0)
        fail_msg("promtool check metrics:\n%s", live_read(&l, "promtool.err"));
    json_t *alerts = firing_alerts(prom_port), *a;
    size_t k;
    json_array_foreach(alerts, k, a) /* the MATCH path never alerts */
        assert_string_not_equal(jstr(json_object_get(a, "labels"), "path_id"), "cdn-a");
    json_decref(alerts);
    promtool_server_stop(prom);
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    if (!fired)
        fail_msg("ExactavCanaryMismatch never fired for cdn-b:\n%s", live_read(&l, "prometheus.log"));
    live_stop(&l);
}

/* --diff-dir (issue 22): the tampered path's MISMATCH writes its pictures
 * into its own folder, named in the stored report; the MATCH path writes
 * nothing. */
static void canary_34_diff_dir_pictures_per_target(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    static_paths(&l);
    char ta[1024], tb[1024], url[256], cfg[4096], args[768];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, LIVE_SOURCE, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/b/playlist.m3u8", l.port);
    target(tb, sizeof tb, "..cdn:b", url, LIVE_SOURCE, NULL);   /* no ".." folder from a name */
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s, %s]}", ta, tb);
    live_write(&l, "two.json", cfg);
    snprintf(args, sizeof args, "--once --json --config %s/two.json --evidence %s/ev.db --diff-dir %s/pics",
             l.dir, l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "two", args), 1);
    assert_int_equal(live_sh("test \"$(ls %s/pics)\" = __cdn_b_live_360p", l.dir), 0);
    assert_int_equal(live_sh("test $(ls %s/pics/__cdn_b_live_360p/*-video-*.png | wc -l) = 3", l.dir), 0);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = '..cdn:b' AND verdict = 'MISMATCH' "
                                "AND json_extract(report, '$.diff_images.video_difference') LIKE "
                                "'%s/pics/__cdn_b_live_360p/%%-video-difference.png'", l.dir), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND "
                                "json_extract(report, '$.diff_images') = '{}'"), 1);
}

/* Issue 20: AES-128 on both sides - a reference directory whose segments
 * are encrypted (the key read from a file below it) and a CDN serving the
 * same encrypted playlist - MATCHes, and neither the key nor its URI
 * reaches the evidence; a CDN serving another key is UNKNOWN
 * decryption_failed, never MISMATCH. */
static void canary_35_aes128_reference_and_candidate(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start(&l, NULL);
    const char *k = "00112233445566778899aabbccddeeff";
    assert_int_equal(live_sh("mkdir -p %s/e %s/w && cd %s/e && perl -e 'print pack(\"H*\", $ARGV[0])' %s > key.bin && "
                             "i=0; for f in $(grep -v '^#' %s/playlist.m3u8); do "
                             "openssl enc -aes-128-cbc -K %s -iv $(printf %%032x $i) -in %s/$f -out $f; i=$((i+1)); done && "
                             "sed 's|^#EXT-X-DISCONTINUITY-SEQUENCE:0|&\\n#EXT-X-KEY:METHOD=AES-128,URI=\"key.bin?t=SECRETK\"|' "
                             "%s/playlist.m3u8 > playlist.m3u8 && cp *.ts playlist.m3u8 ../w/ && "
                             "printf 0123456789abcdef > ../w/key.bin",
                             l.dir, l.dir, l.dir, k, LIVE_SOURCE, k, LIVE_SOURCE, LIVE_SOURCE), 0);
    char te[1024], tw[1024], url[256], ref[256], cfg[4096], args[512];
    snprintf(ref, sizeof ref, "%s/e", l.dir);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/e/playlist.m3u8", l.port);
    target(te, sizeof te, "cdn-e", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/w/playlist.m3u8", l.port);
    target(tw, sizeof tw, "cdn-w", url, LIVE_SOURCE, NULL);
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s, %s]}", te, tw);
    live_write(&l, "enc.json", cfg);
    snprintf(args, sizeof args, "--once --json --config %s/enc.json --evidence %s/ev.db", l.dir, l.dir);
    assert_int_equal(live_canary_run(&l, "enc", args), 2);
    char *out = live_read(&l, "enc.out");
    json_t *s = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(s);
    json_t *targets = json_object_get(s, "targets");
    assert_int_equal(json_array_size(targets), 2);
    assert_string_equal(jstr(json_array_get(targets, 0), "verdict"), "MATCH");
    assert_string_equal(jstr(json_array_get(targets, 1), "verdict"), "UNKNOWN");
    assert_string_equal(jstr(json_array_get(targets, 1), "reason"), "decryption_failed");
    json_decref(s);
    assert_int_equal(live_sh("sqlite3 %s/ev.db .dump | grep -c -e SECRETK -e key.bin -e %s >/dev/null", l.dir, k), 1);
    assert_int_equal(live_sh("grep -c -e SECRETK -e key.bin %s/enc.err >/dev/null", l.dir), 1);
    live_stop(&l);
}

/* A Low-Latency HLS origin (exactav-testd --ll-parts 4: parts, a preload
 * hint, blocking reload, the playlist ending in the open segment's parts)
 * is still read as whole segments: every row a MATCH, one per segment. */
static void canary_36_ll_hls_live_playlist_read_as_whole_segments(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start_ll(&l, LIVE_PLAYLIST, 4);
    char t1[1024], url[256], ref[256], cfg[2048], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    long status = 0;
    char *body = live_get(url, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "#EXT-X-PART-INF:PART-TARGET="));
    assert_non_null(strstr(body, "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES"));
    assert_non_null(strstr(body, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-"));
    free(body);
    target(t1, sizeof t1, "cdn-ll", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"period_s\": 2, \"targets\": [%s]}", t1);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    live_wait_count(&l, 3, 90, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-ll' AND verdict = 'MATCH'");
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    json_t *rows = live_rows(&l, "SELECT path_id, media_sequence, verdict FROM evidence ORDER BY media_sequence");
    long long first, last;
    one_row_per_segment(rows, "cdn-ll", &first, &last);
    assert_true(last - first >= 2);
    json_decref(rows);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE verdict != 'MATCH'"), 0);
    live_stop(&l);
}

/* ---- canary_37: a tampered LL-HLS part ---- */

/* The 33-bit PTS of a PES header at p (after its 00 00 01 id), or -1. */
static int64_t pes_pts(const uint8_t *p, size_t left)
{
    if (left < 14 || !(p[7] & 0x80))
        return -1;
    const uint8_t *t = p + 9;
    return ((int64_t)(t[0] & 0x0e) << 29) | ((int64_t)t[1] << 22) | ((int64_t)(t[2] & 0xfe) << 14) |
           ((int64_t)t[3] << 7) | (t[4] >> 1);
}

static void set_pes_pts(uint8_t *p, int64_t pts)
{
    uint8_t *t = p + 9;
    pts &= ((int64_t)1 << 33) - 1;
    t[0] = (uint8_t)((t[0] & 0xf0) | ((pts >> 29) & 0x0e) | 1);
    t[1] = (uint8_t)(pts >> 22);
    t[2] = (uint8_t)(((pts >> 14) & 0xfe) | 1);
    t[3] = (uint8_t)(pts >> 7);
    t[4] = (uint8_t)(((pts << 1) & 0xfe) | 1);
}

/* The video PES starting in TS packet k of buf (stream id 0xE0..0xEF at a
 * payload unit start), or NULL. */
static uint8_t *video_pes_at(uint8_t *buf, size_t k)
{
    uint8_t *pk = buf + k * 188;
    if (pk[0] != 0x47 || !(pk[1] & 0x40) || !(pk[3] & 0x10))
        return NULL;
    size_t off = 4 + ((pk[3] & 0x20) ? 1 + (size_t)pk[4] : 0);
    if (off + 14 > 188 || pk[off] || pk[off + 1] || pk[off + 2] != 1 || (pk[off + 3] & 0xf0) != 0xe0)
        return NULL;
    return pk + off;
}

/* Part `part` of 4 of the segment file src, as exactav-testd --ll-parts 4
 * cuts it (tests/http/testd_live.c part_bytes), with one picture moved by
 * half a frame (1500 ticks at 30 fps): the same bytes otherwise, a valid
 * stream whose decode differs from its parent's in that part's time span
 * (each part lasts 500 ms from the segment's first picture).  Picks the
 * part: the first of 1..3 holding, in its bytes, a picture well inside its
 * own time span.  Returns the part index; the file is written to dst. */
static int tamper_one_part(const char *src, const char *dst)
{
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 20];
    size_t size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t packets = size / 188;
    int64_t start = -1;
    for (size_t k = 0; k < packets; k++) {
        uint8_t *pes = video_pes_at(buf, k);
        int64_t pts = pes ? pes_pts(pes, 188) : -1;
        if (pts >= 0 && (start < 0 || pts < start))
            start = pts;
    }
    assert_true(start >= 0);
    for (int j = 1; j < 4; j++) {
        size_t from = packets * (size_t)j / 4, to = j == 3 ? packets : packets * ((size_t)j + 1) / 4;
        for (size_t k = from; k < to; k++) {
            uint8_t *pes = video_pes_at(buf, k);
            int64_t pts = pes ? pes_pts(pes, 188) : -1;
            int64_t rel = pts - start;
            if (pts < 0 || rel < j * 45000 + 6000 || rel > (j + 1) * 45000 - 6000)
                continue;
            set_pes_pts(pes, pts + 1500);
            FILE *o = fopen(dst, "wb");
            assert_non_null(o);
            size_t end = j == 3 ? size : to * 188;
            assert_int_equal(fwrite(buf + from * 188, 1, end - from * 188, o), end - from * 188);
            assert_int_equal(fclose(o), 0);
            return j;
        }
    }
    fail_msg("%s: no picture inside a part's own time span", src);
    return -1;
}

/* Issue 20, stage 3: over a Low-Latency HLS origin (exactav-testd --live
 * --ll-parts 4) whose path serves one part of one segment tampered (a
 * picture moved by half a frame) while the parent segment is untampered,
 * the canary's one row for that segment is MISMATCH
 * parts_differ_from_segment with the part's index (column part_index and
 * parts.part_index), the segment itself MATCH in parts.segment; every other
 * segment MATCHes, its parts checked too (parts.count 4, the parts'
 * bytes being the parent's). */
static void canary_37_ll_hls_tampered_part_is_found_by_its_index(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start_ll(&l, LIVE_PLAYLIST, 4);
    json_t *st = live_get_json(&l, "_control/status");
    int64_t edge = jint(st, "edge"), n = jint(st, "source_segments");
    json_decref(st);
    assert_int_equal(n, 10);
    /* a segment a few ahead, away from the loop's start and the PTS wrap (sources 4 and 5) */
    int64_t k = edge + 3;
    while (k % n == 0 || k % n == 4 || k % n == 5)
        k++;
    char src[512], dst[256];
    snprintf(src, sizeof src, "%s/360p30_h264_48k_160_aac_ts-00000000%02lld.ts", LIVE_SOURCE,
             (long long)(24 + k % n));
    live_path(&l, "part.ts", dst, sizeof dst);
    int j = tamper_one_part(src, dst);
    json_decref(live_get_json(&l, "_control/tamper?path=a&seq=%lld&part=%d&file=part.ts", (long long)k, j));
    char t1[1024], url[256], ref[256], cfg[2048], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(t1, sizeof t1, "cdn-ll", url, ref, NULL);
    /* lag 0: the segment checked is the newest, whose parts the playlist lists */
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"period_s\": 1, \"lag_segments\": 0, \"targets\": [%s]}",
             t1);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evidence WHERE media_sequence > %lld", (long long)k);
    live_wait_count(&l, 1, 120, sql);
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    json_t *rows = live_rows(&l, "SELECT media_sequence, verdict, reason, part_index, container,"
                                 " json_extract(report, '$.parts.count') AS count,"
                                 " json_extract(report, '$.parts.part_index') AS report_part,"
                                 " json_extract(report, '$.parts.reported') AS reported,"
                                 " json_extract(report, '$.parts.segment.verdict') AS segment,"
                                 " json_extract(report, '$.parts.against_reference.verdict') AS vs_ref,"
                                 " json_extract(report, '$.parts.against_segment.by') AS by"
                                 " FROM evidence ORDER BY media_sequence");
    long long first, last;
    one_row_per_segment(rows, "cdn-ll", &first, &last);
    size_t i;
    json_t *r;
    bool seen = false;
    int with_parts = 0;
    json_array_foreach(rows, i, r) {
        char *text = json_dumps(r, JSON_COMPACT);
        print_message("%s\n", text);
        free(text);
        assert_string_equal(jstr(r, "container"), "ts");
        if (jint(r, "media_sequence") == k) {
            seen = true;
            assert_string_equal(jstr(r, "verdict"), "MISMATCH");
            assert_string_equal(jstr(r, "reason"), "parts_differ_from_segment");
            assert_int_equal(jint(r, "part_index"), j);
            assert_int_equal(jint(r, "report_part"), j);
            assert_int_equal(jint(r, "count"), 4);
            assert_string_equal(jstr(r, "reported"), "against_segment");
            assert_string_equal(jstr(r, "segment"), "MATCH");
            assert_string_equal(jstr(r, "vs_ref"), "MISMATCH");
            assert_string_equal(jstr(r, "by"), "decode");
            continue;
        }
        assert_string_equal(jstr(r, "verdict"), "MATCH");
        assert_true(json_is_null(json_object_get(r, "part_index")));
        if (jint(r, "count") == 4) {
            with_parts++;
            assert_string_equal(jstr(r, "reported"), "segment");
            assert_string_equal(jstr(r, "vs_ref"), "MATCH");
            assert_string_equal(jstr(r, "by"), "bytes");
        }
    }
    json_decref(rows);
    assert_true(seen);
    assert_true(with_parts >= 1);
    live_stop(&l);
}

/* Issue 20, stage 3, part-level reasons: over the same LL-HLS origin,
 * path a publishes the last part of segment K 1.8 s late (more than one
 * part target of 0.5 s, less than one target duration of 2 s): the row
 * stays MATCH and its report records the delivery fact part_late for part
 * 3 (parts.delivery), with part_index NULL; path b never publishes part 1
 * of K in time: UNKNOWN part_missing with part_index 1 (never MISMATCH). */
static void canary_38_ll_hls_late_and_missing_parts(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start_ll(&l, LIVE_PLAYLIST, 4);
    json_t *st = live_get_json(&l, "_control/status");
    int64_t k = jint(st, "edge") + 3;
    json_decref(st);
    json_decref(live_get_json(&l, "_control/delay?path=a&seq=%lld&part=3&ms=1800", (long long)k));
    json_decref(live_get_json(&l, "_control/delay?path=b&seq=%lld&part=1&ms=600000", (long long)k));
    char ta[1024], tb[1024], url[256], ref[256], cfg[4096], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/b/playlist.m3u8", l.port);
    target(tb, sizeof tb, "cdn-b", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"period_s\": 1, \"lag_segments\": 0, \"targets\": [%s, %s]}",
             ta, tb);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(DISTINCT path_id) FROM evidence WHERE media_sequence > %lld", (long long)k);
    live_wait_count(&l, 2, 120, sql);
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    json_t *rows = live_rows(&l, "SELECT path_id, media_sequence, verdict, reason, part_index,"
                                 " json_extract(report, '$.parts.delivery') AS delivery"
                                 " FROM evidence WHERE media_sequence = %lld ORDER BY path_id", (long long)k);
    char *text = json_dumps(rows, JSON_COMPACT);
    print_message("%s\n", text);
    free(text);
    assert_int_equal(json_array_size(rows), 2);
    json_t *a = json_array_get(rows, 0), *b = json_array_get(rows, 1);
    assert_string_equal(jstr(a, "verdict"), "MATCH");
    assert_true(json_is_null(json_object_get(a, "part_index")));
    json_t *facts = json_loads(jstr(a, "delivery"), 0, NULL);
    assert_int_equal(json_array_size(facts), 1);
    json_t *f = json_array_get(facts, 0);
    assert_string_equal(jstr(f, "fact"), "part_late");
    assert_int_equal(jint(f, "part_index"), 3);
    assert_true(jint(f, "waited_ms") > jint(f, "part_target_ms"));
    json_decref(facts);
    assert_string_equal(jstr(b, "verdict"), "UNKNOWN");
    assert_string_equal(jstr(b, "reason"), "part_missing");
    assert_int_equal(jint(b, "part_index"), 1);
    json_decref(rows);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE verdict = 'MISMATCH'"), 0);
    live_stop(&l);
}

/* Issue 20, stage 3, blocking reload: the LL-HLS origin says
 * CAN-BLOCK-RELOAD=YES, so after its first look the canary asks for the
 * candidate playlist with _HLS_msn, the reference's newest segment: path a
 * runs one segment behind the reference, its request is held until it has
 * that segment and answered, every row a MATCH of exactly that segment
 * naming canary.blocking_reload {outcome answered, held_ms}; path b
 * is frozen, the server holds the request past the canary's own limit
 * (half of what is left of timeout_s): recorded "held", the playlist read
 * the plain way, and the stall is UNKNOWN playlist_stalled as before,
 * never a time-out. */
static void canary_39_ll_hls_blocking_reload_held_not_timed_out(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct live l;
    live_start_ll(&l, LIVE_PLAYLIST, 4);
    json_decref(live_get_json(&l, "_control/freeze?path=b&ms=30000"));
    json_decref(live_get_json(&l, "_control/behind?path=a&segments=1"));
    char ta[1024], tb[1024], url[256], ref[256], cfg[4096], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    target(ta, sizeof ta, "cdn-a", url, ref, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/b/playlist.m3u8", l.port);
    target(tb, sizeof tb, "cdn-b", url, ref, NULL);
    snprintf(cfg, sizeof cfg, "{\"probe_period_s\": 0, \"period_s\": 1, \"timeout_s\": 10, \"lag_segments\": 0,"
             " \"max_behind_s\": 60, \"targets\": [%s, %s]}", ta, tb);
    live_write(&l, "canary.json", cfg);
    snprintf(args, sizeof args, "--config %s/canary.json --evidence %s/ev.db --json", l.dir, l.dir);
    pid_t pid = live_canary_start(&l, "run", args);
    live_wait_count(&l, 1, 90, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-b' AND reason = 'playlist_stalled'");
    live_wait_count(&l, 2, 90, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND "
                               "json_extract(report, '$.canary.blocking_reload.outcome') = 'answered'");
    kill(pid, SIGTERM);
    assert_int_equal(live_canary_wait(pid), 0);
    json_t *rows = live_rows(&l, "SELECT path_id, media_sequence, verdict, reason,"
                                 " json_extract(report, '$.canary.blocking_reload') AS reload FROM evidence"
                                 " ORDER BY path_id, observed_at_ms");
    char *text = json_dumps(rows, JSON_COMPACT);
    print_message("%s\n", text);
    free(text);
    json_decref(rows);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND verdict != 'MATCH'"), 0);
    assert_true(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-a' AND "
                           "json_extract(report, '$.canary.blocking_reload.held_ms') >= 100 AND "
                           "json_extract(report, '$.canary.blocking_reload._HLS_msn') = media_sequence") >= 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE path_id = 'cdn-b' AND reason = 'playlist_stalled'"
                                " AND json_extract(report, '$.canary.blocking_reload.outcome') = 'held' AND"
                                " json_extract(report, '$.canary.blocking_reload.held_ms') >= 1000"), 1);
    assert_int_equal(live_q(&l, "SELECT count(*) FROM evidence WHERE reason IN ('timeout', 'http_error')"), 0);
    live_stop(&l);
}

int main(int argc, char **argv)
{
    fetch_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(canary_21_live_simulation_tamper_and_outage, live_teardown),
        cmocka_unit_test_teardown(canary_22_once_is_a_preflight_session, live_teardown),
        cmocka_unit_test_teardown(canary_23_metrics_reload_and_drain, live_teardown),
        cmocka_unit_test_teardown(canary_24_stalled_and_regressed_playlists, live_teardown),
        cmocka_unit_test_teardown(canary_25_candidate_command_output_is_redacted, live_teardown),
        cmocka_unit_test_teardown(canary_26_shards_split_one_config, live_teardown),
        cmocka_unit_test_teardown(canary_27_one_bad_target_never_delays_the_others, live_teardown),
        cmocka_unit_test_teardown(canary_28_checks_still_running_at_the_end_are_interrupted, live_teardown),
        cmocka_unit_test_teardown(canary_29_a_result_the_store_refuses_never_counts, live_teardown),
        cmocka_unit_test_teardown(canary_30_unmodified_paths_decode_the_reference_once, live_teardown),
        cmocka_unit_test_teardown(canary_31_a_frozen_candidate_fails_preflight, live_teardown),
        cmocka_unit_test_teardown(canary_32_credentials_and_browser_access, live_teardown),
        cmocka_unit_test_teardown(canary_33_metrics_pass_promtool_and_prometheus_fires_on_a_mismatch, live_teardown),
        cmocka_unit_test_teardown(canary_34_diff_dir_pictures_per_target, live_teardown),
        cmocka_unit_test_teardown(canary_35_aes128_reference_and_candidate, live_teardown),
        cmocka_unit_test_teardown(canary_36_ll_hls_live_playlist_read_as_whole_segments, live_teardown),
        cmocka_unit_test_teardown(canary_37_ll_hls_tampered_part_is_found_by_its_index, live_teardown),
        cmocka_unit_test_teardown(canary_38_ll_hls_late_and_missing_parts, live_teardown),
        cmocka_unit_test_teardown(canary_39_ll_hls_blocking_reload_held_not_timed_out, live_teardown),
    };
    int rc = canary_test_main("canary_live", tests, sizeof tests / sizeof tests[0], argc, argv);
    fetch_global_cleanup();
    return rc;
}
