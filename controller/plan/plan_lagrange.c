/* plan_lagrange.c - Lagrangian relaxation of D_m and C_m (used by lua-ls).
 *
 * With prices lambda_m (per Mbps) and mu_m (per vCPU) the problem splits per
 * viewer: v takes the option maximising Y_v QoE - lambda_m R_r - mu_m (R-R_r) H
 * (or unserved).  Subgradient steps move the prices towards feasibility; each
 * iterate is repaired into a feasible allocation (viewers keep their priced
 * choice while it fits, else take their best response), and the best repair
 * is kept.  The dual value is an upper bound on the optimum.
 * O(iterations * |V| * |M| * K): polynomial.
 */
#include "plan_algo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LR_ITERATIONS 30
#define LR_REPAIR_EVERY 3 /* repairing costs as much as a step */

typedef struct {
    double *lambda, *mu;        /* prices per server */
    double *use_bw, *use_cpu;   /* relaxed usage per server */
    plan_choice *relaxed, *repaired;
    int *order;
    double *qoe;                /* QoE of v on link i at rung r, cached */
    size_t *base;               /* qoe + base[v] = v's first entry */
} lr_work;

static double cached_qoe(const plan_instance *in, const lr_work *w, int v, int link, int r)
{
    return w->qoe[w->base[v] + (size_t)link * in->n_rungs + r];
}

/* QoE evaluates logs and latency sums: compute each (v, link, rung) once. */
static int cache_qoe(const plan_instance *in, lr_work *w)
{
    size_t n = 0, V = (size_t)in->n_viewers;
    w->base = malloc((V ? V : 1) * sizeof *w->base);
    if (!w->base)
        return -1;
    for (size_t v = 0; v < V; v++) {
        w->base[v] = n;
        n += (size_t)in->viewers[v].n_links * (size_t)in->n_rungs;
    }
    w->qoe = malloc((n ? n : 1) * sizeof *w->qoe);
    if (!w->qoe)
        return -1;
    for (int v = 0; v < in->n_viewers; v++)
        for (int i = 0; i < in->viewers[v].n_links; i++)
            for (int r = 0; r < in->n_rungs; r++)
                w->qoe[w->base[v] + (size_t)i * in->n_rungs + r] = plan_qoe(in, v, i, r);
    return 0;
}

/* The priced best option of v; returns its priced value. */
static double priced_choice(const plan_instance *in, const lr_work *w, int v, plan_choice *c)
{
    const plan_viewer *vw = &in->viewers[v];
    double best = vw->weight * in->p.unserved_qoe;
    *c = (plan_choice){PLAN_UNSERVED, 0};
    for (int i = 0; i < vw->n_links; i++) {
        int m = vw->links[i].server;
        const plan_server *s = &in->servers[m];
        if (s->admit != PLAN_ADMIT_PASS)
            continue;
        for (int r = 0; r < in->n_rungs; r++) {
            double bw = in->ladder[r], cpu = plan_transcode_cpu(in, r);
            if (bw > s->bandwidth_mbps + PLAN_EPS || cpu > s->vcpu + PLAN_EPS)
                continue;
            double val = vw->weight * cached_qoe(in, w, v, i, r) - w->lambda[m] * bw - w->mu[m] * cpu;
            if (val > best) {
                best = val;
                *c = (plan_choice){m, r};
            }
        }
    }
    return best;
}

/* Keep the priced choice while it fits, else the best feasible response. */
static void repair(const plan_instance *in, lr_work *w, plan_load *l)
{
    for (int m = 0; m < in->n_servers; m++) {
        l->bw[m] = in->servers[m].bandwidth_mbps;
        l->cpu[m] = in->servers[m].vcpu;
        l->count[m] = 0;
    }
    for (int i = 0; i < in->n_viewers; i++) {
        int v = w->order[i];
        plan_choice c = w->relaxed[v];
        if (c.server == PLAN_UNSERVED || !plan_load_fits(l, in, c.server, c.rung)) {
            const plan_viewer *vw = &in->viewers[v];
            double bq = in->p.unserved_qoe;
            c = (plan_choice){PLAN_UNSERVED, 0};
            for (int k = 0; k < vw->n_links; k++) {
                int m = vw->links[k].server, lo, hi;
                if (!plan_load_range(l, in, m, &lo, &hi))
                    continue;
                for (int r = lo; r <= hi; r++) {
                    double q = cached_qoe(in, w, v, k, r);
                    if (q > bq) {
                        bq = q;
                        c = (plan_choice){m, r};
                    }
                }
            }
        }
        w->repaired[v] = c;
        if (c.server != PLAN_UNSERVED)
            plan_load_add(l, in, c.server, c.rung);
    }
}

