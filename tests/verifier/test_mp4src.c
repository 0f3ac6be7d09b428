/* test_mp4src.c - fMP4/CMAF as the second container (issue 20): mp4src.h,
 * mp4box.h, and through verify_run the same verdicts and the same decoder
 * input digest as the TS path for the same access units.  Real FFmpeg, the
 * committed fixtures (fixtures/README.md, "fMP4/CMAF"). */
#define _GNU_SOURCE              /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "mp4box.h"
#include "test_file.h"
#include "test_shell.h"
#include "test_profile_once.h"
#include "verify.h"

#define FX FIXTURES_DIR "/"
#define FMP4_OFFSET (-60)        /* the fixtures' declared mapping (fixtures/README.md) */
#define NSEG 5                   /* init + 4 media segments */
#define EDITS 40

static const char *const hls_files[NSEG] = {"ref_fmp4_init.mp4", "ref_fmp4_0.m4s", "ref_fmp4_1.m4s",
                                            "ref_fmp4_2.m4s", "ref_fmp4_3.m4s"};

struct segs {
    struct file f[8];
    struct bsrc_segment s[8];
    size_t n;
};

static void add(struct segs *g, struct file f)
{
    g->f[g->n] = f;
    g->s[g->n] = (struct bsrc_segment){.data = f.data, .len = f.len};
    g->n++;
}

static void add_path(struct segs *g, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, FX "%s", name);
    add(g, load(path));
}

static void free_segs(struct segs *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->f[i].data);
}

