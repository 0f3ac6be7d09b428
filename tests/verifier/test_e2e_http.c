/* test_e2e_http.c - exactav verify through HTTP and HLS, end to end: the
 * project's own server (exactav-testd) on 127.0.0.1 serves fixtures packaged
 * as HLS, the real rollover stream of the corpus, and broken deliveries. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "test_skip.h"
#include "testd_run.h"

struct env {
    char dir[64];
    pid_t server;
    int port;
};

static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs exactav; returns the exit code, *out the JSON on stdout (or NULL),
 * *errtext stderr when asked. */
static int run(json_t **out, char **errtext, const char *fmt, ...)
{
    char args[8192], cmd[8600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s >/tmp/e2e-http-out.$$ 2>/tmp/e2e-http-err.$$; rc=$?; "
             "cat /tmp/e2e-http-out.$$; cat /tmp/e2e-http-err.$$ >&2; rm -f /tmp/e2e-http-*.$$; exit $rc",
             EXACTAV_BIN, args);
    char *full = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&full, &len);
    FILE *p = popen(cmd, "r");
    int c;
    while ((c = fgetc(p)) != EOF)
        fputc(c, mem);
    int st = pclose(p);
    fclose(mem);
    if (out)
        *out = json_loadb(full, len, 0, NULL);
    if (errtext)
        *errtext = NULL;
    free(full);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *jstr(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/exactav-http-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    const char *fx = FIXTURES_DIR;
    /* CDN content: the fixtures packaged as HLS by stream copy */
    assert_int_equal(sh("cd %s && mkdir -p c t bad && "
                        "ffmpeg -nostdin -hide_banner -loglevel error -i %s/ref.ts -map 0 -c copy -f hls -hls_time 1 "
                        "-hls_list_size 0 -hls_segment_filename 'c/s%%03d.ts' c/index.m3u8 && "
                        "ffmpeg -nostdin -hide_banner -loglevel error -i %s/cand_pixels.ts -map 0 -c copy -f hls -hls_time 1 "
                        "-hls_list_size 0 -hls_segment_filename 't/s%%03d.ts' t/index.m3u8",
                        e->dir, fx, fx), 0);
    /* issue 8: separately muxed segments (continuity counters restart in
     * each), and one file in byte ranges cut inside TS packets and PES */
    assert_int_equal(sh("cd %s && mkdir og && cp %s/ref_og.ts %s/ref_og_seg?.ts og/ && cd og && "
                        "size=$(stat -c %%s ref_og.ts) && "
                        "printf '#EXTM3U\\n#EXT-X-TARGETDURATION:2\\n#EXT-X-MEDIA-SEQUENCE:0\\n' > head && "
                        "{ cat head; for i in 0 1 2; do printf '#EXTINF:1.0,\\nref_og_seg%%d.ts\\n' $i; done; "
                        "  echo '#EXT-X-ENDLIST'; } > segs.m3u8 && "
                        "{ cat head; printf '#EXTINF:1.0,\\n#EXT-X-BYTERANGE:30001@0\\nref_og.ts\\n"
                        "#EXTINF:1.0,\\n#EXT-X-BYTERANGE:30000\\nref_og.ts\\n"
                        "#EXTINF:1.0,\\n#EXT-X-BYTERANGE:%%d\\nref_og.ts\\n#EXT-X-ENDLIST\\n' $((size - 60001)); } "
                        "> ranges.m3u8 && "
                        "{ cat head; printf '#EXTINF:1.0,\\n#EXT-X-BYTERANGE:30001@0\\nref_og.ts\\n"
                        "#EXTINF:1.0,\\n#EXT-X-BYTERANGE:%%d@30189\\nref_og.ts\\n#EXT-X-ENDLIST\\n' $((size - 30189)); } "
                        "> gap.m3u8", e->dir, fx, fx), 0);
    /* broken deliveries */
    assert_int_equal(sh("cd %s && printf '\\357\\273\\277' > bad/bom.m3u8 && cat c/index.m3u8 >> bad/bom.m3u8 && "
                        "sed 's|^#EXT-X-MEDIA-SEQUENCE:0|&\\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\"|' c/index.m3u8 > c/key.m3u8 && "
                        "sed '0,/^s001.ts/s//s001.ts\\n#EXT-X-DISCONTINUITY/' c/index.m3u8 > c/disc.m3u8 && "
                        "printf '#EXTM3U\\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\\nc/index.m3u8\\n' > master.m3u8",
                        e->dir), 0);
    e->port = testd_run_start(TESTD_BIN, e->dir, &e->server);
    assert_true(e->port > 0);
    assert_int_equal(sh("%s bind --channel ch1 --program-version pv1 --rendition 360p --out %s/ref.json %s/ref.ts "
                        ">/dev/null", EXACTAV_BIN, e->dir, fx), 0);
    assert_int_equal(sh("%s bind --channel ch1 --program-version pv1 --rendition 144p --out %s/og.json %s/ref_og.ts "
                        ">/dev/null", EXACTAV_BIN, e->dir, fx), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    testd_run_stop(e->server);
    sh("rm -rf %s", e->dir);
    free(e);
    return 0;
}

#define URL "http://127.0.0.1:%d/"

static void t01_playlist_match_and_secrets_never_stored(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --evidence %s/ev.db --path-id cdn-c "
                         "--keep-param keep --candidate '" URL "c/index.m3u8?Policy=SECRETP&Signature=SECRETS"
                         "&Key-Pair-Id=SECRETK&token=SECRETT&keep=1'", e->dir, e->dir, e->port), 0);
    assert_string_equal(jstr(r, "verdict", NULL), "MATCH");
    assert_int_equal(json_array_size(json_object_get(r, "fetches")), 5);   /* playlist + 4 segments */
    char *text = json_dumps(r, 0);
    assert_null(strstr(text, "SECRET"));
    assert_non_null(strstr(text, "keep=1"));
    free(text);
    json_decref(r);
    /* nothing secret in the database either */
    assert_int_equal(sh("sqlite3 %s/ev.db 'select * from evidence; select * from fetches;' | grep -c SECRET", e->dir), 1);
    assert_int_equal(sh("test \"$(sqlite3 %s/ev.db 'select count(*) from fetches')\" = 5", e->dir), 0);
}