/* One subgradient iteration; returns the dual bound. */
static double lr_step(const plan_instance *in, lr_work *w, double best_primal, double *theta)
{
    int M = in->n_servers;
    double dual = 0.0, norm = 0.0;
    memset(w->use_bw, 0, (size_t)M * sizeof *w->use_bw);
    memset(w->use_cpu, 0, (size_t)M * sizeof *w->use_cpu);
    for (int v = 0; v < in->n_viewers; v++) {
        dual += priced_choice(in, w, v, &w->relaxed[v]);
        plan_choice c = w->relaxed[v];
        if (c.server != PLAN_UNSERVED) {
            w->use_bw[c.server] += in->ladder[c.rung];
            w->use_cpu[c.server] += plan_transcode_cpu(in, c.rung);
        }
    }
    for (int m = 0; m < M; m++) {
        dual += w->lambda[m] * in->servers[m].bandwidth_mbps + w->mu[m] * in->servers[m].vcpu;
        double gb = w->use_bw[m] - in->servers[m].bandwidth_mbps;
        double gc = w->use_cpu[m] - in->servers[m].vcpu;
        /* a component whose price is 0 and slack is positive cannot move */
        norm += (w->lambda[m] > 0 || gb > 0 ? gb * gb : 0) + (w->mu[m] > 0 || gc > 0 ? gc * gc : 0);
    }
    if (norm > 0) {
        double step = *theta * fmax(dual - best_primal, 1e-6) / norm;
        for (int m = 0; m < M; m++) {
            w->lambda[m] = fmax(0.0, w->lambda[m] + step * (w->use_bw[m] - in->servers[m].bandwidth_mbps));
            w->mu[m] = fmax(0.0, w->mu[m] + step * (w->use_cpu[m] - in->servers[m].vcpu));
        }
    }
    return dual;
}

static double repaired_objective(const plan_instance *in, const lr_work *w)
{
    double sum = 0.0;
    for (int v = 0; v < in->n_viewers; v++) {
        plan_choice c = w->repaired[v];
        double q = in->p.unserved_qoe;
        if (c.server != PLAN_UNSERVED)
            q = cached_qoe(in, w, v, plan_link_of(in, v, c.server), c.rung);
        sum += in->viewers[v].weight * q;
    }
    return sum;
}

static void lr_free(lr_work *w)
{
    free(w->lambda), free(w->mu), free(w->use_bw), free(w->use_cpu);
    free(w->relaxed), free(w->repaired), free(w->order), free(w->qoe), free(w->base);
}

plan_status plan_lagrange(const plan_instance *in, plan_choice *out, double *upper_bound)
{
    size_t M = (size_t)(in->n_servers ? in->n_servers : 1);
    size_t V = (size_t)(in->n_viewers ? in->n_viewers : 1);
    lr_work w = {calloc(M, sizeof(double)), calloc(M, sizeof(double)), calloc(M, sizeof(double)),
                 calloc(M, sizeof(double)), calloc(V, sizeof(plan_choice)),
                 calloc(V, sizeof(plan_choice)), plan_order_by_weight(in), NULL, NULL};
    plan_load l;
    bool have_load = plan_load_init(&l, in) == 0;
    if (!w.lambda || !w.mu || !w.use_bw || !w.use_cpu || !w.relaxed || !w.repaired ||
        !w.order || !have_load || cache_qoe(in, &w) != 0) {
        lr_free(&w);
        if (have_load)
            plan_load_free(&l);
        return PLAN_STATUS_INTERNAL;
    }
    double best = -INFINITY, bound = INFINITY, theta = 1.0;
    int stall = 0;
    for (int it = 0; it < LR_ITERATIONS; it++) {
        double dual = lr_step(in, &w, isfinite(best) ? best : 0.0, &theta);
        if (dual < bound) {
            bound = dual;
            stall = 0;
        } else if (++stall >= 4) {
            theta /= 2; /* classic Held-Karp halving */
            stall = 0;
        }
        if (it % LR_REPAIR_EVERY != 0 && it != LR_ITERATIONS - 1)
            continue;
        repair(in, &w, &l);
        double obj = repaired_objective(in, &w);
        if (obj > best) {
            best = obj;
            memcpy(out, w.repaired, (size_t)in->n_viewers * sizeof *out);
        }
    }
    if (upper_bound)
        *upper_bound = bound;
    plan_load_free(&l);
    lr_free(&w);
    return PLAN_STATUS_OK;
}
