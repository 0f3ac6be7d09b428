/* test_compare.c - visible-pixel comparison, pairing, deferred confirmation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libavutil/display.h>
#include <libavutil/stereo3d.h>

#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>

#include "compare.h"
#include "xfer.h"

/* A yuv420p frame whose buffers have a chosen extra padding per row, filled
 * with a pattern in the visible part and garbage in the padding. */
static AVFrame *make_frame(int w, int h, int pad, uint8_t seed)
{
    AVFrame *f = av_frame_alloc();
    f->width = w, f->height = h, f->format = AV_PIX_FMT_YUV420P;
    for (int p = 0; p < 3; p++) {
        int pw = p ? (w + 1) / 2 : w, ph = p ? (h + 1) / 2 : h;
        f->linesize[p] = pw + pad;
        f->buf[p] = av_buffer_alloc((size_t)f->linesize[p] * (size_t)ph);
        f->data[p] = f->buf[p]->data;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < f->linesize[p]; x++)
                f->data[p][y * f->linesize[p] + x] = x < pw ? (uint8_t)(seed + 3 * x + 7 * y + p) : (uint8_t)rand();
    }
    return f;
}

static void t01_padding_and_linesize_are_ignored(void **state)
{
    (void)state;
    AVFrame *a = make_frame(33, 17, 0, 1), *b = make_frame(33, 17, 31, 1);
    const char *plane = NULL;
    int x = -1, y = -1;
    assert_true(frames_equal(a, b, &plane, &x, &y));
    av_frame_free(&a);
    av_frame_free(&b);
}

static void t02_first_difference_in_raster_order_and_plane_order(void **state)
{
    (void)state;
    AVFrame *a = make_frame(33, 17, 5, 1), *b = make_frame(33, 17, 9, 1);
    b->data[2][3 * b->linesize[2] + 4] ^= 1;      /* V at (4,3) */
    b->data[1][8 * b->linesize[1] + 16] ^= 1;     /* U at (16,8): the last chroma pixel */
    const char *plane = NULL;
    int x = -1, y = -1;
    assert_false(frames_equal(a, b, &plane, &x, &y));
    assert_string_equal(plane, "U");
    assert_int_equal(x, 16);
    assert_int_equal(y, 8);
    b->data[0][16 * b->linesize[0] + 32] ^= 0x80;  /* Y bottom-right corner wins */
    assert_false(frames_equal(a, b, &plane, &x, &y));
    assert_string_equal(plane, "Y");
    assert_int_equal(x, 32);
    assert_int_equal(y, 16);
    av_frame_free(&a);
    av_frame_free(&b);
}

/* ---- pairing through real rings ---- */

struct rings {
    struct ring r[2];
};

static void rings_init(struct rings *rs)
{
    for (int s = 0; s < 2; s++) {
        memset(&rs->r[s], 0, sizeof rs->r[s]);
        rs->r[s].items = calloc(64, sizeof(struct vitem));
        rs->r[s].item_size = sizeof(struct vitem);
        rs->r[s].cap = 64;
    }
}

static void push(struct ring *r, const struct vitem *it)
{
    memcpy((char *)r->items + ((r->head + r->count) % r->cap) * r->item_size, it, sizeof *it);
    r->count++;
}

static void push_frame(struct ring *r, int64_t rel, bool valid, uint8_t seed)
{
    struct vitem it = {.rel = rel, .pts = rel, .valid = valid, .frame = make_frame(16, 8, 0, seed)};
    push(r, &it);
}

static void push_margin(struct ring *r, int64_t rel, uint8_t seed)
{
    struct vitem it = {.rel = rel, .pts = rel, .valid = true, .margin = true, .frame = make_frame(16, 8, 0, seed)};
    push(r, &it);
}

static void rings_free(struct rings *rs)
{
    for (int s = 0; s < 2; s++) {
        struct vitem *it;
        while ((it = ring_peek(&rs->r[s], 0))) {
            vitem_release(it);
            ring_drop(&rs->r[s]);
        }
        free(rs->r[s].items);
    }
}

static void run(struct vcmp *v, struct rings *rs, bool clean)
{
    rs->r[0].closed = rs->r[1].closed = true;
    while (vcmp_step(v, &rs->r[0], &rs->r[1]))
        ;
    assert_true(v->done);
    vcmp_finish(v, clean);
}

