/* test_verdict.c - the verdict lattice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "verdict.h"

static const struct track_verdict MATCH = {VERDICT_MATCH, "identical"};
static const struct track_verdict MISMATCH = {VERDICT_MISMATCH, "audio_samples"};
static const struct track_verdict UNKNOWN = {VERDICT_UNKNOWN, "continuity_gap"};

static void t01_zero_value_is_unknown(void **state)
{
    (void)state;
    struct track_verdict zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(zero.verdict, VERDICT_UNKNOWN);
    assert_int_equal(verdict_exit_code(zero.verdict), 2);
}

static void t02_all_match_is_match(void **state)
{
    (void)state;
    struct track_verdict t[] = {MATCH, MATCH};
    assert_int_equal(verdict_combine(t, 2).verdict, VERDICT_MATCH);
}

static void t03_mismatch_wins_over_unknown_on_the_other_track(void **state)
{
    (void)state;
    struct track_verdict t[] = {UNKNOWN, MISMATCH};
    struct track_verdict v = verdict_combine(t, 2);
    assert_int_equal(v.verdict, VERDICT_MISMATCH);
    assert_string_equal(v.reason, "audio_samples");
}

static void t04_unknown_wins_over_match(void **state)
{
    (void)state;
    struct track_verdict t[] = {MATCH, UNKNOWN};
    struct track_verdict v = verdict_combine(t, 2);
    assert_int_equal(v.verdict, VERDICT_UNKNOWN);
    assert_string_equal(v.reason, "continuity_gap");
}

static void t05_exit_codes(void **state)
{
    (void)state;
    assert_int_equal(verdict_exit_code(VERDICT_MATCH), 0);
    assert_int_equal(verdict_exit_code(VERDICT_MISMATCH), 1);
    assert_int_equal(verdict_exit_code(VERDICT_UNKNOWN), 2);
    assert_string_equal(verdict_name(VERDICT_UNKNOWN), "UNKNOWN");
}

static void t06_every_combination_follows_the_lattice(void **state)
{
    (void)state;
    const struct track_verdict all[] = {MATCH, MISMATCH, UNKNOWN};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            struct track_verdict t[] = {all[a], all[b]};
            enum verdict v = verdict_combine(t, 2).verdict;
            if (a == 1 || b == 1)
                assert_int_equal(v, VERDICT_MISMATCH);
            else if (a == 2 || b == 2)
                assert_int_equal(v, VERDICT_UNKNOWN);
            else
                assert_int_equal(v, VERDICT_MATCH);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_zero_value_is_unknown),
        cmocka_unit_test(t02_all_match_is_match),
        cmocka_unit_test(t03_mismatch_wins_over_unknown_on_the_other_track),
        cmocka_unit_test(t04_unknown_wins_over_match),
        cmocka_unit_test(t05_exit_codes),
        cmocka_unit_test(t06_every_combination_follows_the_lattice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
