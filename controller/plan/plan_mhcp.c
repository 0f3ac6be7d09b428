/* plan_mhcp.c - MHCP baseline: most remaining space first, highest bitrate.
 *
 * RS_m = (RC_m + RD_m) / (2 (1 + count_m)) with RC_m, RD_m the remaining
 * fractions of CPU and bandwidth (the paper's formula was lost; this form
 * rises with both remaining shares and falls with the viewers already on m).
 * Viewers in input order take the covering server of highest RS_m that fits
 * some rung, and there the highest rung that fits.
 */
#include "plan_algo.h"

double plan_mhcp_rs(const plan_instance *in, const plan_load *l, int m)
{
    const plan_server *s = &in->servers[m];
    double rc = s->vcpu > 0.0 ? l->cpu[m] / s->vcpu : 0.0;
    double rd = s->bandwidth_mbps > 0.0 ? l->bw[m] / s->bandwidth_mbps : 0.0;
    return (rc + rd) / (2.0 * (1.0 + l->count[m]));
}

plan_status plan_mhcp(const plan_instance *in, plan_choice *out)
{
    plan_load l;
    if (plan_load_init(&l, in) != 0)
        return PLAN_STATUS_INTERNAL;
    plan_choices_clear(out, in->n_viewers);
    for (int v = 0; v < in->n_viewers; v++) {
        const plan_viewer *w = &in->viewers[v];
        int best = -1, bhi = 0;
        double brs = 0.0;
        for (int i = 0; i < w->n_links; i++) {
            int m = w->links[i].server, lo, hi;
            if (!plan_load_range(&l, in, m, &lo, &hi))
                continue;
            double rs = plan_mhcp_rs(in, &l, m);
            if (best < 0 || rs > brs) {
                best = i;
                brs = rs;
                bhi = hi;
            }
        }
        if (best < 0)
            continue;
        out[v].server = w->links[best].server;
        out[v].rung = bhi;
        plan_load_add(&l, in, out[v].server, out[v].rung);
    }
    plan_load_free(&l);
    return PLAN_STATUS_OK;
}