static void t03_identical_streams_pair_by_time(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    for (int i = 0; i < 5; i++)
        for (int s = 0; s < 2; s++)
            push_frame(&rs.r[s], i * 3000, true, (uint8_t)i);
    run(&v, &rs, true);
    assert_false(v.confirmed.set);
    assert_int_equal(v.compared_frames, 5);
    assert_int_equal(v.ref_frames, 5);
    rings_free(&rs);
}

static void t04_missing_frame_in_the_middle(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    for (int i = 0; i < 5; i++) {
        push_frame(&rs.r[0], i * 3000, true, (uint8_t)i);
        if (i != 2)
            push_frame(&rs.r[1], i * 3000, true, (uint8_t)i);
    }
    run(&v, &rs, true);
    assert_true(v.confirmed.set);
    assert_string_equal(v.confirmed.plane, "missing");
    assert_int_equal(v.confirmed.index, 2);
    assert_int_equal(v.ref_frames, 5);
    assert_int_equal(v.cand_frames, 4);
    rings_free(&rs);
}

static void t05_missing_is_not_confirmed_over_an_incomplete_observation(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    for (int i = 0; i < 4; i++) {
        push_frame(&rs.r[0], i * 3000, true, (uint8_t)i);
        if (i < 2)
            push_frame(&rs.r[1], i * 3000, true, (uint8_t)i);
    }
    run(&v, &rs, false);
    assert_false(v.confirmed.set);
    assert_true(v.unconfirmed);
    rings_free(&rs);
}

static void t06_extra_and_pts_differences(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    /* candidate frame at 1500 sits between reference frames 0 and 3000 */
    push_frame(&rs.r[0], 0, true, 1);
    push_frame(&rs.r[0], 3000, true, 2);
    push_frame(&rs.r[1], 0, true, 1);
    push_frame(&rs.r[1], 1500, true, 2);
    run(&v, &rs, true);
    assert_true(v.confirmed.set);
    assert_string_equal(v.confirmed.plane, "pts");
    assert_int_equal(v.confirmed.index, 1);
    rings_free(&rs);

    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, true, 1);
    push_frame(&rs.r[1], 0, true, 1);
    push_frame(&rs.r[1], 3000, true, 2);
    run(&v, &rs, true);
    assert_string_equal(v.confirmed.plane, "extra");
    assert_int_equal(v.confirmed.index, 1);
    rings_free(&rs);
}

/* A pixel difference in invalid data (decoded from damage, whatever its
 * output order: vvalid.h) is never confirmed; a later one in valid data is. */
static void t07_difference_in_invalid_data_is_unconfirmed(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, true, 1);
    push_frame(&rs.r[1], 0, false, 99);           /* differs, candidate frame damaged */
    push_frame(&rs.r[0], 3000, true, 5);
    push_frame(&rs.r[1], 3000, true, 77);         /* differs, valid */
    run(&v, &rs, false);
    assert_true(v.confirmed.set);
    assert_int_equal(v.confirmed.index, 1);
    assert_true(v.unconfirmed);
    rings_free(&rs);
}

static void t08_params_difference(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, true, 1);
    struct vitem it = {.rel = 0, .valid = true, .frame = make_frame(8, 8, 0, 1)};
    push(&rs.r[1], &it);
    run(&v, &rs, true);
    assert_string_equal(v.confirmed.plane, "params");
    assert_string_equal(v.confirmed.param, "dimensions");
    assert_int_equal(v.compared_frames, 0);
    rings_free(&rs);
}

/* Identical planes that a player shows differently: every parameter that
 * gives them meaning is compared, frame by frame. */
