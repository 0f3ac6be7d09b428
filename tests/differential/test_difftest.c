/* test_difftest.c - the instrument's own tests: the TS tools keep what they
 * promise to keep (checked by FFmpeg's decode), and the runner fails a case
 * whose verdict the oracle does not accept (checked with a stub verifier
 * that always answers the same).  Real ffmpeg, real files in a temp dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

struct env {
    char dir[64];
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

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/difftest-test-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    /* 1 s of 160x90 video (2 B-frames, GOP 10) and AAC stereo, muxed by ffmpeg */
    assert_int_equal(sh("cd %s && ffmpeg -nostdin -hide_banner -loglevel error -f lavfi "
                        "-i testsrc2=s=160x90:r=30:d=1 -f lavfi -i 'sine=f=440:r=48000:d=1' "
                        "-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -c:v libx264 "
                        "-x264-params keyint=10:bframes=2:threads=1 -threads 1 -c:a aac -ac 2 "
                        "-f mpegts in.ts", e->dir), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    sh("rm -rf %s", e->dir);
    free(e);
    return 0;
}

/* Same decoded video and audio, and a clean decode (-xerror). */
static int same_decode(const struct env *e, const char *a, const char *b)
{
    return sh("cd %s && for f in %s %s; do ffmpeg -nostdin -v error -threads 1 -xerror -i $f "
              "-map 0:v -map 0:a -c:a pcm_f32le -f framemd5 - | grep -v '^#' | cut -d, -f1,3,6 "
              ">$f.md5 || exit 1; done; cmp -s %s.md5 %s.md5",
              e->dir, a, b, a, b);
}

static void differential_02_split_join_roundtrip(void **state)
{
    struct env *e = *state;
    /* a byte split joins back to the very same bytes */
    assert_int_equal(sh("cd %s && %s split in.ts b bytes 100 250 && %s join j.ts b0.ts b1.ts b2.ts "
                        "&& cmp -s in.ts j.ts", e->dir, TSEDIT_BIN, TSEDIT_BIN), 0);
    /* byte ranges of one file merge before joining */
    assert_int_equal(sh("cd %s && %s join r.ts in.ts@0:18800 in.ts@18800:$(( $(stat -c %%s in.ts) - 18800 )) "
                        "&& cmp -s in.ts r.ts", e->dir, TSEDIT_BIN), 0);
    /* independently written segments: their plain concatenation is damage to
     * FFmpeg (class 6), the join decodes like the original */
    assert_int_equal(sh("cd %s && %s split in.ts s restart 100 250", e->dir, TSEDIT_BIN), 0);
    assert_int_not_equal(sh("cd %s && cat s0.ts s1.ts s2.ts >cat.ts && ffmpeg -nostdin -v quiet "
                            "-threads 1 -xerror -i cat.ts -f null -", e->dir), 0);
    assert_int_equal(sh("cd %s && %s join sj.ts s0.ts s1.ts s2.ts", e->dir, TSEDIT_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "sj.ts"), 0);
    /* continue mode: PAT/PMT repeated, counters continuous: a clean stream as it is */
    assert_int_equal(sh("cd %s && %s split in.ts c continue 100 250 && cat c0.ts c1.ts c2.ts >cc.ts",
                        e->dir, TSEDIT_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "cc.ts"), 0);
}

