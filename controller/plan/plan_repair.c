/* plan_repair.c - lua-ls's last phase: make room for unserved viewers.
 *
 * Under overload (demand above capacity, plan_demand_ratio > 1) the local
 * search of plan_improve.c stops where no single viewer can improve alone,
 * and an unserved viewer u costs 100 Y_v: it can only get in when somebody
 * else moves first.  Two kinds of moves, each accepted only when it raises
 * the objective sum Y_v QoE_v and keeps every constraint (plan_load_fits
 * checks mask, D_m, C_m; only covering links are ever tried):
 *
 * 1. Ejection chains of length 2 (exhaustive): a served w on m1, a server
 *    of u, moves to another covering server m2 at any rung, or to another
 *    rung on m1 (a down-rung frees bandwidth, an up-rung frees CPU), or out
 *    (replacement: worth it when Y_u outweighs Y_w); then u takes m1 at its
 *    best fitting rung.  Per unserved u the scan costs
 *    O(|V| + sum_{m1 in M(u)} n_{m1} (|M(w)| K + K^2)), n_m viewers on m.
 * 2. A bounded exact repair of u's neighbourhood through GLPK, only while
 *    the chains leave viewers unserved: u, the viewers on u's servers and
 *    the unserved viewers those servers could take, then ring by ring the
 *    servers of those viewers and theirs, until REPAIR_MAX_VARS decision
 *    variables; everybody else stays fixed and their load is subtracted
 *    from the capacities.  GLPK (plan_ilp, with the count cut) solves it
 *    with the current allocation as incumbent and at most REPAIR_MAX_NODES
 *    branch-and-bound nodes - a node limit rather than a clock, so the
 *    result never depends on the machine's load.  Then the same repair runs
 *    from each server of those unserved viewers that no sub-problem has
 *    covered whole (swaps between overlapping servers, rung rebalancing
 *    next to them).  This covers longer chains.  Where the chains serve
 *    everybody (most instances that are not over-loaded) no sub-problem is
 *    solved at all.  An instance that fits in one sub-problem whole (at
 *    most REPAIR_MAX_VARS variables) is instead solved whole, once a round
 *    (the first round even when nobody is unserved).
 *
 * Bound: the chain loop applies moves of the first kind in at most
 * CHAIN_OPEN_PASSES passes over the unserved viewers, then only moves that
 * serve one more viewer (each raises the served count, so at most |V| of
 * them); then, only if U > 0 viewers are still unserved, at most
 * REPAIR_ROUNDS rounds of exact repairs, each round starting only while
 * viewers are unserved, with at most one sub-problem per viewer unserved
 * when the round began (U_r of them) and one per server of such a viewer:
 * at most min(REPAIR_MAX_SOLVES, sum_r sum_{u in U_r} (1 + |M(u)|))
 * GLPK sub-problems in all, proportional to the unserved viewers and not
 * to the instance (when U = 0: none; on an instance that fits in one
 * sub-problem whole: one per round instead), each of at most REPAIR_MAX_VARS variables and
 * REPAIR_MAX_NODES nodes (every node one LP re-optimisation: polynomial),
 * each round followed by the local search (O(50 |V| |M| K)).  The phase
 * always ends with the chain loop at a fixed point: no single length-2
 * chain can serve an unserved viewer with gain
 * (tests/plan/test_plan_repair.c checks it by exhaustive search).
 */
#include "plan_algo.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_OPEN_PASSES 8
#define REPAIR_ROUNDS 3
#define REPAIR_MAX_SOLVES 24
#define REPAIR_MAX_VARS 600
#define REPAIR_MAX_NODES 400
#define LS_PASSES 50
#define GAIN_EPS 1e-7 /* objective units: far below any QoE difference */