static void t14_colour_and_geometry_parameters_are_compared(void **state)
{
    (void)state;
    static const char *names[] = {"pixel_format", "sample_aspect_ratio", "color_range", "color_primaries",
                                  "color_transfer", "color_matrix", "chroma_location", "field_order"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        AVFrame *a = make_frame(16, 8, 0, 1), *b = make_frame(16, 8, 0, 1);
        assert_null(frame_params_differ(a, b));
        switch (k) {
        case 0: b->format = AV_PIX_FMT_YUVJ420P; break;
        case 1: b->sample_aspect_ratio = (AVRational){4, 3}; break;
        case 2: b->color_range = AVCOL_RANGE_JPEG; break;
        case 3: b->color_primaries = AVCOL_PRI_BT2020; break;
        case 4: b->color_trc = AVCOL_TRC_SMPTE2084; break;
        case 5: b->colorspace = AVCOL_SPC_BT2020_NCL; break;
        case 6: b->chroma_location = AVCHROMA_LOC_TOPLEFT; break;
        case 7: b->interlaced_frame = 1; break;
        }
        assert_string_equal(frame_params_differ(a, b), names[k]);
        av_frame_free(&a);
        av_frame_free(&b);
    }
    /* side data that changes what a player shows (issue 18, class 10): a
     * rotation or a stereo packing on one side only; an identity matrix and
     * a plain 2D view mean what nothing means */
    {
        AVFrame *x = make_frame(16, 8, 0, 1), *y = make_frame(16, 8, 0, 1);
        AVFrameSideData *sd = av_frame_new_side_data(y, AV_FRAME_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
        assert_non_null(sd);
        av_display_rotation_set((int32_t *)sd->data, 0);
        assert_null(frame_params_differ(x, y));
        av_display_rotation_set((int32_t *)sd->data, 90);
        assert_string_equal(frame_params_differ(x, y), "display_matrix");
        sd = av_frame_new_side_data(x, AV_FRAME_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
        assert_non_null(sd);
        av_display_rotation_set((int32_t *)sd->data, 90);
        assert_null(frame_params_differ(x, y));
        av_display_matrix_flip((int32_t *)sd->data, 1, 0);
        assert_string_equal(frame_params_differ(x, y), "display_matrix");
        av_frame_remove_side_data(x, AV_FRAME_DATA_DISPLAYMATRIX);
        av_frame_remove_side_data(y, AV_FRAME_DATA_DISPLAYMATRIX);
        AVStereo3D *s3d = av_stereo3d_create_side_data(y);
        assert_non_null(s3d);
        s3d->type = AV_STEREO3D_2D;
        assert_null(frame_params_differ(x, y));
        s3d->type = AV_STEREO3D_SIDEBYSIDE;
        assert_string_equal(frame_params_differ(x, y), "stereo3d");
        av_frame_free(&x);
        av_frame_free(&y);
    }
    /* by meaning (H.264 E.2.1): a range flag 0 written means what nothing written means */
    AVFrame *a = make_frame(16, 8, 0, 1), *b = make_frame(16, 8, 0, 1);
    a->color_range = AVCOL_RANGE_UNSPECIFIED;
    b->color_range = AVCOL_RANGE_MPEG;
    assert_null(frame_params_differ(a, b));
    b->color_range = AVCOL_RANGE_JPEG;
    assert_string_equal(frame_params_differ(a, b), "color_range");
    av_frame_free(&a);
    av_frame_free(&b);
}

/* ---- audio ---- */

static void push_audio_ch(struct ring *r, int64_t rel_units, int n, int channels, float base, bool valid)
{
    struct aitem it = {.nb_samples = n, .channels = channels, .sample_rate = 48000, .rel_units = rel_units,
                       .valid = valid, .pcm = malloc((size_t)n * (size_t)channels * sizeof(float))};
    for (int i = 0; i < channels * n; i++)
        it.pcm[i] = base + (float)i;
    memcpy((char *)r->items + ((r->head + r->count) % r->cap) * r->item_size, &it, sizeof it);
    r->count++;
}

static void push_audio(struct ring *r, int64_t rel_units, int n, float base, bool valid)
{
    push_audio_ch(r, rel_units, n, 2, base, valid);
}

static void arings_init(struct ring *r)
{
    for (int s = 0; s < 2; s++) {
        memset(&r[s], 0, sizeof r[s]);
        r[s].items = calloc(64, sizeof(struct aitem));
        r[s].item_size = sizeof(struct aitem);
        r[s].cap = 64;
    }
}

static void arun(struct acmp *a, struct ring *r, bool clean)
{
    r[0].closed = r[1].closed = true;
    while (acmp_step(a, &r[0], &r[1]))
        ;
    assert_true(a->done);
    acmp_finish(a, clean);
    free(r[0].items);
    free(r[1].items);
}

static void t09_audio_chunks_of_other_sizes_compare_equal(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);
    acmp_init(&a, 0);
    push_audio(&r[0], 0, 1024, 0.0f, true);
    push_audio(&r[1], 0, 512, 0.0f, true);
    push_audio(&r[1], 512 * 15, 512, 1024.0f, true);
    arun(&a, r, true);
    assert_false(a.confirmed.set);
    assert_int_equal(a.ref_samples, 1024);
    assert_int_equal(a.cand_samples, 1024);
}

static void t10_audio_bit_difference_names_sample_and_channel(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);
    acmp_init(&a, 1000);
    push_audio(&r[0], 0, 1024, 0.0f, true);
    push_audio(&r[1], 0, 1024, 0.0f, true);
    struct aitem *c = ring_peek(&r[1], 0);
    c->pcm[2 * 700 + 1] = -0.0f == c->pcm[2 * 700 + 1] ? 1.0f : -c->pcm[2 * 700 + 1];
    arun(&a, r, true);
    assert_true(a.confirmed.set);
    assert_int_equal(a.confirmed.sample_index, 700);
    assert_int_equal(a.confirmed.channel, 1);
    assert_int_equal(a.confirmed.pts, 1000 + 700 * 15 / 8);
}

