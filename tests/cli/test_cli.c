/* cli_NN: what a person, a script and an attacker see of both programs
 * (issue 9): secrets, redirects, bounded work, local inputs, escaping, JSON
 * errors, small usage rules.  End to end through the real binaries and the
 * project's HTTP server (exactav-testd on 127.0.0.1), plus two cases that
 * call the delivery and check layers directly (the candidate total and the
 * deadline while decoding, which cannot be provoked cheaply end to end).
 *
 * usage: test_cli CASE   (e.g. test_cli 01_secrets_never_stored_or_printed)
 * Each case makes its own temporary directory and, when it needs one, its
 * own server; no assertion depends on timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "candidate.h"
#include "fetch.h"
#include "profile.h"
#include "reportsig.h"
#include "testd_run.h"
#include "util.h"
#include "verify.h"

#define FX FIXTURES_DIR

struct env {
    char dir[64];
    pid_t server;
    int port;
};

/* ---- helpers -------------------------------------------------------------- */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, mem);
    fclose(mem);
    fclose(f);
    return buf;
}

struct out {
    int rc;
    char *out, *err;
    json_t *json; /* stdout parsed, or NULL */
};

/* Runs a shell command line in dir; captures stdout and stderr. */
static struct out run(const struct env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static struct out run(const struct env *e, const char *fmt, ...)
{
    char line[12288];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    struct out o = {0};
    o.rc = sh("cd %s && (%s) >%s/.out 2>%s/.err", e->dir, line, e->dir, e->dir);
    char p[128];
    snprintf(p, sizeof p, "%s/.out", e->dir);
    o.out = slurp(p);
    snprintf(p, sizeof p, "%s/.err", e->dir);
    o.err = slurp(p);
    o.json = json_loads(o.out, 0, NULL);
    print_message("  [%d] %s\n", o.rc, line);
    return o;
}

static void out_free(struct out *o)
{
    free(o->out);
    free(o->err);
    json_decref(o->json);
    memset(o, 0, sizeof *o);
}

static const char *jget(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

static void assert_absent(const char *text, const char *needle)
{
    if (text && strstr(text, needle))
        fail_msg("'%s' found in:\n%s", needle, text);
}

/* Every case gets a fresh temporary directory; the teardown, which cmocka
 * runs even after a failed assertion, stops the server and removes it. */
static int env_setup(void **state)
{
    struct env *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    snprintf(e->dir, sizeof e->dir, "/tmp/exactav-cli-XXXXXX");
    if (!mkdtemp(e->dir)) {
        free(e);
        return -1;
    }
    *state = e;
    return 0;
}

/* Serves e->dir with exactav-testd; the fixtures packaged as HLS under c/. */
static void serve(struct env *e)
{
    assert_int_equal(sh("cd %s && mkdir -p c && ffmpeg -nostdin -hide_banner -loglevel error -i %s/ref.ts -map 0 "
                        "-c copy -f hls -hls_time 1 -hls_list_size 0 -hls_segment_filename 'c/s%%03d.ts' c/index.m3u8 "
                        "&& cp %s/cand_short.ts %s/cand_copy.ts .", e->dir, FX, FX, FX), 0);
    e->port = testd_run_start(TESTD_BIN, e->dir, &e->server);
    assert_true(e->port > 0);
}

static int env_teardown(void **state)
{
    struct env *e = *state;
    int rc = e->server > 0 && testd_run_stop(e->server) != 0 ? -1 : 0;  /* the server must exit 0 */
    sh("rm -rf %s", e->dir);
    free(e);
    return rc;
}

#define EXACTAV EXACTAV_BIN
#define TSEDIT TSEDIT_BIN
#define URL "http://127.0.0.1:%d/"

/* ---- 01: secrets --------------------------------------------------------- */

static void case_01_secrets_never_stored_or_printed(void **state)
{
    struct env *e = *state;
    serve(e);
    /* a path token directory, and a master playlist whose variants carry tokens */
    assert_int_equal(sh("cd %s && mkdir 'hdnts=exp=1~hmac=SECRET3' && cp c/* 'hdnts=exp=1~hmac=SECRET3/' && "
                        "printf '#EXTM3U\\n#EXT-X-STREAM-INF:BANDWIDTH=800000\\nc/index.m3u8?token=SECRET6\\n' > m.m3u8",
                        e->dir), 0);
    char cand[512];
    snprintf(cand, sizeof cand, "http://user:SECRET4@127.0.0.1:%d/redirect/1/hdnts=exp=1~hmac=SECRET3/index.m3u8"
             "?token=SECRET1&X-Amz-Signature=SECRET2&X-Amz-Credential=SECRET7&sig=SECRET8&keep=visible", e->port);
    struct out o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate '%s' --keep-param keep "
                       "--evidence ev.db --path-id cdn-c", EXACTAV, FX, cand);
    assert_int_equal(o.rc, 0);
    assert_string_equal(jget(o.json, "verdict", NULL), "MATCH");
    assert_absent(o.out, "SECRET");
    assert_absent(o.err, "SECRET");
    assert_non_null(strstr(o.out, "keep=visible"));
    assert_non_null(strstr(o.out, "hdnts=REDACTED"));
    out_free(&o);
    o = run(e, "sqlite3 ev.db .dump");
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "keep=visible"));
    assert_absent(o.out, "SECRET");
    out_free(&o);
    /* the human report and the stored record print nothing secret either */
    o = run(e, "%s verify --no-progress --reference %s/ref.ts --candidate '%s'", EXACTAV, FX, cand);
    assert_int_equal(o.rc, 0);
    assert_absent(o.out, "SECRET");
    assert_absent(o.err, "SECRET");
    out_free(&o);
    o = run(e, "%s evidence show \"$(%s evidence latest --evidence ev.db --json | sed -n 's/.*\"id\": \"\\(.*\\)\".*/\\1/p')\" "
            "--evidence ev.db", EXACTAV, EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_absent(o.out, "SECRET");
    out_free(&o);
    /* a master playlist lists its variants on stderr, redacted */
    o = run(e, "%s verify --reference %s/ref.ts --candidate " URL "m.m3u8", EXACTAV, FX, e->port);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "c/index.m3u8?token=REDACTED"));
    assert_absent(o.err, "SECRET");
    out_free(&o);
}

/* ---- 02: a URL that cannot be used is never echoed ------------------------------ */

static void case_02_unusable_url_never_echoed(void **state)
{
    struct env *e = *state;
    struct out o = run(e, "%s verify --json --reference %s/ref.ts --candidate 'https://cdn.example/live/i.m3u8?"
                       "Policy=SECRETP&Signature=SECRET S'", EXACTAV, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "https://cdn.example"));
    assert_absent(o.err, "SECRET");
    assert_absent(o.out, "SECRET");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o.json, "error"), "exit")), 64);
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate 'ftp://u:SECRET@files.example/seg.ts'", EXACTAV, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "unsupported scheme 'ftp'"));
    assert_absent(o.err, "SECRET");
    out_free(&o);
}

/* ---- 03, 04: redirects to other hosts ----------------------------------------------- */

static void case_03_redirect_to_other_host_followed_and_marked(void **state)
{
    struct env *e = *state;
    serve(e);
    struct out o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate '" URL
                       "location?to=http://localhost:%d/c/index.m3u8'", EXACTAV, FX, e->port, e->port);
    if (o.rc == 2 && !strcmp(jget(o.json, "reason", NULL), "connect_error")) {
        print_message("localhost does not reach 127.0.0.1 here: only the marking is checked\n");
    } else {
        assert_int_equal(o.rc, 0);
    }
    json_t *hosts = json_object_get(json_object_get(o.json, "candidate"), "redirect_hosts");
    assert_int_equal(json_array_size(hosts), 1);
    assert_string_equal(json_string_value(json_array_get(hosts, 0)), "localhost");
    out_free(&o);
    o = run(e, "%s verify --no-progress --reference %s/ref.ts --candidate '" URL "location?to=http://localhost:%d/c/index.m3u8'",
            EXACTAV, FX, e->port, e->port);
    assert_non_null(strstr(o.out, "redirect: followed to other host(s): localhost"));
    out_free(&o);
    /* the same host: nothing marked */
    o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate " URL "redirect/2/c/index.m3u8",
            EXACTAV, FX, e->port);
    assert_int_equal(o.rc, 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(o.json, "candidate"), "redirect_hosts")), 0);
    out_free(&o);
}

