/* plan_output.c - JSON for results and for generated instances. */
#include "plan_json.h"

#include <math.h>

/* json_real refuses NaN/inf; a non-finite value here is a bug upstream. */
static json_t *num(double x)
{
    return json_real(isfinite(x) ? x : 0.0);
}

static json_t *viewer_result(const plan_instance *in, int v, plan_choice c)
{
    const plan_viewer *w = &in->viewers[v];
    double q = plan_viewer_qoe(in, v, c);
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(w->id));
    json_object_set_new(o, "weight", num(w->weight));
    json_object_set_new(o, "demand", num(w->demand));
    json_object_set_new(o, "qoe", num(q));
    json_object_set_new(o, "weighted_qoe", num(w->weight * q));
    if (c.server == PLAN_UNSERVED) {
        json_object_set_new(o, "served", json_false());
        json_object_set_new(o, "server", json_null());
        json_object_set_new(o, "bitrate_mbps", json_null());
        return o;
    }
    int link = plan_link_of(in, v, c.server);
    double lat = plan_latency(in, v, link, c.rung), rate = in->ladder[c.rung];
    json_object_set_new(o, "served", json_true());
    json_object_set_new(o, "server", json_string(in->servers[c.server].id));
    json_object_set_new(o, "bitrate_mbps", num(rate));
    json_object_set_new(o, "latency_ms", num(lat));
    json_object_set_new(o, "interaction", num(plan_interaction(w->demand, lat, in->p.beta_ms)));
    json_object_set_new(o, "quality", num(plan_quality(rate, w->expected_mbps, in->ladder[0])));
    json_object_set_new(o, "bitrate_drop_mbps", num(plan_jitter(w->prev_mbps, rate, 1.0)));
    json_object_set_new(o, "switched",
                        json_boolean(plan_switch_cost(w->prev_server, c.server) > 0));
    return o;
}

static json_t *metrics_json(const plan_metrics *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "viewers", json_integer(m->viewers));
    json_object_set_new(o, "served", json_integer(m->served));
    json_object_set_new(o, "unserved", json_integer(m->unserved));
    json_object_set_new(o, "mean_latency_ms", num(m->mean_latency_ms));
    json_object_set_new(o, "mean_bitrate_mbps", num(m->mean_bitrate_mbps));
    json_object_set_new(o, "mean_interaction", num(m->mean_interaction));
    json_object_set_new(o, "mean_bitrate_drop_mbps", num(m->mean_bitrate_drop_mbps));
    json_object_set_new(o, "switch_count", json_integer(m->switches));
    json_object_set_new(o, "mean_switches", num(m->mean_switches));
    json_object_set_new(o, "mean_qoe", num(m->mean_qoe));
    json_object_set_new(o, "mean_qoe_served", num(m->mean_qoe_served));
    json_object_set_new(o, "weighted_qoe", num(m->weighted_qoe));
    return o;
}

static json_t *servers_json(const plan_instance *in, const plan_choice *ch)
{
    json_t *a = json_array();
    plan_load l;
    if (plan_load_init(&l, in) != 0)
        return a;
    for (int v = 0; v < in->n_viewers; v++)
        if (ch[v].server != PLAN_UNSERVED)
            plan_load_add(&l, in, ch[v].server, ch[v].rung);
    for (int m = 0; m < in->n_servers; m++) {
        const plan_server *s = &in->servers[m];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(s->id));
        json_object_set_new(o, "admitted", json_boolean(s->admit == PLAN_ADMIT_PASS));
        json_object_set_new(o, "viewers", json_integer(l.count[m]));
        json_object_set_new(o, "bandwidth_used_mbps", num(s->bandwidth_mbps - l.bw[m]));
        json_object_set_new(o, "vcpu_used", num(s->vcpu - l.cpu[m]));
        json_array_append_new(a, o);
    }
    plan_load_free(&l);
    return a;
}

json_t *plan_json_result(const plan_instance *in, plan_algo algo, const plan_choice *ch,
                         double elapsed_ms)
{
    plan_metrics m;
    plan_evaluate(in, ch, &m);
    json_t *o = json_object();
    json_object_set_new(o, "algorithm", json_string(plan_algo_name(algo)));
    json_object_set_new(o, "elapsed_ms", num(elapsed_ms));
    json_object_set_new(o, "metrics", metrics_json(&m));
    json_t *vs = json_array();
    for (int v = 0; v < in->n_viewers; v++)
        json_array_append_new(vs, viewer_result(in, v, ch[v]));
    json_object_set_new(o, "viewers", vs);
    json_object_set_new(o, "servers", servers_json(in, ch));
    return o;
}