static void t11_negative_zero_differs_from_zero(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);
    acmp_init(&a, 0);
    push_audio(&r[0], 0, 4, 0.0f, true);
    push_audio(&r[1], 0, 4, 0.0f, true);
    ((struct aitem *)ring_peek(&r[0], 0))->pcm[0] = 0.0f;
    ((struct aitem *)ring_peek(&r[1], 0))->pcm[0] = -0.0f;
    arun(&a, r, true);
    assert_true(a.confirmed.set);
    assert_string_equal(a.confirmed.kind, "samples");
}

static void t12_audio_difference_in_invalid_data_is_unconfirmed(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);
    acmp_init(&a, 0);
    push_audio(&r[0], 0, 8, 0.0f, true);
    push_audio(&r[1], 0, 8, 5.0f, false);
    arun(&a, r, false);
    assert_false(a.confirmed.set);
    assert_true(a.unconfirmed);
}

static void t13_audio_missing_tail_needs_a_complete_observation(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);
    acmp_init(&a, 0);
    push_audio(&r[0], 0, 8, 0.0f, true);
    push_audio(&r[0], 8 * 15, 8, 16.0f, true);
    push_audio(&r[1], 0, 8, 0.0f, true);
    arun(&a, r, true);
    assert_true(a.gap.set);
    assert_string_equal(a.gap.kind, "missing");
    assert_int_equal(a.gap.sample_index, 8);

    arings_init(r);
    acmp_init(&a, 0);
    push_audio(&r[0], 0, 8, 0.0f, true);
    push_audio(&r[0], 8 * 15, 8, 16.0f, true);
    push_audio(&r[1], 0, 8, 0.0f, true);
    arun(&a, r, false);
    assert_false(a.gap.set);
    assert_true(a.unconfirmed);
}

/* The channel count changes mid-stream on the candidate: a params
 * difference at the first sample of that item, and no sample of the
 * shorter buffer is read as if it had two channels (ASan). */
static void t15_audio_parameters_are_checked_per_item(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);
    acmp_init(&a, 0);
    push_audio(&r[0], 0, 1024, 0.0f, true);
    push_audio(&r[0], 1024 * 15, 1024, 0.0f, true);
    push_audio(&r[1], 0, 1024, 0.0f, true);
    push_audio_ch(&r[1], 1024 * 15, 1024, 1, 0.0f, true);
    arun(&a, r, true);
    assert_true(a.confirmed.set);
    assert_string_equal(a.confirmed.kind, "params");
    assert_int_equal(a.confirmed.sample_index, 1024);
}

/* Issue 18, class 5: a frame within one tick of the reference's is at its
 * time (either way, per frame); two ticks are a pts difference; a margin
 * frame counts only where it pairs with a reference frame inside I. */
static void t16_one_tick_is_the_same_time_and_margins_pair_or_drop(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    push_margin(&rs.r[0], -1, 9);        /* the reference's, outside I: dropped */
    push_margin(&rs.r[1], -2, 9);
    push_frame(&rs.r[0], 0, true, 1);
    push_margin(&rs.r[1], -1, 1);        /* pairs with the frame at START */
    for (int i = 1; i < 4; i++) {
        push_frame(&rs.r[0], i * 3000, true, (uint8_t)(i + 1));
        push_frame(&rs.r[1], i * 3000 + (i % 2 ? 1 : -1), true, (uint8_t)(i + 1));
    }
    push_margin(&rs.r[1], 12000, 7);     /* past END, pairs with nothing: dropped */
    run(&v, &rs, true);
    assert_false(v.confirmed.set);
    assert_int_equal(v.compared_frames, 4);
    assert_int_equal(v.ref_frames, 4);
    assert_int_equal(v.cand_frames, 4);
    rings_free(&rs);

    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, true, 1);
    push_frame(&rs.r[0], 3000, true, 2);
    push_frame(&rs.r[1], 0, true, 1);
    push_frame(&rs.r[1], 3002, true, 2);
    run(&v, &rs, true);
    assert_true(v.confirmed.set);
    assert_string_equal(v.confirmed.plane, "pts");
    rings_free(&rs);
}