static void case_04_redirect_outside_allowed_hosts_is_unknown(void **state)
{
    struct env *e = *state;
    serve(e);
    struct out o = run(e, "%s verify --json --no-progress --allow-redirect-host cdn2.example --reference %s/ref.ts "
                       "--candidate '" URL "location?to=http://localhost:%d/c/index.m3u8' --evidence ev.db",
                       EXACTAV, FX, e->port, e->port);
    assert_int_equal(o.rc, 2);
    assert_string_equal(jget(o.json, "verdict", NULL), "UNKNOWN");
    assert_string_equal(jget(o.json, "reason", NULL), "redirect_not_allowed");
    json_t *fetches = json_object_get(o.json, "fetches");
    assert_int_equal(json_array_size(fetches), 1); /* no request to the other host */
    assert_int_equal(json_array_size(json_object_get(json_array_get(fetches, 0), "redirects")), 1);
    out_free(&o);
    o = run(e, "sqlite3 ev.db \"select reason from evidence; select error from fetches\"");
    assert_non_null(strstr(o.out, "redirect_not_allowed\nredirect_not_allowed: "));
    out_free(&o);
    /* an allowed host is followed */
    o = run(e, "%s verify --json --no-progress --allow-redirect-host LOCALHOST --reference %s/ref.ts "
            "--candidate '" URL "location?to=http://localhost:%d/c/index.m3u8'", EXACTAV, FX, e->port, e->port);
    assert_string_not_equal(jget(o.json, "reason", NULL), "redirect_not_allowed");
    out_free(&o);
}

/* ---- 05, 06: resolution envelope ----------------------------------------------------- */

/* 2048x1152, beyond the v1 envelope of 1920x1080: ten key frames at 30 fps
 * whose times overlap the start of fixtures/ref.ts (so that the candidate
 * side reaches its decode boundary). */
static void make_big(const struct env *e)
{
    assert_int_equal(sh("cd %s && ffmpeg -nostdin -hide_banner -loglevel error -f lavfi -i testsrc=size=2048x1152:rate=25 "
                        "-frames:v 10 -g 1 -c:v libx264 -preset ultrafast -pix_fmt yuv420p -f mpegts big.ts", e->dir), 0);
}

static void case_05_reference_beyond_max_resolution_exit_65(void **state)
{
    struct env *e = *state;
    make_big(e);
    struct out o = run(e, "%s verify --reference big.ts --candidate big.ts", EXACTAV);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "video.envelope.max_width"));
    out_free(&o);
    o = run(e, "%s bind --channel c --program-version v --rendition r --out b.json big.ts", EXACTAV);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "video.envelope.max_width"));
    out_free(&o);
    /* a profile cannot widen the v1 envelope */
    o = run(e, "sed 's/\"max_width\": 1920/\"max_width\": 4096/' %s > wide.json && "
            "%s verify --profile wide.json --reference %s/ref.ts --candidate %s/ref.ts", EXACTAV_SOURCE_PROFILE,
            EXACTAV, FX, FX);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "video.envelope.max_width"));
    out_free(&o);
}

static void case_06_candidate_beyond_max_resolution_unknown(void **state)
{
    struct env *e = *state;
    make_big(e);
    /* a video-only reference: big.ts has no audio, and a missing audio track
     * would be MISMATCH track_set (issue 8), whatever the video says */
    struct out o = run(e, "%s verify --json --reference %s/ref_video_only.ts --candidate big.ts", EXACTAV, FX);
    assert_int_equal(o.rc, 2);
    assert_string_equal(jget(o.json, "verdict", NULL), "UNKNOWN");
    assert_string_equal(jget(o.json, "reason", NULL), "candidate_out_of_envelope");
    /* refused when the sequence was activated: no picture of that size */
    json_t *cv = json_object_get(json_object_get(o.json, "candidate"), "video");
    assert_int_equal(json_integer_value(json_object_get(cv, "frames")), 0);
    out_free(&o);
}

/* ---- 07: size limits while bytes arrive ----------------------------------------------- */

static void case_07_max_size_capped_and_total_counted_while_arriving(void **state)
{
    struct env *e = *state;
    serve(e);
    struct out o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --max-size 1073741825", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "--max-size"));
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --max-size 1073741824", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    /* The candidate total, lowered for the test: the segment that would
     * cross it is aborted while it arrives (chunked: no declared length). */
    assert_int_equal(fetch_global_init(), 0);
    char url[256];
    snprintf(url, sizeof url, URL "chunked/c/index.m3u8", e->port);
    struct candidate_options co = {.location = url, .fetch = fetch_options_default(), .max_total_bytes = 150000};
    struct candidate c;
    char err[1024] = "";
    assert_int_equal(candidate_open(&co, &c, err, sizeof err), CANDIDATE_OK);
    assert_string_equal(c.failure, "candidate_too_large");
    assert_true(c.total_bytes <= 150000);
    json_t *last = json_array_get(c.fetches, json_array_size(c.fetches) - 1);
    assert_true(json_integer_value(json_object_get(last, "bytes")) < 150000); /* stopped early */
    assert_memory_equal(json_string_value(json_object_get(last, "error")), "too_large: ", 11);
    candidate_free(&c);
    fetch_global_cleanup();
}

/* ---- 08: the deadline of the whole check --------------------------------------------------- */

static void case_08_deadline_exceeded_is_unknown(void **state)
{
    struct env *e = *state;
    serve(e);
    /* while fetching: the slow route needs about 20 s for a segment */
    struct out o = run(e, "%s verify --json --no-progress --deadline 1 --reference %s/ref.ts --candidate " URL
                       "slow/c/s000.ts --evidence ev.db", EXACTAV, FX, e->port);
    assert_int_equal(o.rc, 2);
    assert_string_equal(jget(o.json, "reason", NULL), "deadline_exceeded");
    out_free(&o);
    o = run(e, "%s verify --deadline 0 --reference %s/ref.ts --candidate %s/ref.ts", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    o = run(e, "%s verify --deadline 86401 --reference %s/ref.ts --candidate %s/ref.ts", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    /* while decoding: a deadline already passed stops both sides */
    struct profile p;
    char perr[256];
    assert_int_equal(profile_load(NULL, &p, perr, sizeof perr), 0);
    struct bsrc_segment ref = {.path = FX "/ref.ts"}, cand = {.path = FX "/cand_copy.ts"};
    struct verify_request rq = {.profile = &p, .ref_segs = &ref, .n_ref = 1, .cand_segs = &cand, .n_cand = 1,
                                .reference_object = "ref.ts", .candidate_object = "cand_copy.ts",
                                .deadline_ms = util_now_ms() - 1};
    json_t *report = NULL;
    char verr[256] = "";
    assert_int_equal(verify_run(&rq, &report, verr, sizeof verr), 2);
    assert_string_equal(jget(report, "verdict", NULL), "UNKNOWN");
    assert_string_equal(jget(report, "reason", NULL), "deadline_exceeded");
    json_decref(report);
    profile_free(&p);
}

/* ---- 09: a body that cannot prove its end ------------------------------------------------ */

static void case_09_close_delimited_short_body_is_length_unproven(void **state)
{
    struct env *e = *state;
    serve(e);
    static const struct {
        const char *path, *reason;
        int rc;
    } cases[] = {
        {"close/cand_short.ts", "length_unproven", 2}, /* could be cut: never MISMATCH */
        {"cand_short.ts", "video_missing_frames", 1},  /* Content-Length proves the end */
        {"chunked/cand_short.ts", "video_missing_frames", 1},
        {"close/cand_copy.ts", "identical", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct out o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate " URL "%s",
                           EXACTAV, FX, e->port, cases[i].path);
        assert_int_equal(o.rc, cases[i].rc);
        assert_string_equal(jget(o.json, "reason", NULL), cases[i].reason);
        bool proven = json_is_true(json_object_get(json_object_get(o.json, "candidate"), "length_proven"));
        assert_true(proven == (strncmp(cases[i].path, "close/", 6) != 0));
        out_free(&o);
    }
}

/* ---- 10: more than 1000 streams -------------------------------------------------------------- */

static uint32_t crc32_mpeg(const uint8_t *d, size_t n)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint32_t)d[i] << 24;
        for (int k = 0; k < 8; k++)
            crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u : crc << 1;
    }
    return crc;
}

