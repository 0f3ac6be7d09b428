/* A real player (tests/player/player_rig.h: hls.js 1.7.4 in headless
 * chromium) against loopback CDNs (exactav-cdnd) serving the live window of
 * ../shared/corpus/media/hls-ts-rollover, steered by HLS Content Steering.
 *
 * player_00 installs hls.js (the ctest fixture every other player test
 * needs); player_01 proves the rig: a static multivariant playlist with three
 * pathways A, B, C and a steering manifest whose PATHWAY-PRIORITY is [A, B].
 * The player plays from A only; when A answers 503 it moves to B by itself
 * and never asks C, which is not in the list.  Asserted from the CDNs'
 * request logs and the page's reports.  Skipped (77) without chromium or
 * the corpus.  Timings are never asserted: waits are bounded, generous. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "player_rig.h"
#include "serve_rig.h"

#define ROLLOVER CORPUS_DIR "/media/hls-ts-rollover"
#define WAIT_S 120 /* bounds every wait; a shared 2-core machine can be slow */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- what the logs say ------------------------------------------------------------- */

struct seen {
    size_t requests, segments_ok, playlists_ok;
    int64_t first_ms, first_segment_ok_ms;
};

/* Non-control requests of one CDN log, those answered 200 by kind, the time
 * of the first, all at or after since_ms. */
static struct seen log_seen(const struct cdn_proc *cdn, int64_t since_ms)
{
    struct seen s = {0, 0, 0, -1, -1};
    json_t *log = cdn_jsonl(cdn->log), *e;
    size_t i;
    json_array_foreach(log, i, e) {
        int64_t t = json_integer_value(json_object_get(e, "t_ms"));
        if (json_is_true(json_object_get(e, "control")) || t < since_ms)
            continue;
        const char *path = json_string_value(json_object_get(e, "path"));
        bool ok = json_integer_value(json_object_get(e, "status")) == 200;
        size_t len = path ? strlen(path) : 0;
        bool seg = len > 3 && !strcmp(path + len - 3, ".ts");
        s.requests++;
        if (s.first_ms < 0)
            s.first_ms = t;
        if (ok && seg && s.first_segment_ok_ms < 0)
            s.first_segment_ok_ms = t;
        s.segments_ok += ok && seg;
        s.playlists_ok += ok && !seg;
    }
    json_decref(log);
    return s;
}

/* ---- what the page says ----------------------------------------------------------- */

static double current_time(const json_t *r)
{
    return json_number_value(json_object_get(r, "current_time"));
}

static bool fatal(const json_t *r)
{
    return json_is_true(json_object_get(r, "fatal"));
}

/* The page reports playing past `at` seconds (or a fatal error: stop waiting). */
static bool played_past(const json_t *r, void *ctx)
{
    double at = *(double *)ctx;
    return fatal(r) || (!json_is_true(json_object_get(r, "paused")) && current_time(r) > at);
}

struct failover {
    const struct cdn_proc *b;
    int64_t since_ms;
    double past;
    const char *to; /* the pathway b serves */
};

/* The player loads from b, b has served segments since the switch, and
 * playback went on past `past` (beyond anything the first could have
 * buffered). */
static bool failed_over(const json_t *r, void *ctx)
{
    struct failover *f = ctx;
    const char *pathway = json_string_value(json_object_get(r, "pathway"));
    return fatal(r) || (pathway && !strcmp(pathway, f->to) && current_time(r) > f->past &&
                        log_seen(f->b, f->since_ms).segments_ok >= 2);
}

static void print_reports_tail(const struct player_rig *rig)
{
    json_t *all = player_rig_reports(rig);
    size_t n = json_array_size(all);
    if (n) {
        char *s = json_dumps(json_array_get(all, n - 1), JSON_INDENT(1));
        printf("last report: %s\n", s);
        free(s);
    }
    json_decref(all);
}

/* Plays until `past`, failing the test with the last report if it cannot. */
static json_t *play_past(const struct player_rig *rig, double past)
{
    json_t *r = player_rig_wait(rig, played_past, &past, WAIT_S);
    if (!r || fatal(r))
        print_reports_tail(rig);
    assert_non_null(r);
    assert_false(fatal(r));
    return r;
}

/* Where the playback has to go beyond for a failover to count: past what
 * was buffered before (plus a segment that may have been in flight). */