/* One decoded frame's samples [first, first + n) as an item (stereo): the
 * frame starts at frame_units since START, head samples in the margin;
 * each sample's value is its index in the frame, so partners are equal. */
static void push_indexed(struct ring *r, int64_t frame_units, int first, int n, int head_margin)
{
    struct aitem it = {.nb_samples = n, .channels = 2, .sample_rate = 48000,
                       .rel_units = frame_units + (int64_t)first * 15, .valid = true,
                       .head_margin = head_margin, .frame_units = frame_units, .first_index = first,
                       .pcm = malloc((size_t)n * 2 * sizeof(float))};
    for (int i = 0; i < n; i++)
        it.pcm[2 * i] = it.pcm[2 * i + 1] = (float)(first + i);
    memcpy((char *)r->items + ((r->head + r->count) % r->cap) * r->item_size, &it, sizeof it);
    r->count++;
}

/* A frame a tick (8/720000 s) late: its sample k lies 8 after the
 * reference's sample k, its sample k-1 7 before it, both "the same time"
 * within the tolerance.  Samples pair by their index in the frame, so the
 * candidate's margin sample before I (k-1) is dropped, not compared with
 * the reference's k (differential pack_subtick:23689: MISMATCH at sample
 * 0 before), whether I starts inside the frame or at its start (the
 * margin sample then the previous frame's last). */
static void t17_a_tick_late_pairs_samples_by_index_not_by_nearest_time(void **state)
{
    (void)state;
    struct ring r[2];
    struct acmp a;
    arings_init(r);                      /* I starts 192 samples into the frame */
    acmp_init(&a, 0);
    push_indexed(&r[0], -2880, 192, 832, 0);
    push_indexed(&r[1], -2872, 191, 833, 1);
    arun(&a, r, true);
    assert_false(a.confirmed.set);
    assert_false(a.gap.set);
    arings_init(r);                      /* I starts at the frame's start */
    acmp_init(&a, 0);
    push_indexed(&r[0], 0, 0, 1024, 0);
    push_indexed(&r[1], -15352, 1023, 1, 1);
    push_indexed(&r[1], 8, 0, 1024, 0);
    arun(&a, r, true);
    assert_false(a.confirmed.set);
    assert_false(a.gap.set);
    arings_init(r);                      /* a tick early: the margin sample is the partner */
    acmp_init(&a, 0);
    push_indexed(&r[0], 0, 0, 1024, 0);
    push_indexed(&r[1], -8, 0, 1024, 1);
    arun(&a, r, true);
    assert_false(a.confirmed.set);
    assert_false(a.gap.set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_padding_and_linesize_are_ignored),
        cmocka_unit_test(t02_first_difference_in_raster_order_and_plane_order),
        cmocka_unit_test(t03_identical_streams_pair_by_time),
        cmocka_unit_test(t04_missing_frame_in_the_middle),
        cmocka_unit_test(t05_missing_is_not_confirmed_over_an_incomplete_observation),
        cmocka_unit_test(t06_extra_and_pts_differences),
        cmocka_unit_test(t07_difference_in_invalid_data_is_unconfirmed),
        cmocka_unit_test(t08_params_difference),
        cmocka_unit_test(t09_audio_chunks_of_other_sizes_compare_equal),
        cmocka_unit_test(t10_audio_bit_difference_names_sample_and_channel),
        cmocka_unit_test(t11_negative_zero_differs_from_zero),
        cmocka_unit_test(t12_audio_difference_in_invalid_data_is_unconfirmed),
        cmocka_unit_test(t13_audio_missing_tail_needs_a_complete_observation),
        cmocka_unit_test(t14_colour_and_geometry_parameters_are_compared),
        cmocka_unit_test(t15_audio_parameters_are_checked_per_item),
        cmocka_unit_test(t16_one_tick_is_the_same_time_and_margins_pair_or_drop),
        cmocka_unit_test(t17_a_tick_late_pairs_samples_by_index_not_by_nearest_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
