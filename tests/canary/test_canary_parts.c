/* The canary's LL-HLS part functions without the network
 * (verifier/canary/canary_parts.h): the time spans of parts as exact tick
 * sums of their DURATIONs, the part a time falls in, the parts' bytes
 * against the parent's, and which check's report becomes the segment's one
 * row (with part_index and parts_differ_from_segment). */
#include "canary_test.h"

#include <stdlib.h>
#include <string.h>

#include "canary_parts.h"
#include "hls.h"

static const char PLAYLIST[] =
    "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=1.001\n"
    "#EXT-X-MEDIA-SEQUENCE:7\n"
    "#EXT-X-PART:DURATION=0.333333,URI=\"p0.ts\",INDEPENDENT=YES\n"
    "#EXT-X-PART:DURATION=0.5,URI=\"p1.ts\"\n"
    "#EXT-X-PART:DURATION=1.001,URI=\"p2.ts\"\n"
    "#EXTINF:1.834333,\nseg7.ts\n";

static void place(struct canary_parts *p, struct hls_playlist *pl)
{
    memset(p, 0, sizeof *p);
    p->failed_index = -1;
    assert_int_equal(hls_parse(PLAYLIST, strlen(PLAYLIST), pl, NULL), HLS_OK);
    assert_int_equal(pl->segments[0].part_count, 3);
    assert_int_equal(canary_parts_place(p, pl, &pl->segments[0]), 0);
    p->delivery = json_array();
}

static void parts_40_time_spans_are_exact_tick_sums(void **state)
{
    (void)state;
    struct hls_playlist pl;
    struct canary_parts p;
    place(&p, &pl);
    /* 0.333333 s = 29999.97 ticks; + 0.5 s = 74999.97; + 1.001 s = 165089.97 (rounded down) */
    assert_int_equal(p.count, 3);
    assert_int_equal(p.end_ticks[0], 29999);
    assert_int_equal(p.end_ticks[1], 74999);
    assert_int_equal(p.end_ticks[2], 165089);
    assert_int_equal(canary_parts_index_at(&p, -5), 0);
    assert_int_equal(canary_parts_index_at(&p, 0), 0);
    assert_int_equal(canary_parts_index_at(&p, 29998), 0);
    assert_int_equal(canary_parts_index_at(&p, 29999), 1);
    assert_int_equal(canary_parts_index_at(&p, 74998), 1);
    assert_int_equal(canary_parts_index_at(&p, 74999), 2);
    assert_int_equal(canary_parts_index_at(&p, 10000000), 2); /* after the last: the last */
    assert_string_equal(json_string_value(json_array_get(p.durations, 0)), "0.333333");
    canary_parts_free(&p);
    hls_playlist_free(&pl);
}

/* A report as verify writes its top: verdict, reason, interval, tracks. */
static json_t *report(const char *verdict, const char *reason, json_int_t start, json_int_t mismatch_pts)
{
    json_t *fm = mismatch_pts >= 0 ? json_pack("{s:I, s:s}", "pts", mismatch_pts, "plane", "pts") : json_null();
    return json_pack("{s:s, s:s, s:s, s:{s:I}, s:{s:s, s:o}, s:{}, s:{}}", "verdict", verdict, "reason", reason,
                     "compare", "full", "interval", "start", start, "video", "verdict", verdict, "first_mismatch",
                     fm, "canary", "context");
}

