/* test_vvalid.c - video validity by decode dependency (vvalid.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vvalid.h"

/* An open GOP in decode order: P(216000) of the previous GOP, the open-GOP
 * I frame at 222000 (recovery point), its leading B frame at 219000, then
 * P(234000), B(225000).  Damage in the I frame is seen only when the I
 * frame itself is output, after its leading B frame. */
static void t01_damage_taints_what_is_decoded_from_it_whatever_the_output_order(void **state)
{
    (void)state;
    struct vvalid v;
    assert_int_equal(vvalid_init(&v), 0);
    int64_t p = vvalid_feed(&v, 216000, false, true, VV_CUT_NONE);
    int64_t i = vvalid_feed(&v, 222000, false, true, VV_CUT_RECOVERY);
    int64_t b = vvalid_feed(&v, 219000, false, true, VV_CUT_NONE);
    vvalid_output(&v, p, 216000);
    assert_true(vvalid_final(&v, p));
    assert_true(vvalid_valid(&v, p, 216000));
    vvalid_output(&v, b, 219000);
    assert_false(vvalid_final(&v, b));      /* the I frame decoded before it is not out yet */
    vvalid_damage(&v, i);                   /* the I frame comes out flagged */
    vvalid_output(&v, i, 222000);
    assert_true(vvalid_final(&v, b));
    assert_false(vvalid_valid(&v, b, 219000));
    assert_false(vvalid_valid(&v, i, 222000));
    int64_t p2 = vvalid_feed(&v, 234000, false, true, VV_CUT_NONE);
    vvalid_output(&v, p2, 234000);
    assert_false(vvalid_valid(&v, p2, 234000));   /* predicted from the damaged I frame */
    vvalid_free(&v);
}

/* An open-GOP recovery point cuts the damage off only for the pictures
 * displayed at or after it; an IDR cuts everything. */
static void t02_random_access_points_cut_damage_off(void **state)
{
    (void)state;
    struct vvalid v;
    assert_int_equal(vvalid_init(&v), 0);
    int64_t a = vvalid_feed(&v, 3000, false, true, VV_CUT_NONE);
    vvalid_damage(&v, a);
    int64_t i = vvalid_feed(&v, 12000, false, true, VV_CUT_RECOVERY);
    int64_t lead = vvalid_feed(&v, 9000, false, true, VV_CUT_NONE);
    int64_t trail = vvalid_feed(&v, 15000, false, true, VV_CUT_NONE);
    assert_true(vvalid_valid(&v, i, 12000));
    assert_false(vvalid_valid(&v, lead, 9000));
    assert_true(vvalid_valid(&v, trail, 15000));
    int64_t k = vvalid_feed(&v, 18000, false, true, VV_CUT_NONE);
    vvalid_damage(&v, k);
    int64_t idr = vvalid_feed(&v, 30000, false, true, VV_CUT_IDR);
    int64_t after = vvalid_feed(&v, 27000, false, true, VV_CUT_NONE);
    assert_true(vvalid_valid(&v, idr, 30000));
    assert_true(vvalid_valid(&v, after, 27000));
    vvalid_free(&v);
}

/* Pre-roll failures are expected; units of the interval never output are
 * dropped; a frame the model cannot place invalidates the rest. */
static void t03_preroll_dropped_and_anomalies(void **state)
{
    (void)state;
    struct vvalid v;
    assert_int_equal(vvalid_init(&v), 0);
    int64_t i = vvalid_feed(&v, 12000, false, false, VV_CUT_RECOVERY);
    int64_t lead = vvalid_feed(&v, 9000, true, false, VV_CUT_NONE);
    vvalid_damage(&v, lead);                /* missing references: pre-roll */
    int64_t p = vvalid_feed(&v, 15000, false, true, VV_CUT_NONE);
    int64_t q = vvalid_feed(&v, 18000, false, true, VV_CUT_NONE);
    vvalid_output(&v, i, 12000);            /* the leading B frame never comes out */
    assert_true(vvalid_final(&v, i));
    vvalid_output(&v, q, 18000);            /* p is skipped by the decoder ... */
    assert_false(vvalid_final(&v, q));      /* ... or only late: its PTS says nothing */
    int64_t last = q;
    for (int k = 0; k < VV_DROP_DISTANCE; k++) {
        last = vvalid_feed(&v, 21000 + 3000 * (int64_t)k, false, false, VV_CUT_NONE);
        vvalid_output(&v, last, 21000 + 3000 * (int64_t)k);
    }
    assert_true(vvalid_final(&v, q));       /* a DPB later it is given up */
    assert_true(vvalid_valid(&v, q, 18000));
    assert_int_equal(v.dropped_in_interval, 1);
    vvalid_output(&v, p, 15000);            /* ... and comes out after all */
    assert_true(v.anomaly);
    assert_false(vvalid_valid(&v, q, 18000));
    vvalid_free(&v);
}

/* A wrong PTS does not reorder the decoder's output: a frame displayed
 * (by its PTS) after frames still in the decoder does not give them up. */
static void t05_a_wild_pts_is_not_an_anomaly(void **state)
{
    (void)state;
    struct vvalid v;
    assert_int_equal(vvalid_init(&v), 0);
    int64_t p = vvalid_feed(&v, 12000, false, true, VV_CUT_NONE);
    int64_t b = vvalid_feed(&v, 469144, false, true, VV_CUT_NONE);   /* should be 6000 */
    int64_t b2 = vvalid_feed(&v, 9000, false, true, VV_CUT_NONE);
    vvalid_output(&v, b, 469144);
    vvalid_output(&v, b2, 9000);
    vvalid_output(&v, p, 12000);
    assert_false(v.anomaly);
    assert_true(vvalid_final(&v, b2) && vvalid_valid(&v, b2, 9000));
    assert_int_equal(v.dropped_in_interval, 0);
    vvalid_free(&v);
}

/* A stream ending resolves everything; the window of tracked units grows. */
static void t04_flush_and_long_windows(void **state)
{
    (void)state;
    struct vvalid v;
    assert_int_equal(vvalid_init(&v), 0);
    int64_t d[300];
    for (int k = 0; k < 300; k++)
        d[k] = vvalid_feed(&v, 3000 * (int64_t)k, false, true, k % 30 ? VV_CUT_NONE : VV_CUT_IDR);
    assert_true(vvalid_final(&v, d[299 - VV_DROP_DISTANCE - 1]));
    assert_false(vvalid_final(&v, d[299]));
    vvalid_flush(&v);
    assert_true(vvalid_final(&v, d[299]));
    assert_int_equal(v.dropped_in_interval, 300);
    assert_false(v.anomaly);
    vvalid_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_damage_taints_what_is_decoded_from_it_whatever_the_output_order),
        cmocka_unit_test(t02_random_access_points_cut_damage_off),
        cmocka_unit_test(t03_preroll_dropped_and_anomalies),
        cmocka_unit_test(t04_flush_and_long_windows),
        cmocka_unit_test(t05_a_wild_pts_is_not_an_anomaly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