typedef struct {
    const plan_instance *in;
    plan_choice *ch;
    plan_load l;
    double *q;          /* QoE of v on link i at rung r, cached */
    size_t *base;       /* q + base[v] = v's first entry */
    int *order;         /* viewers by descending Y_v */
    int *mark;          /* per server: link of the current u + 1, 0 = none */
    /* the exact repair's neighbourhood */
    int *nb;            /* its viewers */
    int n_nb;
    int *in_nb;         /* per viewer: stamp of the round it joined */
    int *seen;          /* per server: stamp of the round it was expanded */
    int *queue;         /* servers to expand */
    int stamp;
    int *cover_start, *cover;   /* CSR: viewers covered by each server */
    double *bw, *cpu;   /* the sub-problem's capacities */
    plan_choice *sub;   /* its solution (indexed by instance viewer) */
    bool *tried;        /* per viewer: already inside a sub-problem this pass */
    bool *srv_done;     /* per server: expanded whole in a sub-problem this pass */
    bool *near;         /* per server: covers a viewer unserved when the round began */
    long solves;
} rp_work;

typedef struct {
    double gain;
    bool found;
    int w;              /* the viewer making room; -1: u fits as things are */
    plan_choice wto, uto;
} rp_move;

static double qc(const rp_work *k, int v, int link, int r)
{
    return k->q[k->base[v] + (size_t)link * (size_t)k->in->n_rungs + (size_t)r];
}

static double q_of(const rp_work *k, int v, plan_choice c)
{
    if (c.server == PLAN_UNSERVED)
        return k->in->p.unserved_qoe;
    int link = plan_link_of(k->in, v, c.server);
    assert(link >= 0); /* every allocation keeps coverage */
    return qc(k, v, link, c.rung);
}

static int cache_qoe(rp_work *k)
{
    const plan_instance *in = k->in;
    size_t n = 0, V = (size_t)in->n_viewers;
    k->base = malloc((V ? V : 1) * sizeof *k->base);
    if (!k->base)
        return -1;
    for (size_t v = 0; v < V; v++) {
        k->base[v] = n;
        n += (size_t)in->viewers[v].n_links * (size_t)in->n_rungs;
    }
    k->q = malloc((n ? n : 1) * sizeof *k->q);
    if (!k->q)
        return -1;
    for (int v = 0; v < in->n_viewers; v++)
        for (int i = 0; i < in->viewers[v].n_links; i++)
            for (int r = 0; r < in->n_rungs; r++)
                k->q[k->base[v] + (size_t)i * in->n_rungs + r] = plan_qoe(in, v, i, r);
    return 0;
}

/* Which viewers each server covers: the unserved ones a server could take. */
static int build_cover(rp_work *k)
{
    const plan_instance *in = k->in;
    size_t links = 0;
    k->cover_start = calloc((size_t)in->n_servers + 1, sizeof *k->cover_start);
    if (!k->cover_start)
        return -1;
    for (int v = 0; v < in->n_viewers; v++)
        for (int i = 0; i < in->viewers[v].n_links; i++, links++)
            k->cover_start[in->viewers[v].links[i].server + 1]++;
    for (int m = 0; m < in->n_servers; m++)
        k->cover_start[m + 1] += k->cover_start[m];
    k->cover = malloc((links ? links : 1) * sizeof *k->cover);
    int *fill = malloc(((size_t)in->n_servers + 1) * sizeof *fill);
    if (!k->cover || !fill) {
        free(fill);
        return -1;
    }
    memcpy(fill, k->cover_start, (size_t)in->n_servers * sizeof *fill);
    for (int v = 0; v < in->n_viewers; v++)
        for (int i = 0; i < in->viewers[v].n_links; i++)
            k->cover[fill[in->viewers[v].links[i].server]++] = v;
    free(fill);
    return 0;
}

static void load_sync(rp_work *k)
{
    const plan_instance *in = k->in;
    for (int m = 0; m < in->n_servers; m++) {
        k->l.bw[m] = in->servers[m].bandwidth_mbps;
        k->l.cpu[m] = in->servers[m].vcpu;
        k->l.count[m] = 0;
    }
    for (int v = 0; v < in->n_viewers; v++)
        if (k->ch[v].server != PLAN_UNSERVED)
            plan_load_add(&k->l, in, k->ch[v].server, k->ch[v].rung);
}

static void work_free(rp_work *k)
{
    plan_load_free(&k->l);
    free(k->q), free(k->base), free(k->order), free(k->mark), free(k->nb);
    free(k->in_nb), free(k->seen), free(k->queue), free(k->cover_start), free(k->cover);
    free(k->bw), free(k->cpu), free(k->sub), free(k->tried), free(k->srv_done);
    free(k->near);
}