static void parts_41_the_worst_check_is_the_row(void **state)
{
    (void)state;
    struct hls_playlist pl;
    struct canary_parts p;
    place(&p, &pl);
    /* segment MATCH, the parts differ from the reference and from the parent
     * at 0.4 s after the start: the parts-against-parent report, part 1 */
    json_t *seg = report("MATCH", "identical", 1000, -1);
    json_t *vs_ref = report("MISMATCH", "video_pts", 1000, 1000 + 36000);
    json_t *vs_seg = report("MISMATCH", "video_pts", 1000, 1000 + 36000);
    struct canary_parts_checks k = {seg, vs_ref, vs_seg, "decode"};
    json_t *row = canary_parts_combine(&k, &p);
    assert_non_null(row);
    assert_ptr_equal(row, vs_seg);
    assert_string_equal(json_string_value(json_object_get(row, "reason")), "parts_differ_from_segment");
    json_t *parts = json_object_get(row, "parts");
    assert_int_equal(json_integer_value(json_object_get(parts, "part_index")), 1);
    assert_string_equal(json_string_value(json_object_get(parts, "reported")), "against_segment");
    assert_string_equal(json_string_value(json_object_get(json_object_get(parts, "against_segment"), "by")), "decode");
    assert_int_equal(json_integer_value(json_object_get(parts, "count")), 3);
    json_decref(row);
    json_decref(vs_seg);
    json_decref(vs_ref);
    json_decref(seg);
    /* the parent itself differs: the segment's own report, no part_index */
    seg = report("MISMATCH", "video_pixels", 1000, 5000);
    vs_ref = report("MATCH", "identical", 1000, -1);
    vs_seg = report("MISMATCH", "video_pixels", 1000, 5000);
    k = (struct canary_parts_checks){seg, vs_ref, vs_seg, "decode"};
    row = canary_parts_combine(&k, &p);
    assert_ptr_equal(row, seg);
    assert_string_equal(json_string_value(json_object_get(row, "reason")), "video_pixels");
    assert_true(json_is_null(json_object_get(json_object_get(row, "parts"), "part_index")));
    json_decref(row);
    json_decref(vs_seg);
    json_decref(vs_ref);
    json_decref(seg);
    /* all MATCH, the parts' bytes the parent's: the segment's report, against_segment by bytes */
    seg = report("MATCH", "identical", 1000, -1);
    vs_ref = report("MATCH", "identical", 1000, -1);
    k = (struct canary_parts_checks){seg, vs_ref, NULL, "bytes"};
    row = canary_parts_combine(&k, &p);
    assert_ptr_equal(row, seg);
    parts = json_object_get(row, "parts");
    assert_string_equal(json_string_value(json_object_get(json_object_get(parts, "against_segment"), "verdict")),
                        "MATCH");
    assert_true(json_is_array(json_object_get(parts, "delivery")));
    json_decref(row);
    json_decref(vs_ref);
    json_decref(seg);
    /* a part missing: UNKNOWN from the parts against the reference, its index */
    p.c.failure = "part_missing";
    p.failed_index = 2;
    seg = report("MATCH", "identical", 1000, -1);
    vs_ref = report("UNKNOWN", "part_missing", 1000, -1);
    k = (struct canary_parts_checks){seg, vs_ref, NULL, NULL};
    row = canary_parts_combine(&k, &p);
    assert_ptr_equal(row, vs_ref);
    parts = json_object_get(row, "parts");
    assert_int_equal(json_integer_value(json_object_get(parts, "part_index")), 2);
    assert_true(json_is_null(json_object_get(parts, "against_segment")));
    json_decref(row);
    json_decref(vs_ref);
    json_decref(seg);
    p.c.failure = NULL;
    canary_parts_free(&p);
    hls_playlist_free(&pl);
}

static void parts_42_parts_bytes_against_the_parent(void **state)
{
    (void)state;
    static const uint8_t whole[] = "abcdefghij";
    struct candidate *parent = calloc(1, sizeof *parent);
    struct canary_parts p;
    assert_non_null(parent);
    memset(&p, 0, sizeof p);
    parent->segs[0] = (struct bsrc_segment){.data = whole, .len = 10};
    parent->nsegs = 1;
    parent->total_bytes = 10;
    p.c.segs[0] = (struct bsrc_segment){.data = whole, .len = 3};
    p.c.segs[1] = (struct bsrc_segment){.data = whole + 3, .len = 0};
    p.c.segs[2] = (struct bsrc_segment){.data = whole + 3, .len = 7};
    p.c.nsegs = 3;
    p.c.total_bytes = 10;
    assert_true(canary_parts_same_bytes(&p, parent));
    static const uint8_t other[] = "abcdefghiX";
    p.c.segs[2].data = other + 3;
    assert_false(canary_parts_same_bytes(&p, parent));
    p.c.segs[2].data = whole + 3;
    p.c.segs[2].len = 6;
    p.c.total_bytes = 9;
    assert_false(canary_parts_same_bytes(&p, parent)); /* one byte short */
    p.c.segs[2].len = 7;
    p.c.total_bytes = 10;
    p.c.failure = "part_missing";
    assert_false(canary_parts_same_bytes(&p, parent)); /* never equal over a failed delivery */
    free(parent);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parts_40_time_spans_are_exact_tick_sums),
        cmocka_unit_test(parts_41_the_worst_check_is_the_row),
        cmocka_unit_test(parts_42_parts_bytes_against_the_parent),
    };
    return canary_test_main("canary_parts", tests, sizeof tests / sizeof tests[0], argc, argv);
}