static double beyond_buffer(const struct player_rig *rig)
{
    json_t *r = player_rig_reports(rig);
    const json_t *last = json_array_get(r, json_array_size(r) - 1);
    double past = json_number_value(json_object_get(last, "buffered_end")) + 4.0;
    if (past < current_time(last) + 4.0)
        past = current_time(last) + 4.0;
    json_decref(r);
    return past;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void player_00_install_hlsjs(void **state)
{
    (void)state;
    player_rig_need(NULL);
}

static void player_01_steering_plays_first_pathway_then_fails_over(void **state)
{
    (void)state;
    const char *need[] = {ROLLOVER "/playlist.m3u8", NULL};
    player_rig_need(need);
    char dir[] = "/tmp/playertest.XXXXXX";
    assert_non_null(mkdtemp(dir));
    printf("work dir: %s\n", dir);

    /* Three CDNs in front of one live channel (same epoch: same timeline). */
    char epoch[32];
    snprintf(epoch, sizeof epoch, "%lld", (long long)(now_ms() - 12000));
    const char *live[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360", "--live-epoch-ms",
                          epoch, NULL};
    struct cdn_proc cdn[3];
    const char *names[] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(cdn_start(&cdn[i], CDND_BIN, dir, names[i], live), 0);

    /* The page's origin serves the multivariant playlist and the steering
     * manifest; C is a pathway of the playlist but not of PATHWAY-PRIORITY. */
    struct player_rig rig;
    assert_int_equal(player_rig_start(&rig, dir), 0);
    char master[4096];
    int w = snprintf(master, sizeof master,
                     "#EXTM3U\n#EXT-X-VERSION:3\n"
                     "#EXT-X-CONTENT-STEERING:SERVER-URI=\"/steering.json\",PATHWAY-ID=\"A\"\n");
    for (int i = 0; i < 3; i++)
        w += snprintf(master + w, sizeof master - (size_t)w,
                      "#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.4d401e,mp4a.40.2\","
                      "RESOLUTION=640x360,PATHWAY-ID=\"%s\"\n%s/ch1/r360/live.m3u8\n",
                      names[i], cdn[i].base);
    assert_int_equal(cdn_write_file(rig.page_root, "master.m3u8", master), 0);
    assert_int_equal(cdn_write_file(rig.page_root, "steering.json",
                                    "{\"VERSION\":1,\"TTL\":10,\"PATHWAY-PRIORITY\":[\"A\",\"B\"]}\n"),
                     0);
    char playback[256];
    snprintf(playback, sizeof playback, "%s/master.m3u8", rig.origin.base);
    assert_int_equal(player_rig_open(&rig, playback, NULL), 0);

    /* 1. It plays, from A only. */
    double zero = 0;
    json_t *r = player_rig_wait(&rig, played_past, &zero, WAIT_S);
    if (!r)
        print_reports_tail(&rig);
    assert_non_null(r);
    assert_false(fatal(r));
    double t1 = current_time(r) + 4.0;
    json_decref(r);
    r = player_rig_wait(&rig, played_past, &t1, WAIT_S);
    if (!r)
        print_reports_tail(&rig);
    assert_non_null(r);
    assert_false(fatal(r));
    assert_string_equal(json_string_value(json_object_get(r, "pathway")), "A");
    assert_string_equal(json_string_value(json_object_get(r, "hls_version")), "1.7.4");
    json_decref(r);
    struct seen a = log_seen(&cdn[0], 0), b = log_seen(&cdn[1], 0), c = log_seen(&cdn[2], 0);
    printf("before the switch: A %zu requests (%zu segments), B %zu, C %zu\n", a.requests,
           a.segments_ok, b.requests, c.requests);
    assert_true(a.segments_ok >= 2 && a.playlists_ok >= 1);
    assert_int_equal(b.requests, 0);
    assert_int_equal(c.requests, 0);
    /* The steering manifest was asked for, for pathway A. */
    json_t *olog = cdn_jsonl(rig.origin.log), *e;
    size_t i, steering = 0;
    json_array_foreach(olog, i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "path")), "/steering.json")) {
            steering++;
            assert_non_null(strstr(json_string_value(json_object_get(e, "query")), "_HLS_pathway=A"));
        }
    }
    json_decref(olog);
    assert_true(steering >= 1);

    /* 2. A answers 503 to everything: the player moves to B by itself. */
    int64_t switched = now_ms();
    assert_int_equal(cdn_set_answer(&cdn[0], 503), 0);
    /* Whatever A delivered before (buffered up to buffered_end, plus one
     * segment that may have been in flight) plays out first; B must carry
     * playback beyond that. */
    struct failover fo = {&cdn[1], switched, beyond_buffer(&rig), "B"};
    r = player_rig_wait(&rig, failed_over, &fo, WAIT_S);
    if (!r)
        print_reports_tail(&rig);
    assert_non_null(r);
    if (fatal(r))
        print_reports_tail(&rig);
    assert_false(fatal(r));
    assert_string_equal(json_string_value(json_object_get(r, "pathway")), "B");
    b = log_seen(&cdn[1], 0);
    c = log_seen(&cdn[2], 0);
    struct seen a_after = log_seen(&cdn[0], switched);
    printf("after the switch: B %zu requests (%zu segments), first %lld ms after the switch; "
           "A answered 503 to %zu; C %zu\n",
           b.requests, b.segments_ok, (long long)(b.first_ms - switched), a_after.requests,
           c.requests);
    /* For the record (not asserted: hls.js may rightly skip ahead when
     * late): the fragments played, by media sequence and pathway. */
    json_t *frags = json_object_get(r, "frags"), *fr;
    printf("fragments loaded (sn/pathway):");
    json_array_foreach(frags, i, fr)
        printf(" %lld/%s", (long long)json_integer_value(json_object_get(fr, "sn")),
               json_string_value(json_object_get(fr, "pathway")));
    printf("\n");
    json_decref(r);
    assert_true(b.first_ms >= switched); /* B was never asked before A failed */
    assert_true(b.segments_ok >= 2);
    assert_int_equal(c.requests, 0); /* never a pathway absent from PATHWAY-PRIORITY */

    player_rig_stop(&rig);
    for (int k = 0; k < 3; k++)
        cdn_stop(&cdn[k]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The whole chain: evidence -> decide -> grant -> stepctl serve --paths ->
 * POST /v1/allocations -> playback_url in chromium.  A is excluded by its
 * MISMATCH, C is allocated (signed URLs: the service signs its live
 * playlists, CDN C checks every segment with the public key), D is the
 * fallback eligible in the same decision (unsigned).  The player plays
 * from C only; when C answers 503 it fails over to D by itself; A, which
 * has a CDN of its own on the same timeline, never sees a request. */
static void player_02_playback_url_plays_allocated_path_then_fails_over_to_admitted_only(
    void **state)
{
    (void)state;
    const char *need[] = {ROLLOVER "/playlist.m3u8", NULL};
    player_rig_need(need);
    struct ctl_world w;
    char g[33];
    serve_world_granted(&w, g);
    printf("work dir: %s\n", w.t.dir);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem "
             "2>/dev/null && openssl pkey -in rsa.pem -pubout -out rsa.pub",
             w.t.dir);
    assert_int_equal(system(cmd), 0);

    char epoch[32], pub[256];
    snprintf(epoch, sizeof epoch, "%lld", (long long)(now_ms() - 12000));
    snprintf(pub, sizeof pub, "KPLAYER=%s/rsa.pub", w.t.dir);
    const char *open_live[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360",
                               "--live-epoch-ms", epoch, NULL};
    const char *signed_live[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360",
                                 "--live-epoch-ms", epoch, "--public-key", pub, NULL};
    struct cdn_proc a, c, d;
    assert_int_equal(cdn_start(&a, CDND_BIN, w.t.dir, "A", open_live), 0);
    assert_int_equal(cdn_start(&c, CDND_BIN, w.t.dir, "C", signed_live), 0);
    assert_int_equal(cdn_start(&d, CDND_BIN, w.t.dir, "D", open_live), 0);
    char paths[4096], paths_file[256];
    const char *variant = "\"bandwidth\": 900000, \"codecs\": \"avc1.4d401e,mp4a.40.2\", "
                          "\"resolution\": \"640x360\"";
    snprintf(paths, sizeof paths,
             "{\"paths\": {"
             "\"A\": {\"renditions\": {\"r360\": {\"url\": \"%s/ch1/r360/live.m3u8\", %s}}, "
             "\"auth\": {\"type\": \"none\"}}, "
             "\"C\": {\"renditions\": {\"r360\": {\"url\": \"%s/ch1/r360/live.m3u8\", %s}}, "
             "\"auth\": {\"type\": \"cloudfront-url\", \"key_file\": \"rsa.pem\", "
             "\"key_pair_id\": \"KPLAYER\"}, \"url_ttl_s\": 300}, "
             "\"D\": {\"renditions\": {\"r360\": {\"url\": \"%s/ch1/r360/live.m3u8\", %s}}, "
             "\"auth\": {\"type\": \"none\"}}}, \"steering_ttl_s\": 10}\n",
             a.base, variant, c.base, variant, d.base, variant);
    ctl_tmp_path(&w.t, "paths.json", paths_file, sizeof paths_file);
    assert_int_equal(cdn_write_file(w.t.dir, "paths.json", paths), 0);
    /* the page's origin first: the service lets only its pages read answers */
    struct player_rig rig;
    assert_int_equal(player_rig_start(&rig, w.t.dir), 0);
    const char *extra[] = {"--paths", paths_file, "--evidence", w.ev, "--cors-origin",
                           rig.origin.base, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_t *alloc = serve_allocate(s.port, "viewer-1");
    assert_string_equal(json_string_value(json_object_get(alloc, "path_id")), "C");
    char playback[512];
    snprintf(playback, sizeof playback, "%s",
             json_string_value(json_object_get(alloc, "playback_url")));
    json_decref(alloc);
    printf("playback_url: %s\n", playback);
    assert_int_equal(player_rig_open(&rig, playback, NULL), 0);

    /* 1. It plays, from C only (every segment signed: CDN C refuses others). */
    json_t *r = play_past(&rig, 0);
    double t1 = current_time(r) + 4.0;
    json_decref(r);
    r = play_past(&rig, t1);
    assert_string_equal(json_string_value(json_object_get(r, "pathway")), "C");
    json_decref(r);
    struct seen sa = log_seen(&a, 0), sc = log_seen(&c, 0), sd = log_seen(&d, 0);
    printf("before the switch: C %zu requests (%zu segments), D %zu, A %zu\n", sc.requests,
           sc.segments_ok, sd.requests, sa.requests);
    assert_true(sc.segments_ok >= 2 && sc.playlists_ok >= 1);
    assert_int_equal(sd.requests, 0);
    assert_int_equal(sa.requests, 0);
    json_t *clog = cdn_jsonl(c.log), *e;
    size_t i;
    json_array_foreach(clog, i, e)
        assert_int_equal(json_integer_value(json_object_get(e, "status")), 200);
    json_decref(clog);

    /* 2. C answers 503: the player moves to D by itself; A never asked. */
    int64_t switched = now_ms();
    assert_int_equal(cdn_set_answer(&c, 503), 0);
    struct failover fo = {&d, switched, beyond_buffer(&rig), "D"};
    r = player_rig_wait(&rig, failed_over, &fo, WAIT_S);
    if (!r || fatal(r))
        print_reports_tail(&rig);
    assert_non_null(r);
    assert_false(fatal(r));
    assert_string_equal(json_string_value(json_object_get(r, "pathway")), "D");
    json_decref(r);
    sa = log_seen(&a, 0);
    sd = log_seen(&d, 0);
    printf("after the switch: D %zu requests (%zu segments), first %lld ms after; A %zu\n",
           sd.requests, sd.segments_ok, (long long)(sd.first_ms - switched), sa.requests);
    assert_true(sd.first_ms >= switched);
    assert_true(sd.segments_ok >= 2);
    assert_int_equal(sa.requests, 0);
    /* The page asked only the service, C and D. */
    json_t *all = player_rig_reports(&rig), *last = json_array_get(all, json_array_size(all) - 1);
    const char *origin;
    json_t *count;
    json_object_foreach(json_object_get(last, "request_counts"), origin, count)
        assert_null(strstr(origin, a.base + 7));
    json_decref(all);

    player_rig_stop(&rig);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    cdn_stop(&a);
    cdn_stop(&c);
    cdn_stop(&d);
    ctl_world_end(&w);
}


/* issue 16: the session kit (player/exactav-session.js) on the real player:
 * one allocation played cleanly through it, its CMCD v2 reports stored by
 * the service, and `stepctl qoe` counting it as one success. */
static const char kit_page[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"></head><body>\n"
    "<video id=\"video\" muted autoplay playsinline width=\"640\" height=\"360\"></video>\n"
    "<script type=\"module\">\n"
    "import Hls from './hls-esm.js';\n"
    "import { startSession } from './exactav-session.js';\n"
    "const body = await (await fetch('body.json')).json();\n"
    "startSession(Hls, body, document.getElementById('video'));\n"
    "</script></body></html>\n";

static long long qoe_member(struct ctl_world *w, const char *g, const char *key)
{
    if (ctl_run(&w->t, "qoe --db '%s' --grant %s --json", w->db, g) != 0)
        return -1;
    char *out = ctl_out(&w->t, "out");
    json_t *j = json_loads(out, 0, NULL);
    free(out);
    long long v = json_integer_value(json_object_get(j, key));
    json_decref(j);
    return v;
}

/* One world: a grant whose only path C serves live_suffix of the loopback
 * CDN, one allocation played through the kit and one never played; the
 * QoE counts are checked.  (404 playlists and segments are player_04's
 * scenarios: hls.js 1.7.4 then sends no e or sta=f record itself, the kit
 * does; see docs/player.md.) */
static void kit_world(const char *live_suffix, const char *count_key)
{
    struct ctl_world w;
    ctl_world_begin(&w);
    ctl_world_evidence(&w, "ev-d-pre", "D", "MATCH", w.now - 300000, true);
    ctl_world_evidence(&w, "ev-e-pre", "E", "MATCH", w.now - 300000, true);
    json_t *sit = serve_situation(&w, SERVE_ORDER_CDE);
    ctl_set(sit, "policy.qoe.classes",
            json_pack("{s:s,s:s}", "exit_before_start", "failure", "autoplay_refused", "excluded"));
    ctl_set(sit, "policy.qoe.min_completeness", json_string("0.9"));
    char d[33], g[33];
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "", g), 0);
    printf("work dir: %s\n", w.t.dir);
    char epoch[32];
    snprintf(epoch, sizeof epoch, "%lld", (long long)(now_ms() - 12000));
    const char *open_live[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360",
                               "--live-epoch-ms", epoch, NULL};
    struct cdn_proc c;
    assert_int_equal(cdn_start(&c, CDND_BIN, w.t.dir, "C", open_live), 0);
    char paths[1024], paths_file[256];
    snprintf(paths, sizeof paths,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": {\"url\": \"%s/ch1/r360/%s\", "
             "\"bandwidth\": 900000, \"codecs\": \"avc1.4d401e,mp4a.40.2\", \"resolution\": "
             "\"640x360\"}}, \"auth\": {\"type\": \"none\"}}}}\n",
             c.base, live_suffix);
    ctl_tmp_path(&w.t, "paths.json", paths_file, sizeof paths_file);
    assert_int_equal(cdn_write_file(w.t.dir, "paths.json", paths), 0);
    struct player_rig rig; /* its origin is the one --cors-origin lets read answers */
    assert_int_equal(player_rig_start(&rig, w.t.dir), 0);
    const char *extra[] = {"--paths", paths_file, "--evidence", w.ev, "--cors-origin",
                           rig.origin.base, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "viewer-unused")); /* never played: unused */
    json_t *alloc = serve_allocate(s.port, "viewer-q1");
    char *body = json_dumps(alloc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(alloc);

    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cp '%s/node_modules/hls.js/dist/hls.mjs' '%s/hls-esm.js' && "
                              "cp '%s/../../player/exactav-session.js' '%s/'",
             PLAYER_NODE_DIR, rig.page_root, PLAYER_SOURCE_DIR, rig.page_root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(cdn_write_file(rig.page_root, "body.json", body), 0);
    assert_int_equal(cdn_write_file(rig.page_root, "player.html", kit_page), 0);
    free(body);
    assert_int_equal(player_rig_open(&rig, "unused", NULL), 0);
    long long n = 0;
    for (int i = 0; i < WAIT_S && n < 1; i++) {
        sleep(1);
        n = qoe_member(&w, g, count_key);
    }
    assert_int_equal(n, 1);
    assert_int_equal(qoe_member(&w, g, "attempts"), 1);
    assert_int_equal(qoe_member(&w, g, "unused"), 1);
    assert_int_equal(qoe_member(&w, g, "failures"), 0);

    /* What hls.js sent: play states s then p with sn and ts, through the
     * kit's report target only (no CMCD on the media requests). */
    assert_true(ctl_query_int(w.db, "SELECT count(*) FROM session_reports WHERE sta = 's' AND "
                                    "sn IS NOT NULL AND ts IS NOT NULL") >= 1);
    assert_true(ctl_query_int(w.db, "SELECT count(*) FROM session_reports WHERE sta = 'p'") >= 1);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM sessions WHERE "
                                         "master_fetched_at_ms IS NOT NULL"), 1);
    json_t *reqs = cdn_jsonl(c.log);
    assert_true(json_array_size(reqs) > 0);
    size_t i;
    json_t *e;
    json_array_foreach(reqs, i, e)
    {
        const char *query = json_string_value(json_object_get(e, "query"));
        assert_null(query ? strstr(query, "CMCD") : NULL);
    }
    json_decref(reqs);
    player_rig_stop(&rig);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    cdn_stop(&c);
    ctl_world_end(&w);
}

