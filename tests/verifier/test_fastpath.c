/* test_fastpath.c - the decoder-input fast path of verify_run (verify.h,
 * indigest.h): MATCH without decoding the candidate only when its decoder
 * input is byte-identical to the reference's; every difference or damage
 * runs the full decode, which locates and classifies it. */
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
#include <libavutil/log.h>

#include "avlog.h"
#include "exitcodes.h"
#include "profile.h"
#include "test_file.h"
#include "test_profile_once.h"
#include "verify.h"

#define FX FIXTURES_DIR "/"
#define EDITS 300
#define TS 188

/* verify_run over two in-memory files; returns the report (never NULL). */
static json_t *check(const struct file *ref, const struct file *cand, enum verify_compare compare,
                     struct verify_refmemo *memo)
{
    char err[512];
    struct bsrc_segment rs = {.data = ref->data, .len = ref->len}, cs = {.data = cand->data, .len = cand->len};
    struct verify_request rq = {.profile = test_profile_once(), .ref_segs = &rs, .n_ref = 1, .cand_segs = &cs, .n_cand = 1,
                                .reference_object = "ref", .candidate_object = "cand", .compare = compare,
                                .refmemo = memo};
    json_t *report = NULL;
    int rc = verify_run(&rq, &report, err, sizeof err);
    assert_true(rc >= 0 && rc <= 2);
    assert_non_null(report);
    return report;
}