static int work_init(rp_work *k, const plan_instance *in, plan_choice *ch)
{
    size_t V = (size_t)(in->n_viewers ? in->n_viewers : 1);
    size_t M = (size_t)(in->n_servers ? in->n_servers : 1);
    memset(k, 0, sizeof *k);
    k->in = in;
    k->ch = ch;
    bool load_ok = plan_load_init(&k->l, in) == 0;
    k->order = plan_order_by_weight(in);
    k->mark = calloc(M, sizeof *k->mark);
    k->nb = malloc(V * sizeof *k->nb);
    k->in_nb = calloc(V, sizeof *k->in_nb);
    k->seen = calloc(M, sizeof *k->seen);
    k->queue = malloc(M * sizeof *k->queue);
    k->bw = malloc(M * sizeof *k->bw);
    k->cpu = malloc(M * sizeof *k->cpu);
    k->sub = malloc(V * sizeof *k->sub);
    k->tried = calloc(V, sizeof *k->tried);
    k->srv_done = calloc(M, sizeof *k->srv_done);
    k->near = calloc(M, sizeof *k->near);
    if (!load_ok || !k->order || !k->mark || !k->nb || !k->in_nb || !k->seen || !k->queue ||
        !k->bw || !k->cpu || !k->sub || !k->tried || !k->srv_done || !k->near || cache_qoe(k) != 0 ||
        build_cover(k) != 0)
        return -1;
    load_sync(k);
    return 0;
}

/* ---- 1. ejection chains ------------------------------------------------ */

/* Best rung for v on link (server m) under the current load, or -1. */
static int fit_rung(const rp_work *k, int v, int link, int m, double *value)
{
    int lo, hi, best = -1;
    if (!plan_load_range(&k->l, k->in, m, &lo, &hi))
        return -1;
    for (int r = lo; r <= hi; r++)
        if (best < 0 || qc(k, v, link, r) > *value) {
            best = r;
            *value = qc(k, v, link, r);
        }
    return best;
}

/* w's best option off m1 (another covering server, or out when allowed). */
static plan_choice best_elsewhere(const rp_work *k, int w, int m1, bool allow_out,
                                  double *value)
{
    const plan_viewer *vw = &k->in->viewers[w];
    plan_choice best = {PLAN_UNSERVED, 0};
    bool have = allow_out;
    *value = k->in->p.unserved_qoe;
    for (int i = 0; i < vw->n_links; i++) {
        int m2 = vw->links[i].server;
        double q;
        int r = m2 == m1 ? -1 : fit_rung(k, w, i, m2, &q);
        if (r >= 0 && (!have || q > *value)) {
            have = true;
            *value = q;
            best = (plan_choice){m2, r};
        }
    }
    return have ? best : (plan_choice){-2, 0}; /* -2: no option at all */
}

static void consider(rp_move *best, double gain, int w, plan_choice wto, plan_choice uto)
{
    if (gain > best->gain) {
        best->found = true;
        best->gain = gain;
        best->w = w;
        best->wto = wto;
        best->uto = uto;
    }
}

/* w leaves m1 (moved off or out): u then takes m1 at its best rung. */
static void chain_off(rp_work *k, int u, int w, int m1, bool allow_out, rp_move *best)
{
    const plan_instance *in = k->in;
    double qu, qw, cur = q_of(k, w, k->ch[w]);
    int lu = k->mark[m1] - 1;
    int ru = fit_rung(k, u, lu, m1, &qu);
    if (ru < 0)
        return; /* even without w, u does not fit on m1 */
    plan_choice wto = best_elsewhere(k, w, m1, allow_out, &qw);
    if (wto.server == -2)
        return;
    double gain = in->viewers[u].weight * (qu - in->p.unserved_qoe) +
                  in->viewers[w].weight * (qw - cur);
    consider(best, gain, w, wto, (plan_choice){m1, ru});
}