static void t02_tampered_path_mismatches(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "t/index.m3u8", e->dir, e->port), 1);
    assert_string_equal(jstr(r, "reason", NULL), "video_pixels");
    json_decref(r);
}

static void t03_failed_deliveries_are_unknown_never_mismatch(void **state)
{
    struct env *e = *state;
    static const struct { const char *path, *reason; } cases[] = {
        {"status/404", "http_error"},
        {"status/500", "http_error"},
        {"short/c/s000.ts", "short_transfer"},
        {"signed/c/index.m3u8", "http_error"},
        {"bad/bom.m3u8", "playlist_bom"},
        {"c/key.m3u8", "key_unavailable"},      /* AES-128 whose key answers 404 */
        {"c/disc.m3u8", "interval_crosses_discontinuity"},
        {"c/../../etc/passwd", "http_error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *r;
        int rc = run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "%s", e->dir, e->port, cases[i].path);
        print_message("  %-24s exit %d %s\n", cases[i].path, rc, r ? jstr(r, "reason", NULL) : "-");
        assert_int_equal(rc, 2);
        assert_string_equal(jstr(r, "reason", NULL), cases[i].reason);
        json_decref(r);
    }
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --timeout 1 --reference %s/ref.json --candidate " URL "slow/c/s000.ts",
                         e->dir, e->port), 2);
    assert_string_equal(jstr(r, "verdict", NULL), "UNKNOWN");
    json_decref(r);
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --candidate http://127.0.0.1:1/x.ts", e->dir), 2);
    assert_string_equal(jstr(r, "reason", NULL), "connect_error");
    json_decref(r);
}

