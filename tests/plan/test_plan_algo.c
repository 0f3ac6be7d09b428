/* test_plan_algo.c - constraints (coverage, D_m, C_m, mask) of every
 * algorithm, each algorithm's defining rule, optimal vs brute force. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "plan_test_util.h"

static const plan_algo all_algos[] = {PLAN_ALGO_LUA, PLAN_ALGO_DF, PLAN_ALGO_MHCP,
                                      PLAN_ALGO_RANDOM, PLAN_ALGO_OPTIMAL, PLAN_ALGO_LUA_LS};
#define N_ALGOS (sizeof all_algos / sizeof all_algos[0])

static void run_ok(const plan_instance *in, plan_algo a, uint64_t seed, plan_choice *ch)
{
    char err[256] = "";
    assert_int_equal(plan_run(in, a, seed, ch, err, sizeof err), PLAN_STATUS_OK);
    assert_true(plan_check(in, ch, err, sizeof err));
}

/* Recompute the load from scratch: independent of plan_check. */
static void assert_capacity(const plan_instance *in, const plan_choice *ch)
{
    for (int m = 0; m < in->n_servers; m++) {
        double bw = 0, cpu = 0;
        for (int v = 0; v < in->n_viewers; v++) {
            if (ch[v].server != m)
                continue;
            bw += in->ladder[ch[v].rung];
            cpu += (in->ladder[in->n_rungs - 1] - in->ladder[ch[v].rung]) * in->p.h_vcpu_per_mbps;
            assert_true(plan_link_of(in, v, m) >= 0); /* coverage */
            assert_int_equal(in->servers[m].admit, PLAN_ADMIT_PASS);
        }
        assert_true(bw <= in->servers[m].bandwidth_mbps + 1e-9);
        assert_true(cpu <= in->servers[m].vcpu + 1e-9);
    }
}

/* 01: every algorithm keeps coverage, D_m and C_m on tight instances. */
static void algo_01_all_respect_constraints(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[10];
    for (uint64_t seed = 1; seed <= 10; seed++) {
        test_instance(&in, 3, 10, 4, seed, seed % 2 ? 1.5 : 2.5);
        for (size_t a = 0; a < N_ALGOS; a++) {
            if (all_algos[a] == PLAN_ALGO_OPTIMAL)
                in.n_viewers = 6; /* keep the exact solver quick */
            run_ok(&in, all_algos[a], seed, ch);
            assert_capacity(&in, ch);
            in.n_viewers = 10;
        }
        plan_instance_free(&in);
    }
}

/* 02: a masked server is never assigned, by any algorithm, even when it
 * is the only one with room or the best by far. */
static void algo_02_mask_never_assigned(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[10];
    for (uint64_t seed = 1; seed <= 8; seed++) {
        test_instance(&in, 3, 10, 4, seed, 3.0);
        in.servers[seed % 3].admit = PLAN_ADMIT_DENIED;
        for (size_t a = 0; a < N_ALGOS; a++) {
            if (all_algos[a] == PLAN_ALGO_OPTIMAL)
                in.n_viewers = 6; /* keep the exact solver quick */
            run_ok(&in, all_algos[a], seed, ch);
            for (int v = 0; v < in.n_viewers; v++)
                assert_int_not_equal(ch[v].server, (int)(seed % 3));
            in.n_viewers = 10;
        }
        plan_instance_free(&in);
    }
}

/* 03: a viewer whose only covering server is masked stays unserved. */
static void algo_03_mask_only_server_unserved(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[4];
    test_instance(&in, 2, 4, 4, 3, 5.0);
    in.viewers[0].n_links = 1;
    in.viewers[0].links[0].server = 0;
    in.servers[0].admit = PLAN_ADMIT_DENIED;
    for (size_t a = 0; a < N_ALGOS; a++) {
        run_ok(&in, all_algos[a], 1, ch);
        assert_int_equal(ch[0].server, PLAN_UNSERVED);
    }
    plan_instance_free(&in);
}

