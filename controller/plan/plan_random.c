/* plan_random.c - Random baseline (seeded, reproducible).
 *
 * Viewers in input order pick uniformly among the covering admitted servers
 * that still fit some rung, then uniformly among the rungs that fit there.
 */
#include "plan_algo.h"

#include <stdlib.h>

plan_status plan_random(const plan_instance *in, uint64_t seed, plan_choice *out)
{
    plan_load l;
    plan_rng rng;
    int cap = 1;
    for (int v = 0; v < in->n_viewers; v++)
        if (in->viewers[v].n_links > cap)
            cap = in->viewers[v].n_links;
    int *cand = malloc((size_t)cap * sizeof *cand);
    if (!cand || plan_load_init(&l, in) != 0) {
        free(cand);
        return PLAN_STATUS_INTERNAL;
    }
    plan_rng_seed(&rng, seed);
    plan_choices_clear(out, in->n_viewers);
    for (int v = 0; v < in->n_viewers; v++) {
        const plan_viewer *w = &in->viewers[v];
        int n = 0, lo, hi;
        for (int i = 0; i < w->n_links; i++)
            if (plan_load_range(&l, in, w->links[i].server, &lo, &hi))
                cand[n++] = w->links[i].server;
        if (n == 0)
            continue;
        int m = cand[plan_rng_below(&rng, n)];
        plan_load_range(&l, in, m, &lo, &hi);
        out[v].server = m;
        out[v].rung = lo + plan_rng_below(&rng, hi - lo + 1);
        plan_load_add(&l, in, m, out[v].rung);
    }
    plan_load_free(&l);
    free(cand);
    return PLAN_STATUS_OK;
}