static void t04_master_playlist_is_a_usage_error(void **state)
{
    struct env *e = *state;
    assert_int_equal(run(NULL, NULL, "verify --reference %s/ref.json --candidate " URL "master.m3u8", e->dir, e->port), 64);
    assert_int_equal(sh("%s verify --reference %s/ref.json --candidate " URL "master.m3u8 2>&1 | grep -q 'BANDWIDTH=800000'",
                        EXACTAV_BIN, e->dir, e->port), 0);
}

static void t05_redirects_are_followed_and_recorded(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "redirect/2/c/index.m3u8",
                         e->dir, e->port), 0);
    json_t *first = json_array_get(json_object_get(r, "fetches"), 0);
    assert_int_equal(json_array_size(json_object_get(first, "redirects")), 2);
    json_decref(r);
    assert_int_equal(run(&r, NULL, "verify --json --max-redirects 1 --reference %s/ref.json --candidate "
                         URL "redirect/3/c/index.m3u8", e->dir, e->port), 2);
    assert_string_equal(jstr(r, "reason", NULL), "too_many_redirects");
    json_decref(r);
}

static void t06_media_sequence_selects_segments(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --media-sequence 0:3 --reference %s/ref.json --candidate " URL "c/index.m3u8",
                         e->dir, e->port), 0);
    json_decref(r);
    /* segments 1..3 only, against the whole reference: frames of segment 0 are missing */
    assert_int_equal(run(&r, NULL, "verify --json --media-sequence 1:3 --reference %s/ref.json --candidate " URL "c/index.m3u8",
                         e->dir, e->port), 1);
    assert_string_equal(jstr(r, "video", "reason"), "video_missing_frames");
    json_decref(r);
    assert_int_equal(run(&r, NULL, "verify --json --media-sequence 7 --reference %s/ref.json --candidate " URL "c/index.m3u8",
                         e->dir, e->port), 2);
    assert_string_equal(jstr(r, "reason", NULL), "segment_not_in_playlist");
    json_decref(r);
}

static void t07_concurrent_verifiers_share_one_evidence_file(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("for i in 1 2 3 4 5 6; do %s verify --no-progress --reference %s/ref.json --candidate " URL
                        "c/index.m3u8 --evidence %s/conc.db --path-id p$i >/dev/null & done; wait",
                        EXACTAV_BIN, e->dir, e->port, e->dir), 0);
    assert_int_equal(sh("test \"$(sqlite3 %s/conc.db 'select count(distinct path_id) from evidence')\" = 6", e->dir), 0);
    assert_int_equal(sh("test \"$(sqlite3 %s/conc.db 'select count(*) from fetches')\" = 30", e->dir), 0);
}

static void t08_imported_report_keeps_its_observation_time(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("%s verify --json --reference %s/ref.json --candidate " URL "c/index.m3u8 > %s/rep.json",
                        EXACTAV_BIN, e->dir, e->port, e->dir), 0);
    assert_int_equal(sh("sleep 1; %s evidence import %s/rep.json --evidence %s/imp.db >/dev/null && "
                        "%s evidence import %s/rep.json --evidence %s/imp.db >/dev/null",
                        EXACTAV_BIN, e->dir, e->dir, EXACTAV_BIN, e->dir, e->dir), 0);
    assert_int_equal(sh("test \"$(sqlite3 %s/imp.db 'select count(*) from evidence')\" = 1", e->dir), 0);
    assert_int_equal(sh("test \"$(sqlite3 %s/imp.db 'select observed_at_ms from evidence')\" = "
                        "\"$(grep -m1 '\"observed_at_ms\"' %s/rep.json | tr -dc 0-9)\"", e->dir, e->dir), 0);
    assert_int_equal(sh("test \"$(sqlite3 %s/imp.db 'select recorded_at_ms - observed_at_ms >= 1000 from evidence')\" = 1",
                        e->dir), 0);
}