/* One PSI section (table_id, extension, body) as TS packets on pid. */
static void put_section(FILE *f, int pid, int table_id, int ext, const uint8_t *body, size_t n, uint8_t *cc)
{
    uint8_t sec[1100];
    size_t len = n + 9;
    sec[0] = (uint8_t)table_id;
    sec[1] = (uint8_t)(0xb0 | (len >> 8));
    sec[2] = (uint8_t)(len & 0xff);
    sec[3] = (uint8_t)(ext >> 8);
    sec[4] = (uint8_t)(ext & 0xff);
    sec[5] = 0xc1;
    sec[6] = sec[7] = 0;
    memcpy(sec + 8, body, n);
    uint32_t crc = crc32_mpeg(sec, n + 8);
    for (int i = 0; i < 4; i++)
        sec[n + 8 + (size_t)i] = (uint8_t)(crc >> (24 - 8 * i));
    size_t total = n + 12, pos = 0;
    bool first = true;
    while (pos < total) {
        uint8_t pkt[188];
        memset(pkt, 0xff, sizeof pkt);
        pkt[0] = 0x47;
        pkt[1] = (uint8_t)((first ? 0x40 : 0) | (pid >> 8));
        pkt[2] = (uint8_t)(pid & 0xff);
        pkt[3] = (uint8_t)(0x10 | (cc[pid] & 15));
        cc[pid]++;
        size_t at = 4;
        if (first)
            pkt[at++] = 0; /* pointer_field */
        size_t k = total - pos < 188 - at ? total - pos : 188 - at;
        memcpy(pkt + at, sec + pos, k);
        pos += k;
        first = false;
        fwrite(pkt, 1, 188, f);
    }
}

/* A TS whose 12 PMTs declare 12 x 120 = 1440 elementary streams (FFmpeg
 * keeps at most 128 per program). */
#define MANY_PROGRAMS 12
#define MANY_PER_PROGRAM 120
static void make_many_streams(const char *path)
{
    static uint8_t cc[8192];
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int rep = 0; rep < 20; rep++) {
        uint8_t pat[4 * MANY_PROGRAMS];
        for (int p = 0; p < MANY_PROGRAMS; p++) {
            pat[4 * p] = 0;
            pat[4 * p + 1] = (uint8_t)(p + 1);
            pat[4 * p + 2] = 0xe0;
            pat[4 * p + 3] = (uint8_t)(0x20 + p);
        }
        put_section(f, 0, 0, 1, pat, sizeof pat, cc);
        int pid = 0x100;
        for (int p = 0; p < MANY_PROGRAMS; p++) {
            uint8_t body[4 + MANY_PER_PROGRAM * 5] = {0xff, 0xff, 0xf0, 0x00};
            for (int i = 0; i < MANY_PER_PROGRAM; i++, pid++) {
                uint8_t *es = body + 4 + 5 * i;
                es[0] = 0x06;
                es[1] = (uint8_t)(0xe0 | (pid >> 8));
                es[2] = (uint8_t)(pid & 0xff);
                es[3] = 0xf0;
                es[4] = 0;
            }
            put_section(f, 0x20 + p, 2, p + 1, body, sizeof body, cc);
        }
    }
    fclose(f);
}

static void case_10_too_many_streams_named(void **state)
{
    struct env *e = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/many.ts", e->dir);
    make_many_streams(path);
    struct out o = run(e, "%s verify --json --reference %s/ref.ts --candidate many.ts", EXACTAV, FX);
    assert_int_equal(o.rc, 2); /* was MISMATCH video_missing_frames: the streams past 1000 were dropped */
    assert_string_equal(jget(o.json, "reason", NULL), "too_many_streams");
    out_free(&o);
    o = run(e, "%s verify --reference many.ts --candidate %s/ref.ts", EXACTAV, FX);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "too_many_streams"));
    out_free(&o);
}

/* ---- 11: a local candidate must be a readable regular file ------------------------------ */

static void case_11_local_candidate_not_regular_file_exit_66_nothing_stored(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("cd %s && mkdir d && mkfifo fifo", e->dir), 0);
    const char *bad[] = {"d", "fifo", "missing.ts", "/dev/null"};
    for (size_t i = 0; i < 4; i++) {
        struct out o = run(e, "timeout 60 %s verify --json --reference %s/ref.ts --candidate %s --evidence ev.db "
                           "--path-id p", EXACTAV, FX, bad[i]);
        assert_int_equal(o.rc, 66);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(o.json, "error"), "exit")), 66);
        out_free(&o);
        /* nothing stored (the store may have been opened, it holds no row) */
        assert_int_equal(sh("cd %s && { test ! -e ev.db || test \"$(sqlite3 ev.db 'select count(*) from evidence')\" = 0; }",
                            e->dir), 0);
    }
}

/* ---- 12: control characters in human output ------------------------------------------------- */

static void assert_no_raw_controls(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
            fail_msg("raw control byte 0x%02x in:\n%s", *p, text);
        if (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xae)
            fail_msg("raw U+202E in:\n%s", text);
    }
}

