/* The canary's scheduling decisions as plain functions, without the
 * network: playlist observation (stall, regression, re-base, end), the
 * selection of media sequence numbers, back-off and shards. */
#include "canary_test.h"

#include <stdlib.h>

#include "canary_sched.h"

#define TD 2 /* target duration, s */

static void sched_01_first_look_advances_then_same(void **state)
{
    (void)state;
    struct canary_seen s = {0};
    assert_int_equal(canary_observe(&s, 10, false, TD, 1000), CANARY_PL_ADVANCING);
    assert_int_equal(canary_observe(&s, 10, false, TD, 2000), CANARY_PL_SAME);
    assert_int_equal(canary_observe(&s, 11, false, TD, 3000), CANARY_PL_ADVANCING);
    assert_int_equal(s.newest, 11);
    assert_int_equal(s.advanced_at_ms, 3000);
}

static void sched_02_stall_after_three_target_durations_once_per_episode(void **state)
{
    (void)state;
    struct canary_seen s = {0};
    canary_observe(&s, 5, false, TD, 0);
    assert_int_equal(canary_observe(&s, 5, false, TD, 3 * TD * 1000 - 1), CANARY_PL_SAME);
    assert_int_equal(canary_observe(&s, 5, false, TD, 3 * TD * 1000), CANARY_PL_STALLED);
    assert_int_equal(canary_observe(&s, 5, false, TD, 60000), CANARY_PL_SAME); /* already on record */
    assert_int_equal(canary_observe(&s, 6, false, TD, 61000), CANARY_PL_ADVANCING);
    assert_int_equal(canary_observe(&s, 6, false, TD, 61000 + 3 * TD * 1000), CANARY_PL_STALLED); /* a new episode */
    /* a target duration of 0 (never valid HLS) still stalls after 3 s, not never */
    struct canary_seen z = {0};
    canary_observe(&z, 1, false, 0, 0);
    assert_int_equal(canary_observe(&z, 1, false, 0, 3000), CANARY_PL_STALLED);
}

static void sched_03_endlist_is_not_a_stall(void **state)
{
    (void)state;
    struct canary_seen s = {0};
    canary_observe(&s, 9, true, TD, 0);
    assert_int_equal(canary_observe(&s, 9, true, TD, 600000), CANARY_PL_ENDED);
}

static void sched_04_regression_reported_once_then_rebased(void **state)
{
    (void)state;
    struct canary_seen s = {0};
    canary_observe(&s, 100, false, TD, 0);
    assert_int_equal(canary_observe(&s, 97, false, TD, 1000), CANARY_PL_REGRESSED);
    assert_int_equal(canary_observe(&s, 98, false, TD, 2000), CANARY_PL_SAME);   /* still below 100, on record */
    assert_int_equal(s.newest, 100);
    assert_int_equal(canary_observe(&s, 100, false, TD, 3000), CANARY_PL_SAME); /* back: the episode ends */
    assert_int_equal(canary_observe(&s, 3, false, TD, 4000), CANARY_PL_REGRESSED);
    assert_int_equal(canary_observe(&s, 4, false, TD, 4000 + 3 * TD * 1000 - 1), CANARY_PL_SAME);
    /* the lower numbering lasted 3 target durations: a restarted packager */
    assert_int_equal(canary_observe(&s, 5, false, TD, 4000 + 3 * TD * 1000), CANARY_PL_REBASED);
    assert_int_equal(s.newest, 5);
    assert_int_equal(canary_observe(&s, 6, false, TD, 20000), CANARY_PL_ADVANCING);
    /* climbing back after a regression is moving, not a stall */
    struct canary_seen c = {0};
    canary_observe(&c, 50, false, TD, 0);
    assert_int_equal(canary_observe(&c, 47, false, TD, 1000), CANARY_PL_REGRESSED);
    assert_int_equal(canary_observe(&c, 48, false, TD, 3000), CANARY_PL_SAME);
    assert_int_equal(canary_observe(&c, 49, false, TD, 5000), CANARY_PL_SAME);
    assert_int_equal(canary_observe(&c, 50, false, TD, 6500), CANARY_PL_SAME); /* not stalled since 0 */
    assert_int_equal(canary_observe(&c, 50, false, TD, 6500 + 3 * TD * 1000), CANARY_PL_STALLED);
}

static struct canary_range R(uint64_t a, uint64_t b)
{
    return (struct canary_range){true, a, b};
}

static const struct canary_range NONE = {0};