/* w stays on m1 at another rung r2, u joins m1. */
static void chain_rerung(rp_work *k, int u, int w, int m1, rp_move *best)
{
    const plan_instance *in = k->in;
    int lw = plan_link_of(in, w, m1), lu = k->mark[m1] - 1;
    double cur = qc(k, w, lw, k->ch[w].rung);
    for (int r2 = 0; r2 < in->n_rungs; r2++) {
        if (r2 == k->ch[w].rung || !plan_load_fits(&k->l, in, m1, r2))
            continue;
        plan_load_add(&k->l, in, m1, r2);
        double qu;
        int ru = fit_rung(k, u, lu, m1, &qu);
        plan_load_remove(&k->l, in, m1, r2);
        if (ru < 0)
            continue;
        double gain = in->viewers[u].weight * (qu - in->p.unserved_qoe) +
                      in->viewers[w].weight * (qc(k, w, lw, r2) - cur);
        consider(best, gain, w, (plan_choice){m1, r2}, (plan_choice){m1, ru});
    }
}

/* The best chain of length <= 2 serving u; !found when none gains. */
static rp_move best_chain(rp_work *k, int u, bool allow_out)
{
    const plan_instance *in = k->in;
    const plan_viewer *vu = &in->viewers[u];
    rp_move best = {GAIN_EPS, false, -1, {PLAN_UNSERVED, 0}, {PLAN_UNSERVED, 0}};
    for (int i = 0; i < vu->n_links; i++) {
        int m = vu->links[i].server;
        double qu;
        int ru = fit_rung(k, u, i, m, &qu); /* length 1: room as it is */
        if (ru >= 0)
            consider(&best, vu->weight * (qu - in->p.unserved_qoe), -1,
                     (plan_choice){PLAN_UNSERVED, 0}, (plan_choice){m, ru});
        k->mark[m] = i + 1;
    }
    for (int w = 0; w < in->n_viewers; w++) {
        int m1 = k->ch[w].server;
        if (m1 == PLAN_UNSERVED || !k->mark[m1])
            continue;
        plan_load_remove(&k->l, in, m1, k->ch[w].rung);
        chain_off(k, u, w, m1, allow_out, &best);
        chain_rerung(k, u, w, m1, &best);
        plan_load_add(&k->l, in, m1, k->ch[w].rung);
    }
    for (int i = 0; i < vu->n_links; i++)
        k->mark[vu->links[i].server] = 0;
    return best;
}

static void apply_chain(rp_work *k, int u, const rp_move *mv)
{
    const plan_instance *in = k->in;
    int w = mv->w;
    if (w >= 0) {
        plan_load_remove(&k->l, in, k->ch[w].server, k->ch[w].rung);
        k->ch[w] = mv->wto;
        if (mv->wto.server != PLAN_UNSERVED)
            plan_load_add(&k->l, in, mv->wto.server, mv->wto.rung);
    }
    assert(plan_load_fits(&k->l, in, mv->uto.server, mv->uto.rung));
    k->ch[u] = mv->uto;
    plan_load_add(&k->l, in, mv->uto.server, mv->uto.rung);
}

/* One pass over the unserved viewers by descending Y_v; moves applied. */
static long chain_pass(rp_work *k, bool allow_out)
{
    long moves = 0;
    for (int i = 0; i < k->in->n_viewers; i++) {
        int u = k->order[i];
        if (k->ch[u].server != PLAN_UNSERVED)
            continue;
        rp_move mv = best_chain(k, u, allow_out);
        if (mv.found) {
            apply_chain(k, u, &mv);
            moves++;
        }
    }
    return moves;
}

/* Replacements too for a few passes, then chains that serve one more
 * viewer until none is left (each raises the served count: <= |V|). */
static long chain_loop(rp_work *k)
{
    long total = 0, n;
    for (int pass = 0; pass < CHAIN_OPEN_PASSES && (n = chain_pass(k, true)) > 0; pass++)
        total += n;
    while ((n = chain_pass(k, false)) > 0)
        total += n;
    return total;
}

/* ---- 2. exact repair of a neighbourhood --------------------------------- */

static int viewer_vars(const rp_work *k, int v)
{
    return k->in->viewers[v].n_links * k->in->n_rungs + 1; /* an upper bound */
}

static bool nb_add(rp_work *k, int v, int *vars)
{
    if (k->in_nb[v] == k->stamp)
        return true;
    if (*vars + viewer_vars(k, v) > REPAIR_MAX_VARS)
        return false;
    *vars += viewer_vars(k, v);
    k->in_nb[v] = k->stamp;
    k->nb[k->n_nb++] = v;
    return true;
}

