/* plan_optimal.c - exact solver: the allocation as a 0-1 ILP through GLPK.
 *
 * Variables x_{v,m,r} (viewer v on covering admitted server m at rung r,
 * only triples that fit the capacity given) and u_v (v unserved):
 *   max  sum Y_v QoE_{v,m,r} x_{v,m,r} + sum Y_v unserved_qoe u_v
 *   s.t. sum_{m,r} x_{v,m,r} + u_v = 1             for every v
 *        sum_{v,r} R_r x_{v,m,r} <= D_m            for every m
 *        sum_{v,r} (R - R_r) H x_{v,m,r} <= C_m    for every m
 *        sum_{v,r} x_{v,m,r} <= n_m                for every m (a cut)
 * The last row is implied for integer x: whatever its rung, a viewer takes
 * R_r of bandwidth and (R - R_r) H of CPU, i.e. exactly R of the combined
 * resource D_m + C_m / H, so at most n_m = floor((D_m + C_m / H) / R) fit
 * (and at most floor(D_m / r_1)).  The LP relaxation, though, can spread
 * fractions of viewers over every server; the count row forbids that and
 * closes most of the LP gap on overloaded instances (issue 23), where each
 * unserved viewer costs 100 Y_v.
 * Beyond PLAN_OPTIMAL_MAX_VARS it refuses (PLAN_STATUS_TOO_LARGE); when GLPK
 * cannot prove optimality within the time limit it fails rather than return
 * an unproven allocation as "optimal" (PLAN_STATUS_TIME_LIMIT: its own exit
 * code, because a larger budget may succeed where nothing is broken).
 * plan_ilp solves the same model on a sub-problem (the neighbourhood repair
 * of lua-ls, plan_repair.c) with a node limit instead of a clock.
 */
#include "plan_algo.h"

#include <assert.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { int v, m, r; } triple;

/* The sub-problem as GLPK sees it; also the callback's context. */
typedef struct {
    const plan_instance *in;
    const plan_ilp_spec *s;
    const triple *t;
    long nt;
    bool given;                 /* incumbent handed over */
    bool hit_node_limit;
} ilp_ctx;

static int spec_viewer(const plan_ilp_spec *s, int i)
{
    return s->viewers ? s->viewers[i] : i;
}

static double cap_bw(const plan_instance *in, const plan_ilp_spec *s, int m)
{
    return s->bw ? s->bw[m] : in->servers[m].bandwidth_mbps;
}

static double cap_cpu(const plan_instance *in, const plan_ilp_spec *s, int m)
{
    return s->cpu ? s->cpu[m] : in->servers[m].vcpu;
}

static long count_triples(const plan_instance *in, const plan_ilp_spec *s, triple *t)
{
    long n = 0;
    for (int i = 0; i < s->n_viewers; i++) {
        int v = spec_viewer(s, i);
        const plan_viewer *w = &in->viewers[v];
        for (int k = 0; k < w->n_links; k++) {
            int m = w->links[k].server;
            if (in->servers[m].admit != PLAN_ADMIT_PASS)
                continue;
            for (int r = 0; r < in->n_rungs; r++) {
                if (in->ladder[r] > cap_bw(in, s, m) + PLAN_EPS ||
                    plan_transcode_cpu(in, r) > cap_cpu(in, s, m) + PLAN_EPS)
                    continue;
                if (t)
                    t[n] = (triple){i, m, r};
                n++;
            }
        }
    }
    return n;
}

/* The count bound n_m of the header comment. */
static double count_bound(const plan_instance *in, const plan_ilp_spec *s, int m)
{
    double bw = fmax(cap_bw(in, s, m), 0.0), cpu = fmax(cap_cpu(in, s, m), 0.0);
    double n = floor(bw / in->ladder[0] + PLAN_EPS);
    if (in->p.h_vcpu_per_mbps > 0)
        n = fmin(n, floor((bw + cpu / in->p.h_vcpu_per_mbps) / in->ladder[in->n_rungs - 1] +
                          PLAN_EPS));
    return n;
}

/* Rows: 1..V assignment, then per server bandwidth, CPU and count. */
static void build_rows(glp_prob *lp, const plan_instance *in, const plan_ilp_spec *s)
{
    int V = s->n_viewers, M = in->n_servers;
    glp_add_rows(lp, V + 3 * M);
    for (int v = 0; v < V; v++)
        glp_set_row_bnds(lp, 1 + v, GLP_FX, 1.0, 1.0);
    for (int m = 0; m < M; m++) {
        glp_set_row_bnds(lp, V + 1 + m, GLP_UP, 0.0, cap_bw(in, s, m));
        glp_set_row_bnds(lp, V + M + 1 + m, GLP_UP, 0.0, cap_cpu(in, s, m));
        glp_set_row_bnds(lp, V + 2 * M + 1 + m, GLP_UP, 0.0, count_bound(in, s, m));
    }
}