static void player_03_session_kit_reports_a_clean_play_that_qoe_counts(void **state)
{
    (void)state;
    const char *need[] = {ROLLOVER "/playlist.m3u8", NULL};
    player_rig_need(need);
    kit_world("live.m3u8", "successes");
}

static bool is_cors_report(const json_t *r, void *ctx)
{
    (void)ctx;
    const char *kind = json_string_value(json_object_get(r, "kind"));
    return kind && !strcmp(kind, "cors");
}

/* A page origin of its own (dir/name) serving tests/player/page/cors.html
 * as player.html, with the allocation body of id name. */
static void cors_page(struct ctl_world *w, struct player_rig *rig, const char *name)
{
    char dir[PATH_MAX], cmd[2 * PATH_MAX + 64], body[512];
    snprintf(dir, sizeof dir, "%s/%s", w->t.dir, name);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(player_rig_start(rig, dir), 0);
    snprintf(cmd, sizeof cmd, "cp '%s/page/cors.html' '%s/player.html'", PLAYER_SOURCE_DIR,
             rig->page_root);
    assert_int_equal(system(cmd), 0);
    snprintf(body, sizeof body,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"isp-x\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}",
             name);
    assert_int_equal(cdn_write_file(rig->page_root, "body.json", body), 0);
}