static void case_12_control_characters_escaped_in_both_programs(void **state)
{
    struct env *e = *state;
    /* a path id with ESC[31m, BEL and U+202E */
    const char *pid = "cdn-$(printf '\\033[31mred\\007\\342\\200\\256x')";
    struct out o = run(e, "%s verify --reference %s/ref_tiny.ts --candidate %s/ref_tiny.ts --evidence ev.db "
                       "--path-id \"%s\"", EXACTAV, FX, FX, pid);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    o = run(e, "%s evidence list --evidence ev.db", EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_no_raw_controls(o.out);
    assert_non_null(strstr(o.out, "cdn-\\x1b[31mred\\x07\\u{202e}x"));
    out_free(&o);
    /* messages quoting a path */
    o = run(e, "%s verify --reference %s/ref.ts --candidate \"%s\"", EXACTAV, FX, pid);
    assert_int_equal(o.rc, 66);
    assert_no_raw_controls(o.err);
    assert_non_null(strstr(o.err, "\\x1b[31m"));
    out_free(&o);
    /* stepctl: the same path id in a situation */
    assert_int_equal(sh("cd %s && NOW=$(date +%%s%%3N) && sed -e \"s/@NOW@/$NOW/\" -e \"s/@OBS@/$((NOW - 60000))/\" "
                        "-e \"s/@MID@/$((NOW + 300000))/\" -e \"s/@WEND@/$((NOW + 3600000))/\" "
                        "-e 's/\"cdn-u\"/\"cdn-\\\\u001b[31mred\\\\u0007\\\\u202ex\"/g' %s/controller/preflight-situation.json "
                        "> sit.json", e->dir, FX), 0);
    o = run(e, "%s decide --input sit.json --evidence ev.db --db control.db", STEPCTL_BIN);
    assert_true(o.rc == 0 || o.rc == 4);
    assert_no_raw_controls(o.out);
    assert_non_null(strstr(o.out, "cdn-\\x1b[31mred\\x07\\u{202e}x"));
    out_free(&o);
    o = run(e, "%s explain \"$(%s decisions list --db control.db | cut -d' ' -f1 | head -1)\" --db control.db",
            STEPCTL_BIN, STEPCTL_BIN);
    assert_int_equal(o.rc, 0);
    assert_no_raw_controls(o.out);
    out_free(&o);
}

/* ---- 13: --json: an error object on every failure exit ------------------------------------------ */

static void case_13_json_error_object_on_every_failure(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("cd %s && echo '{' > bad.json && touch empty.ts", e->dir), 0);
    static const struct {
        const char *prog, *args;
        int rc;
    } cases[] = {
        {EXACTAV, "verify --json --no-such-option", 64},
        {EXACTAV, "verify --json --reference " FX "/ref.ts", 64},
        {EXACTAV, "verify --json --reference missing.ts --candidate " FX "/ref.ts", 66},
        {EXACTAV, "verify --json --reference empty.ts --candidate " FX "/ref.ts", 65},
        {EXACTAV, "verify --json --profile bad.json --reference " FX "/ref.ts --candidate " FX "/ref.ts", 65},
        {EXACTAV, "bind --json --channel c", 64},
        {EXACTAV, "profile --json --profile missing.json", 66},
        {EXACTAV, "evidence list --json --evidence missing.db", 66},
        {EXACTAV, "evidence show x --json", 64},
        {EXACTAV, "no-such-command --json", 64},
        {EXACTAV, "canary --json", 64},
        {EXACTAV, "canary --json --config bad.json --evidence e.db", 64},
        {EXACTAV, "canary --json --config missing.json --evidence e.db", 66},
        {STEPCTL_BIN, "decide --json", 64},
        {STEPCTL_BIN, "decide --json --input bad.json --evidence missing.db --db c.db", 65},
        {STEPCTL_BIN, "decisions list --json --db missing.db", 66},
        {STEPCTL_BIN, "replay x --json --db missing.db", 66},
        {STEPCTL_BIN, "plan --json", 64},
        {STEPCTL_BIN, "no-such-command --json", 64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct out o = run(e, "%s %s", cases[i].prog, cases[i].args);
        assert_int_equal(o.rc, cases[i].rc);
        json_t *err = json_object_get(o.json, "error");
        if (!json_is_object(err))
            fail_msg("no JSON error object on stdout: '%s'", o.out);
        assert_int_equal(json_integer_value(json_object_get(err, "exit")), cases[i].rc);
        assert_true(json_is_string(json_object_get(err, "message")));
        assert_true(json_is_string(json_object_get(err, "kind")));
        out_free(&o);
    }
    /* success and results print no error object */
    struct out o = run(e, "%s verify --json --reference %s/ref_tiny.ts --candidate %s/ref_tiny.ts", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 0);
    assert_null(json_object_get(o.json, "error"));
    out_free(&o);
}

/* ---- 14: smaller usage rules ------------------------------------------------------------------------ */

static void case_14_small_usage_rules(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("cd %s && touch empty.ts && ffmpeg -nostdin -hide_banner -loglevel error -i %s/ref.ts -c copy "
                        "-f mp4 ref.mp4", e->dir, FX), 0);
    struct out o;
    /* a plain (not fragmented) MP4 or an empty reference: exit 65, saying why */
    const char *notts[] = {"ref.mp4", "empty.ts"};
    const char *why[] = {"mp4_not_fragmented", "not an MPEG-TS or fMP4 file"};
    for (int i = 0; i < 2; i++) {
        o = run(e, "%s verify --reference %s --candidate %s/ref.ts", EXACTAV, notts[i], FX);
        assert_int_equal(o.rc, 65);
        assert_non_null(strstr(o.err, why[i]));
        out_free(&o);
        o = run(e, "%s bind --channel c --program-version v --rendition r --out b.json %s", EXACTAV, notts[i]);
        assert_int_equal(o.rc, 65);
        assert_non_null(strstr(o.err, why[i]));
        out_free(&o);
    }
    /* --interval beyond 33 bits: refused, not reduced */
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --interval 8589934592:8589934600", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "--interval"));
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --interval 0:8589934592", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    o = run(e, "%s bind --channel c --program-version v --rendition r --out b.json --interval 8589934593:1 %s/ref.ts",
            EXACTAV, FX);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    /* --media-sequence selects HLS segments: refused with a local file */
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --media-sequence 0:1", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "--media-sequence"));
    out_free(&o);
    /* --keep-param cannot show a credential */
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --keep-param Signature", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    /* exactav-testd --help */
    o = run(e, "%s --help", TESTD_BIN);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "usage: exactav-testd"));
    out_free(&o);
    o = run(e, "%s --no-such-option", TESTD_BIN);
    assert_int_equal(o.rc, 2);
    out_free(&o);
}

/* ---- 27: the allocation a check followed (issue 17) ---------------------------------------------------- */

/* --allocation-id and --pathway go together into the report's context and
 * evidence.db's columns (schema v6); a check without them has neither. */
static void case_27_verify_allocation_id_and_pathway_stored(void **state)
{
    struct env *e = *state;
    struct out o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --allocation-id v-1", EXACTAV,
                       FX, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "go together"));
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/ref.ts --allocation-id 'v 1' --pathway C",
            EXACTAV, FX, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "--allocation-id"));
    out_free(&o);
    assert_int_equal(sh("cd %s && %s verify --json --no-progress --reference %s/ref.ts --candidate "
                        "%s/cand_copy.ts --path-id C --allocation-id v-1 --pathway C --evidence al.db > al.json && "
                        "%s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts "
                        "--path-id C --evidence al.db > plain.json",
                        e->dir, EXACTAV, FX, FX, EXACTAV, FX, FX), 0);
    o = run(e, "sqlite3 al.db \"select count(*) from evidence where allocation_id = 'v-1' and pathway = 'C'; "
               "select count(*) from evidence where allocation_id is null and pathway is null\"");
    assert_string_equal(o.out, "1\n1\n");
    out_free(&o);
    o = run(e, "grep -c '\"allocation_id\": \"v-1\"' al.json; grep -c allocation_id plain.json");
    assert_string_equal(o.out, "1\n0\n");
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence al.db", EXACTAV);
    assert_int_equal(o.rc, 0);
    out_free(&o);
}

/* ---- main ------------------------------------------------------------------------------------------- */

/* Causes, not symptoms (issue 22): a constant time offset is named as one
 * with the --time-offset that would declare it (never applied); a playlist
 * file given as a local candidate gets the reason a playlist gets; the
 * canary's summary names the reference file that is missing. */
static void case_21_causes_not_symptoms(void **state)
{
    struct env *e = *state;
    assert_int_equal(sh("cd %s && %s shift %s/ref.ts late.ts 1500 && %s shift %s/ref.ts later.ts 5000", e->dir,
                        TSEDIT, FX, TSEDIT, FX), 0);
    struct out o = run(e, "%s verify --reference %s/ref.ts --candidate late.ts --json", EXACTAV, FX);
    assert_int_equal(o.rc, 1);
    const json_t *co = json_object_get(json_object_get(o.json, "video"), "constant_offset");
    assert_int_equal(json_integer_value(json_object_get(co, "ticks")), 1500);
    assert_int_equal(json_integer_value(json_object_get(co, "suggested_time_offset")), 1500);
    assert_int_equal(json_integer_value(json_object_get(o.json, "time_offset")), 0); /* never applied */
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate late.ts", EXACTAV, FX);
    assert_non_null(strstr(o.out, "a constant time offset"));
    assert_non_null(strstr(o.out, "check again with --time-offset 1500"));
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate late.ts --time-offset 1500", EXACTAV, FX);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    /* more than a frame: the constant is named, no offset suggested */
    o = run(e, "%s verify --reference %s/ref.ts --candidate later.ts --json", EXACTAV, FX);
    co = json_object_get(json_object_get(o.json, "video"), "constant_offset");
    assert_non_null(co);
    assert_true(json_is_null(json_object_get(co, "suggested_time_offset")));
    out_free(&o);
    /* a different picture is no offset */
    o = run(e, "%s verify --reference %s/ref.ts --candidate %s/cand_pixels.ts --json", EXACTAV, FX, FX);
    assert_null(json_object_get(json_object_get(o.json, "video"), "constant_offset"));
    out_free(&o);
    /* playlists as local candidates */
    assert_int_equal(sh("cd %s && printf '#EXTM3U\\n#EXT-X-STREAM-INF:BANDWIDTH=1000\\nlow.m3u8?token=SECRET\\n' "
                        "> master.m3u8 && printf '#EXTM3U\\n#EXT-X-TARGETDURATION:2\\n#EXTINF:2,\\na.ts\\n' > media.m3u8",
                        e->dir), 0);
    o = run(e, "%s verify --reference %s/ref.ts --candidate master.m3u8", EXACTAV, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "the candidate is a master playlist; name one media playlist"));
    assert_absent(o.err, "SECRET");
    out_free(&o);
    o = run(e, "%s verify --reference %s/ref.ts --candidate media.m3u8", EXACTAV, FX);
    assert_int_equal(o.rc, 64);
    assert_non_null(strstr(o.err, "a local candidate is one MPEG-TS segment"));
    out_free(&o);
    /* the canary's summary names the missing reference file */
    serve(e);
    assert_int_equal(sh("mkdir %s/emptyref && cd %s && printf '{\"probe_period_s\": 0, \"targets\": [{\"path_id\": "
                        "\"p\", \"channel\": \"c\", \"rendition\": \"r\", \"program_version\": \"v\", \"candidate\": "
                        "\"http://127.0.0.1:%d/c/index.m3u8\", \"reference\": \"%s/emptyref\"}]}' > cfg.json",
                        e->dir, e->dir, e->port, e->dir), 0);
    o = run(e, "%s canary --once --config cfg.json --evidence ev.db", EXACTAV);
    assert_int_equal(o.rc, 2);
    assert_non_null(strstr(o.out, "why:     p/c/r: reference playlist: io_error: "));
    assert_non_null(strstr(o.out, "emptyref/playlist.m3u8: No such file or directory"));
    out_free(&o);
}