/* Exhaustive search over (unserved | link x rung)^V. */
static void brute(const plan_instance *in, int v, plan_choice *cur, double *best)
{
    if (v == in->n_viewers) {
        char err[128];
        if (plan_check(in, cur, err, sizeof err)) {
            double o = plan_objective(in, cur);
            if (o > *best)
                *best = o;
        }
        return;
    }
    cur[v] = (plan_choice){PLAN_UNSERVED, 0};
    brute(in, v + 1, cur, best);
    for (int l = 0; l < in->viewers[v].n_links; l++)
        for (int r = 0; r < in->n_rungs; r++) {
            cur[v] = (plan_choice){in->viewers[v].links[l].server, r};
            brute(in, v + 1, cur, best);
        }
}

/* 04: the GLPK optimum equals exhaustive search on tiny instances. */
static void algo_04_optimal_equals_brute_force(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[4], cur[4];
    for (uint64_t seed = 1; seed <= 10; seed++) {
        test_instance(&in, 2, 4, 3, seed, 0.6);
        if (seed % 4 == 0)
            in.servers[1].admit = PLAN_ADMIT_DENIED;
        double best = -INFINITY;
        brute(&in, 0, cur, &best);
        run_ok(&in, PLAN_ALGO_OPTIMAL, 0, ch);
        assert_true(fabs(plan_objective(&in, ch) - best) < 1e-6 * (1 + fabs(best)));
        plan_instance_free(&in);
    }
}

/* 05: optimal >= every heuristic; lua-ls >= lua (it starts from it). */
static void algo_05_dominance(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[12];
    for (uint64_t seed = 1; seed <= 5; seed++) {
        test_instance(&in, 2, 12, 4, seed, 3.0);
        run_ok(&in, PLAN_ALGO_OPTIMAL, 0, ch);
        double opt = plan_objective(&in, ch);
        run_ok(&in, PLAN_ALGO_LUA, 0, ch);
        double lua = plan_objective(&in, ch);
        run_ok(&in, PLAN_ALGO_LUA_LS, 0, ch);
        double ls = plan_objective(&in, ch);
        assert_true(ls >= lua - 1e-9);
        assert_true(opt >= ls - 1e-6);
        for (size_t a = 0; a < N_ALGOS; a++) {
            run_ok(&in, all_algos[a], seed, ch);
            assert_true(opt >= plan_objective(&in, ch) - 1e-6);
        }
        plan_instance_free(&in);
    }
}

/* One server with room for exactly one viewer at the source rate. */
static void one_slot(plan_instance *in, uint64_t seed)
{
    test_instance(in, 1, 3, 4, seed, 1.0);
    in->servers[0].bandwidth_mbps = 4.5;
    in->servers[0].vcpu = 0.0; /* only the source rate needs no transcoding */
    for (int v = 0; v < 3; v++) {
        in->viewers[v].n_links = 1;
        in->viewers[v].links[0] = (plan_link){0, 10};
    }
}

/* 06: LUA serves viewers in descending Y_v (gift weight). */
static void algo_06_lua_serves_by_gift(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[3];
    one_slot(&in, 5);
    in.viewers[0].gift = 0;
    in.viewers[1].gift = 1000;
    in.viewers[2].gift = 10;
    plan_instance_derive(&in);
    run_ok(&in, PLAN_ALGO_LUA, 0, ch);
    assert_int_equal(ch[1].server, 0);
    assert_int_equal(ch[0].server, PLAN_UNSERVED);
    assert_int_equal(ch[2].server, PLAN_UNSERVED);
    /* DF and MHCP take arrival order instead. */
    run_ok(&in, PLAN_ALGO_DF, 0, ch);
    assert_int_equal(ch[0].server, 0);
    plan_instance_free(&in);
}

/* 07: DF picks the lowest transmission delay; MHCP the highest rung. */
static void algo_07_df_delay_mhcp_bitrate(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[1];
    test_instance(&in, 3, 1, 4, 9, 10.0);
    plan_viewer *w = &in.viewers[0];
    w->n_links = 3;
    w->streamer_edge = 0;
    for (int m = 0; m < 3; m++)
        w->links[m] = (plan_link){m, 5.0 + m};
    w->expected_mbps = 1.0;
    run_ok(&in, PLAN_ALGO_DF, 0, ch);
    assert_int_equal(ch[0].server, 0);           /* no edge-edge hop */
    assert_int_equal(ch[0].rung, 1);             /* its expected bitrate */
    run_ok(&in, PLAN_ALGO_MHCP, 0, ch);
    assert_int_equal(ch[0].rung, in.n_rungs - 1); /* highest version */
    plan_instance_free(&in);
}

