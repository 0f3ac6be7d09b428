/* plan_optimal.c - exact solver: the allocation as a 0-1 ILP through GLPK.
 *
 * Variables x_{v,m,r} (viewer v on covering admitted server m at rung r,
 * only triples that fit an empty server) and u_v (v unserved):
 *   max  sum Y_v QoE_{v,m,r} x_{v,m,r} + sum Y_v unserved_qoe u_v
 *   s.t. sum_{m,r} x_{v,m,r} + u_v = 1             for every v
 *        sum_{v,r} R_r x_{v,m,r} <= D_m            for every m
 *        sum_{v,r} (R - R_r) H x_{v,m,r} <= C_m    for every m
 * Beyond PLAN_OPTIMAL_MAX_VARS it refuses (PLAN_STATUS_TOO_LARGE); when GLPK
 * cannot prove optimality within the time limit it fails rather than return
 * an unproven allocation as "optimal" (PLAN_STATUS_TIME_LIMIT: its own exit
 * code, because a larger budget may succeed where nothing is broken).
 */
#include "plan_algo.h"

#include <glpk.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { int v, m, r; } triple;

/* GLPK's heuristic callback: hand it lua-ls's allocation as the first
 * incumbent so the search prunes from the start. */
typedef struct {
    const plan_instance *in;
    const triple *t;
    long nt;
    const plan_choice *start;   /* NULL when none */
    bool given;
} heur_ctx;

static long count_triples(const plan_instance *in, triple *t)
{
    long n = 0;
    for (int v = 0; v < in->n_viewers; v++) {
        const plan_viewer *w = &in->viewers[v];
        for (int i = 0; i < w->n_links; i++) {
            int m = w->links[i].server;
            const plan_server *s = &in->servers[m];
            if (s->admit != PLAN_ADMIT_PASS)
                continue;
            for (int r = 0; r < in->n_rungs; r++) {
                if (in->ladder[r] > s->bandwidth_mbps + PLAN_EPS ||
                    plan_transcode_cpu(in, r) > s->vcpu + PLAN_EPS)
                    continue;
                if (t)
                    t[n] = (triple){v, m, r};
                n++;
            }
        }
    }
    return n;
}

/* Rows: 1..V assignment, V+1..V+M bandwidth, V+M+1..V+2M CPU. */
static void build_rows(glp_prob *lp, const plan_instance *in)
{
    int V = in->n_viewers, M = in->n_servers;
    glp_add_rows(lp, V + 2 * M);
    for (int v = 0; v < V; v++)
        glp_set_row_bnds(lp, 1 + v, GLP_FX, 1.0, 1.0);
    for (int m = 0; m < M; m++) {
        glp_set_row_bnds(lp, V + 1 + m, GLP_UP, 0.0, in->servers[m].bandwidth_mbps);
        glp_set_row_bnds(lp, V + M + 1 + m, GLP_UP, 0.0, in->servers[m].vcpu);
    }
}

static int build_columns(glp_prob *lp, const plan_instance *in, const triple *t, long nt)
{
    int V = in->n_viewers, M = in->n_servers;
    long nz = 3 * nt + V;
    int *ia = malloc((size_t)(nz + 1) * sizeof *ia);
    int *ja = malloc((size_t)(nz + 1) * sizeof *ja);
    double *ar = malloc((size_t)(nz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia), free(ja), free(ar);
        return -1;
    }
    glp_add_cols(lp, (int)nt + V);
    long k = 0;
    for (long j = 0; j < nt; j++) {
        int col = (int)j + 1, v = t[j].v, m = t[j].m, r = t[j].r;
        glp_set_col_kind(lp, col, GLP_BV);
        glp_set_obj_coef(lp, col, in->viewers[v].weight *
                         plan_qoe(in, v, plan_link_of(in, v, m), r));
        ++k, ia[k] = 1 + v, ja[k] = col, ar[k] = 1.0;
        ++k, ia[k] = V + 1 + m, ja[k] = col, ar[k] = in->ladder[r];
        ++k, ia[k] = V + M + 1 + m, ja[k] = col, ar[k] = plan_transcode_cpu(in, r);
    }
    for (int v = 0; v < V; v++) {
        int col = (int)nt + 1 + v;
        glp_set_col_kind(lp, col, GLP_BV);
        glp_set_obj_coef(lp, col, in->viewers[v].weight * in->p.unserved_qoe);
        ++k, ia[k] = 1 + v, ja[k] = col, ar[k] = 1.0;
    }
    glp_load_matrix(lp, (int)k, ia, ja, ar);
    free(ia), free(ja), free(ar);
    return 0;
}