/* ---- 22-25: signed reports (issue 19) ------------------------------------------------------------ */

/* Two Ed25519 worker keys made by OpenSSL (mode 600) and their public keys:
 * k1.pem/pub1.pem, k2.pem/pub2.pem; trusted.pem holds both public keys. */
static void make_keys(const struct env *e)
{
    assert_int_equal(sh("cd %s && for k in 1 2; do openssl genpkey -algorithm ed25519 -out k$k.pem 2>/dev/null && "
                        "chmod 600 k$k.pem && openssl pkey -in k$k.pem -pubout -out pub$k.pem || exit 1; done && "
                        "cat pub2.pem pub1.pem > trusted.pem", e->dir), 0);
}

/* The first 16 hex digits of SHA-256 of the raw public key, by OpenSSL's
 * own tools (the last 32 bytes of the SubjectPublicKeyInfo DER). */
static void openssl_key_id(const struct env *e, const char *pub, char out[17])
{
    struct out o = run(e, "openssl pkey -pubin -in %s -outform DER | tail -c 32 | sha256sum | cut -c1-16", pub);
    assert_int_equal(o.rc, 0);
    assert_int_equal(strlen(o.out), 17);
    memcpy(out, o.out, 16);
    out[16] = '\0';
    out_free(&o);
}

/* stored: a report as evidence.db holds it.  Its signature verifies with
 * `openssl pkeyutl -verify -rawin` over the text before ,"signature" (it
 * is the last member), and that text is what reportsig_canonical makes of
 * the parsed report: the canonical form round-trips. */
static void assert_openssl_verifies(const struct env *e, const char *stored, const char *pub)
{
    const char *cut = strstr(stored, ",\"signature\":{");
    assert_non_null(cut);
    json_t *parsed = json_loads(stored, 0, NULL);
    assert_non_null(parsed);
    char *canon = reportsig_canonical(parsed);
    assert_int_equal(strlen(canon), (size_t)(cut - stored) + 1);
    assert_memory_equal(canon, stored, (size_t)(cut - stored));
    assert_string_equal(canon + (cut - stored), "}");
    char path[128];
    snprintf(path, sizeof path, "%s/canon.bin", e->dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(canon, 1, strlen(canon), f), strlen(canon));
    fclose(f);
    const json_t *sig = json_object_get(parsed, "signature");
    assert_string_equal(jget(sig, "alg", NULL), "ed25519");
    struct out o = run(e, "printf '%%s' '%s' | base64 -d > sig.bin && openssl pkeyutl -verify -pubin -inkey %s -rawin "
                       "-in canon.bin -sigfile sig.bin", jget(sig, "value", NULL), pub);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "Signature Verified Successfully"));
    out_free(&o);
    /* a changed byte does not verify: the oracle is not a rubber stamp */
    o = run(e, "sed -i 's/\"identical\"/\"identicaL\"/' canon.bin && openssl pkeyutl -verify -pubin -inkey %s "
            "-rawin -in canon.bin -sigfile sig.bin", pub);
    assert_int_not_equal(o.rc, 0);
    out_free(&o);
    free(canon);
    json_decref(parsed);
}

/* The one report of db, as stored (the caller frees). */
static char *stored_report(const struct env *e, const char *db)
{
    struct out o = run(e, "sqlite3 %s 'select report from evidence'", db);
    assert_int_equal(o.rc, 0);
    char *text = strdup(o.out);
    text[strcspn(text, "\n")] = '\0';
    out_free(&o);
    return text;
}

static void case_22_verify_sign_key_signs_what_it_prints_and_stores(void **state)
{
    struct env *e = *state;
    make_keys(e);
    char id[17];
    openssl_key_id(e, "pub1.pem", id);
    struct out o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts "
                       "--sign-key k1.pem --evidence ev.db --path-id 'cdn-\xc3\xa4 \\ \"q\"'", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 0);
    /* UTF-8, a backslash and quotes in a value: canonical as jansson writes them */
    assert_string_equal(jget(o.json, "context", "path_id"), "cdn-\xc3\xa4 \\ \"q\"");
    /* the signature is the report's last member */
    const char *last = NULL, *key;
    json_t *v;
    json_object_foreach(o.json, key, v)
        last = key;
    assert_string_equal(last, "signature");
    assert_string_equal(jget(o.json, "signature", "key_id"), id);
    char *stored = stored_report(e, "ev.db");
    /* stored and printed are the same report, signature and all */
    json_t *parsed = json_loads(stored, 0, NULL);
    assert_true(json_equal(parsed, o.json));
    assert_openssl_verifies(e, stored, "pub1.pem");
    /* the printed (indented) report gives the same canonical bytes */
    char *a = reportsig_canonical(o.json), *b = reportsig_canonical(parsed);
    assert_string_equal(a, b);
    free(a);
    free(b);
    json_decref(parsed);
    free(stored);
    out_free(&o);
    /* evidence show has it; the human report names the key */
    o = run(e, "%s evidence show \"$(sqlite3 ev.db 'select id from evidence')\" --evidence ev.db --json", EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "\"signature\""));
    out_free(&o);
    o = run(e, "%s verify --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts --sign-key k1.pem",
            EXACTAV, FX, FX);
    assert_int_equal(o.rc, 0);
    char line[64];
    snprintf(line, sizeof line, "signed:   ed25519, key %s\n", id);
    assert_non_null(strstr(o.out, line));
    out_free(&o);
    /* without --sign-key: no signature anywhere */
    o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts --evidence ev2.db",
            EXACTAV, FX, FX);
    assert_int_equal(o.rc, 0);
    assert_absent(o.out, "signature");
    out_free(&o);
    stored = stored_report(e, "ev2.db");
    assert_absent(stored, "signature");
    free(stored);
    /* the private key is never printed or stored */
    o = run(e, "sed -n 2p k1.pem > body && ! grep -rF -f body --exclude=k1.pem --exclude=body . && "
            "! sqlite3 ev.db .dump | grep -F -f body");
    assert_int_equal(o.rc, 0);
    out_free(&o);
}