static int build_columns(glp_prob *lp, const ilp_ctx *c)
{
    const plan_instance *in = c->in;
    int V = c->s->n_viewers, M = in->n_servers;
    long nz = 4 * c->nt + V;
    int *ia = malloc((size_t)(nz + 1) * sizeof *ia);
    int *ja = malloc((size_t)(nz + 1) * sizeof *ja);
    double *ar = malloc((size_t)(nz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia), free(ja), free(ar);
        return -1;
    }
    glp_add_cols(lp, (int)c->nt + V);
    long k = 0;
    for (long j = 0; j < c->nt; j++) {
        int col = (int)j + 1, i = c->t[j].v, m = c->t[j].m, r = c->t[j].r;
        int v = spec_viewer(c->s, i);
        glp_set_col_kind(lp, col, GLP_BV);
        glp_set_obj_coef(lp, col, in->viewers[v].weight *
                         plan_qoe(in, v, plan_link_of(in, v, m), r));
        ++k, ia[k] = 1 + i, ja[k] = col, ar[k] = 1.0;
        ++k, ia[k] = V + 1 + m, ja[k] = col, ar[k] = in->ladder[r];
        ++k, ia[k] = V + M + 1 + m, ja[k] = col, ar[k] = plan_transcode_cpu(in, r);
        ++k, ia[k] = V + 2 * M + 1 + m, ja[k] = col, ar[k] = 1.0;
    }
    for (int i = 0; i < V; i++) {
        int col = (int)c->nt + 1 + i;
        glp_set_col_kind(lp, col, GLP_BV);
        glp_set_obj_coef(lp, col, in->viewers[spec_viewer(c->s, i)].weight * in->p.unserved_qoe);
        ++k, ia[k] = 1 + i, ja[k] = col, ar[k] = 1.0;
    }
    glp_load_matrix(lp, (int)k, ia, ja, ar);
    free(ia), free(ja), free(ar);
    return 0;
}

/* The incumbent as a column vector; only meaningful without the presolver
 * (GLPK's callback then sees the columns we built). */
static void give_incumbent(glp_tree *tree, ilp_ctx *c)
{
    const plan_choice *start = c->s->start;
    int V = c->s->n_viewers;
    c->given = true;
    double *x = calloc((size_t)(c->nt + V + 1), sizeof *x);
    if (!x)
        return;
    for (int i = 0; i < V; i++)
        x[c->nt + 1 + i] = start[spec_viewer(c->s, i)].server == PLAN_UNSERVED;
    for (long j = 0; j < c->nt; j++) {
        plan_choice ch = start[spec_viewer(c->s, c->t[j].v)];
        if (ch.server == c->t[j].m && ch.rung == c->t[j].r)
            x[j + 1] = 1.0;
    }
    glp_ios_heur_sol(tree, x); /* GLPK checks feasibility itself */
    free(x);
}

static void callback(glp_tree *tree, void *info)
{
    ilp_ctx *c = info;
    int reason = glp_ios_reason(tree);
    if (reason == GLP_IHEUR && !c->given && c->s->start && !c->s->presolve)
        give_incumbent(tree, c);
    if (reason == GLP_ISELECT && c->s->node_limit > 0) {
        int active, total;
        glp_ios_tree_size(tree, &active, NULL, &total);
        if (total >= c->s->node_limit) {
            c->hit_node_limit = true; /* deterministic, unlike a clock */
            glp_ios_terminate(tree);
        }
    }
}

static void set_params(glp_iocp *parm, const plan_ilp_spec *s, ilp_ctx *c)
{
    glp_init_iocp(parm);
    parm->cb_func = callback;
    parm->cb_info = c;
    parm->presolve = s->presolve ? GLP_ON : GLP_OFF;
    parm->msg_lev = GLP_MSG_OFF;
    if (s->time_limit_ms > 0)
        parm->tm_lim = s->time_limit_ms;
    parm->mip_gap = 0.0;
    /* Cuts shrink the tree on these knapsack-like rows a lot. */
    parm->mir_cuts = GLP_ON;
    parm->cov_cuts = GLP_ON;
    parm->gmi_cuts = GLP_ON;
    parm->clq_cuts = GLP_ON;
}