static void sched_05_first_cycle_takes_newest_common_minus_lag(void **state)
{
    (void)state;
    struct canary_pick p = canary_select(false, 0, R(10, 15), R(8, 14), 1, 5);
    assert_int_equal(p.source, CANARY_SOURCE_BOTH);
    assert_int_equal(p.first, 13);
    assert_int_equal(p.last, 13);
    assert_int_equal(p.count, 1);
    assert_int_equal(p.skipped, 0);
    p = canary_select(false, 0, R(10, 15), R(8, 14), 0, 5);
    assert_int_equal(p.first, 14);
    /* a lag as deep as the common window leaves nothing */
    p = canary_select(false, 0, R(10, 12), R(10, 12), 3, 5);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.source, CANARY_SOURCE_NONE);
}

static void sched_06_behind_catches_up_oldest_first_bounded(void **state)
{
    (void)state;
    struct canary_pick p = canary_select(true, 11, R(10, 15), R(10, 15), 1, 5);
    assert_int_equal(p.first, 11);
    assert_int_equal(p.last, 14);
    assert_int_equal(p.count, 4);
    assert_int_equal(p.skipped, 0);
    p = canary_select(true, 11, R(10, 30), R(10, 30), 1, 5);
    assert_int_equal(p.first, 25); /* the newest five */
    assert_int_equal(p.last, 29);
    assert_int_equal(p.skipped, 14);
    assert_int_equal(p.skip_first, 11); /* 11..24: over the catch-up limit */
    assert_int_equal(p.window_skipped, 0);
}

static void sched_07_segments_that_slid_out_are_counted_skipped(void **state)
{
    (void)state;
    struct canary_pick p = canary_select(true, 3, R(10, 15), R(9, 15), 1, 5);
    assert_int_equal(p.first, 10);
    assert_int_equal(p.last, 14);
    assert_int_equal(p.skipped, 7);
    assert_int_equal(p.skip_first, 3); /* 3..9 left the window */
    assert_int_equal(p.window_skipped, 7);
}

static struct hls_segment seg(uint64_t seq, uint64_t ms)
{
    return (struct hls_segment){.media_sequence = seq, .duration_ms = ms};
}

static void sched_13_behind_the_live_edge_in_ms(void **state)
{
    (void)state;
    struct hls_segment segs[] = {seg(10, 2000), seg(11, 2000), seg(12, 1500), seg(13, 2002)};
    struct hls_playlist ref = {.target_duration = 2, .segments = segs, .segment_count = 4};
    assert_int_equal(canary_behind_ms(&ref, 13), 0);  /* level */
    assert_int_equal(canary_behind_ms(&ref, 20), 0);  /* ahead */
    assert_int_equal(canary_behind_ms(&ref, 12), 2002);
    assert_int_equal(canary_behind_ms(&ref, 10), 5502);
    assert_int_equal(canary_behind_ms(&ref, 3), 7502); /* below the window: what the window shows */
}

static void sched_08_one_playlist_missing_or_nothing_in_common(void **state)
{
    (void)state;
    struct canary_pick p = canary_select(true, 14, NONE, R(10, 16), 1, 5);
    assert_int_equal(p.source, CANARY_SOURCE_REFERENCE);
    assert_int_equal(p.first, 14);
    assert_int_equal(p.last, 15);
    p = canary_select(true, 14, R(10, 16), NONE, 1, 5);
    assert_int_equal(p.source, CANARY_SOURCE_CANDIDATE);
    assert_int_equal(p.last, 15);
    p = canary_select(false, 0, R(100, 105), R(10, 15), 1, 5);
    assert_int_equal(p.source, CANARY_SOURCE_DISJOINT);
    assert_int_equal(p.first, 104); /* the candidate's due number, which the reference lacks */
    p = canary_select(true, 14, NONE, NONE, 1, 5);
    assert_int_equal(p.source, CANARY_SOURCE_NONE);
    assert_int_equal(p.count, 0);
}

static void sched_09_nothing_new_picks_nothing(void **state)
{
    (void)state;
    struct canary_pick p = canary_select(true, 15, R(10, 15), R(10, 15), 1, 5);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.skipped, 0);
    p = canary_select(true, 15, R(10, 15), R(10, 16), 0, 5);
    assert_int_equal(p.first, 15);
    assert_int_equal(p.count, 1);
}

static void sched_10_backoff_doubles_and_is_bounded(void **state)
{
    (void)state;
    assert_int_equal(canary_backoff_ms(2000, 30000, 0), 2000);
    assert_int_equal(canary_backoff_ms(2000, 30000, 1), 4000);
    assert_int_equal(canary_backoff_ms(2000, 30000, 3), 16000);
    assert_int_equal(canary_backoff_ms(2000, 30000, 4), 30000);
    assert_int_equal(canary_backoff_ms(2000, 30000, 4000000000u), 30000);
    assert_int_equal(canary_backoff_ms(2000, 1000, 5), 2000); /* never below the period */
}