/* The corpus's rollover stream, when the corpus is there. */
static void t09_corpus_rollover_stream_over_http(void **state)
{
    struct env *e = *state;
    char seg[512];
    snprintf(seg, sizeof seg, "%s/media/hls-ts-rollover", CORPUS_DIR);
    /* (main skips this test before the server starts when the corpus is absent) */
    /* the reference: the provider's segments 27..29 (PTS wraps inside 28) */
    assert_int_equal(sh("cp -r %s %s/roll && cd %s/roll && %s bind --channel live --program-version v1 --rendition 360p "
                        "--media-sequence 3:5 --out %s/roll.json 360p30_h264_48k_160_aac_ts-0000000027.ts "
                        "360p30_h264_48k_160_aac_ts-0000000028.ts 360p30_h264_48k_160_aac_ts-0000000029.ts >/dev/null",
                        seg, e->dir, e->dir, EXACTAV_BIN, e->dir), 0);
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/roll.json --candidate " URL "roll/playlist.m3u8",
                         e->dir, e->port), 0);
    assert_int_equal(json_array_size(json_object_get(r, "fetches")), 4);
    assert_true(json_integer_value(json_object_get(json_object_get(r, "interval"), "start")) >
                json_integer_value(json_object_get(json_object_get(r, "interval"), "end")));
    json_decref(r);
    /* one segment later: other pictures at other times */
    assert_int_equal(run(&r, NULL, "verify --json --media-sequence 4:6 --reference %s/roll.json --candidate "
                         URL "roll/playlist.m3u8", e->dir, e->port), 1);
    json_decref(r);
}

/* Issue 8, classes 6 and 7: segment joins are invisible.  Segments that
 * each restart their continuity counters, and byte ranges of one file cut
 * inside TS packets and PES, are the same stream; a byte range that skips
 * bytes is not. */
static void t10_segment_joins_and_byte_ranges_are_invisible(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/og.json --candidate " URL "og/segs.m3u8",
                         e->dir, e->port), 0);
    assert_int_equal(json_array_size(json_object_get(r, "fetches")), 4);
    json_decref(r);
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/og.json --candidate " URL "og/ranges.m3u8",
                         e->dir, e->port), 0);
    assert_int_equal(json_array_size(json_object_get(r, "fetches")), 4);
    json_decref(r);
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/og.json --candidate " URL "og/gap.m3u8",
                         e->dir, e->port), 2);
    assert_string_equal(jstr(r, "verdict", NULL), "UNKNOWN");
    json_decref(r);
}

/* Issue 8, class 3: one real segment bound (the rollover stream's segment
 * 28, where the PTS wraps) against the whole live playlist: the next
 * segment's frames are not "extra", the previous ones are not compared. */
static void t11_corpus_one_segment_against_the_live_playlist(void **state)
{
    struct env *e = *state;
    char seg[512];
    snprintf(seg, sizeof seg, "%s/media/hls-ts-rollover", CORPUS_DIR);
    /* (main skips this test before the server starts when the corpus is absent) */
    assert_int_equal(sh("mkdir -p %s/live && cp -r %s/. %s/live/ && cd %s/live && %s bind --channel live "
                        "--program-version v1 --rendition 360p --out %s/seg28.json "
                        "360p30_h264_48k_160_aac_ts-0000000028.ts >/dev/null",
                        e->dir, seg, e->dir, e->dir, EXACTAV_BIN, e->dir), 0);
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/seg28.json --candidate " URL "live/playlist.m3u8",
                         e->dir, e->port), 0);
    assert_int_equal(json_array_size(json_object_get(r, "fetches")), 11);
    assert_true(json_integer_value(json_object_get(json_object_get(r, "video"), "compared_frames")) > 0);
    assert_true(json_integer_value(json_object_get(json_object_get(r, "audio"), "reference_samples")) > 0);
    json_decref(r);
}

/* RFC 9110 lets a server compress a playlist: exactav asks for gzip and
 * deflate on playlists (never on segments), records the encoding, and bounds
 * the decoded size as before (a gzip bomb is too large, never read whole). */
