/* test_report_html.c - `exactav report` (issue 22) rendered by Debian's
 * headless chromium: an evidence store filled by real `exactav verify
 * --diff-dir` runs over the fixtures (MATCH, a video and an audio
 * MISMATCH, an UNKNOWN) and real probe rows, with markup in a path id;
 * the page's DOM (chromium --dump-dom) must show the timeline, the probes
 * and links to the pictures, and the markup only as text; a screenshot
 * must be written.  Skipped (77) without chromium. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "evidence.h"

#define FX FIXTURES_DIR "/"
#define CHROMIUM "/usr/bin/chromium"
#define HOSTILE "<b id=\"x\">cdn</b>&"

struct rig {
    char dir[512];
};

static void sh(const char *cmd, int want)
{
    int rc = system(cmd);
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != want)
        fail_msg("'%s' exited %d, wanted %d", cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, want);
}

/* One `exactav verify` into the store; want: its exit code (the verdict). */
static void verify(const struct rig *r, const char *cand, const char *path_id, int want)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s verify --reference " FX "ref.ts --candidate " FX "%s --evidence %s/e.db --diff-dir %s/pics"
             " --path-id '%s' --channel ch1 --rendition 720p --program-version v1 --no-progress >/dev/null",
             EXACTAV_BIN, cand, r->dir, r->dir, path_id);
    sh(cmd, want);
}

