/* plan_test_util.h - small random instances for the planner tests. */
#ifndef PLAN_TEST_UTIL_H
#define PLAN_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_algo.h"
#include "plan_model.h"

/* A random instance: n_servers servers, n_viewers viewers each covered by a
 * random non-empty subset, ladder {1, 2, 4} (or the first n_rungs of
 * {0.75, 1, 2.5, 4.5}), capacity tight enough to bind. */
static inline void test_instance(plan_instance *in, int n_servers, int n_viewers,
                                 int n_rungs, uint64_t seed, double capacity)
{
    static const double ladder4[] = {0.75, 1.0, 2.5, 4.5};
    plan_rng r;
    plan_rng_seed(&r, seed);
    memset(in, 0, sizeof *in);
    plan_params_default(&in->p);
    in->n_rungs = n_rungs;
    for (int i = 0; i < n_rungs; i++)
        in->ladder[i] = ladder4[4 - n_rungs + i];
    in->n_servers = n_servers;
    in->servers = calloc((size_t)n_servers, sizeof *in->servers);
    in->edge_ms = calloc((size_t)(n_servers * n_servers), sizeof *in->edge_ms);
    for (int m = 0; m < n_servers; m++) {
        snprintf(in->servers[m].id, PLAN_ID_MAX, "s%d", m);
        in->servers[m].bandwidth_mbps = capacity * (4.0 + 4.0 * plan_rng_uniform(&r));
        in->servers[m].vcpu = capacity * (1.5 + 2.0 * plan_rng_uniform(&r));
        in->servers[m].admit = PLAN_ADMIT_PASS;
        for (int k = 0; k < m; k++)
            in->edge_ms[m * n_servers + k] = in->edge_ms[k * n_servers + m] =
                100 + 200 * plan_rng_uniform(&r);
    }
    in->n_viewers = n_viewers;
    in->viewers = calloc((size_t)n_viewers, sizeof *in->viewers);
    for (int v = 0; v < n_viewers; v++) {
        plan_viewer *w = &in->viewers[v];
        snprintf(w->id, PLAN_ID_MAX, "v%d", v);
        w->links = calloc((size_t)n_servers, sizeof *w->links);
        for (int m = 0; m < n_servers; m++)
            if (plan_rng_uniform(&r) < 0.7 || (m == n_servers - 1 && w->n_links == 0))
                w->links[w->n_links++] = (plan_link){m, 5 + 10 * plan_rng_uniform(&r)};
        w->freq = 3.0 * plan_rng_uniform(&r);
        w->gift = plan_rng_uniform(&r) < 0.5 ? 100 * plan_rng_uniform(&r) : 0;
        w->expected_mbps = in->ladder[plan_rng_below(&r, n_rungs)];
        w->prev_mbps = plan_rng_uniform(&r) < 0.8 ? in->ladder[plan_rng_below(&r, n_rungs)] : -1;
        w->prev_server = plan_rng_uniform(&r) < 0.8 ? plan_rng_below(&r, n_servers) : -1;
        w->streamer_edge = plan_rng_below(&r, n_servers);
        w->uplink_ms = 5 + 10 * plan_rng_uniform(&r);
    }
    plan_instance_derive(in);
}

#endif
