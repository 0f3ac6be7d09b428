/* `exactav canary` on an fMP4 (CMAF) live rendition, end to end on
 * loopback: the stream is made here by FFmpeg (a fragmented MP4 of 0.5 s
 * fragments, cut into an init segment and 2 s media segments at its key
 * frames as a CMAF packager does), exactav-testd serves it as a live
 * LL-HLS playlist with EXT-X-MAP whose parts are the segments' fragments,
 * as the reference and as a CDN path.  Issue 20: the canary reads fMP4
 * references (their init segment first) and candidates, and checks the
 * parts of an fMP4 segment against the reference and against their parent.
 * Nothing here asserts on durations: waits poll for rows. */
#include "canary_test.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canary_live.h"
#include "fetch.h"

#define SEGMENTS_MAX 16
#define KEYS_MAX 64

static int64_t jint(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* 8 s of 320x180 at 30 fps, a key frame every 2 s, AAC stereo, fragmented
 * every 0.5 s; `box` draws a red box on every picture (other pixels, the
 * same structure and times). */
static void encode(const char *out, bool box)
{
    assert_int_equal(live_sh("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x180:rate=30 -f lavfi -i "
                             "'sine=frequency=440:sample_rate=48000,aformat=channel_layouts=stereo' -t 8 %s "
                             "-c:v libx264 -g 60 -keyint_min 60 -sc_threshold 0 -bf 2 -pix_fmt yuv420p -c:a aac "
                             "-b:a 96k -threads 1 -fflags +bitexact -movflags "
                             "+frag_keyframe+empty_moov+default_base_moof -frag_duration 500000 -f mp4 %s",
                             box ? "-vf drawbox=x=8:y=8:w=40:h=40:color=red:t=fill" : "", out),
                     0);
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    uint8_t *d = malloc((size_t)n);
    assert_non_null(d);
    assert_int_equal(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return d;
}

static void write_all(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The byte positions of the video key frames (ffprobe, demux order). */
static size_t key_positions(const char *src, long long *pos)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ffprobe -v error -select_streams v:0 -show_entries packet=pos,flags -of csv=p=0 %s",
             src);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[128];
    size_t n = 0;
    while (fgets(line, sizeof line, p))
        if (strstr(line, ",K") && n < KEYS_MAX)
            pos[n++] = atoll(line);
    assert_int_equal(pclose(p), 0);
    return n;
}

/* src cut as a CMAF packager cuts: dir/init.mp4 (ftyp + moov), and
 * dir/<prefix>K.m4s the fragments (moof + mdat) from the K-th key frame's
 * fragment to the next's; the offsets of the segments' starts in *starts.
 * dir/playlist.m3u8 lists them (2 s each) when prefix is "s".  The number
 * of segments. */
static size_t cut(const char *src, const char *dir, const char *prefix)
{
    size_t len, ns = 0;
    uint8_t *d = read_all(src, &len);
    long long keys[KEYS_MAX];
    size_t nk = key_positions(src, keys);
    size_t starts[SEGMENTS_MAX + 1], init_end = 0, media_end = 0, prev_moof = 0;
    for (size_t at = 0; at + 8 <= len;) {
        size_t n = be32(d + at);
        assert_true(n >= 8 && n <= len - at);
        const uint8_t *type = d + at + 4;
        if (!memcmp(type, "ftyp", 4) || !memcmp(type, "moov", 4))
            init_end = at + n;
        if (!memcmp(type, "moof", 4))
            prev_moof = at;
        if (!memcmp(type, "mdat", 4)) {
            media_end = at + n; /* what follows the last mdat (mfra) is not media */
            for (size_t i = 0; i < nk; i++)
                if (keys[i] >= (long long)at && keys[i] < (long long)(at + n) && ns < SEGMENTS_MAX)
                    starts[ns++] = prev_moof;
        }
        at += n;
    }
    starts[ns] = media_end;
    assert_true(ns >= 3);
    char path[512];
    snprintf(path, sizeof path, "%s/init.mp4", dir);
    write_all(path, d, init_end);
    char playlist[2048];
    int used = snprintf(playlist, sizeof playlist,
                        "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n"
                        "#EXT-X-MAP:URI=\"init.mp4\"\n");
    for (size_t k = 0; k < ns; k++) {
        snprintf(path, sizeof path, "%s/%s%zu.m4s", dir, prefix, k);
        write_all(path, d + starts[k], starts[k + 1] - starts[k]);
        used += snprintf(playlist + used, sizeof playlist - (size_t)used, "#EXTINF:2.000,\n%s%zu.m4s\n", prefix, k);
    }
    snprintf(path, sizeof path, "%s/playlist.m3u8", dir);
    if (!strcmp(prefix, "s")) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(playlist, f);
        assert_int_equal(fclose(f), 0);
    }
    free(d);
    return ns;
}

/* The offset of the `index`-th top-level moof of a segment file. */
static size_t moof_at(const uint8_t *d, size_t len, int index)
{
    for (size_t at = 0; at + 8 <= len; at += be32(d + at))
        if (!memcmp(d + at + 4, "moof", 4) && index-- == 0)
            return at;
    fail_msg("no moof %d", index);
    return 0;
}