static json_t *check(struct segs *ref, struct segs *cand, int64_t offset, enum verify_compare compare)
{
    struct verify_request rq = {.profile = test_profile_once(), .ref_segs = ref->s, .n_ref = ref->n, .cand_segs = cand->s,
                                .n_cand = cand->n, .reference_object = "ref", .candidate_object = "cand",
                                .compare = compare, .offset = offset};
    json_t *report = NULL;
    char err[512];
    int rc = verify_run(&rq, &report, err, sizeof err);
    if (!report)
        fail_msg("verify_run %d: %s", rc, err);
    return report;
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void expect(json_t *rep, const char *verdict, const char *reason, const char *compare)
{
    assert_string_equal(str(rep, "verdict"), verdict);
    assert_string_equal(str(rep, "reason"), reason);
    if (compare)
        assert_string_equal(str(rep, "compare"), compare);
    json_decref(rep);
}

static struct segs ts_ref(void)
{
    struct segs g = {0};
    add_path(&g, "ref.ts");
    return g;
}

static struct segs hls_fmp4(void)
{
    struct segs g = {0};
    for (int i = 0; i < NSEG; i++)
        add_path(&g, hls_files[i]);
    return g;
}

/* The same encode in either container feeds the decoders the same access
 * units: the fast path's digest is equal, both ways round. */
static void t01_ts_and_fmp4_have_the_same_decoder_input(void **state)
{
    (void)state;
    struct segs ts = ts_ref(), mp4 = hls_fmp4(), one = {0};
    add_path(&one, "cand_fmp4_frag.mp4");
    json_t *rep = check(&ts, &mp4, FMP4_OFFSET, VERIFY_COMPARE_AUTO);
    /* each side names its container (report "container") */
    assert_string_equal(str(json_object_get(rep, "reference"), "container"), "ts");
    assert_string_equal(str(json_object_get(rep, "candidate"), "container"), "fmp4");
    expect(rep, "MATCH", "identical", "decoder-input");
    rep = check(&mp4, &ts, -FMP4_OFFSET, VERIFY_COMPARE_FULL);
    assert_string_equal(str(json_object_get(rep, "reference"), "container"), "fmp4");
    assert_string_equal(str(json_object_get(rep, "candidate"), "container"), "ts");
    json_decref(rep);
    expect(check(&mp4, &ts, -FMP4_OFFSET, VERIFY_COMPARE_AUTO), "MATCH", "identical", "decoder-input");
    expect(check(&ts, &one, FMP4_OFFSET, VERIFY_COMPARE_AUTO), "MATCH", "identical", "decoder-input");
    expect(check(&mp4, &one, 0, VERIFY_COMPARE_AUTO), "MATCH", "identical", "decoder-input");
    free_segs(&ts);
    free_segs(&mp4);
    free_segs(&one);
}

/* ... and decoding both gives the same verdicts as on TS. */
static void t02_full_decode_across_containers(void **state)
{
    (void)state;
    struct segs ts = ts_ref(), mp4 = hls_fmp4(), pix = {0};
    add_path(&pix, "cand_fmp4_pixels.mp4");
    expect(check(&ts, &mp4, FMP4_OFFSET, VERIFY_COMPARE_FULL), "MATCH", "identical", "full");
    expect(check(&ts, &pix, FMP4_OFFSET, VERIFY_COMPARE_AUTO), "MISMATCH", "video_pixels", "full");
    /* the mapping is declared, never searched: 2 ms off is not the same time
     * (less than the container's millisecond quantum would be: t09) */
    json_t *rep = check(&ts, &mp4, FMP4_OFFSET + 180, VERIFY_COMPARE_AUTO);
    assert_string_equal(str(rep, "verdict"), "MISMATCH");
    json_decref(rep);
    free_segs(&ts);
    free_segs(&mp4);
    free_segs(&pix);
}

/* EXT-X-MAP: the same init segment again is nothing new; another one
 * (here: the same tracks, one byte of its mvhd changed) starts a new
 * demuxer, and the units across the change are all there. */
static void t03_init_segment_repeated_or_changed(void **state)
{
    (void)state;
    struct segs ts = ts_ref(), again = {0}, changed = {0};
    for (int i = 0; i < NSEG; i++) {
        add_path(&again, hls_files[i]);
        if (i == 2)
            add_path(&again, hls_files[0]);
    }
    expect(check(&ts, &again, FMP4_OFFSET, VERIFY_COMPARE_AUTO), "MATCH", "identical", "decoder-input");
    for (int i = 0; i < NSEG; i++) {
        if (i == 3) {
            struct file f = load(FX "ref_fmp4_init.mp4");
            uint8_t *mvhd = memmem(f.data, f.len, "mvhd", 4);
            assert_non_null(mvhd);
            mvhd[4 + 4 + 3] ^= 1;   /* creation_time's last byte: another moov, the same media */
            add(&changed, f);
        }
        add_path(&changed, hls_files[i]);
    }
    expect(check(&ts, &changed, FMP4_OFFSET, VERIFY_COMPARE_FULL), "MATCH", "identical", "full");
    free_segs(&ts);
    free_segs(&again);
    free_segs(&changed);
}

/* Every damage class of mp4box.h: UNKNOWN with its own reason, never MATCH,
 * whether the fast path is allowed or not. */
static void t04_damage_is_unknown_with_its_reason(void **state)
{
    (void)state;
    static const struct { const char *file, *reason; } cases[] = {
        {"cand_fmp4_trunc.mp4", "mp4_truncated_box"},
        {"cand_fmp4_trun_overrun.mp4", "mp4_trun_overrun"},
        {"cand_fmp4_sample_table.mp4", "mp4_sample_table"},
        {"cand_fmp4_encrypted.mp4", "mp4_encrypted"},
        {"cand_fmp4_noinit.mp4", "mp4_missing_init"},
        {"cand_fmp4_init_mismatch.mp4", "mp4_init_mismatch"},
    };
    struct segs ts = ts_ref();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int full = 0; full < 2; full++) {
            struct segs c = {0};
            add_path(&c, cases[i].file);
            json_t *rep = check(&ts, &c, FMP4_OFFSET, full ? VERIFY_COMPARE_FULL : VERIFY_COMPARE_AUTO);
            if (strcmp(str(rep, "reason"), cases[i].reason))
                fail_msg("%s: %s %s", cases[i].file, str(rep, "verdict"), str(rep, "reason"));
            expect(rep, "UNKNOWN", cases[i].reason, "full");
            free_segs(&c);
        }
    }
    /* the init segment missing from a segment list */
    struct segs c = {0};
    for (int i = 1; i < NSEG; i++)
        add_path(&c, hls_files[i]);
    expect(check(&ts, &c, FMP4_OFFSET, VERIFY_COMPARE_AUTO), "UNKNOWN", "mp4_missing_init", "full");
    free_segs(&c);
    free_segs(&ts);
}

