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
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "player_rig.h"

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
};

/* The player loads from B, B has served segments since the switch, and
 * playback went on past `past` (beyond anything A could have buffered). */
static bool failed_over(const json_t *r, void *ctx)
{
    struct failover *f = ctx;
    const char *pathway = json_string_value(json_object_get(r, "pathway"));
    return fatal(r) || (pathway && !strcmp(pathway, "B") && current_time(r) > f->past &&
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
    r = player_rig_reports(&rig);
    const json_t *last = json_array_get(r, json_array_size(r) - 1);
    double past = json_number_value(json_object_get(last, "buffered_end")) + 4.0;
    if (past < current_time(last) + 4.0)
        past = current_time(last) + 4.0;
    json_decref(r);
    struct failover fo = {&cdn[1], switched, past};
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

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(player_00_install_hlsjs),
        cmocka_unit_test(player_01_steering_plays_first_pathway_then_fails_over),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