static const char *str(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

static long long num(const json_t *o, const char *a, const char *b)
{
    return (long long)json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* Checks the verdict, reason and compare of one run; returns its report. */
static json_t *run_expect(const char *ref, const char *cand, enum verify_compare mode, const char *verdict,
                          const char *reason, const char *compare)
{
    struct file r = load(ref), c = load(cand);
    json_t *rep = check(&r, &c, mode, NULL);
    assert_string_equal(str(rep, "verdict", NULL), verdict);
    assert_string_equal(str(rep, "reason", NULL), reason);
    assert_string_equal(str(rep, "compare", NULL), compare);
    if (!strcmp(verdict, "MATCH")) {   /* what the evidence store demands of a MATCH */
        assert_true(num(rep, "video", "reference_frames") > 0);
        assert_int_equal(num(rep, "video", "compared_frames"), num(rep, "video", "reference_frames"));
        assert_int_equal(num(rep, "video", "candidate_frames"), num(rep, "video", "reference_frames"));
        assert_int_equal(num(rep, "audio", "candidate_samples"), num(rep, "audio", "reference_samples"));
    }
    free(r.data);
    free(c.data);
    return rep;
}

static void expect(const char *ref, const char *cand, enum verify_compare mode, const char *verdict,
                   const char *reason, const char *compare)
{
    json_decref(run_expect(ref, cand, mode, verdict, reason, compare));
}

/* Other PIDs, service id, PES packing and muxrate (ffmpeg -c copy), also
 * across the PTS wrap: nothing the decoders get differs. */
static void t01_repackaged_copy_matches_by_decoder_input(void **state)
{
    (void)state;
    expect(FX "ref.ts", FX "cand_copy.ts", VERIFY_COMPARE_AUTO, "MATCH", "identical", "decoder-input");
    expect(FX "ref.ts", FX "cand_repack.ts", VERIFY_COMPARE_AUTO, "MATCH", "identical", "decoder-input");
    expect(FX "ref_wrap.ts", FX "cand_wrap_repack.ts", VERIFY_COMPARE_AUTO, "MATCH", "identical",
           "decoder-input");
    /* the candidate's pass starts before the reference scan, guessing video
     * with audio: a reference without audio runs it again for its track set */
    expect(FX "ref_video_only.ts", FX "ref_video_only.ts", VERIFY_COMPARE_AUTO, "MATCH", "identical",
           "decoder-input");
    expect(FX "ref_video_only.ts", FX "ref.ts", VERIFY_COMPARE_AUTO, "MISMATCH", "track_set", "full");
    expect(FX "ref.ts", FX "ref_video_only.ts", VERIFY_COMPARE_AUTO, "MISMATCH", "track_set", "full");
}

/* A changed picture: the full decode locates it (frame 60, pixel 200,120). */
static void t02_changed_pixels_decode_fully_and_are_located(void **state)
{
    (void)state;
    json_t *rep = run_expect(FX "ref.ts", FX "cand_pixels.ts", VERIFY_COMPARE_AUTO, "MISMATCH", "video_pixels",
                             "full");
    const json_t *fm = json_object_get(json_object_get(rep, "video"), "first_mismatch");
    assert_int_equal(json_integer_value(json_object_get(fm, "index")), 60);
    assert_int_equal(json_integer_value(json_object_get(fm, "x")), 200);
    assert_int_equal(json_integer_value(json_object_get(fm, "y")), 120);
    json_decref(rep);
}

static void t03_damaged_candidate_decodes_fully_and_is_unknown(void **state)
{
    (void)state;
    expect(FX "ref.ts", FX "cand_corrupt_video.ts", VERIFY_COMPARE_AUTO, "UNKNOWN", "corrupt_frame", "full");
    expect(FX "ref.ts", FX "cand_lost_video.ts", VERIFY_COMPARE_AUTO, "UNKNOWN", "continuity_gap", "full");
    expect(FX "ref.ts", FX "cand_trunc_mid_packet.ts", VERIFY_COMPARE_AUTO, "UNKNOWN", "truncated_ts_packet",
           "full");
}

static void t04_compare_full_forces_the_decode(void **state)
{
    (void)state;
    expect(FX "ref.ts", FX "cand_repack.ts", VERIFY_COMPARE_FULL, "MATCH", "identical", "full");
}

/* A remembered clean decode of the reference is used only for the same
 * decoder input, fingerprint and interval; when used, nothing decodes. */
static void t05_remembered_reference_decode(void **state)
{
    (void)state;
    struct file r = load(FX "ref.ts"), c = load(FX "cand_repack.ts");
    struct verify_refmemo memo = {0};
    json_t *rep = check(&r, &c, VERIFY_COMPARE_AUTO, &memo);
    assert_true(memo.clean);
    assert_int_equal(memo.frames, num(rep, "video", "reference_frames"));
    json_decref(rep);
    memo.frames = 7;             /* a marker: reported only when the memo is used */
    rep = check(&r, &c, VERIFY_COMPARE_AUTO, &memo);
    assert_string_equal(str(rep, "compare", NULL), "decoder-input");
    assert_int_equal(num(rep, "video", "reference_frames"), 7);
    json_decref(rep);
    memo.fingerprint[0] ^= 1;    /* another profile: decoded again, and remembered anew */
    rep = check(&r, &c, VERIFY_COMPARE_AUTO, &memo);
    assert_int_equal(num(rep, "video", "reference_frames"), 120);
    assert_int_equal(memo.frames, 120);
    json_decref(rep);
    free(r.data);
    free(c.data);
}

/* The candidate's pass started before the reference scan is stopped and
 * joined when the scan refuses the reference (out of profile: exit 65, no
 * report), and when a damaged reference rules the fast path out. */
static void t07_early_candidate_pass_ends_with_a_refused_reference(void **state)
{
    (void)state;
    struct file r = load(FX "ref_10bit.ts"), c = load(FX "cand_repack.ts");
    struct profile p;
    char err[512];
    assert_int_equal(profile_load(NULL, &p, err, sizeof err), 0);
    struct bsrc_segment rs = {.data = r.data, .len = r.len}, cs = {.data = c.data, .len = c.len};
    struct verify_request rq = {.profile = &p, .ref_segs = &rs, .n_ref = 1, .cand_segs = &cs, .n_cand = 1,
                                .reference_object = "ref", .candidate_object = "cand",
                                .compare = VERIFY_COMPARE_AUTO};
    json_t *report = NULL;
    assert_int_equal(verify_run(&rq, &report, err, sizeof err), EXACTAV_EXIT_UNUSABLE);
    assert_null(report);
    profile_free(&p);
    free(r.data);
    free(c.data);
}

static uint16_t pid_of(const uint8_t *p)
{
    return (uint16_t)(((p[1] & 0x1f) << 8) | p[2]);
}

/* Offset and length of the packet's elementary-stream bytes (after the
 * adaptation field and, at a PES start, the PES header); 0 length if none. */
static size_t es_bytes(const uint8_t *p, size_t *len)
{
    size_t off = 4;
    if (p[3] & 0x20)
        off += 1 + (size_t)p[4];
    if (!(p[3] & 0x10) || off >= TS) {
        *len = 0;
        return 0;
    }
    if (p[1] & 0x40) {
        if (off + 9 > TS || p[off] || p[off + 1] || p[off + 2] != 1) {
            *len = 0;
            return 0;
        }
        off += 9 + (size_t)p[off + 8];
    }
    *len = off < TS ? TS - off : 0;
    return off;
}

/* Seeded random single-byte edits of the candidate's elementary-stream
 * bytes (video and audio PIDs): the decoder input differs, so the verdict,
 * whatever it is, never comes from the fast path. */
static void t06_single_byte_edits_never_match_by_decoder_input(void **state)
{
    (void)state;
    struct file r = load(FX "ref_tiny.ts"), c = load(FX "ref_tiny.ts");
    json_t *first = check(&r, &c, VERIFY_COMPARE_AUTO, NULL);
    assert_string_equal(str(first, "compare", NULL), "decoder-input");
    json_decref(first);
    size_t *es = malloc(sizeof *es * (c.len / TS));
    size_t n = 0;
    for (size_t i = 0; i + TS <= c.len; i += TS) {
        size_t len;
        es_bytes(c.data + i, &len);
        uint16_t pid = pid_of(c.data + i);
        if (len && pid != 0 && pid < 0x1fff && pid != 0x1000)   /* not the PAT nor the PMT */
            es[n++] = i;
    }
    assert_true(n > 20);
    srand(20261130);
    int verdicts[3] = {0};
    for (int k = 0; k < EDITS; k++) {
        size_t pkt = es[(size_t)rand() % n], len, off = es_bytes(c.data + pkt, &len);
        size_t at = pkt + off + (size_t)rand() % len;
        uint8_t was = c.data[at];
        c.data[at] ^= (uint8_t)(1 + rand() % 255);
        json_t *rep = check(&r, &c, VERIFY_COMPARE_AUTO, NULL);
        if (strcmp(str(rep, "compare", NULL), "full"))
            fail_msg("edit %d at byte %zu (0x%02x -> 0x%02x): compare %s, verdict %s", k, at, was, c.data[at],
                     str(rep, "compare", NULL), str(rep, "verdict", NULL));
        const char *v = str(rep, "verdict", NULL);
        verdicts[v[0] == 'M' ? (v[1] == 'A' ? 0 : 1) : 2]++;
        json_decref(rep);
        c.data[at] = was;
    }
    printf("single-byte edits: %d MATCH (full decode), %d MISMATCH, %d UNKNOWN\n", verdicts[0], verdicts[1],
           verdicts[2]);
    free(es);
    free(r.data);
    free(c.data);
}

/* Where a packet's payload (a PES start, with PUSI) begins. */
static size_t pes_start(const uint8_t *p)
{
    return 4 + (p[3] & 0x20 ? 1 + (size_t)p[4] : 0);
}

/* The first packet with payload of PID class want (0: a continuation of a
 * video PES; 1: the start of a bounded audio PES), its offset. */
static size_t find_packet(const struct file *f, int want)
{
    for (size_t i = 0; i + TS <= f->len; i += TS) {
        const uint8_t *p = f->data + i;
        size_t len;
        size_t off = es_bytes(p, &len);
        bool pusi = p[1] & 0x40;
        if (!len || pid_of(p) == 0 || pid_of(p) >= 0x1000)
            continue;
        if (want == 0 && !pusi && pid_of(p) == 0x100)
            return i;
        (void)off;
        if (want == 1 && pusi && pid_of(p) == 0x101 && (p[pes_start(p) + 4] | p[pes_start(p) + 5]))
            return i;
    }
    fail_msg("no packet of class %d", want);
    return 0;
}

/* What the transport layer must not drop unseen, nor the announcement hide
 * (issue 18, classes 1 to 3): the fast path never says MATCH where the full
 * decode would not; and what no decoder reads does not decide (class 13). */
static void t08_below_the_access_units_nothing_is_excused(void **state)
{
    (void)state;
    /* class 3: ADTS frames announced as 0x11 (LATM) */
    expect(FX "ref_og.ts", FX "cand_og_latm.ts", VERIFY_COMPARE_AUTO, "MISMATCH", "audio_params", "full");
    /* class 1: a packet repeated with its counter; identical it is the allowed duplicate */
    struct file r = load(FX "ref_tiny.ts"), c = load(FX "ref_tiny.ts");
    size_t at = find_packet(&r, 0);
    struct file d = {malloc(r.len + TS), r.len + TS};
    assert_non_null(d.data);
    memcpy(d.data, r.data, at + TS);
    memcpy(d.data + at + TS, r.data + at, r.len - at);
    json_t *rep = check(&r, &d, VERIFY_COMPARE_AUTO, NULL);
    assert_string_equal(str(rep, "verdict", NULL), "MATCH");
    assert_string_equal(str(rep, "compare", NULL), "decoder-input");
    json_decref(rep);
    d.data[at + TS + TS - 1] ^= 0x40;            /* ... with other bytes it is damage */
    rep = check(&r, &d, VERIFY_COMPARE_AUTO, NULL);
    assert_string_equal(str(rep, "verdict", NULL), "UNKNOWN");
    assert_string_equal(str(rep, "reason", NULL), "duplicate_packet_differs");
    assert_string_equal(str(rep, "compare", NULL), "full");
    json_decref(rep);
    /* class 6: a muxer that once fails to advance the counter (every later
     * counter of the PID one behind): doubtful data, never a confirmed
     * difference (it was MISMATCH: the packet was dropped as a duplicate) */
    struct file g = load(FX "ref_tiny.ts");
    for (size_t i = at; i + TS <= g.len; i += TS)
        if (pid_of(g.data + i) == 0x100 && (g.data[i + 3] & 0x10))
            g.data[i + 3] = (uint8_t)((g.data[i + 3] & 0xF0) | ((g.data[i + 3] - 1) & 0x0F));
    rep = check(&r, &g, VERIFY_COMPARE_AUTO, NULL);
    assert_string_equal(str(rep, "verdict", NULL), "UNKNOWN");
    assert_string_equal(str(rep, "reason", NULL), "duplicate_packet_differs");
    json_decref(rep);
    free(g.data);
    /* class 13: damage on a PID no decoder reads (the SDT's counter stuck on
     * its second packet, other bytes) is recorded, not decisive */
    struct file e = load(FX "ref_tiny.ts");
    size_t sdt[2], nsdt = 0;
    for (size_t i = 0; i + TS <= e.len && nsdt < 2; i += TS)
        if (pid_of(e.data + i) == 0x11)
            sdt[nsdt++] = i;
    assert_int_equal(nsdt, 2);
    e.data[sdt[1] + 3] = (uint8_t)((e.data[sdt[1] + 3] & 0xF0) | (e.data[sdt[0] + 3] & 0x0F));
    e.data[sdt[1] + TS - 1] ^= 0x5A;
    rep = check(&r, &e, VERIFY_COMPARE_AUTO, NULL);
    assert_string_equal(str(rep, "verdict", NULL), "MATCH");
    assert_string_equal(str(rep, "compare", NULL), "decoder-input");
    const json_t *elsewhere = json_object_get(json_object_get(rep, "candidate"), "transport_issue_elsewhere");
    assert_string_equal(str(elsewhere, "issue", NULL), "duplicate_packet_differs");
    assert_int_equal(json_integer_value(json_object_get(elsewhere, "pid")), 0x11);
    json_decref(rep);
    rep = check(&e, &r, VERIFY_COMPARE_AUTO, NULL);   /* and such a reference is usable */
    assert_string_equal(str(rep, "verdict", NULL), "MATCH");
    json_decref(rep);
    free(e.data);
    /* class 2: an audio PES declaring one byte less than it carries */
    at = find_packet(&c, 1);
    size_t hdr = pes_start(c.data + at);
    uint16_t declared = (uint16_t)(c.data[at + hdr + 4] << 8 | c.data[at + hdr + 5]);
    c.data[at + hdr + 4] = (uint8_t)((declared - 1) >> 8);
    c.data[at + hdr + 5] = (uint8_t)(declared - 1);
    rep = check(&r, &c, VERIFY_COMPARE_AUTO, NULL);
    assert_string_equal(str(rep, "verdict", NULL), "UNKNOWN");
    assert_string_equal(str(rep, "reason", NULL), "corrupt_pes");
    assert_string_equal(str(rep, "compare", NULL), "full");
    json_decref(rep);
    free(d.data);
    free(r.data);
    free(c.data);
}

/* A packaging the decoder input shows (other bytes or times than the
 * reference's) but a decode does not: the fast path decodes in full and
 * MATCHes, with the packaging on either side (plain, packaged), and also
 * against other; the packaged stream against itself MATCHes by decoder
 * input. */
static void expect_full_match(const char *plain, const char *packaged, const char *other)
{
    expect(plain, packaged, VERIFY_COMPARE_AUTO, "MATCH", "identical", "full");
    expect(packaged, plain, VERIFY_COMPARE_AUTO, "MATCH", "identical", "full");
    expect(plain, other, VERIFY_COMPARE_AUTO, "MATCH", "identical", "full");
    expect(packaged, packaged, VERIFY_COMPARE_AUTO, "MATCH", "identical", "decoder-input");
}

/* Issue 18, class 12: an SEI after the slices of every picture, in its
 * PES.  Each picture keeps the time of the PES holding its slices (before:
 * MISMATCH, the pictures paired one late). */
static void t09_nal_units_after_the_slices_decode_fully_and_match(void **state)
{
    (void)state;
    expect_full_match(FX "ref_og.ts", FX "cand_og_seitail.ts", FX "cand_og_orienttail.ts");
}

/* Issue 18, class 5: a tick off the declared mapping, per unit, is
 * packaging; two ticks (more than a sample) never MATCH. */
static void t10_a_tick_off_decodes_fully_and_matches_two_never(void **state)
{
    (void)state;
    expect_full_match(FX "ref_tiny.ts", FX "cand_tiny_subtick_a.ts", FX "cand_tiny_subtick_v.ts");
    expect(FX "ref_tiny.ts", FX "cand_tiny_twotick_a.ts", VERIFY_COMPARE_AUTO, "MISMATCH", "audio_samples", "full");
}

/* Issue 18, class 9: ADTS frames of several raw data blocks decode block
 * by block; each block is timed by the samples before it. */
static void t11_raw_data_blocks_decode_fully_and_match(void **state)
{
    (void)state;
    expect_full_match(FX "ref_tiny.ts", FX "cand_tiny_adts2.ts", FX "cand_tiny_adts3.ts");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_repackaged_copy_matches_by_decoder_input),
        cmocka_unit_test(t02_changed_pixels_decode_fully_and_are_located),
        cmocka_unit_test(t03_damaged_candidate_decodes_fully_and_is_unknown),
        cmocka_unit_test(t04_compare_full_forces_the_decode),
        cmocka_unit_test(t05_remembered_reference_decode),
        cmocka_unit_test(t06_single_byte_edits_never_match_by_decoder_input),
        cmocka_unit_test(t07_early_candidate_pass_ends_with_a_refused_reference),
        cmocka_unit_test(t08_below_the_access_units_nothing_is_excused),
        cmocka_unit_test(t09_nal_units_after_the_slices_decode_fully_and_match),
        cmocka_unit_test(t10_a_tick_off_decodes_fully_and_matches_two_never),
        cmocka_unit_test(t11_raw_data_blocks_decode_fully_and_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