/* The scanner on hand-made boxes: each bound on its own. */
static void box(uint8_t *p, uint32_t size, const char *type)
{
    p[0] = (uint8_t)(size >> 24), p[1] = (uint8_t)(size >> 16), p[2] = (uint8_t)(size >> 8), p[3] = (uint8_t)size;
    memcpy(p + 4, type, 4);
}

static enum ts_issue scan(const uint8_t *p, size_t n)
{
    struct mp4box_init init = {0};
    struct mp4box_segment seg;
    uint64_t where;
    return mp4box_scan(p, n, &init, &seg, &where);
}

static void t05_box_scanner_bounds(void **state)
{
    (void)state;
    uint8_t b[64] = {0};
    box(b, 16, "ftyp");
    assert_int_equal(scan(b, 16), TS_ISSUE_NONE);
    assert_int_equal(scan(b, 15), TS_ISSUE_MP4_TRUNCATED_BOX);      /* larger than the file */
    assert_int_equal(scan(b, 20), TS_ISSUE_MP4_TRUNCATED_BOX);      /* 4 bytes of no box */
    box(b, 7, "ftyp");
    assert_int_equal(scan(b, 16), TS_ISSUE_MP4_TRUNCATED_BOX);      /* shorter than its header */
    box(b, 1, "free");                                              /* 64-bit size */
    memset(b + 8, 0, 8);
    b[15] = 24;
    assert_int_equal(scan(b, 24), TS_ISSUE_NONE);
    b[15] = 25;
    assert_int_equal(scan(b, 24), TS_ISSUE_MP4_TRUNCATED_BOX);
    box(b, 32, "moov");                                             /* a child past its parent */
    box(b + 8, 32, "trak");
    assert_int_equal(scan(b, 32), TS_ISSUE_MP4_TRUNCATED_BOX);
    box(b, 32, "moof");                                             /* a fragment before any init */
    box(b + 8, 24, "traf");
    box(b + 16, 16, "tfhd");
    memset(b + 24, 0, 8);
    assert_int_equal(scan(b, 32), TS_ISSUE_MP4_MISSING_INIT);
    box(b, 16, "mdat");                                             /* media data outside fragments */
    assert_int_equal(scan(b, 16), TS_ISSUE_MP4_NOT_FRAGMENTED);
    assert_false(mp4box_looks_like_mp4((const uint8_t *)"\x47\x40\x00\x10", 4));
    box(b, 16, "styp");
    assert_true(mp4box_looks_like_mp4(b, 16));
    box(b, 16, "html");
    assert_false(mp4box_looks_like_mp4(b, 16));
}

/* Seeded single-byte edits anywhere in the single fragmented file: the
 * fast path says MATCH only where decoding both sides says MATCH too, and
 * an edit inside sample data never passes it. */
static void t06_single_byte_edits_never_match_unseen(void **state)
{
    (void)state;
    struct segs ts = ts_ref(), c = {0};
    add_path(&c, "cand_fmp4_frag.mp4");
    uint8_t *p = c.f[0].data;
    size_t n = c.f[0].len;
    srand(20261202);
    int verdicts[3] = {0};
    for (int k = 0; k < EDITS; k++) {
        size_t at = (size_t)rand() % n;
        uint8_t was = p[at];
        p[at] ^= (uint8_t)(1 + rand() % 255);
        json_t *rep = check(&ts, &c, FMP4_OFFSET, VERIFY_COMPARE_AUTO);
        const char *v = str(rep, "verdict");
        if (!strcmp(v, "MATCH") && !strcmp(str(rep, "compare"), "decoder-input")) {
            json_t *full = check(&ts, &c, FMP4_OFFSET, VERIFY_COMPARE_FULL);
            if (strcmp(str(full, "verdict"), "MATCH"))
                fail_msg("edit %d at byte %zu: decoder-input MATCH, full decode %s %s", k, at, str(full, "verdict"),
                         str(full, "reason"));
            json_decref(full);
        }
        verdicts[v[0] == 'M' ? (v[1] == 'A' ? 0 : 1) : 2]++;
        json_decref(rep);
        p[at] = was;
    }
    printf("fMP4 single-byte edits: %d MATCH, %d MISMATCH, %d UNKNOWN\n", verdicts[0], verdicts[1], verdicts[2]);
    free_segs(&ts);
    free_segs(&c);
}