static void t12_compressed_playlists_are_read_and_bounded(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("cd %s/c && gzip -9 -k -f index.m3u8 && "
                        "{ cat index.m3u8; yes '# padding that compresses well' | head -c 8000000; } | gzip -9 > bomb.m3u8.gz && "
                        "cp index.m3u8 bomb.m3u8", e->dir), 0);
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "gzip/c/index.m3u8",
                         e->dir, e->port), 0);
    assert_string_equal(jstr(r, "verdict", NULL), "MATCH");
    json_t *fetches = json_object_get(r, "fetches");
    assert_string_equal(jstr(json_array_get(fetches, 0), "headers", "content_encoding"), "gzip");
    for (size_t i = 1; i < json_array_size(fetches); i++)   /* segments: asked and served as they are */
        assert_true(json_is_null(json_object_get(json_object_get(json_array_get(fetches, i), "headers"),
                                                 "content_encoding")));
    json_decref(r);
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "gzip/c/bomb.m3u8",
                         e->dir, e->port), 2);
    assert_string_equal(jstr(r, "verdict", NULL), "UNKNOWN");
    assert_string_equal(jstr(r, "reason", NULL), "playlist_invalid");   /* HLS_MAX_PLAYLIST_BYTES, decoded */
    char *text = json_dumps(r, 0);
    assert_non_null(strstr(text, "playlist larger than"));
    free(text);
    json_decref(r);
}

/* Issue 20: AES-128 segments (RFC 8216 4.3.2.4, 5.2) are decrypted with
 * their key, the IV from the tag or the media sequence number, a key tag in
 * force until the next; the key and its URI are nowhere in the report, the
 * evidence or the log.  FFmpeg's own HLS demuxer decodes the same encrypted
 * playlist to the same frames as the plain one (the oracle), and a key that
 * is missing, short or wrong, or a ciphertext with a flipped byte, is never
 * MATCH. */