static void case_23_import_trusted_keys_refuses_tampered_unsigned_and_unknown(void **state)
{
    struct env *e = *state;
    make_keys(e);
    assert_int_equal(sh("cd %s && %s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts "
                        "--sign-key k1.pem --path-id cdn-a > signed.json; %s verify --json --no-progress --reference "
                        "%s/ref.ts --candidate %s/cand_copy.ts --sign-key k2.pem > by2.json; %s verify --json "
                        "--no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts > unsigned.json; "
                        "sed 's/\"verdict\": \"MATCH\"/\"verdict\": \"MISMATCH\"/' signed.json > verdict.json && "
                        "sed 's/\"cdn-a\"/\"cdn-b\"/' signed.json > path.json && grep -q MISMATCH verdict.json && "
                        "grep -q cdn-b path.json && sed 's/\"alg\": \"ed25519\"/\"alg\": \"rsa\"/' signed.json > alg.json && "
                        "grep -q rsa alg.json && openssl genpkey -algorithm ed25519 -out k3.pem 2>/dev/null && "
                        "openssl pkey -in k3.pem -pubout -out pub3.pem",
                        e->dir, EXACTAV, FX, FX, EXACTAV, FX, FX, EXACTAV, FX, FX), 0);
    static const struct {
        const char *file, *keys, *reason;
    } refused[] = {
        {"verdict.json", "trusted.pem", "signature_invalid"},
        {"path.json", "trusted.pem", "signature_invalid"},
        {"alg.json", "trusted.pem", "signature_invalid"},
        {"unsigned.json", "trusted.pem", "signature_missing"},
        {"by2.json", "pub1.pem", "signature_unknown_key"},
        {"signed.json", "pub3.pem", "signature_unknown_key"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct out o = run(e, "%s evidence import %s --evidence ev.db --trusted-keys %s", EXACTAV, refused[i].file,
                           refused[i].keys);
        assert_int_equal(o.rc, 65);
        char said[128];
        snprintf(said, sizeof said, "%s: %s: ", refused[i].file, refused[i].reason);
        assert_non_null(strstr(o.err, said));
        out_free(&o);
    }
    struct out o = run(e, "sqlite3 ev.db 'select count(*) from evidence'");
    assert_string_equal(o.out, "0\n"); /* nothing refused was stored */
    out_free(&o);
    /* signed by a trusted key: imported (both keys of the file trusted), with its signature */
    o = run(e, "%s evidence import signed.json by2.json --evidence ev.db --trusted-keys trusted.pem", EXACTAV);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    o = run(e, "sqlite3 ev.db \"select count(*) from evidence where instr(report, '\\\"signature\\\": {') > 0\"");
    assert_string_equal(o.out, "2\n");
    out_free(&o);
    /* without --trusted-keys: as before, signed or not (the changed path is
     * a valid report: only the signature tells) */
    o = run(e, "%s evidence import path.json unsigned.json --evidence plain.db", EXACTAV);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    /* several files: each is judged, the worst exit wins */
    o = run(e, "%s evidence import unsigned.json signed.json --evidence mixed.db --trusted-keys pub1.pem", EXACTAV);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.out, "signed.json"));
    out_free(&o);
}

static void case_24_unusable_keys_refused(void **state)
{
    struct env *e = *state;
    make_keys(e);
    assert_int_equal(sh("cd %s && cp k1.pem k640.pem && chmod 640 k640.pem && cp k1.pem k604.pem && chmod 604 k604.pem "
                        "&& openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 -out ec.pem 2>/dev/null && "
                        "chmod 600 ec.pem && openssl pkey -in ec.pem -pubout -out ecpub.pem && mkfifo fifo && "
                        "cat pub1.pem ecpub.pem > mixed.pem && printf 'not a key\\n' > junk.pem", e->dir), 0);
    static const struct {
        const char *key;
        int rc;
        const char *said;
    } cases[] = {
        {"k640.pem", 65, "the private key is accessible by group or others (mode 0640)"},
        {"k604.pem", 65, "the private key is accessible by group or others (mode 0604)"},
        {"ec.pem", 65, "not an Ed25519 key"},
        {"pub1.pem", 65, "no unencrypted PEM private key"},
        {"fifo", 66, "fifo is not a regular file"},
        {"missing.pem", 66, "cannot open missing.pem"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* before anything is checked or stored */
        struct out o = run(e, "timeout 20 %s verify --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts "
                           "--sign-key %s --evidence ev.db", EXACTAV, FX, FX, cases[i].key);
        assert_int_equal(o.rc, cases[i].rc);
        assert_non_null(strstr(o.err, cases[i].said));
        assert_absent(o.out, "verdict");
        out_free(&o);
    }
    struct out o = run(e, "test ! -e ev.db");
    assert_int_equal(o.rc, 0);
    out_free(&o);
    o = run(e, "mkdir emptyref && printf '{\"probe_period_s\": 0, \"targets\": [{\"path_id\": \"p\", \"channel\": "
            "\"c\", \"rendition\": \"r\", \"program_version\": \"v\", \"candidate\": \"http://127.0.0.1:9/i.m3u8\", "
            "\"reference\": \"emptyref\"}]}' > cfg.json && timeout 20 %s canary --once --config cfg.json --evidence "
            "c.db --sign-key k640.pem", EXACTAV);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "--sign-key k640.pem: the private key is accessible by group or others (mode 0640)"));
    out_free(&o);
    o = run(e, "test ! -e c.db");
    assert_int_equal(o.rc, 0); /* no store made for a worker that cannot sign */
    out_free(&o);
    /* --trusted-keys: public keys only, Ed25519 only, a regular file */
    static const struct {
        const char *keys;
        int rc;
        const char *said;
    } trust[] = {
        {"mixed.pem", 65, "key 2 is not an Ed25519 public key"},
        {"junk.pem", 65, "no PEM public key found"},
        {"fifo", 66, "fifo is not a regular file"},
    };
    assert_int_equal(sh("cd %s && %s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts "
                        "--sign-key k1.pem > signed.json", e->dir, EXACTAV, FX, FX), 0);
    for (size_t i = 0; i < sizeof trust / sizeof trust[0]; i++) {
        o = run(e, "timeout 20 %s evidence import signed.json --evidence t.db --trusted-keys %s", EXACTAV, trust[i].keys);
        assert_int_equal(o.rc, trust[i].rc);
        assert_non_null(strstr(o.err, trust[i].said));
        out_free(&o);
    }
    o = run(e, "%s evidence import signed.json --evidence t.db --trusted-keys", EXACTAV);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    o = run(e, "%s evidence list --evidence t.db --trusted-keys pub1.pem", EXACTAV);
    assert_int_equal(o.rc, 64);
    out_free(&o);
}

/* Serves the fixtures and writes cfg.json: one canary target, the served
 * copy against a local reference of the same segments. */
static void canary_one_target(struct env *e)
{
    serve(e);
    assert_int_equal(sh("cd %s && mkdir ref && cp c/*.ts ref/ && cp c/index.m3u8 ref/playlist.m3u8 && printf "
                        "'{\"probe_period_s\": 0, \"targets\": [{\"path_id\": \"p\", \"channel\": \"c\", \"rendition\": "
                        "\"r\", \"program_version\": \"v\", \"candidate\": \"http://127.0.0.1:%d/c/index.m3u8\", "
                        "\"reference\": \"%s/ref\"}]}' > cfg.json", e->dir, e->port, e->dir), 0);
}

static void case_25_canary_sign_key_signs_what_it_stores(void **state)
{
    struct env *e = *state;
    make_keys(e);
    canary_one_target(e);
    struct out o = run(e, "%s canary --once --config cfg.json --evidence ev.db --sign-key k2.pem", EXACTAV);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    char *stored = stored_report(e, "ev.db");
    assert_non_null(strstr(stored, "\"verdict\":\"MATCH\""));
    assert_openssl_verifies(e, stored, "pub2.pem");
    free(stored);
    /* what the canary stored imports elsewhere against the trusted keys */
    o = run(e, "sqlite3 ev.db 'select report from evidence' > canary.json && %s evidence import canary.json "
            "--evidence central.db --trusted-keys trusted.pem && %s evidence import canary.json --evidence other.db "
            "--trusted-keys pub1.pem", EXACTAV, EXACTAV);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.out, "imported"));
    assert_non_null(strstr(o.err, "signature_unknown_key"));
    out_free(&o);
}

/* Issue 19: nothing re-checked a report's signature after its import, and
 * nothing named an edited row of evidence.db.  verify-store applies the
 * rules of a valid row to every row and, with --trusted-keys, the
 * signature again: an edit that keeps the rules (column and report
 * changed together) is found by the signature only. */