/* ---- the container's quantum (docs/exact-av-v1.md) ---- */

/* The first video PTS of a file whose video time base is 1/90000 (FFmpeg's
 * own reading, ffprobe). */
static long long first_vpts(const char *path)
{
    char cmd[600], line[128] = "";
    snprintf(cmd, sizeof cmd, "ffprobe -v error -select_streams v:0 -show_entries stream=time_base,start_pts "
                              "-of csv=p=0 '%s'", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    pclose(p);
    assert_non_null(strstr(line, "1/90000,"));
    return atoll(strchr(line, ',') + 1);
}

static struct segs one_file(const char *path)
{
    struct segs g = {0};
    add(&g, load(path));
    return g;
}

/* In a new folder dir: ref.ts (3 s of lavfi video and audio), cand.mp4
 * (its fragmented MP4 remux) and late.mp4 (the same with the input given
 * by late_input shifted 2 ms: "0" video, "1" audio).  Returns how early
 * cand.mp4's first picture is, in ticks (under a millisecond). */
static long long quantum_files(char *dir, char *ts, char *mp4, char *late, size_t len, const char *late_input)
{
    assert_non_null(mkdtemp(dir));
    snprintf(ts, len, "%s/ref.ts", dir);
    snprintf(mp4, len, "%s/cand.mp4", dir);
    snprintf(late, len, "%s/late.mp4", dir);
    const char *ff = "ffmpeg -nostdin -hide_banner -loglevel error -y";
    const char *frag = "-bsf:a aac_adtstoasc -f mp4 -movflags +frag_keyframe+empty_moov+default_base_moof+delay_moov";
    assert_int_equal(test_shell("%s -f lavfi -i testsrc2=size=160x90:rate=30 -f lavfi -i "
                                "sine=frequency=440:sample_rate=48000 -t 3 -map 0:v -map 1:a -c:v libx264 "
                                "-threads 1 -c:a aac -ac 2 '%s'", ff, ts),
                     0);
    assert_int_equal(test_shell("%s -copyts -i '%s' -map 0 -c copy %s '%s'", ff, ts, frag, mp4), 0);
    bool video = !strcmp(late_input, "0");
    assert_int_equal(test_shell("%s -copyts %s -i '%s' %s -i '%s' -map 0:v -map 1:a -c copy %s '%s'", ff,
                                video ? "-itsoffset 0.002" : "", ts, video ? "" : "-itsoffset 0.002", ts, frag,
                                late),
                     0);
    long long off = first_vpts(mp4) - first_vpts(ts);
    assert_true(off < 0 && off > -90);           /* under one millisecond early */
    return off;
}

/* FFmpeg's mp4 muxer writes each track's start as an empty edit in
 * milliseconds, rounded on its own: a TS whose audio starts at 1.445333 s
 * and video at 1.466667 s becomes audio 30 ticks and video 60 ticks early.
 * With the video's offset declared, the audio is put on the reference's
 * frame grid (less than the quantum: MATCH, as FFmpeg decodes the same PCM
 * from both, and the report says so); audio moved 2 ms (more than one
 * quantum) is still a difference. */
static void t07_an_edit_list_in_milliseconds_is_the_containers_quantum(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-quantum-XXXXXX", ts[80], mp4[80], late[80];
    long long off = quantum_files(dir, ts, mp4, late, sizeof ts, "1");
    struct segs r = one_file(ts), c = one_file(mp4), l = one_file(late);
    json_t *rep = check(&r, &c, off, VERIFY_COMPARE_FULL);
    json_t *q = json_object_get(json_object_get(rep, "audio"), "container_quantum");
    if (!q)
        fail_msg("no container_quantum: %s %s", str(rep, "verdict"), str(rep, "reason"));
    assert_int_equal(json_integer_value(json_object_get(q, "quantum_units")), 720);
    json_int_t shift = json_integer_value(json_object_get(q, "shift_units"));
    assert_true(shift != 0 && shift > -720 && shift < 720);
    expect(rep, "MATCH", "identical", "full");
    expect(check(&r, &c, off, VERIFY_COMPARE_AUTO), "MATCH", "identical", NULL);
    rep = check(&r, &l, off, VERIFY_COMPARE_FULL);
    assert_null(json_object_get(json_object_get(rep, "audio"), "container_quantum"));
    assert_string_equal(str(json_object_get(rep, "audio"), "verdict"), "MISMATCH");
    expect(rep, "MISMATCH", str(json_object_get(rep, "audio"), "reason"), "full");
    free_segs(&r);
    free_segs(&c);
    free_segs(&l);
    assert_int_equal(test_shell("rm -rf '%s'", dir), 0);
}

/* The same for video (issue 20): the video track's start is an empty
 * edit in milliseconds too, so the remux is under a millisecond early on
 * each track, by its own amount.  Undeclared (offset 0), each track is put
 * on the reference's grid by less than one quantum (video.container_quantum
 * names the shift) and the remux MATCHes; video moved 2 ms (a quantum and
 * more) is a timing difference, MISMATCH video_pts, not moved. */
static void t09_the_video_track_has_its_quantum_too(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-vquantum-XXXXXX", ts[80], mp4[80], late[80];
    long long off = quantum_files(dir, ts, mp4, late, sizeof ts, "0");
    struct segs r = one_file(ts), c = one_file(mp4), l = one_file(late);
    json_t *rep = check(&r, &c, 0, VERIFY_COMPARE_FULL);
    json_t *q = json_object_get(json_object_get(rep, "video"), "container_quantum");
    if (!q)
        fail_msg("no video container_quantum: %s %s", str(rep, "verdict"), str(rep, "reason"));
    assert_int_equal(json_integer_value(json_object_get(q, "quantum_units")), 720);
    assert_int_equal(json_integer_value(json_object_get(q, "shift_units")), -off * 8);
    expect(rep, "MATCH", "identical", "full");
    /* the reference in fMP4 and the TS as the candidate: the reference's quantum */
    rep = check(&c, &r, 0, VERIFY_COMPARE_FULL);
    q = json_object_get(json_object_get(rep, "video"), "container_quantum");
    assert_non_null(q);
    assert_int_equal(json_integer_value(json_object_get(q, "shift_units")), off * 8);
    expect(rep, "MATCH", "identical", "full");
    rep = check(&r, &l, 0, VERIFY_COMPARE_FULL);
    assert_null(json_object_get(json_object_get(rep, "video"), "container_quantum"));
    expect(rep, "MISMATCH", "video_pts", "full");
    free_segs(&r);
    free_segs(&c);
    free_segs(&l);
    assert_int_equal(test_shell("rm -rf '%s'", dir), 0);
}

/* A segment index (sidx) is honoured as players honour it in HLS: not for
 * timing or bytes (hls.js reads it only for a duration when no trun says
 * one; the playlist's EXT-X-BYTERANGE gives the bytes; FFmpeg's mov
 * demuxer times fragments from tfdt, use_tfdt): ref.ts remuxed with a
 * global sidx (one per track before the first moof) MATCHes, with the
 * TS's decoder input. */
static void t10_a_segment_index_changes_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-sidx-XXXXXX", mp4[80];
    assert_non_null(mkdtemp(dir));
    snprintf(mp4, sizeof mp4, "%s/sidx.mp4", dir);
    assert_int_equal(test_shell("ffmpeg -nostdin -hide_banner -loglevel error -y -copyts -i '%s' -map 0 -c copy "
                                "-bsf:a aac_adtstoasc -fflags +bitexact -f mp4 -movflags "
                                "+frag_keyframe+empty_moov+default_base_moof+delay_moov+global_sidx '%s'",
                                FX "ref.ts", mp4),
                     0);
    assert_int_equal(test_shell("grep -c sidx '%s' >/dev/null", mp4), 0);
    struct segs ts = ts_ref(), c = one_file(mp4);
    expect(check(&ts, &c, FMP4_OFFSET, VERIFY_COMPARE_FULL), "MATCH", "identical", "full");
    expect(check(&ts, &c, FMP4_OFFSET, VERIFY_COMPARE_AUTO), "MATCH", "identical", "decoder-input");
    free_segs(&ts);
    free_segs(&c);
    assert_int_equal(test_shell("rm -rf '%s'", dir), 0);
}