/* Adds every viewer m covers (served there, elsewhere or not at all: any of
 * them may have to move for the optimum); queues their servers. */
static bool nb_expand(rp_work *k, int m, int *vars, int *tail)
{
    for (int j = k->cover_start[m]; j < k->cover_start[m + 1]; j++) {
        int v = k->cover[j];
        if (!nb_add(k, v, vars))
            return false;
        for (int i = 0; i < k->in->viewers[v].n_links; i++) {
            int s = k->in->viewers[v].links[i].server;
            if (k->seen[s] != k->stamp) {
                k->seen[s] = k->stamp;
                k->queue[(*tail)++] = s;
            }
        }
    }
    return true;
}

static void nb_queue(rp_work *k, int s, int *tail)
{
    if (k->seen[s] != k->stamp) {
        k->seen[s] = k->stamp;
        k->queue[(*tail)++] = s;
    }
}

/* Breadth-first from viewer u's servers (u >= 0), from server m0 (u < 0)
 * or from every server (both < 0: the whole instance) until
 * REPAIR_MAX_VARS; servers expanded whole are marked done. */
static void build_neighbourhood(rp_work *k, int u, int m0)
{
    int vars = 0, head = 0, tail = 0;
    k->stamp++;
    k->n_nb = 0;
    if (u >= 0) {
        nb_add(k, u, &vars);
        for (int i = 0; i < k->in->viewers[u].n_links; i++)
            nb_queue(k, k->in->viewers[u].links[i].server, &tail);
    } else if (m0 >= 0) {
        nb_queue(k, m0, &tail);
    } else {
        for (int m = 0; m < k->in->n_servers; m++)
            nb_queue(k, m, &tail);
    }
    while (head < tail && nb_expand(k, k->queue[head], &vars, &tail))
        k->srv_done[k->queue[head++]] = true;
}

/* Capacities left to the neighbourhood: the free load plus its own. */
static void nb_capacity(rp_work *k)
{
    const plan_instance *in = k->in;
    memcpy(k->bw, k->l.bw, (size_t)in->n_servers * sizeof *k->bw);
    memcpy(k->cpu, k->l.cpu, (size_t)in->n_servers * sizeof *k->cpu);
    for (int i = 0; i < k->n_nb; i++) {
        plan_choice c = k->ch[k->nb[i]];
        if (c.server == PLAN_UNSERVED)
            continue;
        k->bw[c.server] += in->ladder[c.rung];
        k->cpu[c.server] += plan_transcode_cpu(in, c.rung);
    }
}

/* The sub-problem's answer against its capacities, with our own epsilon:
 * GLPK's tolerances are not ours, and no move may break a constraint. */
static bool sub_fits(rp_work *k)
{
    const plan_instance *in = k->in;
    for (int i = 0; i < k->n_nb; i++) {
        plan_choice c = k->sub[k->nb[i]];
        if (c.server == PLAN_UNSERVED)
            continue;
        if (plan_link_of(in, k->nb[i], c.server) < 0 ||
            in->servers[c.server].admit != PLAN_ADMIT_PASS)
            return false;
        k->bw[c.server] -= in->ladder[c.rung];
        k->cpu[c.server] -= plan_transcode_cpu(in, c.rung);
        if (k->bw[c.server] < -PLAN_EPS || k->cpu[c.server] < -PLAN_EPS)
            return false;
    }
    return true;
}

/* Solves the neighbourhood of viewer u (of server m0 when u < 0, of the
 * whole instance when both are < 0); applies the result when it gains (1).
 * GLPK finding nothing within its node limit is no gain (0), not an error. */