static void give_incumbent(glp_tree *tree, void *info)
{
    heur_ctx *h = info;
    if (glp_ios_reason(tree) != GLP_IHEUR || h->given || !h->start)
        return;
    h->given = true;
    int V = h->in->n_viewers;
    double *x = calloc((size_t)(h->nt + V + 1), sizeof *x);
    if (!x)
        return;
    for (int v = 0; v < V; v++)
        x[h->nt + 1 + v] = h->start[v].server == PLAN_UNSERVED;
    for (long j = 0; j < h->nt; j++)
        if (h->start[h->t[j].v].server == h->t[j].m && h->start[h->t[j].v].rung == h->t[j].r)
            x[j + 1] = 1.0;
    glp_ios_heur_sol(tree, x); /* GLPK checks feasibility itself */
    free(x);
}

static plan_status solve(glp_prob *lp, const plan_instance *in, const triple *t,
                         long nt, int time_limit_ms, plan_choice *out, char *err, size_t err_len)
{
    glp_iocp parm;
    plan_choice *start = malloc((size_t)in->n_viewers * sizeof *start);
    heur_ctx h = {in, t, nt, NULL, false};
    if (start && plan_lua_ls(in, start) == PLAN_STATUS_OK)
        h.start = start;
    glp_init_iocp(&parm);
    parm.cb_func = give_incumbent;
    parm.cb_info = &h;
    parm.presolve = GLP_ON;
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = time_limit_ms;
    parm.mip_gap = 0.0;
    /* Cuts shrink the tree on these knapsack-like rows a lot. */
    parm.mir_cuts = GLP_ON;
    parm.cov_cuts = GLP_ON;
    parm.gmi_cuts = GLP_ON;
    parm.clq_cuts = GLP_ON;
    int rc = glp_intopt(lp, &parm);
    free(start);
    if (rc == GLP_ETMLIM) {
        snprintf(err, err_len, "optimal: optimality not proven within the time limit of %d ms "
                 "(--time-limit-ms; or use lua-ls)", time_limit_ms);
        return PLAN_STATUS_TIME_LIMIT;
    }
    if (rc != 0 || glp_mip_status(lp) != GLP_OPT) {
        snprintf(err, err_len, "optimal: GLPK did not prove optimality (glp_intopt %d, "
                 "status %d)", rc, glp_mip_status(lp));
        return PLAN_STATUS_INTERNAL;
    }
    plan_choices_clear(out, in->n_viewers);
    for (long j = 0; j < nt; j++) {
        if (glp_mip_col_val(lp, (int)j + 1) > 0.5) {
            out[t[j].v].server = t[j].m;
            out[t[j].v].rung = t[j].r;
        }
    }
    return PLAN_STATUS_OK;
}

plan_status plan_optimal(const plan_instance *in, int time_limit_ms, plan_choice *out,
                         char *err, size_t err_len)
{
    if (in->n_viewers == 0)
        return PLAN_STATUS_OK; /* GLPK aborts on an empty problem */
    long nt = count_triples(in, NULL);
    if (nt + in->n_viewers > PLAN_OPTIMAL_MAX_VARS) {
        snprintf(err, err_len, "viewers: optimal is limited to %d decision variables "
                 "(viewer x covering server x rung, plus one per viewer); this input "
                 "has %ld - use lua-ls", PLAN_OPTIMAL_MAX_VARS, nt + in->n_viewers);
        return PLAN_STATUS_TOO_LARGE;
    }
    triple *t = malloc((size_t)(nt ? nt : 1) * sizeof *t);
    if (!t)
        return PLAN_STATUS_INTERNAL;
    count_triples(in, t);
    glp_term_out(GLP_OFF); /* GLPK would print to stdout, which is ours */
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    build_rows(lp, in);
    plan_status st = PLAN_STATUS_INTERNAL;
    if (build_columns(lp, in, t, nt) == 0)
        st = solve(lp, in, t, nt, time_limit_ms, out, err, err_len);
    glp_delete_prob(lp);
    free(t);
    return st;
}