static void add_probe(struct evidence_db *db, const char *id, const char *path_id, enum evidence_probe_status st,
                      const char *reason)
{
    char err[512];
    struct evidence_probe p = {.id = id, .path_id = path_id, .channel = "ch1", .rendition = "720p",
                               .object = "https://cdn.example/live/720p.m3u8", .status = st, .reason = reason,
                               .observed_at_ms = evidence_now_ms(), .observed_end_ms = evidence_now_ms(),
                               .playlist_status = {true, 200}, .tcp_connect_ms = {true, 3}};
    if (evidence_probe_insert(db, &p, err, sizeof err) != EVIDENCE_OK)
        fail_msg("probe: %s", err);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void fill_store(const struct rig *r)
{
    verify(r, "cand_copy.ts", "cdn-a", 0);
    verify(r, "cand_pixels.ts", "cdn-a", 1);
    verify(r, "cand_audio.ts", "cdn-a", 1);
    verify(r, "cand_trunc_mid_packet.ts", "cdn-a", 2);
    verify(r, "cand_copy.ts", HOSTILE, 0);
    char db_path[600], err[512], id1[37], id2[37];
    struct evidence_db *db = NULL;
    snprintf(db_path, sizeof db_path, "%s/e.db", r->dir);
    assert_int_equal(evidence_open(db_path, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(evidence_new_id(id1), EVIDENCE_OK);
    assert_int_equal(evidence_new_id(id2), EVIDENCE_OK);
    add_probe(db, id1, "cdn-a", EVIDENCE_PROBE_PASS, "ok");
    add_probe(db, id2, HOSTILE, EVIDENCE_PROBE_VIOLATION, "segment_http_status");
    evidence_close(db);
}

/* chromium's DOM of the page, after it loaded (images from files too). */
static char *dump_dom(const struct rig *r)
{
    char cmd[4096], out[600];
    snprintf(out, sizeof out, "%s/dom.html", r->dir);
    snprintf(cmd, sizeof cmd,
             "timeout 120 " CHROMIUM " --headless=new --no-sandbox --disable-gpu --no-first-run"
             " --disable-background-networking --disable-component-update --disable-sync"
             " --user-data-dir=%s/prof --dump-dom file://%s/report.html >%s 2>%s/chromium.log",
             r->dir, r->dir, out, r->dir);
    sh(cmd, 0);
    return slurp(out);
}

static void t01_report_renders_timeline_probes_and_pictures(void **state)
{
    struct rig *r = *state;
    fill_store(r);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s report --evidence %s/e.db --out %s/report.html --since 1h >/dev/null",
             EXACTAV_BIN, r->dir, r->dir);
    sh(cmd, 0);
    char *dom = dump_dom(r);
    assert_non_null(strstr(dom, "exactav evidence report"));
    /* the timeline of cdn-a: one box per check, in time order */
    assert_non_null(strstr(dom, "cdn-a · ch1 · 720p · v1"));
    assert_int_equal(count(dom, "class=\"seg MATCH\""), 2 + 1);       /* 2 checks + the legend */
    assert_int_equal(count(dom, "class=\"seg MISMATCH\""), 2 + 1);
    assert_int_equal(count(dom, "class=\"seg UNKNOWN u0\""), 1 + 1);
    assert_non_null(strstr(dom, "truncated_ts_packet"));
    assert_non_null(strstr(dom, "4 checks: 1 MATCH, 2 MISMATCH, 1 UNKNOWN"));
    /* links to the pictures the reports name, and the files are there */
    assert_int_equal(count(dom, "-video-difference.png\""), 2);    /* the link and its thumbnail */
    assert_int_equal(count(dom, "-audio-difference.png\""), 2);
    const char *href = strstr(dom, "href=\"file://");
    assert_non_null(href);
    char file[1024];
    assert_int_equal(sscanf(href, "href=\"file://%1000[^\"]\"", file), 1);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    /* the probes */
    assert_non_null(strstr(dom, "segment_http_status"));
    assert_non_null(strstr(dom, ">VIOLATION<"));
    assert_non_null(strstr(dom, ">PASS<"));
    /* markup from the store is text, never an element */
    assert_null(strstr(dom, "<b id=\"x\">"));
    assert_int_equal(count(dom, "&lt;b id=\"x\"&gt;cdn&lt;/b&gt;&amp;"), 2);   /* its timeline and its probe */
    /* nothing but the page and its pictures: no script in it */
    char *page = NULL;
    snprintf(file, sizeof file, "%s/report.html", r->dir);
    page = slurp(file);
    assert_null(strstr(page, "<script"));
    assert_null(strstr(page, "http://"));
    assert_non_null(strstr(page, "Content-Security-Policy"));
    free(page);
    free(dom);
}

static void t02_screenshot(void **state)
{
    struct rig *r = *state;
    char cmd[4096], shot[600];
    snprintf(shot, sizeof shot, "%s/shot.png", r->dir);
    snprintf(cmd, sizeof cmd,
             "timeout 120 " CHROMIUM " --headless=new --no-sandbox --disable-gpu --no-first-run"
             " --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars"
             " --user-data-dir=%s/prof --window-size=1000,700 --screenshot=%s file://%s/report.html"
             " >/dev/null 2>>%s/chromium.log",
             r->dir, shot, r->dir, r->dir);
    sh(cmd, 0);
    char *png = slurp(shot);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    free(png);
}

static void t03_usage_errors(void **state)
{
    struct rig *r = *state;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s report --evidence %s/e.db 2>/dev/null", EXACTAV_BIN, r->dir);
    sh(cmd, 64);
    snprintf(cmd, sizeof cmd, "%s report --evidence %s/e.db --out %s/x.html --since yesterday 2>/dev/null",
             EXACTAV_BIN, r->dir, r->dir);
    sh(cmd, 64);
    snprintf(cmd, sizeof cmd, "%s report --evidence %s/absent.db --out %s/x.html 2>/dev/null", EXACTAV_BIN,
             r->dir, r->dir);
    sh(cmd, 66);
}

/* verify names the pictures in its human output and in --json. */
static void t04_verify_names_the_pictures(void **state)
{
    struct rig *r = *state;
    char cmd[4096], out[600];
    snprintf(out, sizeof out, "%s/verify.txt", r->dir);
    snprintf(cmd, sizeof cmd, "%s verify --reference " FX "ref.ts --candidate " FX "cand_pixels.ts --diff-dir %s/v"
             " --no-progress >%s", EXACTAV_BIN, r->dir, out);
    sh(cmd, 1);
    char *text = slurp(out);
    assert_int_equal(count(text, "picture:  video_"), 3);
    assert_non_null(strstr(text, "-video-difference.png\n"));
    free(text);
    snprintf(cmd, sizeof cmd, "%s verify --reference " FX "ref.ts --candidate " FX "cand_audio.ts --diff-dir %s/v"
             " --no-progress --json | grep -q '\"audio_plot\": \"%s/v/.*-audio-difference.png\"'",
             EXACTAV_BIN, r->dir, r->dir);
    sh(cmd, 0);
}

static int setup(void **state)
{
    static struct rig r;
    const char *tmp = getenv("TMPDIR");
    snprintf(r.dir, sizeof r.dir, "%s/test_report_html-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(r.dir))
        return -1;
    *state = &r;
    return 0;
}

static int teardown(void **state)
{
    struct rig *r = *state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    if (access(CHROMIUM, X_OK)) {
        printf("SKIPPED: no %s (Debian package chromium, scripts/install-deps)\n", CHROMIUM);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_report_renders_timeline_probes_and_pictures),
        cmocka_unit_test(t02_screenshot),
        cmocka_unit_test(t03_usage_errors),
        cmocka_unit_test(t04_verify_names_the_pictures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
