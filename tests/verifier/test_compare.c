/* test_compare.c - visible-pixel comparison, pairing, deferred confirmation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

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

static void push_frame(struct ring *r, int64_t rel, uint32_t group, uint8_t seed)
{
    struct vitem it = {.kind = VITEM_FRAME, .rel = rel, .pts = rel, .group = group,
                       .frame = make_frame(16, 8, 0, seed)};
    push(r, &it);
}

static void push_end(struct ring *r, uint32_t group, bool invalid)
{
    struct vitem it = {.kind = VITEM_GROUP_END, .group = group, .group_invalid = invalid};
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
            push_frame(&rs.r[s], i * 3000, 0, (uint8_t)i);
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, false);
    run(&v, &rs, true);
    assert_false(v.confirmed.set);
    assert_int_equal(v.compared_frames, 5);
    assert_int_equal(v.ref_frames, 5);
    rings_free(&rs);
    vcmp_free(&v);
}

static void t04_missing_frame_in_the_middle(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    for (int i = 0; i < 5; i++) {
        push_frame(&rs.r[0], i * 3000, 0, (uint8_t)i);
        if (i != 2)
            push_frame(&rs.r[1], i * 3000, 0, (uint8_t)i);
    }
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, false);
    run(&v, &rs, true);
    assert_true(v.confirmed.set);
    assert_string_equal(v.confirmed.plane, "missing");
    assert_int_equal(v.confirmed.index, 2);
    assert_int_equal(v.ref_frames, 5);
    assert_int_equal(v.cand_frames, 4);
    rings_free(&rs);
    vcmp_free(&v);
}

static void t05_missing_is_not_confirmed_over_an_incomplete_observation(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    for (int i = 0; i < 4; i++) {
        push_frame(&rs.r[0], i * 3000, 0, (uint8_t)i);
        if (i < 2)
            push_frame(&rs.r[1], i * 3000, 0, (uint8_t)i);
    }
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, false);
    run(&v, &rs, false);
    assert_false(v.confirmed.set);
    assert_true(v.unconfirmed);
    rings_free(&rs);
    vcmp_free(&v);
}

static void t06_extra_and_pts_differences(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    /* candidate frame at 1500 sits between reference frames 0 and 3000 */
    push_frame(&rs.r[0], 0, 0, 1);
    push_frame(&rs.r[0], 3000, 0, 2);
    push_frame(&rs.r[1], 0, 0, 1);
    push_frame(&rs.r[1], 1500, 0, 2);
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, false);
    run(&v, &rs, true);
    assert_true(v.confirmed.set);
    assert_string_equal(v.confirmed.plane, "pts");
    assert_int_equal(v.confirmed.index, 1);
    rings_free(&rs);
    vcmp_free(&v);

    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, 0, 1);
    push_frame(&rs.r[1], 0, 0, 1);
    push_frame(&rs.r[1], 3000, 0, 2);
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, false);
    run(&v, &rs, true);
    assert_string_equal(v.confirmed.plane, "extra");
    assert_int_equal(v.confirmed.index, 1);
    rings_free(&rs);
    vcmp_free(&v);
}

/* A pixel difference in a group that later turns out invalid (a B-frame
 * output before the damaged frame it references) is never confirmed; a
 * difference in the next, valid group is. */
static void t07_difference_waits_for_its_group(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, 0, 1);
    push_frame(&rs.r[1], 0, 0, 99);               /* differs, group 0 */
    rs.r[0].closed = rs.r[1].closed = false;
    vcmp_step(&v, &rs.r[0], &rs.r[1]);
    assert_false(v.confirmed.set);                /* not final yet */
    assert_int_equal(v.npend, 1);
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, true);                  /* candidate group 0 was damaged */
    push_frame(&rs.r[0], 3000, 1, 5);
    push_frame(&rs.r[1], 3000, 1, 77);            /* differs, group 1 */
    push_end(&rs.r[0], 1, false);
    push_end(&rs.r[1], 1, false);
    run(&v, &rs, false);
    assert_true(v.confirmed.set);
    assert_int_equal(v.confirmed.index, 1);
    assert_true(v.unconfirmed);
    assert_true(v.invalid_in_interval[1]);
    rings_free(&rs);
    vcmp_free(&v);
}

static void t08_params_difference(void **state)
{
    (void)state;
    struct rings rs;
    struct vcmp v;
    rings_init(&rs);
    vcmp_init(&v);
    push_frame(&rs.r[0], 0, 0, 1);
    struct vitem it = {.kind = VITEM_FRAME, .rel = 0, .frame = make_frame(8, 8, 0, 1)};
    push(&rs.r[1], &it);
    push_end(&rs.r[0], 0, false);
    push_end(&rs.r[1], 0, false);
    run(&v, &rs, true);
    assert_string_equal(v.confirmed.plane, "params");
    assert_int_equal(v.compared_frames, 0);
    rings_free(&rs);
    vcmp_free(&v);
}

/* ---- audio ---- */

static void push_audio(struct ring *r, int64_t rel_units, int n, float base, bool valid)
{
    struct aitem it = {.nb_samples = n, .channels = 2, .sample_rate = 48000, .rel_units = rel_units,
                       .valid = valid, .pcm = malloc((size_t)n * 2 * sizeof(float))};
    for (int i = 0; i < 2 * n; i++)
        it.pcm[i] = base + (float)i;
    memcpy((char *)r->items + ((r->head + r->count) % r->cap) * r->item_size, &it, sizeof it);
    r->count++;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_padding_and_linesize_are_ignored),
        cmocka_unit_test(t02_first_difference_in_raster_order_and_plane_order),
        cmocka_unit_test(t03_identical_streams_pair_by_time),
        cmocka_unit_test(t04_missing_frame_in_the_middle),
        cmocka_unit_test(t05_missing_is_not_confirmed_over_an_incomplete_observation),
        cmocka_unit_test(t06_extra_and_pts_differences),
        cmocka_unit_test(t07_difference_waits_for_its_group),
        cmocka_unit_test(t08_params_difference),
        cmocka_unit_test(t09_audio_chunks_of_other_sizes_compare_equal),
        cmocka_unit_test(t10_audio_bit_difference_names_sample_and_channel),
        cmocka_unit_test(t11_negative_zero_differs_from_zero),
        cmocka_unit_test(t12_audio_difference_in_invalid_data_is_unconfirmed),
        cmocka_unit_test(t13_audio_missing_tail_needs_a_complete_observation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