/* Without the presolver GLPK needs an optimal LP basis first. */
static int solve_lp(glp_prob *lp)
{
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    return glp_simplex(lp, &sm) == 0 && glp_get_status(lp) == GLP_OPT ? 0 : -1;
}

static plan_status solve(glp_prob *lp, ilp_ctx *c, plan_choice *out, bool *proven,
                         char *err, size_t err_len)
{
    glp_iocp parm;
    set_params(&parm, c->s, c);
    if (!c->s->presolve && solve_lp(lp) != 0) {
        snprintf(err, err_len, "optimal: the LP relaxation failed");
        return PLAN_STATUS_INTERNAL;
    }
    int rc = glp_intopt(lp, &parm);
    int st = glp_mip_status(lp);
    if (rc == GLP_ETMLIM) {
        snprintf(err, err_len, "optimal: optimality not proven within the time limit of %d ms "
                 "(--time-limit-ms; or use lua-ls)", c->s->time_limit_ms);
        return PLAN_STATUS_TIME_LIMIT;
    }
    bool stopped = rc == GLP_ESTOP && c->hit_node_limit && st == GLP_FEAS;
    if (!stopped && (rc != 0 || st != GLP_OPT)) {
        snprintf(err, err_len, "optimal: GLPK did not prove optimality (glp_intopt %d, "
                 "status %d)", rc, st);
        return PLAN_STATUS_INTERNAL;
    }
    *proven = !stopped;
    for (int i = 0; i < c->s->n_viewers; i++)
        out[spec_viewer(c->s, i)] = (plan_choice){PLAN_UNSERVED, 0};
    for (long j = 0; j < c->nt; j++)
        if (glp_mip_col_val(lp, (int)j + 1) > 0.5)
            out[spec_viewer(c->s, c->t[j].v)] = (plan_choice){c->t[j].m, c->t[j].r};
    return PLAN_STATUS_OK;
}

long plan_ilp_vars(const plan_instance *in, const plan_ilp_spec *s)
{
    return count_triples(in, s, NULL) + s->n_viewers;
}

plan_status plan_ilp(const plan_instance *in, const plan_ilp_spec *s, plan_choice *out,
                     bool *proven, char *err, size_t err_len)
{
    assert(s->n_viewers >= 0 && s->node_limit >= 0 && s->time_limit_ms >= 0);
    *proven = true;
    if (s->n_viewers == 0)
        return PLAN_STATUS_OK; /* GLPK aborts on an empty problem */
    long nt = count_triples(in, s, NULL);
    triple *t = malloc((size_t)(nt ? nt : 1) * sizeof *t);
    if (!t)
        return PLAN_STATUS_INTERNAL;
    count_triples(in, s, t);
    glp_term_out(GLP_OFF); /* GLPK would print to stdout, which is ours */
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    build_rows(lp, in, s);
    ilp_ctx c = {in, s, t, nt, false, false};
    plan_status st = PLAN_STATUS_INTERNAL;
    if (build_columns(lp, &c) == 0)
        st = solve(lp, &c, out, proven, err, err_len);
    glp_delete_prob(lp);
    free(t);
    return st;
}

plan_status plan_optimal(const plan_instance *in, int time_limit_ms, plan_choice *out,
                         char *err, size_t err_len)
{
    if (in->n_viewers == 0)
        return PLAN_STATUS_OK;
    plan_ilp_spec s = {.viewers = NULL, .n_viewers = in->n_viewers, .time_limit_ms = time_limit_ms};
    long vars = plan_ilp_vars(in, &s);
    if (vars > PLAN_OPTIMAL_MAX_VARS) {
        snprintf(err, err_len, "viewers: optimal is limited to %d decision variables "
                 "(viewer x covering server x rung, plus one per viewer); this input "
                 "has %ld - use lua-ls", PLAN_OPTIMAL_MAX_VARS, vars);
        return PLAN_STATUS_TOO_LARGE;
    }
    /* lua-ls's allocation is the first incumbent, so the search prunes from
     * the start; without the presolver GLPK's callback sees our columns. */
    plan_choice *start = malloc((size_t)in->n_viewers * sizeof *start);
    if (start && plan_lua_ls(in, start) == PLAN_STATUS_OK)
        s.start = start;
    bool proven;
    plan_status st = plan_ilp(in, &s, out, &proven, err, err_len);
    free(start);
    assert(st != PLAN_STATUS_OK || proven);
    return st;
}