/* Issue 19, item 9: every answer carried Access-Control-Allow-Origin: *, so
 * any page on the web could allocate and read the signed answer.  In the
 * real chromium: a page of the --cors-origin origin allocates and reads
 * the 201 (its preflight allowed Content-Type and Authorization); a page
 * of another origin cannot read anything, and since its preflight is not
 * answered for it, its POST is never sent: nothing is stored for it. */
static void player_05_only_a_cors_origin_page_reads_the_service(void **state)
{
    (void)state;
    player_rig_need(NULL);
    struct ctl_world w;
    char g[33], api[64];
    serve_world_granted(&w, g);
    struct player_rig allowed, other;
    cors_page(&w, &allowed, "page-allowed");
    cors_page(&w, &other, "page-other");
    const char *extra[] = {"--cors-origin", allowed.origin.base, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    snprintf(api, sizeof api, "http://127.0.0.1:%d", s.port);

    assert_int_equal(player_rig_open(&allowed, api, NULL), 0);
    json_t *r = player_rig_wait(&allowed, is_cors_report, NULL, WAIT_S);
    assert_non_null(r);
    char *t = json_dumps(r, JSON_COMPACT);
    printf("allowed origin %s: %s\n", allowed.origin.base, t);
    free(t);
    assert_true(json_is_true(json_object_get(r, "read")));
    assert_int_equal(json_integer_value(json_object_get(r, "status")), 201);
    json_decref(r);
    player_rig_stop(&allowed);

    assert_int_equal(player_rig_open(&other, api, NULL), 0);
    r = player_rig_wait(&other, is_cors_report, NULL, WAIT_S);
    assert_non_null(r);
    t = json_dumps(r, JSON_COMPACT);
    printf("other origin %s: %s\n", other.origin.base, t);
    free(t);
    assert_false(json_is_true(json_object_get(r, "read")));
    assert_null(json_object_get(r, "status"));
    assert_non_null(json_object_get(r, "error"));
    json_decref(r);
    player_rig_stop(&other);

    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations WHERE id = "
                                         "'page-allowed'"),
                     1);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), 1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(player_00_install_hlsjs),
        cmocka_unit_test(player_01_steering_plays_first_pathway_then_fails_over),
        cmocka_unit_test_teardown(
            player_02_playback_url_plays_allocated_path_then_fails_over_to_admitted_only,
            kill_leftovers),
        cmocka_unit_test_teardown(player_03_session_kit_reports_a_clean_play_that_qoe_counts,
                                  kill_leftovers),
        cmocka_unit_test_teardown(player_05_only_a_cors_origin_page_reads_the_service,
                                  kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