static void differential_03_repack_keeps_decode(void **state)
{
    struct env *e = *state;
    static const char *const kinds[] = {"audio", "id3", "scte35", "private"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(sh("cd %s && %s addprog in.ts p.ts %s", e->dir, TSREPACK_BIN, kinds[i]), 0);
        assert_int_equal(same_decode(e, "in.ts", "p.ts"), 0);
    }
    assert_int_equal(sh("cd %s && %s pcrpid in.ts q.ts 0x1f0", e->dir, TSREPACK_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "q.ts"), 0);
    assert_int_equal(sh("cd %s && %s nalstrip in.ts n.ts 256 9,6 0", e->dir, TSREPACK_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "n.ts"), 0);
    assert_int_equal(sh("cd %s && %s pessplit in.ts m.ts 256 middle 0", e->dir, TSREPACK_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "m.ts"), 0);
    assert_int_equal(sh("cd %s && %s stype in.ts t.ts 257 0x11", e->dir, TSREPACK_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "t.ts"), 0);
    assert_int_equal(sh("cd %s && %s nulls in.ts u.ts 3", e->dir, TSEDIT_BIN), 0);
    assert_int_equal(same_decode(e, "in.ts", "u.ts"), 0);
    /* a shift and its inverse restore every byte */
    assert_int_equal(sh("cd %s && %s shift in.ts x.ts 1920 257 && %s shift x.ts y.ts -1920 257 && "
                        "cmp -s in.ts y.ts && ! cmp -s in.ts x.ts", e->dir, TSEDIT_BIN, TSEDIT_BIN), 0);
    /* droppes: one video frame fewer, still a clean stream (no continuity gap) */
    assert_int_equal(sh("cd %s && %s droppes in.ts d.ts 256 3 && ffmpeg -nostdin -v quiet -threads 1 "
                        "-xerror -i d.ts -map 0:v -f framemd5 d.md5 && ffmpeg -nostdin -v quiet -threads 1 "
                        "-i in.ts -map 0:v -f framemd5 i.md5 && "
                        "test $(grep -vc '^#' d.md5) -eq $(( $(grep -vc '^#' i.md5) - 1 ))",
                        e->dir, TSEDIT_BIN), 0);
    /* refusals leave nothing behind */
    assert_int_not_equal(sh("cd %s && %s droppes in.ts z.ts 256 99999 2>/dev/null", e->dir, TSEDIT_BIN), 0);
    assert_int_not_equal(sh("cd %s && %s stype in.ts z.ts 999 0x11 2>/dev/null", e->dir, TSREPACK_BIN), 0);
    assert_int_not_equal(sh("cd %s && test -e z.ts", e->dir), 0);
}

/* A stub "exactav" that answers with exit code $1 whatever it is asked. */
static void write_stub(const struct env *e, const char *name, int code)
{
    assert_int_equal(sh("cd %s && printf '#!/bin/sh\\nexit %d\\n' >%s && chmod +x %s", e->dir, code,
                        name, name), 0);
}

static void differential_04_runner_fails_a_wrong_verdict(void **state)
{
    struct env *e = *state;
    write_stub(e, "says-match", 0);
    write_stub(e, "says-unknown", 2);
    const char *common = "--tools " TOOLS_DIR " --testd " TESTD_BIN;
    /* identical content: MATCH is right */
    assert_int_equal(sh("%s run %s --exactav %s/says-match --work %s/w1 --case pack_copy:1 >%s/o1",
                        DIFFTEST_BIN, common, e->dir, e->dir, e->dir), 0);
    /* one pixel differs: MATCH is wrong, the recipe is printed */
    assert_int_equal(sh("%s run %s --exactav %s/says-match --work %s/w2 --case edit_pixel:1 >%s/o2",
                        DIFFTEST_BIN, common, e->dir, e->dir, e->dir), 1);
    assert_int_equal(sh("grep -q '^DISAGREE  *edit_pixel' %s/o2 && grep -q 'drawbox=x=' %s/o2 && "
                        "grep -q 'recipe.sh' %s/o2", e->dir, e->dir, e->dir), 0);
    /* a lost packet: UNKNOWN is right, MATCH is not */
    assert_int_equal(sh("%s run %s --exactav %s/says-unknown --work %s/w3 --case dmg_lost_packet:1 >%s/o3",
                        DIFFTEST_BIN, common, e->dir, e->dir, e->dir), 0);
    assert_int_equal(sh("%s run %s --exactav %s/says-match --work %s/w4 --case dmg_lost_packet:1 >%s/o4",
                        DIFFTEST_BIN, common, e->dir, e->dir, e->dir), 1);
    /* a known failure is printed but does not fail the run */
    assert_int_equal(sh("cd %s && printf 'edit_pixel 1 known stub\\n' >cases.tsv && %s run %s "
                        "--exactav %s/says-match --work %s/w5 --cases cases.tsv >o5 && grep -q '^known' o5",
                        e->dir, DIFFTEST_BIN, common, e->dir, e->dir), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential_02_split_join_roundtrip),
        cmocka_unit_test(differential_03_repack_keeps_decode),
        cmocka_unit_test(differential_04_runner_fails_a_wrong_verdict),
    };
    if (argc > 1) {
        /* a name that matches nothing must fail, not pass with 0 tests */
        bool known = false;
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
            known = known || strcmp(tests[i].name, argv[1]) == 0;
        if (!known) {
            fprintf(stderr, "no test named %s\n", argv[1]);
            return 1;
        }
        cmocka_set_test_filter(argv[1]);
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