static void case_26_evidence_verify_store_names_the_first_broken_row(void **state)
{
    struct env *e = *state;
    make_keys(e);
    assert_int_equal(sh("cd %s && for p in cdn-a cdn-b; do %s verify --json --no-progress --reference %s/ref.ts "
                        "--candidate %s/cand_copy.ts --sign-key k1.pem --path-id $p --evidence ev.db > $p.json || "
                        "exit 1; done; cp ev.db edited.db && cp ev.db forged.db && cp ev.db unsigned.db",
                        e->dir, EXACTAV, FX, FX), 0);
    struct out o = run(e, "%s evidence verify-store --evidence ev.db", EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.out, "store_ok: 2 rows hold every rule, 0 signatures verified\n");
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence ev.db --trusted-keys pub1.pem --json", EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.out, "{\"kind\":\"store_ok\",\"rows\":2,\"signatures_verified\":2}\n");
    out_free(&o);

    /* A column edited alone breaks a rule of a valid row. */
    assert_int_equal(sh("cd %s && sqlite3 edited.db \"UPDATE evidence SET verdict = 'MISMATCH' WHERE path_id = "
                        "'cdn-b'\"", e->dir), 0);
    o = run(e, "%s evidence verify-store --evidence edited.db --json", EXACTAV);
    assert_int_equal(o.rc, 3);
    assert_string_equal(jget(o.json, "kind", NULL), "store_tampered");
    assert_string_equal(jget(o.json, "rule", NULL), "row_rules");
    assert_non_null(strstr(jget(o.json, "detail", NULL), "verdict"));
    out_free(&o);
    o = run(e, "sqlite3 edited.db \"select id from evidence where path_id = 'cdn-b'\"");
    char row[64];
    snprintf(row, sizeof row, "%.*s", (int)strcspn(o.out, "\n"), o.out);
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence edited.db", EXACTAV);
    assert_int_equal(o.rc, 3);
    char said[160];
    snprintf(said, sizeof said, "store_tampered: evidence %s breaks row_rules: ", row);
    assert_non_null(strstr(o.out, said));
    out_free(&o);

    /* Column and report changed together keep every rule: only the
     * signature tells, and only with --trusted-keys. */
    assert_int_equal(sh("cd %s && sqlite3 forged.db \"UPDATE evidence SET path_id = 'cdn-z', report = "
                        "replace(report, '\\\"path_id\\\":\\\"cdn-b\\\"', '\\\"path_id\\\":\\\"cdn-z\\\"') WHERE "
                        "path_id = 'cdn-b'\" && sqlite3 forged.db \"select count(*) from evidence where instr(report, "
                        "'cdn-z') > 0\" | grep -qx 1", e->dir), 0);
    o = run(e, "%s evidence verify-store --evidence forged.db", EXACTAV);
    assert_int_equal(o.rc, 0);
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence forged.db --trusted-keys pub1.pem --json", EXACTAV);
    assert_int_equal(o.rc, 3);
    assert_string_equal(jget(o.json, "rule", NULL), "signature_invalid");
    out_free(&o);

    /* Schema v7: a stored profile whose digest is not its SHA-256 (one
     * planted beside the real one, which every row still refers to). */
    assert_int_equal(sh("cd %s && cp ev.db planted.db && sqlite3 planted.db \"INSERT INTO profiles VALUES "
                        "('%064d', '{}')\"", e->dir, 0), 0);
    o = run(e, "%s evidence verify-store --evidence planted.db --json", EXACTAV);
    assert_int_equal(o.rc, 3);
    assert_string_equal(jget(o.json, "table", NULL), "profiles");
    assert_string_equal(jget(o.json, "rule", NULL), "profile_digest");
    assert_int_equal(strlen(jget(o.json, "row", NULL)), 64);
    out_free(&o);

    /* A row imported unsigned (no --trusted-keys at its import): missing. */
    assert_int_equal(sh("cd %s && %s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts "
                        "--path-id cdn-u > u.json && %s evidence import u.json --evidence unsigned.db", e->dir, EXACTAV,
                        FX, FX, EXACTAV), 0);
    o = run(e, "%s evidence verify-store --evidence unsigned.db --trusted-keys pub1.pem --json", EXACTAV);
    assert_int_equal(o.rc, 3);
    assert_string_equal(jget(o.json, "rule", NULL), "signature_missing");
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence unsigned.db --trusted-keys pub2.pem --json", EXACTAV);
    assert_int_equal(o.rc, 3);
    assert_string_equal(jget(o.json, "rule", NULL), "signature_unknown_key"); /* the first row's */
    out_free(&o);

    /* Usage and files. */
    o = run(e, "%s evidence verify-store --evidence ev.db extra", EXACTAV);
    assert_int_equal(o.rc, 64);
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence missing.db", EXACTAV);
    assert_int_equal(o.rc, 66);
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence ev.db --trusted-keys k1.pem", EXACTAV);
    assert_int_equal(o.rc, 65);
    out_free(&o);
    o = run(e, "test ! -e missing.db");
    assert_int_equal(o.rc, 0); /* read-only: nothing created */
    out_free(&o);
}


/* verify-store of db under the key file "key": exit 3 naming rule (and
 * table, unless NULL). */
static void assert_keyed_finding(const struct env *e, const char *db, const char *rule, const char *table)
{
    struct out o = run(e, "%s evidence verify-store --evidence %s --store-key-file key --json", EXACTAV, db);
    assert_int_equal(o.rc, 3);
    assert_string_equal(jget(o.json, "kind", NULL), "store_tampered");
    assert_string_equal(jget(o.json, "rule", NULL), rule);
    if (table)
        assert_string_equal(jget(o.json, "table", NULL), table);
    out_free(&o);
}

/* Issue 19: a row of evidence.db deleted whole was seen nowhere.  With
 * --store-key-file every row written gets a MAC and the keyed head counts
 * and sums them, so verify-store names a deletion (row_deleted), an edit
 * (row_mac_mismatch) and a head changed by hand (head_mismatch); a writer
 * without the key writes nothing; a wrong key, or a key file others can
 * read, is 65.  The key's bytes are printed nowhere. */