/* 08: LUA starts at max(R*_v, R_prev) and lowers it when D_m is short. */
static void algo_08_lua_bitrate_rule(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[1];
    test_instance(&in, 1, 1, 4, 2, 10.0);
    plan_viewer *w = &in.viewers[0];
    w->n_links = 1;
    w->links[0] = (plan_link){0, 5};
    w->expected_mbps = 1.0;
    w->prev_mbps = 2.5;
    run_ok(&in, PLAN_ALGO_LUA, 0, ch);
    assert_int_equal(ch[0].rung, 2);
    in.servers[0].bandwidth_mbps = 1.0; /* bandwidth short: lowered */
    run_ok(&in, PLAN_ALGO_LUA, 0, ch);
    assert_int_equal(ch[0].rung, 1);
    in.servers[0].bandwidth_mbps = 10.0;
    in.servers[0].vcpu = 0.0;            /* CPU short: raised to the source */
    run_ok(&in, PLAN_ALGO_LUA, 0, ch);
    assert_int_equal(ch[0].rung, 3);
    plan_instance_free(&in);
}

/* 09: Random is reproducible by seed. */
static void algo_09_random_seeded(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice a[30], b[30], c[30];
    test_instance(&in, 4, 30, 4, 4, 3.0);
    run_ok(&in, PLAN_ALGO_RANDOM, 42, a);
    run_ok(&in, PLAN_ALGO_RANDOM, 42, b);
    run_ok(&in, PLAN_ALGO_RANDOM, 43, c);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    plan_instance_free(&in);
}

/* 10: optimal refuses instances beyond its size limit, naming the field. */
static void algo_10_optimal_size_limit(void **state)
{
    (void)state;
    plan_instance in;
    char err[256] = "";
    test_instance(&in, 30, 500, 4, 1, 1.0);
    plan_choice *ch = calloc(500, sizeof *ch);
    assert_int_equal(plan_run(&in, PLAN_ALGO_OPTIMAL, 0, ch, err, sizeof err),
                     PLAN_STATUS_TOO_LARGE);
    assert_non_null(strstr(err, "viewers"));
    free(ch);
    plan_instance_free(&in);
}

/* 11: empty instances are fine for every algorithm. */
static void algo_11_empty(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[1];
    test_instance(&in, 2, 1, 4, 1, 1.0);
    in.n_viewers = 0;
    for (size_t a = 0; a < N_ALGOS; a++)
        run_ok(&in, all_algos[a], 1, ch);
    in.n_viewers = 1;
    plan_instance_free(&in);
}

/* 12: the Lagrangian dual bounds the optimum from above; its repaired
 * allocation is feasible and below the optimum. */
static void algo_12_lagrange_bounds_optimum(void **state)
{
    (void)state;
    plan_instance in;
    plan_choice ch[12];
    char err[256];
    for (uint64_t seed = 1; seed <= 5; seed++) {
        double ub = 0;
        test_instance(&in, 2, 12, 4, seed, 3.0);
        assert_int_equal(plan_lagrange(&in, ch, &ub), PLAN_STATUS_OK);
        assert_true(plan_check(&in, ch, err, sizeof err));
        double lr = plan_objective(&in, ch);
        run_ok(&in, PLAN_ALGO_OPTIMAL, 0, ch);
        double opt = plan_objective(&in, ch);
        assert_true(ub >= opt - 1e-6);
        assert_true(lr <= opt + 1e-6);
        plan_instance_free(&in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(algo_01_all_respect_constraints),
        cmocka_unit_test(algo_02_mask_never_assigned),
        cmocka_unit_test(algo_03_mask_only_server_unserved),
        cmocka_unit_test(algo_04_optimal_equals_brute_force),
        cmocka_unit_test(algo_05_dominance),
        cmocka_unit_test(algo_06_lua_serves_by_gift),
        cmocka_unit_test(algo_07_df_delay_mhcp_bitrate),
        cmocka_unit_test(algo_08_lua_bitrate_rule),
        cmocka_unit_test(algo_09_random_seeded),
        cmocka_unit_test(algo_10_optimal_size_limit),
        cmocka_unit_test(algo_11_empty),
        cmocka_unit_test(algo_12_lagrange_bounds_optimum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