/* A sample the container flags as sync that is no random access point is
 * where a player would start on pictures it cannot decode: UNKNOWN
 * mp4_false_sync_sample, both ways, though FFmpeg decodes the same
 * pictures from the start.  ref.ts remuxed by FFmpeg in fragments of
 * 0.4 s (every other one starts on a P picture, flagged non-sync by the
 * tfhd's default_sample_flags) MATCHes; with those defaults made "depends
 * on no other" (sync) it does not.  Open-GOP I pictures with a recovery
 * point (flagged key by FFmpeg) are no issue (the bench pair, docs). */
static void t08_a_false_sync_flag_is_unknown(void **state)
{
    (void)state;
    char dir[] = "/tmp/exactav-sync-XXXXXX", mp4[80];
    assert_non_null(mkdtemp(dir));
    snprintf(mp4, sizeof mp4, "%s/frag.mp4", dir);
    assert_int_equal(test_shell("ffmpeg -nostdin -hide_banner -loglevel error -y -copyts -i '%sref.ts' -map 0 -c copy "
                                "-bsf:a aac_adtstoasc -f mp4 -movflags +empty_moov+default_base_moof+delay_moov "
                                "-frag_duration 400000 '%s'", FX, mp4),
                     0);
    struct segs ts = ts_ref(), c = one_file(mp4);
    expect(check(&ts, &c, FMP4_OFFSET, VERIFY_COMPARE_FULL), "MATCH", "identical", "full");
    uint8_t *p = c.f[0].data, *end = p + c.f[0].len;
    int changed = 0;
    for (uint8_t *q = p; (q = memmem(q, (size_t)(end - q), "tfhd", 4)) != NULL; q += 4) {
        uint32_t flags = (uint32_t)q[5] << 16 | (uint32_t)q[6] << 8 | q[7];
        uint32_t track = (uint32_t)q[8] << 24 | (uint32_t)q[9] << 16 | (uint32_t)q[10] << 8 | q[11];
        if (track != 1 || !(flags & 0x20)) /* video, with default_sample_flags */
            continue;
        size_t at = 12 + (flags & 0x1 ? 8 : 0) + (flags & 0x2 ? 4 : 0) + (flags & 0x8 ? 4 : 0) + (flags & 0x10 ? 4 : 0);
        assert_true(q + at + 4 <= end);
        memcpy(q + at, "\x02\x00\x00\x00", 4); /* depends on no other: sync */
        changed++;
    }
    assert_true(changed >= 2);
    for (int full = 0; full < 2; full++) {
        json_t *rep = check(&ts, &c, FMP4_OFFSET, full ? VERIFY_COMPARE_FULL : VERIFY_COMPARE_AUTO);
        if (strcmp(str(rep, "reason"), "mp4_false_sync_sample"))
            fail_msg("%s %s", str(rep, "verdict"), str(rep, "reason"));
        expect(rep, "UNKNOWN", "mp4_false_sync_sample", NULL);
    }
    free_segs(&ts);
    free_segs(&c);
    assert_int_equal(test_shell("rm -rf '%s'", dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_ts_and_fmp4_have_the_same_decoder_input),
        cmocka_unit_test(t02_full_decode_across_containers),
        cmocka_unit_test(t03_init_segment_repeated_or_changed),
        cmocka_unit_test(t04_damage_is_unknown_with_its_reason),
        cmocka_unit_test(t05_box_scanner_bounds),
        cmocka_unit_test(t06_single_byte_edits_never_match_unseen),
        cmocka_unit_test(t07_an_edit_list_in_milliseconds_is_the_containers_quantum),
        cmocka_unit_test(t08_a_false_sync_flag_is_unknown),
        cmocka_unit_test(t09_the_video_track_has_its_quantum_too),
        cmocka_unit_test(t10_a_segment_index_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
