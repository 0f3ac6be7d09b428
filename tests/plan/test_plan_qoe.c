/* test_plan_qoe.c - every property the seed text states about the QoE
 * model, tested on the reconstructed formulas (docs/lua.md). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "plan_test_util.h"

static const double demands[] = {0.0, 0.3, 1.0, 2.5, 10.0};
#define N_DEMANDS (sizeof demands / sizeof demands[0])

/* 01: eq. (8) - for any I_v >= 0, Q strictly falls as L rises. */
static void qoe_01_interaction_falls_with_latency(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_DEMANDS; i++)
        for (double l = 0; l < 2000; l += 7.5)
            assert_true(plan_interaction(demands[i], l + 7.5, 300) <
                        plan_interaction(demands[i], l, 300));
}

/* 02: eq. (9) - L <= beta: Q rises with I_v (strictly below beta). */
static void qoe_02_below_beta_demand_helps(void **state)
{
    (void)state;
    for (double l = 0; l <= 300; l += 10)
        for (size_t i = 0; i + 1 < N_DEMANDS; i++) {
            double a = plan_interaction(demands[i], l, 300);
            double b = plan_interaction(demands[i + 1], l, 300);
            if (l < 300)
                assert_true(b > a);
            else
                assert_true(b >= a);
        }
}

/* 03: eq. (10) - L > beta: Q falls as I_v rises. */
static void qoe_03_above_beta_demand_hurts(void **state)
{
    (void)state;
    for (double l = 301; l < 2000; l += 13)
        for (size_t i = 0; i + 1 < N_DEMANDS; i++)
            assert_true(plan_interaction(demands[i + 1], l, 300) <
                        plan_interaction(demands[i], l, 300));
}

/* 04: quality is best at or above the expected bitrate, and rises below. */
static void qoe_04_quality_best_at_expected(void **state)
{
    (void)state;
    double expected = 2.5, top = plan_quality(expected, expected, 0.75);
    assert_true(plan_quality(4.5, expected, 0.75) == top);
    assert_true(plan_quality(8.0, expected, 0.75) == top);
    assert_true(plan_quality(1.0, expected, 0.75) < top);
    assert_true(plan_quality(0.75, expected, 0.75) < plan_quality(1.0, expected, 0.75));
}

/* 05: only bitrate drops cost jitter, proportionally (k per Mbps). */
static void qoe_05_only_drops_cost_jitter(void **state)
{
    (void)state;
    assert_true(plan_jitter(2.5, 4.5, 1) == 0.0);
    assert_true(plan_jitter(2.5, 2.5, 1) == 0.0);
    assert_true(fabs(plan_jitter(4.5, 1.0, 1) - 3.5) < 1e-12);
    assert_true(fabs(plan_jitter(4.5, 1.0, 2) - 7.0) < 1e-12);
    assert_true(plan_jitter(-1, 0.75, 1) == 0.0); /* new viewer */
}

/* 06: switching costs only when the server changes. */
static void qoe_06_switch_only_on_change(void **state)
{
    (void)state;
    assert_true(plan_switch_cost(3, 3) == 0.0);
    assert_true(plan_switch_cost(3, 4) == 1.0);
    assert_true(plan_switch_cost(-1, 4) == 0.0); /* no previous server */
}

/* 07: theorem 2 - QoE strictly rises with R_v for every viewer and server
 * (also when the higher rung is above R*_v: transcoding delay shrinks). */
static void qoe_07_qoe_rises_with_bitrate(void **state)
{
    (void)state;
    plan_instance in;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        test_instance(&in, 3, 10, 4, seed, 1.0);
        for (int v = 0; v < in.n_viewers; v++)
            for (int l = 0; l < in.viewers[v].n_links; l++)
                for (int r = 0; r + 1 < in.n_rungs; r++)
                    assert_true(plan_qoe(&in, v, l, r + 1) > plan_qoe(&in, v, l, r));
        plan_instance_free(&in);
    }
}

/* 08: L = T_{b,mb} + T_{mb,m} + T_{m,v} + G (R - R_v); CPU = (R - R_v) H. */
static void qoe_08_latency_and_cpu_formulas(void **state)
{
    (void)state;
    plan_instance in;
    test_instance(&in, 2, 1, 4, 7, 1.0);
    plan_viewer *w = &in.viewers[0];
    int m = w->links[0].server;
    double expect = w->uplink_ms + in.edge_ms[w->streamer_edge * 2 + m] +
                    w->links[0].latency_ms + 50.0 * (4.5 - 1.0);
    assert_true(fabs(plan_latency(&in, 0, 0, 1) - expect) < 1e-9);
    assert_true(fabs(plan_transcode_cpu(&in, 0) - 0.5 * 3.75) < 1e-12);
    assert_true(plan_transcode_cpu(&in, 3) == 0.0); /* source rate: no transcode */
    plan_instance_free(&in);
}

/* 09: Y_v >= 1 and rises with the gift; I_v = gamma F_v >= 0. */
static void qoe_09_weight_and_demand(void **state)
{
    (void)state;
    assert_true(plan_weight(0, 0.1) == 1.0);
    assert_true(plan_weight(10, 0.1) > plan_weight(1, 0.1));
    assert_true(plan_weight(1000, 0.1) > plan_weight(10, 0.1));
    assert_true(plan_demand(2.0, 1.5) == 3.0);
    assert_true(plan_demand(-1.0, 1.0) == 0.0);
}

/* 10: QoE = a Q + b U - c E - d S, weights applied as stated. */
static void qoe_10_weighted_sum(void **state)
{
    (void)state;
    plan_instance in;
    test_instance(&in, 2, 4, 4, 11, 1.0);
    for (int v = 0; v < in.n_viewers; v++) {
        plan_viewer *w = &in.viewers[v];
        double L = plan_latency(&in, v, 0, 1), R = in.ladder[1];
        double q = 5 * plan_interaction(w->demand, L, 300) + plan_quality(R, w->expected_mbps, 0.75) -
                   plan_jitter(w->prev_mbps, R, 1) - plan_switch_cost(w->prev_server, w->links[0].server);
        assert_true(fabs(plan_qoe(&in, v, 0, 1) - q) < 1e-9);
    }
    plan_instance_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qoe_01_interaction_falls_with_latency),
        cmocka_unit_test(qoe_02_below_beta_demand_helps),
        cmocka_unit_test(qoe_03_above_beta_demand_hurts),
        cmocka_unit_test(qoe_04_quality_best_at_expected),
        cmocka_unit_test(qoe_05_only_drops_cost_jitter),
        cmocka_unit_test(qoe_06_switch_only_on_change),
        cmocka_unit_test(qoe_07_qoe_rises_with_bitrate),
        cmocka_unit_test(qoe_08_latency_and_cpu_formulas),
        cmocka_unit_test(qoe_09_weight_and_demand),
        cmocka_unit_test(qoe_10_weighted_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