static void sched_11_shards_partition_the_targets(void **state)
{
    (void)state;
    unsigned k, n;
    assert_int_equal(canary_shard_parse("1/3", &k, &n), 0);
    assert_int_equal(k, 1);
    assert_int_equal(n, 3);
    const char *bad[] = {"3/3", "0/0", "-1/2", "1/+2", " 1/2", "1/2x", "1", "/2", "1/1025", "", "a/b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_not_equal(canary_shard_parse(bad[i], &k, &n), 0);
    /* the documented hash: printf 'cdn-c/ch1/360p' | sha256sum -> d62569a3dd969747... */
    assert_true(canary_shard_hash("cdn-c/ch1/360p") == UINT64_C(0xd62569a3dd969747));
    assert_true(canary_in_shard("cdn-c/ch1/360p", 1, 2));
    assert_true(canary_in_shard("cdn-c/ch1/360p", 2, 3));
    /* every key in exactly one shard */
    char key[64];
    unsigned count[5] = {0};
    for (int i = 0; i < 500; i++) {
        snprintf(key, sizeof key, "cdn-%d/ch%d/360p", i % 7, i);
        int owners = 0;
        for (unsigned s = 0; s < 5; s++)
            if (canary_in_shard(key, s, 5)) {
                owners++;
                count[s]++;
            }
        assert_int_equal(owners, 1);
    }
    for (unsigned s = 0; s < 5; s++)
        assert_true(count[s] > 50); /* 100 expected; a wildly uneven split would be a bug */
}

/* Random walks of a playlist: a stall is never on record twice without an
 * advance in between, and a pick never leaves the ranges nor the limit. */
static void sched_12_property_random_walks(void **state)
{
    (void)state;
    srand(12345);
    for (int run = 0; run < 200; run++) {
        struct canary_seen s = {0};
        uint64_t newest = 1000, next = 0, prev = 1000;
        bool have_next = false, stalled_since_advance = false;
        int64_t t = 0;
        for (int step = 0; step < 300; step++) {
            t += rand() % 5000;
            int move = rand() % 10;
            if (move < 5)
                newest += (uint64_t)(rand() % 3);
            else if (move == 9 && newest > 20)
                newest -= (uint64_t)(rand() % 20);
            enum canary_pl o = canary_observe(&s, newest, false, TD, t);
            if (o == CANARY_PL_ADVANCING || o == CANARY_PL_REBASED || newest > prev)
                stalled_since_advance = false;
            prev = newest;
            if (o == CANARY_PL_STALLED) {
                assert_false(stalled_since_advance);
                stalled_since_advance = true;
            }
            unsigned lag = (unsigned)(rand() % 3), catchup = 1 + (unsigned)(rand() % 6);
            struct canary_range c = R(newest >= 5 ? newest - 5 : 0, newest);
            struct canary_range r = R(newest >= 7 ? newest - 7 : 0, newest + (uint64_t)(rand() % 2));
            struct canary_pick p = canary_select(have_next, next, c, r, lag, catchup);
            if (p.count) {
                assert_true(p.first >= c.first && p.first >= r.first);
                assert_true(p.last + lag <= c.last && p.last + lag <= r.last);
                assert_true(p.count <= catchup);
                assert_true(!have_next || p.first >= next);
                assert_int_equal(p.last - p.first + 1, p.count);
                next = p.last + 1;
                have_next = true;
            }
        }
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sched_01_first_look_advances_then_same),
        cmocka_unit_test(sched_02_stall_after_three_target_durations_once_per_episode),
        cmocka_unit_test(sched_03_endlist_is_not_a_stall),
        cmocka_unit_test(sched_04_regression_reported_once_then_rebased),
        cmocka_unit_test(sched_05_first_cycle_takes_newest_common_minus_lag),
        cmocka_unit_test(sched_06_behind_catches_up_oldest_first_bounded),
        cmocka_unit_test(sched_07_segments_that_slid_out_are_counted_skipped),
        cmocka_unit_test(sched_08_one_playlist_missing_or_nothing_in_common),
        cmocka_unit_test(sched_09_nothing_new_picks_nothing),
        cmocka_unit_test(sched_10_backoff_doubles_and_is_bounded),
        cmocka_unit_test(sched_11_shards_partition_the_targets),
        cmocka_unit_test(sched_12_property_random_walks),
        cmocka_unit_test(sched_13_behind_the_live_edge_in_ms),
    };
    return canary_test_main("canary_sched", tests, sizeof tests / sizeof tests[0], argc, argv);
}