static json_t *params_json(const plan_params *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "a", num(p->a));
    json_object_set_new(o, "b", num(p->b));
    json_object_set_new(o, "c", num(p->c));
    json_object_set_new(o, "d", num(p->d));
    json_object_set_new(o, "beta_ms", num(p->beta_ms));
    json_object_set_new(o, "g_ms_per_mbps", num(p->g_ms_per_mbps));
    json_object_set_new(o, "h_vcpu_per_mbps", num(p->h_vcpu_per_mbps));
    json_object_set_new(o, "gamma", num(p->gamma));
    json_object_set_new(o, "alpha", num(p->alpha));
    json_object_set_new(o, "k", num(p->k));
    json_object_set_new(o, "radius_m", num(p->radius_m));
    json_object_set_new(o, "viewer_edge_ms", num(p->viewer_edge_ms));
    json_object_set_new(o, "unserved_qoe", num(p->unserved_qoe));
    return o;
}

static json_t *viewer_json(const plan_instance *in, const plan_viewer *w)
{
    json_t *o = json_object(), *links = json_array();
    json_object_set_new(o, "id", json_string(w->id));
    if (isfinite(w->lat) && isfinite(w->lon)) {
        json_object_set_new(o, "lat", num(w->lat));
        json_object_set_new(o, "lon", num(w->lon));
    }
    json_object_set_new(o, "interaction_freq", num(w->freq));
    json_object_set_new(o, "gift", num(w->gift));
    json_object_set_new(o, "expected_mbps", num(w->expected_mbps));
    json_object_set_new(o, "prev_mbps", w->prev_mbps > 0 ? num(w->prev_mbps) : json_null());
    json_object_set_new(o, "prev_server", w->prev_server >= 0
                        ? json_string(in->servers[w->prev_server].id) : json_null());
    json_object_set_new(o, "streamer_edge", json_string(in->servers[w->streamer_edge].id));
    json_object_set_new(o, "streamer_uplink_ms", num(w->uplink_ms));
    for (int i = 0; i < w->n_links; i++) {
        json_t *l = json_object();
        json_object_set_new(l, "server", json_string(in->servers[w->links[i].server].id));
        json_object_set_new(l, "latency_ms", num(w->links[i].latency_ms));
        json_array_append_new(links, l);
    }
    json_object_set_new(o, "links", links);
    return o;
}

json_t *plan_json_instance(const plan_instance *in)
{
    json_t *o = json_object(), *ladder = json_array(), *servers = json_array();
    json_t *edges = json_array(), *viewers = json_array(), *adm = json_object();
    json_object_set_new(o, "params", params_json(&in->p));
    for (int r = 0; r < in->n_rungs; r++)
        json_array_append_new(ladder, num(in->ladder[r]));
    for (int m = 0; m < in->n_servers; m++) {
        const plan_server *s = &in->servers[m];
        json_t *so = json_object(), *row = json_array();
        json_object_set_new(so, "id", json_string(s->id));
        if (isfinite(s->lat) && isfinite(s->lon)) {
            json_object_set_new(so, "lat", num(s->lat));
            json_object_set_new(so, "lon", num(s->lon));
        }
        json_object_set_new(so, "bandwidth_mbps", num(s->bandwidth_mbps));
        json_object_set_new(so, "vcpu", num(s->vcpu));
        json_array_append_new(servers, so);
        json_object_set_new(adm, s->id, json_string(s->admit == PLAN_ADMIT_PASS ? "PASS" : "FAIL"));
        for (int n = 0; n < in->n_servers; n++)
            json_array_append_new(row, num(in->edge_ms[(size_t)m * in->n_servers + n]));
        json_array_append_new(edges, row);
    }
    for (int v = 0; v < in->n_viewers; v++)
        json_array_append_new(viewers, viewer_json(in, &in->viewers[v]));
    json_object_set_new(o, "ladder_mbps", ladder);
    json_object_set_new(o, "servers", servers);
    json_object_set_new(o, "edge_latency_ms", edges);
    json_object_set_new(o, "admission", adm);
    json_object_set_new(o, "viewers", viewers);
    return o;
}
