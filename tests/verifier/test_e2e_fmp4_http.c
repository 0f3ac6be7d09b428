/* test_e2e_fmp4_http.c - fMP4/CMAF playlists (EXT-X-MAP, issue 20) through
 * HTTP, end to end: exactav-testd on 127.0.0.1 serves the committed fMP4
 * fixtures (fixtures/README.md, "fMP4/CMAF") under playlists whose init
 * segment is named once, changes, repeats, is missing or is a byte range;
 * exactav verify fetches every init segment through its fetch path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "test_shell.h"
#include "testd_run.h"

#define OFFSET "-60"             /* the fixtures' declared mapping */

struct env {
    char dir[64];
    pid_t server;
    int port;
};

/* exactav verify of playlist PATH (under the server's root) against ref.ts;
 * returns the exit code and the report (NULL when none). */
static int verify(const struct env *e, const char *path, json_t **report)
{
    int rc = test_shell("%s verify --json --reference %s/ref.ts --time-offset " OFFSET
                   " --candidate http://127.0.0.1:%d/%s >%s/out.json 2>%s/err.txt",
                   EXACTAV_BIN, FIXTURES_DIR, e->port, path, e->dir, e->dir);
    char out[128];
    snprintf(out, sizeof out, "%s/out.json", e->dir);
    *report = json_load_file(out, 0, NULL);
    if (rc != 0)                 /* what it said, for a failing test's log */
        test_shell("cat %s/err.txt; grep -A3 delivery_failure %s/out.json; echo", e->dir, e->dir);
    return rc;
}

