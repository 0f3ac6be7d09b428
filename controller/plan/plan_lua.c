/* plan_lua.c - LUA, the paper's greedy (algorithm 1), admission-aware.
 *
 * Viewers in descending Y_v; each takes the admitted covering server where
 * its QoE, at the bitrate chosen for that server, is highest.  The bitrate starts at max(R*_v, R_prev) and is
 * lowered when bandwidth is short or raised when CPU is short (the feasible
 * rungs form an interval, so this is a clamp).  Unlike the paper's line 11 a
 * server with no feasible rung is skipped, never chosen with QoE 0.
 */
#include "plan_algo.h"

#include <stdlib.h>

/* qsort has no context argument: sort (weight, index) pairs instead. */
typedef struct { double w; int v; } weighted;

static int by_weight_desc(const void *a, const void *b)
{
    const weighted *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? 1 : -1;
    return (x->v > y->v) - (x->v < y->v); /* stable: input order */
}

int *plan_order_by_weight(const plan_instance *in)
{
    size_t n = (size_t)in->n_viewers;
    weighted *tmp = malloc((n ? n : 1) * sizeof *tmp);
    int *order = malloc((n ? n : 1) * sizeof *order);
    if (!tmp || !order) {
        free(tmp);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        tmp[i].w = in->viewers[i].weight;
        tmp[i].v = (int)i;
    }
    qsort(tmp, n, sizeof *tmp, by_weight_desc);
    for (size_t i = 0; i < n; i++)
        order[i] = tmp[i].v;
    free(tmp);
    return order;
}

static void lua_place(const plan_instance *in, plan_load *l, int v, plan_choice *out)
{
    const plan_viewer *w = &in->viewers[v];
    int start = plan_initial_rung(in, v);
    double best = 0.0;
    int best_m = PLAN_UNSERVED, best_r = 0;
    for (int i = 0; i < w->n_links; i++) {
        int m = w->links[i].server, lo, hi;
        if (!plan_load_range(l, in, m, &lo, &hi))
            continue;
        int r = start < lo ? lo : start > hi ? hi : start;
        double q = plan_qoe(in, v, i, r);
        if (best_m == PLAN_UNSERVED || q > best) {
            best = q;
            best_m = m;
            best_r = r;
        }
    }
    if (best_m != PLAN_UNSERVED) {
        out[v].server = best_m;
        out[v].rung = best_r;
        plan_load_add(l, in, best_m, best_r);
    }
}

plan_status plan_lua(const plan_instance *in, plan_choice *out)
{
    plan_load l;
    int *order = plan_order_by_weight(in);
    if (!order || plan_load_init(&l, in) != 0) {
        free(order);
        return PLAN_STATUS_INTERNAL;
    }
    plan_choices_clear(out, in->n_viewers);
    for (int i = 0; i < in->n_viewers; i++)
        lua_place(in, &l, order[i], out);
    plan_load_free(&l);
    free(order);
    return PLAN_STATUS_OK;
}
