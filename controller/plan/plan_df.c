/* plan_df.c - DF baseline: lowest delay first.
 *
 * Viewers in input (arrival) order; each takes the covering server with the
 * lowest transmission delay T_{b,mb} + T_{mb,m} + T_{m,v} among those that
 * still fit some rung; the bitrate is the viewer's expected one, lowered when
 * bandwidth is short and raised when CPU is short ("regulated by the server's
 * remaining resources and the viewer's expected bitrate").
 */
#include "plan_algo.h"

static double transmission_ms(const plan_instance *in, int v, int link)
{
    const plan_viewer *w = &in->viewers[v];
    int m = w->links[link].server;
    return w->uplink_ms + in->edge_ms[(size_t)w->streamer_edge * in->n_servers + m] +
           w->links[link].latency_ms;
}

plan_status plan_df(const plan_instance *in, plan_choice *out)
{
    plan_load l;
    if (plan_load_init(&l, in) != 0)
        return PLAN_STATUS_INTERNAL;
    plan_choices_clear(out, in->n_viewers);
    for (int v = 0; v < in->n_viewers; v++) {
        const plan_viewer *w = &in->viewers[v];
        int best = -1, blo = 0, bhi = 0;
        double bt = 0.0;
        for (int i = 0; i < w->n_links; i++) {
            int lo, hi;
            if (!plan_load_range(&l, in, w->links[i].server, &lo, &hi))
                continue;
            double t = transmission_ms(in, v, i);
            if (best < 0 || t < bt) {
                best = i;
                bt = t;
                blo = lo;
                bhi = hi;
            }
        }
        if (best < 0)
            continue;
        out[v].server = w->links[best].server;
        int want = plan_expected_rung(in, v);
        out[v].rung = want < blo ? blo : want > bhi ? bhi : want;
        plan_load_add(&l, in, out[v].server, out[v].rung);
    }
    plan_load_free(&l);
    return PLAN_STATUS_OK;
}
