/* test_ts33.c - 33-bit timestamp arithmetic and interval membership. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ts33.h"

#define M TS33_MOD

static void t01_norm_reduces_any_value(void **state)
{
    (void)state;
    assert_int_equal(ts33_norm(0), 0);
    assert_int_equal(ts33_norm(M), 0);
    assert_int_equal(ts33_norm(M + 5), 5);
    assert_int_equal(ts33_norm(-1), M - 1);
    assert_int_equal(ts33_norm(-M - 3), M - 3);
}

static void t02_sub_and_add_wrap(void **state)
{
    (void)state;
    assert_int_equal(ts33_sub(5, M - 5), 10);
    assert_int_equal(ts33_add(M - 5, 10), 5);
    assert_int_equal(ts33_sub(100, 100), 0);
}

static void t03_diff_takes_the_short_way_round(void **state)
{
    (void)state;
    assert_int_equal(ts33_diff(5, M - 5), 10);
    assert_int_equal(ts33_diff(M - 5, 5), -10);
    assert_int_equal(ts33_diff(M / 2 - 1, 0), M / 2 - 1);
    assert_int_equal(ts33_diff(M / 2, 0), -M / 2);
}

static void t04_interval_membership_is_half_open(void **state)
{
    (void)state;
    assert_true(ts33_in_interval(1000, 1000, 2000));
    assert_true(ts33_in_interval(1999, 1000, 2000));
    assert_false(ts33_in_interval(2000, 1000, 2000));
    assert_false(ts33_in_interval(999, 1000, 2000));
}

static void t05_interval_crossing_the_wrap(void **state)
{
    (void)state;
    int64_t start = M - 45000, end = 45000;
    assert_int_equal(ts33_interval_len(start, end), 90000);
    assert_true(ts33_in_interval(M - 1, start, end));
    assert_true(ts33_in_interval(0, start, end));
    assert_true(ts33_in_interval(44999, start, end));
    assert_false(ts33_in_interval(45000, start, end));
    assert_false(ts33_in_interval(M - 45001, start, end));
    /* values libavformat unwrapped past 2^33 are the same instants */
    assert_true(ts33_in_interval(M + 10, start, end));
}

static void t06_empty_interval_contains_nothing(void **state)
{
    (void)state;
    assert_false(ts33_in_interval(5, 5, 5));
    assert_int_equal(ts33_interval_len(7, 7), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_norm_reduces_any_value),
        cmocka_unit_test(t02_sub_and_add_wrap),
        cmocka_unit_test(t03_diff_takes_the_short_way_round),
        cmocka_unit_test(t04_interval_membership_is_half_open),
        cmocka_unit_test(t05_interval_crossing_the_wrap),
        cmocka_unit_test(t06_empty_interval_contains_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
