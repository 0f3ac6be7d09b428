/* plan_model.c - QoE formulas, capacity bookkeeping and metrics of LUA. */
#include "plan_model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *plan_read_file(const char *path, size_t max_bytes, size_t *len, plan_read_status *st,
                     char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "%s: cannot open", path);
        *st = PLAN_READ_NOFILE;
        return NULL;
    }
    char *buf = malloc(max_bytes + 1);
    size_t n = buf ? fread(buf, 1, max_bytes + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    *st = !buf ? PLAN_READ_NOMEM : bad ? PLAN_READ_NOFILE : n > max_bytes ? PLAN_READ_TOO_LARGE : PLAN_READ_OK;
    if (*st != PLAN_READ_OK) {
        if (*st == PLAN_READ_TOO_LARGE)
            snprintf(err, err_len, "%s: larger than the %zu MiB limit", path, max_bytes >> 20);
        else
            snprintf(err, err_len, "%s: %s", path, *st == PLAN_READ_NOMEM ? "out of memory" : "read error");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void plan_params_default(plan_params *p)
{
    /* The paper's table 3 where it survived; gamma, alpha and k are ours. */
    p->a = 5.0;
    p->b = 1.0;
    p->c = 1.0;
    p->d = 1.0;
    p->beta_ms = 300.0;
    p->g_ms_per_mbps = 50.0;
    p->h_vcpu_per_mbps = 0.5;
    p->gamma = 1.0;
    p->alpha = 0.1;
    p->k = 1.0;
    p->radius_m = 300.0;
    p->viewer_edge_ms = 10.0;
    p->unserved_qoe = -100.0;
}

void plan_instance_free(plan_instance *in)
{
    if (!in)
        return;
    for (int v = 0; v < in->n_viewers; v++)
        free(in->viewers[v].links);
    free(in->viewers);
    free(in->servers);
    free(in->edge_ms);
    in->viewers = NULL;
    in->servers = NULL;
    in->edge_ms = NULL;
    in->n_viewers = in->n_servers = 0;
}

void plan_instance_derive(plan_instance *in)
{
    for (int v = 0; v < in->n_viewers; v++) {
        plan_viewer *w = &in->viewers[v];
        w->demand = plan_demand(w->freq, in->p.gamma);
        w->weight = plan_weight(w->gift, in->p.alpha);
    }
}

/* I_v = gamma * F_v: non-negative, linear in the bullet-comment frequency;
 * gamma sets the range (the paper sweeps I_v over (0,1), (1,2), (2,3)). */
double plan_demand(double freq, double gamma)
{
    return gamma * (freq > 0.0 ? freq : 0.0);
}

/* Y_v = 1 + alpha * ln(1 + p_v): >= 1 so a viewer who never gave still
 * counts, increasing in the gift amount, concave so whales do not erase
 * everybody else. */
double plan_weight(double gift, double alpha)
{
    return 1.0 + alpha * log1p(gift > 0.0 ? gift : 0.0);
}

/* Q(I, L) = (1 + I) * (beta - L) / (beta + L).
 *   dQ/dL = -(1 + I) * 2 beta / (beta + L)^2 < 0       (eq. 8)
 *   dQ/dI = (beta - L) / (beta + L): >= 0 iff L <= beta (eqs. 9, 10)
 * and Q stays in (-(1+I), 1+I], so a far server cannot dominate the sum. */
double plan_interaction(double demand, double latency_ms, double beta_ms)
{
    assert(beta_ms > 0.0 && latency_ms >= 0.0);
    return (1.0 + demand) * (beta_ms - latency_ms) / (beta_ms + latency_ms);
}

/* U_v = ln(min(R_v, R*_v) / r_1): the log utility of [23], capped at the
 * expected bitrate so quality is best at or above R*_v. */
double plan_quality(double rate, double expected, double lowest_rung)
{
    double r = rate < expected ? rate : expected;
    assert(r > 0.0 && lowest_rung > 0.0);
    return log(r / lowest_rung);
}

/* E_v = k * [R_prev - R_v]+ : only drops cost. */
double plan_jitter(double prev_rate, double rate, double k)
{
    if (prev_rate < 0.0)
        return 0.0; /* new viewer: nothing to drop from */
    double drop = prev_rate - rate;
    return drop > 0.0 ? k * drop : 0.0;
}

/* S_v = 1 when the viewer had a server and it changes, else 0. */
double plan_switch_cost(int prev_server, int server)
{
    return (prev_server >= 0 && prev_server != server) ? 1.0 : 0.0;
}

double plan_transcode_cpu(const plan_instance *in, int rung)
{
    double src = in->ladder[in->n_rungs - 1];
    return (src - in->ladder[rung]) * in->p.h_vcpu_per_mbps;
}

/* L_{v,m} = T_{b,mb} + T_{mb,m} + T_{m,v} + G * (R - R_v). */
double plan_latency(const plan_instance *in, int v, int link, int rung)
{
    const plan_viewer *w = &in->viewers[v];
    int m = w->links[link].server;
    double src = in->ladder[in->n_rungs - 1];
    return w->uplink_ms + in->edge_ms[(size_t)w->streamer_edge * in->n_servers + m] +
           w->links[link].latency_ms + in->p.g_ms_per_mbps * (src - in->ladder[rung]);
}

double plan_qoe(const plan_instance *in, int v, int link, int rung)
{
    const plan_viewer *w = &in->viewers[v];
    const plan_params *p = &in->p;
    double rate = in->ladder[rung];
    double q = plan_interaction(w->demand, plan_latency(in, v, link, rung), p->beta_ms);
    double u = plan_quality(rate, w->expected_mbps, in->ladder[0]);
    double e = plan_jitter(w->prev_mbps, rate, p->k);
    double s = plan_switch_cost(w->prev_server, w->links[link].server);
    return p->a * q + p->b * u - p->c * e - p->d * s;
}

int plan_link_of(const plan_instance *in, int v, int m)
{
    const plan_viewer *w = &in->viewers[v];
    for (int i = 0; i < w->n_links; i++)
        if (w->links[i].server == m)
            return i;
    return -1;
}

int plan_load_init(plan_load *l, const plan_instance *in)
{
    size_t n = (size_t)in->n_servers;
    l->n = in->n_servers;
    l->bw = calloc(n ? n : 1, sizeof *l->bw);
    l->cpu = calloc(n ? n : 1, sizeof *l->cpu);
    l->count = calloc(n ? n : 1, sizeof *l->count);
    if (!l->bw || !l->cpu || !l->count) {
        plan_load_free(l);
        return -1;
    }
    for (int m = 0; m < in->n_servers; m++) {
        l->bw[m] = in->servers[m].bandwidth_mbps;
        l->cpu[m] = in->servers[m].vcpu;
    }
    return 0;
}

void plan_load_free(plan_load *l)
{
    free(l->bw);
    free(l->cpu);
    free(l->count);
    l->bw = l->cpu = NULL;
    l->count = NULL;
}

bool plan_load_fits(const plan_load *l, const plan_instance *in, int m, int rung)
{
    if (in->servers[m].admit != PLAN_ADMIT_PASS)
        return false; /* admission mask: never assigned */
    return in->ladder[rung] <= l->bw[m] + PLAN_EPS &&
           plan_transcode_cpu(in, rung) <= l->cpu[m] + PLAN_EPS;
}

void plan_load_add(plan_load *l, const plan_instance *in, int m, int rung)
{
    l->bw[m] -= in->ladder[rung];
    l->cpu[m] -= plan_transcode_cpu(in, rung);
    l->count[m]++;
}

void plan_load_remove(plan_load *l, const plan_instance *in, int m, int rung)
{
    assert(l->count[m] > 0);
    l->bw[m] += in->ladder[rung];
    l->cpu[m] += plan_transcode_cpu(in, rung);
    l->count[m]--;
}

/* Bandwidth bounds the rung from above, CPU (R - R_v) H from below, so the
 * rungs that fit form one interval [lo, hi]. */
bool plan_load_range(const plan_load *l, const plan_instance *in, int m,
                     int *lo, int *hi)
{
    int a = -1, b = -1;
    for (int r = 0; r < in->n_rungs; r++) {
        if (plan_load_fits(l, in, m, r)) {
            if (a < 0)
                a = r;
            b = r;
        }
    }
    if (a < 0)
        return false;
    *lo = a;
    *hi = b;
    return true;
}

bool plan_check(const plan_instance *in, const plan_choice *ch,
                char *why, size_t why_len)
{
    plan_load l;
    if (plan_load_init(&l, in) != 0) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    bool ok = true;
    for (int v = 0; v < in->n_viewers && ok; v++) {
        int m = ch[v].server;
        if (m == PLAN_UNSERVED)
            continue;
        if (m < 0 || m >= in->n_servers || ch[v].rung < 0 || ch[v].rung >= in->n_rungs) {
            snprintf(why, why_len, "viewer %s: choice out of range", in->viewers[v].id);
            ok = false;
        } else if (plan_link_of(in, v, m) < 0) {
            snprintf(why, why_len, "viewer %s: server %s does not cover it",
                     in->viewers[v].id, in->servers[m].id);
            ok = false;
        } else if (in->servers[m].admit != PLAN_ADMIT_PASS) {
            snprintf(why, why_len, "viewer %s: server %s is masked",
                     in->viewers[v].id, in->servers[m].id);
            ok = false;
        } else {
            plan_load_add(&l, in, m, ch[v].rung);
        }
    }
    for (int m = 0; m < in->n_servers && ok; m++) {
        if (l.bw[m] < -PLAN_EPS || l.cpu[m] < -PLAN_EPS) {
            snprintf(why, why_len, "server %s: %s exceeded", in->servers[m].id,
                     l.bw[m] < -PLAN_EPS ? "bandwidth D_m" : "CPU C_m");
            ok = false;
        }
    }
    plan_load_free(&l);
    return ok;
}

double plan_viewer_qoe(const plan_instance *in, int v, plan_choice c)
{
    if (c.server == PLAN_UNSERVED)
        return in->p.unserved_qoe;
    int link = plan_link_of(in, v, c.server);
    assert(link >= 0);
    return plan_qoe(in, v, link, c.rung);
}

double plan_objective(const plan_instance *in, const plan_choice *ch)
{
    double sum = 0.0;
    for (int v = 0; v < in->n_viewers; v++)
        sum += in->viewers[v].weight * plan_viewer_qoe(in, v, ch[v]);
    return sum;
}

void plan_evaluate(const plan_instance *in, const plan_choice *ch, plan_metrics *out)
{
    plan_metrics m = {0};
    double lat = 0, rate = 0, inter = 0, drop = 0, qoe = 0, qoe_served = 0;
    m.viewers = in->n_viewers;
    for (int v = 0; v < in->n_viewers; v++) {
        const plan_viewer *w = &in->viewers[v];
        double q = plan_viewer_qoe(in, v, ch[v]);
        qoe += q;
        m.weighted_qoe += w->weight * q;
        if (ch[v].server == PLAN_UNSERVED) {
            m.unserved++;
            continue;
        }
        int link = plan_link_of(in, v, ch[v].server);
        double l = plan_latency(in, v, link, ch[v].rung);
        double r = in->ladder[ch[v].rung];
        m.served++;
        qoe_served += q;
        lat += l;
        rate += r;
        inter += plan_interaction(w->demand, l, in->p.beta_ms);
        drop += plan_jitter(w->prev_mbps, r, 1.0);
        m.switches += (int)plan_switch_cost(w->prev_server, ch[v].server);
    }
    if (m.served > 0) {
        m.mean_latency_ms = lat / m.served;
        m.mean_bitrate_mbps = rate / m.served;
        m.mean_interaction = inter / m.served;
        m.mean_bitrate_drop_mbps = drop / m.served;
        m.mean_qoe_served = qoe_served / m.served;
    }
    if (m.viewers > 0) {
        m.mean_qoe = qoe / m.viewers;
        m.mean_switches = (double)m.switches / m.viewers;
    }
    *out = m;
}