/* Part j of 2 of a segment file as exactav-testd cuts it (fragments i *
 * 2 / F), taken from the other encode's segment: the same boxes, times and
 * sizes' layout, other pixels. */
static void other_part(const char *src, const char *dst, int j)
{
    size_t len;
    uint8_t *d = read_all(src, &len);
    int frags = 0;
    for (size_t at = 0; at + 8 <= len; at += be32(d + at))
        frags += !memcmp(d + at + 4, "moof", 4);
    assert_true(frags >= 2);
    size_t from = j == 0 ? 0 : moof_at(d, len, frags * j / 2);
    size_t to = j == 1 ? len : moof_at(d, len, frags * (j + 1) / 2);
    write_all(dst, d + from, to - from);
    free(d);
}

static void target(char *buf, size_t n, const char *path_id, const char *candidate, const char *reference)
{
    snprintf(buf, n,
             "{\"path_id\": \"%s\", \"channel\": \"live\", \"rendition\": \"180p\", \"program_version\": \"v1\","
             " \"candidate\": \"%s\", \"reference\": \"%s\"}",
             path_id, candidate, reference);
}

/* canary_54: path a delivers the reference's fMP4 segments untouched,
 * except part 1 (of 2) of segment K, which comes from the other encode:
 * every other segment MATCHes (its parts too, known from their bytes), and
 * K is MISMATCH parts_differ_from_segment with part_index 1, its parent
 * segment MATCH; container fmp4 everywhere. */
static void canary_54_fmp4_ll_hls_parts_against_reference_and_parent(void **state)
{
    (void)state;
    char src[] = "/tmp/exactav-fmp4-XXXXXX";
    assert_non_null(mkdtemp(src));
    char clean[600], boxed[600];
    snprintf(clean, sizeof clean, "%s/clean.mp4", src);
    snprintf(boxed, sizeof boxed, "%s/boxed.mp4", src);
    encode(clean, false);
    encode(boxed, true);
    size_t n = cut(clean, src, "s");
    assert_int_equal(cut(boxed, src, "b"), n);
    char playlist[600];
    snprintf(playlist, sizeof playlist, "%s/playlist.m3u8", src);
    struct live l;
    live_start_ll(&l, playlist, 2);
    json_t *st = live_get_json(&l, "_control/status");
    int64_t k = jint(st, "edge") + 2;
    json_decref(st);
    while (k % (int64_t)n == 0) /* not at the loop's discontinuity */
        k++;
    char seg[640], part[256];
    snprintf(seg, sizeof seg, "%s/b%lld.m4s", src, (long long)(k % (int64_t)n));
    live_path(&l, "part.m4s", part, sizeof part);
    other_part(seg, part, 1);
    json_decref(live_get_json(&l, "_control/tamper?path=a&seq=%lld&part=1&file=part.m4s", (long long)k));

    char t1[1024], url[256], ref[256], cfg[2048], args[512];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", l.port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_live/a/playlist.m3u8", l.port);
    long status = 0;
    char *body = live_get(url, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "#EXT-X-MAP:URI=\"init.mp4\""));
    assert_non_null(strstr(body, ".m4s\",INDEPENDENT=YES"));
    free(body);
    target(t1, sizeof t1, "cdn-f", url, ref);
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
                                 " json_extract(report, '$.parts.container') AS parts_container,"
                                 " json_extract(report, '$.parts.reported') AS reported,"
                                 " json_extract(report, '$.parts.segment.verdict') AS segment,"
                                 " json_extract(report, '$.parts.against_reference.verdict') AS vs_ref,"
                                 " json_extract(report, '$.parts.against_segment.by') AS by"
                                 " FROM evidence ORDER BY media_sequence");
    size_t i;
    json_t *r;
    bool seen = false;
    int with_parts = 0;
    json_array_foreach(rows, i, r) {
        char *text = json_dumps(r, JSON_COMPACT);
        print_message("%s\n", text);
        free(text);
        assert_string_equal(jstr(r, "container"), "fmp4");
        if (jint(r, "media_sequence") == k) {
            seen = true;
            assert_string_equal(jstr(r, "verdict"), "MISMATCH");
            assert_string_equal(jstr(r, "reason"), "parts_differ_from_segment");
            assert_int_equal(jint(r, "part_index"), 1);
            assert_string_equal(jstr(r, "parts_container"), "fmp4");
            assert_string_equal(jstr(r, "segment"), "MATCH");
            assert_string_equal(jstr(r, "vs_ref"), "MISMATCH");
            assert_string_equal(jstr(r, "by"), "decode");
            continue;
        }
        assert_string_equal(jstr(r, "verdict"), "MATCH");
        if (jint(r, "count") == 2) {
            with_parts++;
            assert_string_equal(jstr(r, "vs_ref"), "MATCH");
            assert_string_equal(jstr(r, "by"), "bytes");
        }
    }
    json_decref(rows);
    assert_true(seen);
    assert_true(with_parts >= 1);
    live_stop(&l);
    live_sh("rm -rf %s", src);
}

int main(int argc, char **argv)
{
    fetch_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(canary_54_fmp4_ll_hls_parts_against_reference_and_parent, live_teardown),
    };
    int rc = canary_test_main("canary_fmp4", tests, sizeof tests / sizeof tests[0], argc, argv);
    fetch_global_cleanup();
    return rc;
}