static void case_28_keyed_evidence_store_names_deleted_rows(void **state)
{
    struct env *e = *state;
    static const char secret[] = "evidence-key-0123456789-abcdefghijklmnop";
    assert_int_equal(sh("cd %s && printf '%s\\n' > key && chmod 600 key && head -c 48 /dev/urandom > other && "
                        "chmod 600 other && cp key open && chmod 644 open", e->dir, secret), 0);
    assert_int_equal(sh("cd %s && for p in cdn-a cdn-a cdn-b; do %s verify --json --no-progress --reference "
                        "%s/ref.ts --candidate %s/cand_copy.ts --path-id $p --evidence ev.db --store-key-file key "
                        "> $p.json || exit 1; done && %s verify --json --no-progress --reference %s/ref.ts "
                        "--candidate %s/cand_copy.ts --path-id cdn-i > i.json && EXACTAV_STORE_KEY_FILE=key %s "
                        "evidence import i.json --evidence ev.db", e->dir, EXACTAV, FX, FX, EXACTAV, FX, FX, EXACTAV),
                     0);
    struct out o = run(e, "%s evidence verify-store --evidence ev.db --store-key-file key --json", EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.out, "{\"kind\":\"store_ok\",\"rows\":4,\"signatures_verified\":0,\"macs_verified\":4,"
                               "\"checkpoints_verified\":1}\n");
    out_free(&o);
    /* without the key: the rules only, and stderr says so */
    o = run(e, "%s evidence verify-store --evidence ev.db --json", EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.out, "{\"kind\":\"store_ok\",\"rows\":4,\"signatures_verified\":0}\n");
    assert_non_null(strstr(o.err, "were not checked"));
    out_free(&o);

    /* prune with the key: the older cdn-a row goes, a checkpoint counts it */
    o = run(e, "%s evidence prune --evidence ev.db --keep 0s --keep-mismatch 0s --store-key-file key --json && "
            "%s evidence verify-store --evidence ev.db --store-key-file key --json", EXACTAV, EXACTAV);
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "\"evidence\": 1"));
    assert_non_null(strstr(o.out, "{\"kind\":\"store_ok\",\"rows\":3,\"signatures_verified\":0,\"macs_verified\":3,"
                                  "\"checkpoints_verified\":2}"));
    out_free(&o);

    /* a writer without the key, on a keyed store: 65, nothing written */
    assert_int_equal(sh("cd %s && cp ev.db before.db", e->dir), 0);
    o = run(e, "%s verify --json --no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts --path-id cdn-n "
            "--evidence ev.db", EXACTAV, FX, FX);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "--store-key-file"));
    out_free(&o);
    /* nor can plain sqlite3 delete a row while the triggers stand */
    o = run(e, "%s evidence import i.json --evidence ev.db; echo $?; %s evidence prune --evidence ev.db --keep 0s; "
            "echo $?; sqlite3 ev.db \"DELETE FROM evidence_rows WHERE path_id = 'cdn-b'\" 2>&1 | "
            "grep -c 'no such function: exactav_mac'; cmp ev.db before.db && sqlite3 ev.db 'select count(*) from "
            "evidence'", EXACTAV, EXACTAV);
    assert_string_equal(o.out, "65\n65\n1\n3\n");
    out_free(&o);

    /* a row deleted with the triggers dropped: row_deleted, exit 3 */
    assert_int_equal(sh("cd %s && cp ev.db head.db && cp ev.db edit.db && sqlite3 ev.db \"DROP TRIGGER "
                        "evidence_mac_delete; DELETE FROM fetches WHERE evidence_id IN (SELECT id FROM evidence "
                        "WHERE path_id = 'cdn-b'); DELETE FROM evidence_rows WHERE path_id = 'cdn-b'; DELETE FROM "
                        "evidence_macs WHERE id NOT IN (SELECT id FROM evidence_rows)\"", e->dir), 0);
    assert_keyed_finding(e, "ev.db", "row_deleted", "evidence_head");
    o = run(e, "%s evidence verify-store --evidence ev.db", EXACTAV); /* the rules alone see nothing */
    assert_int_equal(o.rc, 0);
    out_free(&o);
    /* stepctl serve --evidence-key-file: the same check at start, 66 for a tampered store, the
     * clean one served (still running when timeout stops it) */
    o = run(e, "printf '{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://127.0.0.1:9/a.m3u8\"}, "
            "\"auth\": {\"type\": \"none\"}}}}' > paths.json; for ev in ev.db before.db; do timeout 3 %s serve "
            "--db c.db --listen 127.0.0.1:0 --paths paths.json --evidence $ev --evidence-key-file key 2>>serve.err; "
            "echo $?; done; %s serve --db c.db --listen 127.0.0.1:0 --paths paths.json --evidence before.db "
            "--evidence-key-file open 2>/dev/null; echo $?; grep -c 'store_tampered: evidence_head 1 breaks "
            "row_deleted' serve.err", STEPCTL_BIN, STEPCTL_BIN);
    assert_string_equal(o.out, "66\n124\n65\n1\n");
    out_free(&o);
    /* a column changed: row_mac_mismatch naming the row (table evidence) */
    assert_int_equal(sh("cd %s && sqlite3 edit.db \"UPDATE evidence_rows SET observed_end_ms = observed_end_ms "
                        "+ 1 WHERE path_id = 'cdn-b'\"", e->dir), 0);
    assert_keyed_finding(e, "edit.db", "row_mac_mismatch", "evidence");
    /* the head changed: head_mismatch */
    assert_int_equal(sh("cd %s && sqlite3 head.db \"UPDATE evidence_head SET n = n - 1\"", e->dir), 0);
    assert_keyed_finding(e, "head.db", "head_mismatch", "evidence_head");

    /* a wrong key is 65, never tampering; a key file others can read is 65 */
    o = run(e, "%s evidence verify-store --evidence before.db --store-key-file other --json", EXACTAV);
    assert_int_equal(o.rc, 65);
    assert_non_null(strstr(o.err, "the key does not match"));
    assert_absent(o.out, "store_tampered");
    out_free(&o);
    o = run(e, "%s evidence verify-store --evidence before.db --store-key-file open; echo $?; %s verify "
            "--no-progress --reference %s/ref.ts --candidate %s/cand_copy.ts --evidence before.db "
            "--store-key-file open; echo $?", EXACTAV, EXACTAV, FX, FX);
    assert_string_equal(o.out, "65\n65\n");
    assert_non_null(strstr(o.err, "chmod 600"));
    assert_absent(o.err, secret);
    out_free(&o);
    /* an unkeyed store checked with a key: store_not_keyed */
    assert_int_equal(sh("cd %s && %s evidence import i.json --evidence plain.db >/dev/null", e->dir, EXACTAV), 0);
    assert_keyed_finding(e, "plain.db", "store_not_keyed", NULL);
    /* the key's bytes are in no file but the key file */
    o = run(e, "grep -rlF '%s' . | sort", secret);
    assert_string_equal(o.out, "./key\n./open\n");
    out_free(&o);
}

/* The canary writes a keyed store with --store-key-file, and refuses to
 * write a keyed store without it. */
static void case_29_canary_store_key_file(void **state)
{
    struct env *e = *state;
    canary_one_target(e);
    struct out o = run(e, "head -c 40 /dev/urandom > key && chmod 600 key && %s canary --once --config cfg.json "
                       "--evidence ev.db --store-key-file key > /dev/null; echo $?; %s evidence verify-store "
                       "--evidence ev.db --store-key-file key --json; cp ev.db before.db; %s canary --once --config "
                       "cfg.json --evidence ev.db > /dev/null 2> keyless.err; echo $?; grep -c -- --store-key-file "
                       "keyless.err; cmp ev.db before.db && echo unchanged", EXACTAV, EXACTAV, EXACTAV);
    assert_string_equal(o.out, "0\n{\"kind\":\"store_ok\",\"rows\":1,\"signatures_verified\":0,\"macs_verified\":1,"
                               "\"checkpoints_verified\":1}\n65\n1\nunchanged\n");
    out_free(&o);
}

#define CASE(name) {#name, case_##name}
static const struct {
    const char *name;
    CMUnitTestFunction fn;
} cases[] = {
    CASE(01_secrets_never_stored_or_printed),
    CASE(02_unusable_url_never_echoed),
    CASE(03_redirect_to_other_host_followed_and_marked),
    CASE(04_redirect_outside_allowed_hosts_is_unknown),
    CASE(05_reference_beyond_max_resolution_exit_65),
    CASE(06_candidate_beyond_max_resolution_unknown),
    CASE(07_max_size_capped_and_total_counted_while_arriving),
    CASE(08_deadline_exceeded_is_unknown),
    CASE(09_close_delimited_short_body_is_length_unproven),
    CASE(10_too_many_streams_named),
    CASE(11_local_candidate_not_regular_file_exit_66_nothing_stored),
    CASE(12_control_characters_escaped_in_both_programs),
    CASE(13_json_error_object_on_every_failure),
    CASE(14_small_usage_rules),
    CASE(21_causes_not_symptoms),
    CASE(22_verify_sign_key_signs_what_it_prints_and_stores),
    CASE(23_import_trusted_keys_refuses_tampered_unsigned_and_unknown),
    CASE(24_unusable_keys_refused),
    CASE(25_canary_sign_key_signs_what_it_stores),
    CASE(26_evidence_verify_store_names_the_first_broken_row),
    CASE(27_verify_allocation_id_and_pathway_stored),
    CASE(28_keyed_evidence_store_names_deleted_rows),
    CASE(29_canary_store_key_file),
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 2;
    }
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]))
            continue;
        const struct CMUnitTest t[] = {{cases[i].name, cases[i].fn, env_setup, env_teardown, NULL}};
        char group[96];
        snprintf(group, sizeof group, "cli_%s", cases[i].name);
        return _cmocka_run_group_tests(group, t, 1, NULL, NULL);
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