static const char *field(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static size_t fetches(const json_t *r)
{
    return json_array_size(json_object_get(r, "fetches"));
}

#define HEAD "#EXTM3U\\n#EXT-X-VERSION:7\\n#EXT-X-TARGETDURATION:1\\n#EXT-X-MEDIA-SEQUENCE:0\\n"
#define SEG(n) "#EXTINF:1.0,\\nref_fmp4_" #n ".m4s\\n"
#define MAP(u) "#EXT-X-MAP:URI=\"" u "\"\\n"

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/exactav-fmp4-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    /* init2.mp4: the same tracks, one byte of the mvhd's creation_time
     * changed: another init segment for the same media */
    assert_int_equal(test_shell("cd %s && cp %s/ref_fmp4* . && cp ref_fmp4_init.mp4 init2.mp4 && "
                           "off=$(LC_ALL=C grep -obUa mvhd init2.mp4 | head -1 | cut -d: -f1) && "
                           "printf '\\001' | dd of=init2.mp4 bs=1 seek=$((off + 11)) conv=notrunc status=none && "
                           "cat ref_fmp4_init.mp4 ref_fmp4_[0-3].m4s > all.mp4",
                           e->dir, FIXTURES_DIR), 0);
    assert_int_equal(test_shell("cd %s && "
                           "printf '" HEAD MAP("ref_fmp4_init.mp4") SEG(0) SEG(1) MAP("init2.mp4") SEG(2) SEG(3)
                           "#EXT-X-ENDLIST\\n' > changed.m3u8 && "
                           "printf '" HEAD MAP("ref_fmp4_init.mp4") SEG(0) SEG(1) MAP("ref_fmp4_init.mp4") SEG(2)
                           SEG(3) "#EXT-X-ENDLIST\\n' > repeated.m3u8 && "
                           "printf '" HEAD SEG(0) SEG(1) "#EXT-X-ENDLIST\\n' > nomap.m3u8 && "
                           "printf '" HEAD MAP("gone.mp4") SEG(0) SEG(1) "#EXT-X-ENDLIST\\n' > gone.m3u8",
                           e->dir), 0);
    /* one file: the init segment and every media segment as byte ranges */
    assert_int_equal(test_shell("cd %s && i=$(stat -c %%s ref_fmp4_init.mp4) && { printf '" HEAD
                           "#EXT-X-MAP:URI=\"all.mp4\",BYTERANGE=\"%%d@0\"\\n' $i; "
                           "for n in 0 1 2 3; do printf '#EXTINF:1.0,\\n#EXT-X-BYTERANGE:%%d\\nall.mp4\\n' "
                           "$(stat -c %%s ref_fmp4_$n.m4s); done; echo '#EXT-X-ENDLIST'; } > ranges.m3u8 && "
                           "sed -i '0,/^#EXT-X-BYTERANGE:\\([0-9]*\\)$/s//#EXT-X-BYTERANGE:\\1@'$i'/' ranges.m3u8",
                           e->dir), 0);
    e->port = testd_run_start(TESTD_BIN, e->dir, &e->server);
    assert_true(e->port > 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    testd_run_stop(e->server);
    test_shell("rm -rf %s", e->dir);
    free(e);
    return 0;
}

/* FFmpeg's own fMP4 playlist: its init segment fetched once, then the
 * segments; the TS reference MATCHes by decoder input. */
static void t01_fmp4_playlist_matches_the_ts_reference(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(verify(e, "ref_fmp4.m3u8", &r), 0);
    assert_string_equal(field(r, "verdict"), "MATCH");
    assert_string_equal(field(r, "compare"), "decoder-input");
    assert_string_equal(field(json_object_get(r, "candidate"), "container"), "fmp4");
    assert_int_equal(fetches(r), 6);   /* playlist, init, 4 segments */
    json_decref(r);
}

/* A MAP that changes mid-playlist is fetched and read from where it
 * applies; the same MAP named again is not fetched again. */
static void t02_map_that_changes_or_repeats(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(verify(e, "changed.m3u8", &r), 0);
    assert_string_equal(field(r, "verdict"), "MATCH");
    assert_int_equal(fetches(r), 7);   /* playlist, 2 inits, 4 segments */
    json_decref(r);
    assert_int_equal(verify(e, "repeated.m3u8", &r), 0);
    assert_string_equal(field(r, "verdict"), "MATCH");
    assert_int_equal(fetches(r), 6);
    json_decref(r);
}

/* The init segment and the media segments as byte ranges of one file. */
static void t03_map_byterange(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(verify(e, "ranges.m3u8", &r), 0);
    assert_string_equal(field(r, "verdict"), "MATCH");
    json_decref(r);
}

/* No init segment, or one the CDN does not deliver: UNKNOWN, never MATCH
 * nor MISMATCH. */
static void t04_missing_init_segment_is_unknown(void **state)
{
    struct env *e = *state;
    json_t *r;
    assert_int_equal(verify(e, "nomap.m3u8", &r), 2);
    assert_string_equal(field(r, "reason"), "mp4_missing_init");
    json_decref(r);
    assert_int_equal(verify(e, "gone.m3u8", &r), 2);
    assert_string_equal(field(r, "verdict"), "UNKNOWN");
    assert_string_equal(field(r, "reason"), "http_error");
    json_decref(r);
}

/* The evidence row names the container (schema v4): fmp4 here, ts for a
 * TS candidate. */
static void t05_evidence_row_names_the_container(void **state)
{
    struct env *e = *state;
    assert_int_equal(test_shell("%s verify --reference %s/ref.ts --time-offset " OFFSET " --evidence %s/ev.db "
                                "--candidate http://127.0.0.1:%d/ref_fmp4.m3u8 >/dev/null 2>&1",
                                EXACTAV_BIN, FIXTURES_DIR, e->dir, e->port), 0);
    assert_int_equal(test_shell("%s verify --reference %s/ref.ts --evidence %s/ev.db --candidate %s/ref.ts "
                                ">/dev/null 2>&1", EXACTAV_BIN, FIXTURES_DIR, e->dir, FIXTURES_DIR), 0);
    assert_int_equal(test_shell("test \"$(sqlite3 %s/ev.db \"select group_concat(container, ',') from "
                                "(select container from evidence order by observed_at_ms)\")\" = fmp4,ts",
                                e->dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_fmp4_playlist_matches_the_ts_reference),
        cmocka_unit_test(t02_map_that_changes_or_repeats),
        cmocka_unit_test(t03_map_byterange),
        cmocka_unit_test(t04_missing_init_segment_is_unknown),
        cmocka_unit_test(t05_evidence_row_names_the_container),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
