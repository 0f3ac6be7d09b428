/* plan_improve.c - lua-ls, our improvement beyond the paper.
 *
 * Multi-start best-response local search: start from LUA, DF and MHCP, then
 * repeatedly let each viewer (in descending Y_v) move to the (server, rung),
 * or to unserved, that maximises its weighted QoE given everybody else.
 * Every move strictly raises the objective, so it terminates; passes are
 * also capped, keeping the time O(passes * |V| * |M| * |R|) - polynomial.
 * It fixes LUA's two blind spots: the starting bitrate max(R*_v, R_prev) is
 * not the best one once capacity is left over, and early viewers grab
 * servers that later, more constrained viewers needed.
 */
#include "plan_algo.h"

#include <stdlib.h>
#include <string.h>

#define LS_MAX_PASSES 50

/* Best (server, rung) for v against load l (v itself not in l). */
static plan_choice best_response(const plan_instance *in, const plan_load *l,
                                 int v, double *value)
{
    const plan_viewer *w = &in->viewers[v];
    plan_choice best = {PLAN_UNSERVED, 0};
    double bq = in->p.unserved_qoe;
    for (int i = 0; i < w->n_links; i++) {
        int m = w->links[i].server, lo, hi;
        if (!plan_load_range(l, in, m, &lo, &hi))
            continue;
        for (int r = lo; r <= hi; r++) {
            double q = plan_qoe(in, v, i, r);
            if (q > bq) {
                bq = q;
                best.server = m;
                best.rung = r;
            }
        }
    }
    *value = bq;
    return best;
}

static bool ls_pass(const plan_instance *in, plan_load *l, const int *order,
                    plan_choice *ch, long *moves)
{
    bool improved = false;
    for (int i = 0; i < in->n_viewers; i++) {
        int v = order[i];
        double cur = plan_viewer_qoe(in, v, ch[v]), q;
        if (ch[v].server != PLAN_UNSERVED)
            plan_load_remove(l, in, ch[v].server, ch[v].rung);
        plan_choice b = best_response(in, l, v, &q);
        /* Y_v > 0 scales both sides alike: compare plain QoE. */
        if (q > cur + 1e-9) {
            ch[v] = b;
            improved = true;
            (*moves)++;
        }
        if (ch[v].server != PLAN_UNSERVED)
            plan_load_add(l, in, ch[v].server, ch[v].rung);
    }
    return improved;
}

long plan_local_search(const plan_instance *in, plan_choice *ch, int max_passes)
{
    plan_load l;
    long moves = 0;
    int *order = plan_order_by_weight(in);
    if (!order || plan_load_init(&l, in) != 0) {
        free(order);
        return -1;
    }
    for (int v = 0; v < in->n_viewers; v++)
        if (ch[v].server != PLAN_UNSERVED)
            plan_load_add(&l, in, ch[v].server, ch[v].rung);
    for (int pass = 0; pass < max_passes; pass++)
        if (!ls_pass(in, &l, order, ch, &moves))
            break;
    plan_load_free(&l);
    free(order);
    return moves;
}

static plan_status lagrange_start(const plan_instance *in, plan_choice *out)
{
    return plan_lagrange(in, out, NULL);
}

plan_status plan_lua_ls(const plan_instance *in, plan_choice *out)
{
    size_t n = (size_t)(in->n_viewers ? in->n_viewers : 1);
    plan_choice *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return PLAN_STATUS_INTERNAL;
    plan_status (*const starts[])(const plan_instance *, plan_choice *) = {
        plan_lua, plan_df, plan_mhcp, lagrange_start};
    double best = 0.0;
    bool have = false;
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
        if (starts[s](in, tmp) != PLAN_STATUS_OK ||
            plan_local_search(in, tmp, LS_MAX_PASSES) < 0) {
            free(tmp);
            return PLAN_STATUS_INTERNAL;
        }
        double obj = plan_objective(in, tmp);
        if (!have || obj > best) {
            best = obj;
            have = true;
            memcpy(out, tmp, (size_t)in->n_viewers * sizeof *out);
        }
    }
    free(tmp);
    /* Only the best start is repaired: the phase costs most where the
     * local search left viewers out, and one start is enough to beat LUA. */
    return plan_repair(in, out);
}