static int repair_one(rp_work *k, int u, int m0)
{
    char err[256];
    bool proven;
    build_neighbourhood(k, u, m0);
    nb_capacity(k);
    plan_ilp_spec s = {.viewers = k->nb, .n_viewers = k->n_nb, .bw = k->bw, .cpu = k->cpu,
                       .start = k->ch, .node_limit = REPAIR_MAX_NODES};
    k->solves++;
    if (plan_ilp(k->in, &s, k->sub, &proven, err, sizeof err) != PLAN_STATUS_OK)
        return 0;
    double gain = 0.0;
    for (int i = 0; i < k->n_nb; i++) {
        int v = k->nb[i];
        gain += k->in->viewers[v].weight * (q_of(k, v, k->sub[v]) - q_of(k, v, k->ch[v]));
        k->tried[v] = true;
    }
    if (gain <= GAIN_EPS || !sub_fits(k))
        return 0;
    for (int i = 0; i < k->n_nb; i++)
        k->ch[k->nb[i]] = k->sub[k->nb[i]];
    load_sync(k);
    return 1;
}

/* Marks the servers of the viewers unserved now; returns how many are. */
static int mark_near(rp_work *k)
{
    const plan_instance *in = k->in;
    int unserved = 0;
    memset(k->near, 0, (size_t)in->n_servers * sizeof *k->near);
    for (int v = 0; v < in->n_viewers; v++) {
        if (k->ch[v].server != PLAN_UNSERVED)
            continue;
        unserved++;
        for (int i = 0; i < in->viewers[v].n_links; i++)
            k->near[in->viewers[v].links[i].server] = true;
    }
    return unserved;
}

/* One exact repair per unserved viewer (by descending Y_v) not already
 * inside an earlier sub-problem of the pass (its neighbourhood has been
 * searched, mostly overlapping u's own); returns repairs that gained. */
static int repair_pass(rp_work *k)
{
    int gained = 0;
    memset(k->tried, 0, (size_t)k->in->n_viewers * sizeof *k->tried);
    memset(k->srv_done, 0, (size_t)k->in->n_servers * sizeof *k->srv_done);
    for (int i = 0; i < k->in->n_viewers && k->solves < REPAIR_MAX_SOLVES; i++) {
        int u = k->order[i];
        if (k->ch[u].server != PLAN_UNSERVED || k->tried[u])
            continue;
        gained += repair_one(k, u, -1);
    }
    return gained;
}

/* Then, while the budget lasts, the neighbourhood of every server of a
 * viewer unserved when the round began (k->near) that no sub-problem has
 * covered whole: swaps between overlapping servers and rung rebalancing
 * around the viewers left out, nowhere else. */
static int polish_pass(rp_work *k)
{
    int gained = 0;
    for (int m = 0; m < k->in->n_servers && k->solves < REPAIR_MAX_SOLVES; m++)
        if (k->near[m] && !k->srv_done[m] && k->in->servers[m].admit == PLAN_ADMIT_PASS)
            gained += repair_one(k, -1, m);
    return gained;
}

/* Does the whole instance fit in one sub-problem? */
static bool whole_fits(const rp_work *k)
{
    int vars = 0;
    for (int v = 0; v < k->in->n_viewers; v++)
        if ((vars += viewer_vars(k, v)) > REPAIR_MAX_VARS)
            return false;
    return true;
}

/* After a gaining repair: the local search, then the chains' fixed point. */
static plan_status settle(rp_work *k)
{
    if (plan_local_search(k->in, k->ch, LS_PASSES) < 0)
        return PLAN_STATUS_INTERNAL;
    load_sync(k);
    chain_loop(k);
    return PLAN_STATUS_OK;
}

plan_status plan_repair(const plan_instance *in, plan_choice *ch)
{
    rp_work k;
    if (work_init(&k, in, ch) != 0) {
        work_free(&k);
        return PLAN_STATUS_INTERNAL;
    }
    plan_status st = PLAN_STATUS_OK;
    chain_loop(&k);
    /* An instance that fits in one sub-problem is solved whole, one solve a
     * round (its parts not next to an unserved viewer too); otherwise GLPK
     * only while the chains leave somebody out, and only near them. */
    bool whole = whole_fits(&k);
    for (int round = 0; round < REPAIR_ROUNDS && (mark_near(&k) > 0 || (whole && round == 0));
         round++) {
        int gained = whole ? repair_one(&k, -1, -1) : repair_pass(&k) + polish_pass(&k);
        if (gained == 0 || (st = settle(&k)) != PLAN_STATUS_OK)
            break;
    }
    work_free(&k);
    return st;
}
