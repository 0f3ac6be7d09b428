/* test_e2e_verify.c - the exactav binary end to end: every fixture of
 * fixtures/expected.tsv, bindings, usage and profile errors, and real
 * segments of the shared corpus (skipped when it is absent). */
#include <setjmp.h>
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

#define FX FIXTURES_DIR "/"

/* Runs `exactav ARGS`, returns its exit code; *out gets stdout parsed as
 * JSON when it is JSON (else NULL). */
static int run(json_t **out, const char *fmt, ...)
{
    char args[4096], cmd[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", EXACTAV_BIN, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int c;
    while ((c = fgetc(p)) != EOF) {
        if (len + 1 >= cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
        }
        buf[len++] = (char)c;
    }
    int status = pclose(p);
    if (out) {
        *out = buf ? json_loadb(buf, len, 0, NULL) : NULL;
    }
    free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *jstr(const json_t *o, const char *path1, const char *path2)
{
    const json_t *v = json_object_get(o, path1);
    if (path2)
        v = json_object_get(v, path2);
    return json_string_value(v);
}

static long long jint(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return (long long)json_integer_value(v);
}

/* The contract's required fields, on every report. */
static void check_contract(const json_t *r)
{
    static const char *top[] = {"verdict", "reason", "observed_at", "evidence_id", "check_kind"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        assert_true(json_is_string(json_object_get(r, top[i])));
    assert_true(json_is_string(json_object_get(json_object_get(r, "profile"), "id")));
    assert_int_equal(strlen(jstr(r, "profile", "fingerprint")), 64);
    assert_true(json_is_integer(json_object_get(json_object_get(r, "interval"), "start")));
    assert_true(json_is_integer(json_object_get(json_object_get(r, "interval"), "end")));
    const json_t *v = json_object_get(r, "video");
    static const char *vk[] = {"reference_frames", "candidate_frames", "compared_frames"};
    for (size_t i = 0; i < 3; i++)
        assert_true(json_is_integer(json_object_get(v, vk[i])));
    assert_non_null(json_object_get(v, "first_mismatch"));
    const json_t *a = json_object_get(r, "audio");
    assert_non_null(a);
    if (json_is_object(a)) {
        assert_true(json_is_integer(json_object_get(a, "reference_samples")));
        assert_true(json_is_integer(json_object_get(a, "candidate_samples")));
        assert_non_null(json_object_get(a, "first_mismatch"));
    }
}

/* A reference column "a.ts+b.ts+..." is a binding of those files, in order
 * (made in dir); otherwise the fixture itself.  out: what --reference gets. */
static void reference_arg(const char *ref, const char *dir, char *out, size_t outlen)
{
    if (!strchr(ref, '+')) {
        snprintf(out, outlen, FX "%s", ref);
        return;
    }
    char files[2048] = "", copy[512];
    snprintf(copy, sizeof copy, "%s", ref);
    for (char *save = NULL, *f = strtok_r(copy, "+", &save); f; f = strtok_r(NULL, "+", &save)) {
        size_t used = strlen(files);
        snprintf(files + used, sizeof files - used, " " FX "%s", f);
    }
    snprintf(out, outlen, "%s/ref.json", dir);
    assert_int_equal(run(NULL, "bind --channel ch --program-version pv --rendition r --out %s%s", out, files), 0);
}

static void check_case(const char *name, const char *ref, const char *cand, const char *args,
                       const char *verdict, int exit_code, const char *reason)
{
    json_t *r = NULL;
    char dir[] = "/tmp/exactav-e2e-case-XXXXXX", refarg[512];
    assert_non_null(mkdtemp(dir));
    reference_arg(ref, dir, refarg, sizeof refarg);
    int rc = run(&r, "verify --json --reference %s --candidate " FX "%s %s", refarg, cand,
                 strcmp(args, "-") ? args : "");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    print_message("  %-22s exit %d (want %d) %s\n", name, rc, exit_code, r ? jstr(r, "verdict", NULL) : "-");
    assert_int_equal(rc, exit_code);
    if (!strcmp(verdict, "REFUSED") || !strcmp(verdict, "USAGE")) {   /* no report */
        json_decref(r);
        return;
    }
    assert_non_null(r);
    check_contract(r);
    assert_string_equal(jstr(r, "verdict", NULL), verdict);
    if (reason && strcmp(reason, "-"))
        assert_string_equal(jstr(r, "reason", NULL), reason);
    const json_t *v = json_object_get(r, "video"), *a = json_object_get(r, "audio");
    bool has_first = !json_is_null(json_object_get(v, "first_mismatch")) ||
                     (json_is_object(a) && !json_is_null(json_object_get(a, "first_mismatch")));
    if (!strcmp(verdict, "MATCH")) {
        /* never MATCH over nothing, never MATCH with anything left uncompared */
        assert_true(jint(r, "video", "reference_frames") > 0);
        assert_int_equal(jint(r, "video", "compared_frames"), jint(r, "video", "reference_frames"));
        assert_int_equal(jint(r, "video", "candidate_frames"), jint(r, "video", "reference_frames"));
        if (json_is_object(a))
            assert_int_equal(jint(r, "audio", "candidate_samples"), jint(r, "audio", "reference_samples"));
    }
    /* a MISMATCH names its first difference, unless the difference is the
     * track set itself (one more track: nothing in the compared ones differs) */
    assert_true(has_first == !strcmp(verdict, "MISMATCH") || !strcmp(jstr(r, "reason", NULL), "track_set"));
    json_decref(r);
}

static void t01_every_fixture_gives_its_expected_verdict(void **state)
{
    (void)state;
    FILE *f = fopen(FX "expected.tsv", "r");
    assert_non_null(f);
    char line[2048];
    int cases = 0;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        char *fields[8], *save = NULL;
        int n = 0;
        line[strcspn(line, "\n")] = '\0';
        for (char *tok = strtok_r(line, "\t", &save); tok && n < 8; tok = strtok_r(NULL, "\t", &save))
            fields[n++] = tok;
        if (n < 6)
            continue;
        check_case(fields[0], fields[1], fields[2], fields[3], fields[4], atoi(fields[5]), n == 8 ? fields[7] : NULL);
        cases++;
    }
    fclose(f);
    assert_true(cases >= 50);
}

static void t02_first_differences_are_located_exactly(void **state)
{
    (void)state;
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference " FX "ref.ts --candidate " FX "cand_pixels.ts"), 1);
    const json_t *fm = json_object_get(json_object_get(r, "video"), "first_mismatch");
    assert_int_equal(jint(fm, "index", NULL), 60);
    assert_int_equal(jint(fm, "pts", NULL), 312000);
    assert_string_equal(jstr(fm, "plane", NULL), "Y");
    assert_int_equal(jint(fm, "x", NULL), 200);
    assert_int_equal(jint(fm, "y", NULL), 120);
    assert_string_equal(jstr(r, "audio", "verdict"), "MATCH");
    json_decref(r);
    assert_int_equal(run(&r, "verify --json --reference " FX "ref.ts --candidate " FX "cand_audio.ts"), 1);
    fm = json_object_get(json_object_get(r, "audio"), "first_mismatch");
    assert_int_equal(jint(fm, "sample_index", NULL), 95232);
    assert_int_equal(jint(fm, "channel", NULL), 0);
    assert_int_equal(jint(fm, "pts", NULL), 310560);
    assert_string_equal(jstr(r, "video", "verdict"), "MATCH");
    json_decref(r);
}

static void t03_damage_never_matches_and_names_its_reason(void **state)
{
    (void)state;
    static const struct { const char *cand, *reason; } cases[] = {
        {"cand_trunc_mid_packet.ts", "truncated_ts_packet"},
        {"cand_lost_video.ts", "continuity_gap"},
        {"cand_lost_audio.ts", "continuity_gap"},
        {"cand_corrupt_video.ts", "corrupt_frame"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *r;
        assert_int_equal(run(&r, "verify --json --reference " FX "ref.ts --candidate " FX "%s", cases[i].cand), 2);
        assert_string_equal(jstr(r, "reason", NULL), cases[i].reason);
        json_decref(r);
    }
}

static void t04_binding_round_trip_and_tampering(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-e2e-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp " FX "ref.ts %s/ref.ts", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run(NULL, "bind --channel ch1 --program-version pv7 --rendition 360p --out %s/ref.json %s/ref.ts",
                         dir, dir), 0);
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference %s/ref.json --candidate " FX "cand_repack.ts", dir), 0);
    assert_string_equal(jstr(r, "context", "channel"), "ch1");
    assert_string_equal(jstr(r, "context", "program_version"), "pv7");
    assert_int_equal(strlen(jstr(r, "context", "reference_version")), 64);
    json_decref(r);
    /* a binding and --interval together is a usage error */
    assert_int_equal(run(NULL, "verify --reference %s/ref.json --candidate " FX "cand_copy.ts --interval 0:1", dir), 64);
    /* the reference file changed after binding: refused before use */
    snprintf(cmd, sizeof cmd, "printf 'x' | dd of=%s/ref.ts bs=1 seek=5000 conv=notrunc status=none", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run(NULL, "verify --reference %s/ref.json --candidate " FX "cand_copy.ts", dir), 65);
    /* the binding itself edited: refused */
    snprintf(cmd, sizeof cmd, "cp " FX "ref.ts %s/ref.ts && sed -i 's/pv7/pv8/' %s/ref.json", dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run(NULL, "verify --reference %s/ref.json --candidate " FX "cand_copy.ts", dir), 65);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void t05_usage_and_unopenable_inputs(void **state)
{
    (void)state;
    assert_int_equal(run(NULL, "verify --reference " FX "ref.ts"), 64);
    assert_int_equal(run(NULL, "verify --reference " FX "ref.ts --candidate " FX "cand_copy.ts --interval 5"), 64);
    assert_int_equal(run(NULL, "verify --reference " FX "ref.ts --candidate " FX "cand_copy.ts --time-offset x"), 64);
    assert_int_equal(run(NULL, "frobnicate"), 64);
    assert_int_equal(run(NULL, "verify --reference /nonexistent.ts --candidate " FX "cand_copy.ts"), 66);
    assert_int_equal(run(NULL, "verify --reference " FX "ref.ts --candidate /nonexistent.ts"), 66);
    assert_int_equal(run(NULL, "verify --help"), 0);
    assert_int_equal(run(NULL, "bind --help"), 0);
    assert_int_equal(run(NULL, "profile --help"), 0);
    /* a candidate that is not MPEG-TS at all is an invalid delivery */
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference " FX "ref.ts --candidate " FX "expected.tsv"), 2);
    assert_string_equal(jstr(r, "verdict", NULL), "UNKNOWN");
    json_decref(r);
}

static void t06_runtime_drift_refuses_to_verify(void **state)
{
    (void)state;
    char path[] = "/tmp/exactav-e2e-profile-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    json_t *p = json_load_file(EXACTAV_SOURCE_PROFILE, 0, NULL);
    assert_non_null(p);
    json_object_set_new(json_object_get(p, "runtime"), "ffmpeg_configuration_sha256", json_string("0000"));
    assert_int_equal(json_dump_file(p, path, 0), 0);
    json_decref(p);
    assert_int_equal(run(NULL, "verify --profile %s --reference " FX "ref.ts --candidate " FX "cand_copy.ts", path), 65);
    assert_int_equal(run(NULL, "profile --profile %s", path), 65);
    json_t *r;
    assert_int_equal(run(&r, "profile --json"), 0);
    assert_true(json_is_true(json_object_get(r, "runtime_matches")));
    assert_int_equal(strlen(jstr(r, "fingerprint", NULL)), 64);
    json_decref(r);
    unlink(path);
}

/* Writes IN's packets to OUT grouped by PID: PSI first, then every video
 * packet, then every audio packet (each PID keeps its own order and
 * counters, so the stream stays valid, only its interleaving is extreme). */
static void regroup_by_pid(const char *in, const char *out, int first_pid, int second_pid)
{
    FILE *f = fopen(in, "rb"), *o = fopen(out, "wb");
    assert_non_null(f);
    assert_non_null(o);
    unsigned char pkt[188];
    for (int pass = 0; pass < 3; pass++) {
        rewind(f);
        while (fread(pkt, 1, sizeof pkt, f) == sizeof pkt) {
            int pid = (pkt[1] & 0x1F) << 8 | pkt[2];
            int group = pid == first_pid ? 1 : pid == second_pid ? 2 : 0;
            if (group == pass)
                assert_int_equal(fwrite(pkt, 1, sizeof pkt, o), sizeof pkt);
        }
    }
    fclose(f);
    fclose(o);
}

static void t10_extreme_interleaving_ends_unknown_and_never_hangs(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-skew-XXXXXX", ref[64], cand[64], cmd[512];
    assert_non_null(mkdtemp(dir));
    snprintf(ref, sizeof ref, "%s/ref.ts", dir);
    snprintf(cand, sizeof cand, "%s/cand.ts", dir);
    snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -hide_banner -loglevel error -f lavfi -i testsrc2=size=160x90:rate=30 "
             "-f lavfi -i sine=frequency=440:sample_rate=48000 -t 15 -map 0:v -map 1:a -c:v libx264 -threads 1 "
             "-c:a aac -ac 2 -y %s", ref);
    assert_int_equal(system(cmd), 0);
    regroup_by_pid(ref, cand, 0x100, 0x101);   /* all video, then 15 s of audio */
    json_t *r;
    assert_int_equal(run(&r, "verify --json --compare full --reference %s --candidate %s", ref, cand), 2);
    assert_string_equal(jstr(r, "reason", NULL), "interleave_skew");
    json_decref(r);
    /* the same decoder input per track: the fast path needs no pairing (issue 10) */
    assert_int_equal(run(&r, "verify --json --reference %s --candidate %s", ref, cand), 0);
    assert_string_equal(jstr(r, "compare", NULL), "decoder-input");
    json_decref(r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- the evidence store: checked before the check, id printed after the commit ---- */

/* Runs `[prefix] exactav ARGS` with stdout to DIR/out and stderr to DIR/err;
 * returns the exit code and the stdout text (malloc'd) in *out. */
static int run_in(const char *dir, const char *prefix, char **out, const char *fmt, ...)
{
    char args[2048], cmd[4096], path[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s%s %s >%s/out 2>%s/err", prefix, EXACTAV_BIN, args, dir, dir);
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    *out = calloc(1, 1 << 20);
    assert_non_null(*out);
    size_t n = fread(*out, 1, (1 << 20) - 1, f);
    (*out)[n] = '\0';
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void t11_evidence_store_is_checked_before_the_check(void **state)
{
    (void)state;
    char dir[] = "/tmp/e2e-ev-XXXXXX", path[256], cmd[512], *out;
    assert_non_null(mkdtemp(dir));
    const char *args = "verify --no-progress --reference " FX "ref.ts --candidate " FX
                       "cand_copy.ts --path-id c";
    /* a committed row: the human report ends with its id, which is stored */
    snprintf(path, sizeof path, "%s/evidence.db", dir);
    assert_int_equal(run_in(dir, "", &out, "%s --evidence %s", args, path), 0);
    const char *line = strstr(out, "evidence: ");
    assert_non_null(line);
    char id[64] = "";
    assert_int_equal(sscanf(line, "evidence: %63s", id), 1);
    free(out);
    snprintf(cmd, sizeof cmd, "test \"$(sqlite3 %s \"select id from evidence\")\" = %s", path, id);
    assert_int_equal(system(cmd), 0);
    /* no store: no evidence line */
    assert_int_equal(run_in(dir, "", &out, "%s", args), 0);
    assert_null(strstr(out, "evidence:"));
    free(out);
    /* a store that is not ours, the other store, a place that cannot be
     * written: exit 66 before the check (no report), the file untouched */
    snprintf(cmd, sizeof cmd, "sqlite3 %s/foreign.db 'create table t(x)' && "
                              "sqlite3 %s/control.db 'create table decisions(x); "
                              "pragma application_id = 1398031188' && mkdir %s/ro", dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    const char *bad[][2] = {{"foreign.db", "not an evidence store"},
                            {"control.db", "this is a stepctl control.db"},
                            {"missing/evidence.db", "cannot"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, bad[i][0]);
        snprintf(cmd, sizeof cmd, "sha256sum %s > %s/sum 2>/dev/null", path, dir);
        int had = system(cmd) == 0;
        assert_int_equal(run_in(dir, "", &out, "%s --evidence %s", args, path), 66);
        assert_string_equal(out, ""); /* no check ran, nothing printed */
        free(out);
        snprintf(cmd, sizeof cmd, "grep -q '%s' %s/err", bad[i][1], dir);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "sha256sum -c --quiet %s/sum && ! test -e %s-wal", dir, path);
        if (had)
            assert_int_equal(system(cmd), 0);
    }
    /* a read-only directory (as root: the check runs as user nobody) */
    snprintf(cmd, sizeof cmd, "chmod 755 %s && chmod 555 %s/ro", dir, dir);
    assert_int_equal(system(cmd), 0);
    bool root = geteuid() == 0;
    if (!root || system("command -v setpriv >/dev/null") == 0) {
        snprintf(path, sizeof path, "%s/ro/evidence.db", dir);
        assert_int_equal(run_in(dir, root ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "",
                                &out, "%s --evidence %s", args, path),
                         66);
        assert_string_equal(out, "");
        free(out);
    }
    snprintf(cmd, sizeof cmd, "chmod 755 %s/ro && rm -rf %s", dir, dir);
    assert_int_equal(system(cmd), 0);
}

/* Issue 10: the reference's clean decode stored in the evidence store
 * (reference_decodes) lets a later process MATCH an unmodified copy
 * without decoding anything; it is used only for the same decoder input,
 * profile fingerprint and interval, and never spares a differing or
 * damaged candidate its full decode. */
static void t16_stored_reference_decode_across_processes(void **state)
{
    (void)state;
    char dir[] = "/tmp/e2e-dec-XXXXXX", db[256], cmd[768];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    const char *how[][4] = {
        /* candidate, extra args, compare, reference_decode */
        {"cand_repack.ts", "", "decoder-input", "decoded"},     /* decoded once, stored */
        {"cand_copy.ts", "", "decoder-input", "stored"},        /* another copy: nothing decoded */
        {"cand_repack.ts", "--compare full", "full", "decoded"},
        {"cand_pixels.ts", "", "full", "decoded"},              /* differs: the full decode */
        {"cand_corrupt_video.ts", "", "full", "decoded"},       /* damaged: the full decode */
    };
    const char *verdict[] = {"MATCH", "MATCH", "MATCH", "MISMATCH", "UNKNOWN"};
    for (int i = 0; i < 5; i++) {
        json_t *r = NULL;
        run(&r, "verify --no-progress --json --evidence %s --reference " FX "ref.ts --candidate " FX "%s %s", db,
            how[i][0], how[i][1]);
        assert_non_null(r);
        assert_string_equal(jstr(r, "verdict", NULL), verdict[i]);
        assert_string_equal(jstr(r, "compare", NULL), how[i][2]);
        assert_string_equal(jstr(r, "reference_decode", NULL), how[i][3]);
        assert_string_equal(jstr(r, "reference", "object"), FX "ref.ts");
        assert_int_equal(jint(r, "video", "reference_frames"), 120);
        json_decref(r);
    }
    snprintf(cmd, sizeof cmd, "test \"$(sqlite3 %s 'select count(*), sum(frames) from reference_decodes')\" = '1|120'",
             db);
    assert_int_equal(system(cmd), 0);
    /* the stored row is what answers: a marker in it is reported */
    snprintf(cmd, sizeof cmd, "sqlite3 %s 'update reference_decodes set frames = 119'", db);
    assert_int_equal(system(cmd), 0);
    json_t *r = NULL;
    run(&r, "verify --no-progress --json --evidence %s --reference " FX "ref.ts --candidate " FX "cand_copy.ts", db);
    assert_non_null(r);
    assert_string_equal(jstr(r, "reference_decode", NULL), "stored");
    assert_int_equal(jint(r, "video", "reference_frames"), 119);
    json_decref(r);
    /* another interval is another key: decoded again (and stored) */
    run(&r, "verify --no-progress --json --evidence %s --interval 132000:312000 --reference " FX "ref.ts --candidate "
        FX "cand_copy.ts", db);
    assert_non_null(r);
    assert_string_equal(jstr(r, "compare", NULL), "decoder-input");
    assert_string_equal(jstr(r, "reference_decode", NULL), "decoded");
    json_decref(r);
    /* a row of another profile fingerprint is never used */
    snprintf(cmd, sizeof cmd, "sqlite3 %s \"update reference_decodes set profile_fingerprint = "
                              "'0000000000000000000000000000000000000000000000000000000000000000'\"", db);
    assert_int_equal(system(cmd), 0);
    run(&r, "verify --no-progress --json --evidence %s --reference " FX "ref.ts --candidate " FX "cand_copy.ts", db);
    assert_non_null(r);
    assert_string_equal(jstr(r, "reference_decode", NULL), "decoded");
    assert_int_equal(jint(r, "video", "reference_frames"), 120);
    json_decref(r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- issue 8: the verdict follows the decoded content ---- */

/* Class 2 of issue 8: every sample of the interval is compared, also those
 * of the AAC frame holding START in the middle of a 17-frame PES, and a
 * difference there is reported at its first sample. */
static void t12_every_sample_of_the_interval_is_compared(void **state)
{
    (void)state;
    json_t *r;
    /* samples at 132000 + 15 i / 8 ticks in [223000, 400000) */
    long long want = (((400000LL - 132000) * 8 + 14) / 15) - (((223000LL - 132000) * 8 + 14) / 15);
    assert_int_equal(run(&r, "verify --json --interval 223000:400000 --reference " FX "ref.ts --candidate " FX
                         "ref.ts"), 0);
    assert_int_equal(jint(r, "audio", "reference_samples"), want);
    assert_int_equal(jint(r, "audio", "candidate_samples"), want);
    json_decref(r);
    assert_int_equal(run(&r, "verify --json --interval 311000:400000 --reference " FX "ref.ts --candidate " FX
                         "cand_audio.ts"), 1);
    const json_t *fm = json_object_get(json_object_get(r, "audio"), "first_mismatch");
    assert_int_equal(jint(fm, "sample_index", NULL), 0);
    assert_string_equal(jstr(fm, "kind", NULL), "samples");
    json_decref(r);
}

/* Class 14: a binding fixes the scope of the evidence. */
static void t13_binding_scope_cannot_be_overridden(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-e2e-scope-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(run(NULL, "bind --channel ch1 --program-version pv7 --rendition 360p --out %s/ref.json "
                         FX "ref.ts", dir), 0);
    static const char *conflicts[] = {"--channel other", "--rendition other", "--program-version other"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(run(NULL, "verify --reference %s/ref.json --candidate " FX "cand_copy.ts %s "
                             "--evidence %s/ev.db", dir, conflicts[i], dir), 64);
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference %s/ref.json --candidate " FX "cand_copy.ts --channel ch1 "
                         "--rendition 360p --program-version pv7 --path-id cdn-a", dir), 0);
    assert_string_equal(jstr(r, "context", "channel"), "ch1");
    assert_string_equal(jstr(r, "context", "path_id"), "cdn-a");
    json_decref(r);
    struct stat st;
    char db[128];
    snprintf(db, sizeof db, "%s/ev.db", dir);
    assert_int_not_equal(stat(db, &st), 0);   /* nothing was stored for a conflicting scope */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Classes 4 and 13: the program compared, the streams listed (metadata
 * never compared), the parameter that differs named (class 12). */
static void t14_programs_streams_and_parameters_in_the_report(void **state)
{
    (void)state;
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference " FX "ref_og.ts --candidate " FX "cand_og_id3.ts"), 0);
    const json_t *streams = json_object_get(json_object_get(r, "candidate"), "streams");
    assert_int_equal(json_array_size(streams), 3);
    const json_t *md = json_array_get(streams, 2);
    assert_string_equal(jstr(md, "kind", NULL), "metadata");
    assert_string_equal(jstr(md, "codec", NULL), "id3");
    assert_true(json_is_false(json_object_get(md, "compared")));
    json_decref(r);
    /* a player plays program 1 (audio only), the first of the PAT with audio or video */
    assert_int_equal(run(&r, "verify --json --reference " FX "ref_og.ts --candidate " FX "cand_og_prog2.ts"), 2);
    assert_string_equal(jstr(r, "reason", NULL), "program_not_played");
    const json_t *progs = json_object_get(json_object_get(r, "candidate"), "programs");
    assert_int_equal(json_array_size(progs), 2);
    assert_true(json_is_true(json_object_get(json_array_get(progs, 0), "played")));
    json_decref(r);
    assert_int_equal(run(&r, "verify --json --program 2 --reference " FX "ref_og.ts --candidate " FX "cand_og_prog2.ts"), 0);
    assert_int_equal(jint(r, "candidate", "program"), 2);
    json_decref(r);
    assert_int_equal(run(&r, "verify --json --reference " FX "ref_og.ts --candidate " FX "cand_og_sar.ts"), 1);
    const json_t *fm = json_object_get(json_object_get(r, "video"), "first_mismatch");
    assert_string_equal(jstr(fm, "plane", NULL), "params");
    assert_string_equal(jstr(fm, "param", NULL), "sample_aspect_ratio");
    assert_int_equal(jint(fm, "index", NULL), 0);
    json_decref(r);
    assert_int_equal(run(&r, "verify --json --reference " FX "ref_og.ts --candidate " FX "cand_og_twoaudio.ts"), 1);
    assert_string_equal(jstr(r, "video", "verdict"), "MATCH");
    assert_string_equal(jstr(r, "audio", "verdict"), "MATCH");   /* the first audio track is the same */
    json_decref(r);
    assert_int_equal(run(NULL, "verify --reference " FX "ref.ts --candidate " FX "cand_copy.ts --program 0"), 64);
}

/* Class 10: damage in an open-GOP I frame taints the leading B frame that
 * is output before it: the difference there is never confirmed. */
static void t15_damage_follows_decode_order(void **state)
{
    (void)state;
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference " FX "ref_og.ts --candidate " FX "cand_og_slice.ts"), 2);
    assert_true(json_is_true(json_object_get(json_object_get(r, "video"), "unconfirmed_differences")));
    assert_true(json_is_null(json_object_get(json_object_get(r, "video"), "first_mismatch")));
    json_decref(r);
}

/* ---- the shared corpus ---- */

static bool corpus(const char *rel, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", CORPUS_DIR, rel);
    struct stat st;
    return stat(out, &st) == 0;
}

/* The path of a corpus file; ends the process as skipped when it is absent. */
static void need_corpus(const char *rel, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", CORPUS_DIR, rel);
    test_skip_unless(out);
}

static void t07_corpus_pts_wrap_inside_a_real_segment(void **state)
{
    (void)state;
    char seg[1024];
    need_corpus("media/hls-ts-rollover/360p30_h264_48k_160_aac_ts-0000000028.ts", seg, sizeof seg);
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference %s --candidate %s", seg, seg), 0);
    assert_true(jint(r, "interval", "start") > jint(r, "interval", "end"));  /* the wrap */
    assert_true(jint(r, "video", "compared_frames") > 0);
    json_decref(r);
    /* an interval that crosses 2^33 */
    assert_int_equal(run(&r, "verify --json --interval 8589900000:9000 --reference %s --candidate %s", seg, seg), 0);
    assert_true(jint(r, "video", "compared_frames") > 0);
    assert_true(jint(r, "audio", "reference_samples") > 0);
    json_decref(r);
}

static void t08_corpus_other_segments_and_renditions_differ(void **state)
{
    (void)state;
    char a[1024], b[1024];
    need_corpus("media/hls-multivideo/red_1.ts", a, sizeof a);
    need_corpus("media/hls-multivideo/green_1.ts", b, sizeof b);
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference %s --candidate %s", a, b), 1);
    assert_string_equal(jstr(r, "video", "reason"), "video_pixels");
    json_decref(r);
}

static void t09_corpus_out_of_profile_and_video_only(void **state)
{
    (void)state;
    char p[1024];
    need_corpus("media/single/shaka_id3-metadata.ts", p, sizeof p);
    assert_int_equal(run(NULL, "verify --reference %s --candidate %s", p, p), 65);   /* HE-AACv2, no video */
    assert_true(corpus("media/single/muxjs_test-segment.ts", p, sizeof p));
    assert_int_equal(run(NULL, "verify --reference %s --candidate %s", p, p), 65);   /* AAC 44.1 kHz */
    assert_true(corpus("media/single/shaka_hls-ts-b-frames_1.ts", p, sizeof p));
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference %s --candidate %s", p, p), 0);  /* B-frames, video only */
    assert_true(json_is_null(json_object_get(r, "audio")));
    json_decref(r);
}

/* Issue 18, class 7: another packager's segment cut.  The candidate's audio
 * decoder cannot start at the reference's boundary frame: UNKNOWN, never a
 * MISMATCH of decoder history, the report naming both starts; the other way
 * round the missing end within the reorder delay is UNKNOWN too, and over an
 * interval both sides start at the same frame: MATCH. */
static void t17_another_packagers_cut_is_never_a_mismatch_of_history(void **state)
{
    (void)state;
    json_t *r;
    assert_int_equal(run(&r, "verify --json --reference " FX "ref_seg1.ts --candidate " FX "cand_cut1.ts"), 2);
    assert_string_equal(jstr(r, "reason", NULL), "audio_history_unavailable");
    assert_string_equal(jstr(r, "video", "verdict"), "MATCH");
    assert_string_equal(jstr(r, "audio", "verdict"), "UNKNOWN");
    assert_true(json_is_null(json_object_get(json_object_get(r, "audio"), "first_mismatch")));
    const json_t *h = json_object_get(json_object_get(r, "audio"), "history");
    assert_int_equal(jint(h, "reference_decode_start_pts", NULL), 218400);
    assert_int_equal(jint(h, "candidate_first_frame_pts", NULL), 222240);
    assert_non_null(strstr(jstr(h, "detail", NULL), "previous segment"));
    json_decref(r);
    /* the reference the other way round: no history object, the end cut */
    assert_int_equal(run(&r, "verify --json --reference " FX "cand_cut1.ts --candidate " FX "ref_seg1.ts"), 2);
    assert_string_equal(jstr(r, "reason", NULL), "audio_segment_end_cut");
    assert_null(json_object_get(json_object_get(r, "audio"), "history"));
    json_decref(r);
    assert_int_equal(run(&r, "verify --json --reference " FX "cand_cut1.ts --candidate " FX "ref_seg1.ts "
                             "--interval 222000:306000"), 0);
    assert_string_equal(jstr(r, "audio", "reason"), "identical");
    json_decref(r);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_every_fixture_gives_its_expected_verdict),
        cmocka_unit_test(t02_first_differences_are_located_exactly),
        cmocka_unit_test(t03_damage_never_matches_and_names_its_reason),
        cmocka_unit_test(t04_binding_round_trip_and_tampering),
        cmocka_unit_test(t05_usage_and_unopenable_inputs),
        cmocka_unit_test(t06_runtime_drift_refuses_to_verify),
        cmocka_unit_test(t10_extreme_interleaving_ends_unknown_and_never_hangs),
        cmocka_unit_test(t11_evidence_store_is_checked_before_the_check),
        cmocka_unit_test(t12_every_sample_of_the_interval_is_compared),
        cmocka_unit_test(t13_binding_scope_cannot_be_overridden),
        cmocka_unit_test(t14_programs_streams_and_parameters_in_the_report),
        cmocka_unit_test(t15_damage_follows_decode_order),
        cmocka_unit_test(t16_stored_reference_decode_across_processes),
        cmocka_unit_test(t17_another_packagers_cut_is_never_a_mismatch_of_history),
        cmocka_unit_test(t07_corpus_pts_wrap_inside_a_real_segment),
        cmocka_unit_test(t08_corpus_other_segments_and_renditions_differ),
        cmocka_unit_test(t09_corpus_out_of_profile_and_video_only),
    };
    test_select(argc, argv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