static void t13_aes128_segments_are_decrypted_and_keys_never_stored(void **state)
{
    struct env *e = *state;
    const char *k1 = "000102030405060708090a0b0c0d0e0f", *k2 = "f0e0d0c0b0a090807060504030201000";
    const char *iv2 = "00112233445566778899aabbccddeeff";
    const char *tag = "#EXT-X-KEY:METHOD=AES-128,URI=\"k1.bin?token=SECRETKEYTOKEN\"";
    assert_int_equal(sh("cd %s && mkdir -p enc && cd enc && "
                        "perl -e 'print pack(\"H*\", $ARGV[0])' %s > k1.bin && perl -e 'print pack(\"H*\", $ARGV[0])' %s > k2.bin && "
                        "printf 0123456789abcdef > bad.bin && printf 0123456789abcde > short.bin && "
                        "for i in 0 1; do openssl enc -aes-128-cbc -K %s -iv $(printf %%032x $i) "
                        "  -in ../c/s00$i.ts -out s00$i.ts; done && "
                        "openssl enc -aes-128-cbc -K %s -iv %s -in ../c/s002.ts -out s002.ts && "
                        "openssl enc -aes-128-cbc -K %s -iv $(printf %%032x 3) -in ../c/s003.ts -out s003.ts && "
                        "sed -e 's|^#EXT-X-MEDIA-SEQUENCE:0|&\\n%s|' "
                        "    -e '/^s002.ts/i %s,IV=0x%s' "
                        "    -e '/^s003.ts/i #EXT-X-KEY:METHOD=AES-128,URI=\"k2.bin\"' ../c/index.m3u8 > index.m3u8 && "
                        "for k in bad missing short; do sed \"s|k1.bin|$k.bin|\" index.m3u8 > $k.m3u8; done && "
                        "sed 's|AES-128|SAMPLE-AES|' index.m3u8 > sample.m3u8 && "
                        "mkdir t && cp s00?.ts k?.bin t/ && cp index.m3u8 t/ && "
                        "perl -e 'open F, \"+<\", $ARGV[0]; seek F, 5000, 0; read F, $b, 1; seek F, 5000, 0; print F chr(ord($b) ^ 1)' t/s001.ts",
                        e->dir, k1, k2, k1, k1, iv2, k2, tag, tag, iv2), 0);
    /* the oracle: FFmpeg's HLS demuxer gives the plain playlist's frames */
    assert_int_equal(sh("for p in c/index.m3u8 enc/index.m3u8; do ffmpeg -nostdin -hide_banner -loglevel error "
                        "-i " URL "$p -map 0 -f framemd5 - | grep -v '^#' > %s/$(dirname $p).md5; done && "
                        "cmp %s/c.md5 %s/enc.md5", e->port, e->dir, e->dir, e->dir), 0);
    json_t *r;
    assert_int_equal(run(&r, NULL, "verify --json --reference %s/ref.json --evidence %s/enc.db --candidate "
                         URL "enc/index.m3u8", e->dir, e->dir, e->port), 0);
    assert_string_equal(jstr(r, "verdict", NULL), "MATCH");
    assert_string_equal(jstr(r, "candidate", "encryption"), "AES-128");
    assert_int_equal(json_array_size(json_object_get(r, "fetches")), 7);   /* playlist, 2 keys, 4 segments */
    char *text = json_dumps(r, 0);
    assert_null(strstr(text, "SECRETKEYTOKEN"));
    assert_null(strstr(text, ".bin"));
    assert_non_null(strstr(text, "REDACTED-KEY-URI"));
    free(text);
    json_decref(r);
    assert_int_equal(sh("sqlite3 %s/enc.db .dump | grep -c -e SECRETKEYTOKEN -e '[.]bin' -e %s -e %s >/dev/null", e->dir, k1, k2), 1);
    assert_int_equal(sh("%s verify --reference %s/ref.json --candidate " URL "enc/missing.m3u8 2>&1 | "
                        "grep -c -e SECRETKEYTOKEN -e '[.]bin' >/dev/null", EXACTAV_BIN, e->dir, e->port), 1);
    static const struct { const char *path, *reason; } cases[] = {
        {"enc/bad.m3u8", "decryption_failed"},
        {"enc/missing.m3u8", "key_unavailable"},
        {"enc/short.m3u8", "key_invalid"},
        {"enc/sample.m3u8", "playlist_outside_profile"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "%s", e->dir, e->port,
                     cases[i].path);
        print_message("  %-20s exit %d %s\n", cases[i].path, rc, r ? jstr(r, "reason", NULL) : "-");
        assert_int_equal(rc, 2);
        assert_string_equal(jstr(r, "reason", NULL), cases[i].reason);
        text = json_dumps(r, 0);
        assert_null(strstr(text, ".bin"));
        free(text);
        json_decref(r);
    }
    int rc = run(&r, NULL, "verify --json --reference %s/ref.json --candidate " URL "enc/t/index.m3u8", e->dir, e->port);
    print_message("  flipped ciphertext: exit %d %s %s\n", rc, jstr(r, "verdict", NULL), jstr(r, "reason", NULL));
    assert_true(rc == 1 || rc == 2);
    json_decref(r);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_playlist_match_and_secrets_never_stored),
        cmocka_unit_test(t02_tampered_path_mismatches),
        cmocka_unit_test(t03_failed_deliveries_are_unknown_never_mismatch),
        cmocka_unit_test(t04_master_playlist_is_a_usage_error),
        cmocka_unit_test(t05_redirects_are_followed_and_recorded),
        cmocka_unit_test(t06_media_sequence_selects_segments),
        cmocka_unit_test(t07_concurrent_verifiers_share_one_evidence_file),
        cmocka_unit_test(t08_imported_report_keeps_its_observation_time),
        cmocka_unit_test(t09_corpus_rollover_stream_over_http),
        cmocka_unit_test(t10_segment_joins_and_byte_ranges_are_invisible),
        cmocka_unit_test(t11_corpus_one_segment_against_the_live_playlist),
        cmocka_unit_test(t12_compressed_playlists_are_read_and_bounded),
        cmocka_unit_test(t13_aes128_segments_are_decrypted_and_keys_never_stored),
    };
    /* Before setup starts the server: a skipped process tears nothing down. */
    if (argc > 1 && strstr(argv[1], "corpus"))
        test_skip_unless(CORPUS_DIR "/media/hls-ts-rollover");
    test_select(argc, argv);
    return cmocka_run_group_tests(tests, setup, teardown);
}
