/* plan_gen.c - seeded instance generators (EUA and synthetic).
 *
 * Settings from the paper's section 4.1: D_m = 40 Mbps, C_m = 15 vCPU,
 * viewer-edge 5-15 ms, edge-edge 100-300 ms.  Ours where the paper's tables
 * were lost: the ladder (YouTube's live 360p/480p/720p/1080p averages), the
 * resolution mix, three streamers per instance, gifts.  docs/lua.md.
 */
#include "plan_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_algo.h"
#include "plan_geo.h"

static const double gen_ladder[] = {0.75, 1.0, 2.5, 4.5};
/* Share of viewers wanting / previously watching each rung (Twitch-like:
 * most watch 720p). */
static const double gen_mix[] = {0.10, 0.25, 0.40, 0.25};
#define GEN_RUNGS 4
#define GEN_STREAMERS 3

void plan_gen_opts_default(plan_gen_opts *o)
{
    o->users = 100;
    o->servers = 10;
    o->seed = 1;
    o->demand_lo = 0.0;
    o->demand_hi = 3.0;
    o->a = 5.0;
    o->capacity_scale = 1.0;
    o->overload = 0.0;
}

static double uniform(plan_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * plan_rng_uniform(r);
}

static double pick_rung(plan_rng *r)
{
    double u = plan_rng_uniform(r), acc = 0.0;
    for (int i = 0; i < GEN_RUNGS; i++) {
        acc += gen_mix[i];
        if (u < acc)
            return gen_ladder[i];
    }
    return gen_ladder[GEN_RUNGS - 1];
}

static int alloc_instance(plan_instance *in, const plan_gen_opts *o)
{
    memset(in, 0, sizeof *in);
    plan_params_default(&in->p);
    in->p.a = o->a;
    memcpy(in->ladder, gen_ladder, sizeof gen_ladder);
    in->n_rungs = GEN_RUNGS;
    in->servers = calloc((size_t)o->servers, sizeof *in->servers);
    in->edge_ms = calloc((size_t)o->servers * (size_t)o->servers, sizeof *in->edge_ms);
    in->viewers = calloc((size_t)o->users, sizeof *in->viewers);
    if (!in->servers || !in->edge_ms || !in->viewers)
        return -1;
    in->n_servers = o->servers;
    return 0;
}

static void gen_servers_common(plan_instance *in, const plan_gen_opts *o, plan_rng *r)
{
    int n = in->n_servers;
    for (int m = 0; m < n; m++) {
        plan_server *s = &in->servers[m];
        snprintf(s->id, sizeof s->id, "s%d", m + 1);
        s->bandwidth_mbps = 40.0 * o->capacity_scale;
        s->vcpu = 15.0 * o->capacity_scale;
        s->admit = PLAN_ADMIT_PASS;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            in->edge_ms[(size_t)i * n + j] = in->edge_ms[(size_t)j * n + i] =
                uniform(r, 100.0, 300.0);
}

/* Links of a viewer at (lat, lon) to every server within the radius. */
static int gen_links(plan_instance *in, plan_viewer *w, plan_rng *r)
{
    w->links = calloc((size_t)in->n_servers, sizeof *w->links);
    if (!w->links)
        return -1;
    for (int m = 0; m < in->n_servers; m++)
        if (plan_geo_covers(w->lat, w->lon, in->servers[m].lat, in->servers[m].lon,
                            in->p.radius_m))
            w->links[w->n_links++] = (plan_link){m, uniform(r, 5.0, 15.0)};
    return 0;
}

static void gen_viewer_state(plan_instance *in, const plan_gen_opts *o, plan_viewer *w,
                             const int *streamer_edge, const double *uplink, plan_rng *r)
{
    int room = plan_rng_below(r, GEN_STREAMERS);
    w->streamer_edge = streamer_edge[room];
    w->uplink_ms = uplink[room];
    w->freq = uniform(r, o->demand_lo, o->demand_hi) / in->p.gamma;
    w->gift = plan_rng_uniform(r) < 0.3 ? -50.0 * log(1.0 - plan_rng_uniform(r)) : 0.0;
    w->expected_mbps = pick_rung(r);
    w->prev_mbps = pick_rung(r);
    w->prev_server = w->n_links > 0 ? w->links[plan_rng_below(r, w->n_links)].server : -1;
}

static void gen_streamers(const plan_instance *in, plan_rng *r, int *edge, double *uplink)
{
    for (int b = 0; b < GEN_STREAMERS; b++) {
        edge[b] = plan_rng_below(r, in->n_servers);
        uplink[b] = uniform(r, 5.0, 15.0);
    }
}

static plan_gen_status bad_opts(const plan_gen_opts *o, char *err, size_t err_len)
{
    if (o->users < 1 || o->users > PLAN_MAX_VIEWERS || o->servers < 1 ||
        o->servers > 10000 || o->demand_lo < 0 || o->demand_hi < o->demand_lo ||
        o->capacity_scale <= 0) {
        snprintf(err, err_len, "generator: need users >= 1, 1 <= servers <= 10000, "
                 "0 <= demand lo <= hi, capacity scale > 0");
        return PLAN_GEN_INVALID;
    }
    return PLAN_GEN_OK;
}

typedef struct { double d; int i; } dist_idx;

static int by_dist(const void *a, const void *b)
{
    const dist_idx *x = a, *y = b;
    return (x->d > y->d) - (x->d < y->d);
}

/* The o->servers sites nearest a random site (ties by index). */
static int nearest_sites(const plan_points *sites, int k, plan_rng *r, int *out)
{
    dist_idx *d = malloc((size_t)sites->n * sizeof *d);
    if (!d)
        return -1;
    int c = plan_rng_below(r, sites->n);
    for (int s = 0; s < sites->n; s++) {
        d[s].i = s;
        if (!plan_geo_vincenty(sites->lat[c], sites->lon[c], sites->lat[s], sites->lon[s], &d[s].d))
            d[s].d = INFINITY;
    }
    qsort(d, (size_t)sites->n, sizeof *d, by_dist);
    for (int i = 0; i < k; i++)
        out[i] = d[i].i;
    free(d);
    return 0;
}

/* Users covered by >= min_cover of the chosen servers. */
static int covered_users(const plan_instance *in, const plan_points *users, int min_cover,
                         int *out)
{
    int n = 0;
    for (int u = 0; u < users->n; u++) {
        int c = 0;
        for (int m = 0; m < in->n_servers; m++)
            c += plan_geo_covers(users->lat[u], users->lon[u], in->servers[m].lat,
                                 in->servers[m].lon, in->p.radius_m);
        if (c >= min_cover)
            out[n++] = u;
    }
    return n;
}

static plan_gen_status eua_viewers(plan_instance *in, const plan_points *users,
                                   const plan_gen_opts *o, plan_rng *r)
{
    int edge[GEN_STREAMERS];
    double up[GEN_STREAMERS];
    int *pool = malloc((size_t)(users->n ? users->n : 1) * sizeof *pool);
    if (!pool)
        return PLAN_GEN_NOMEM;
    int n = covered_users(in, users, 2, pool);
    if (n < o->users)
        n = covered_users(in, users, 1, pool);
    if (n == 0) {
        free(pool);
        return PLAN_GEN_INVALID;
    }
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int j = plan_rng_below(r, i + 1), t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
    }
    gen_streamers(in, r, edge, up);
    for (int v = 0; v < o->users; v++) {
        plan_viewer *w = &in->viewers[v];
        int u = pool[v < n ? v : plan_rng_below(r, n)]; /* reuse if too few */
        snprintf(w->id, sizeof w->id, "v%d", v + 1);
        w->lat = users->lat[u];
        w->lon = users->lon[u];
        in->n_viewers = v + 1;
        if (gen_links(in, w, r) != 0) {
            free(pool);
            return PLAN_GEN_NOMEM;
        }
        gen_viewer_state(in, o, w, edge, up, r);
    }
    free(pool);
    return PLAN_GEN_OK;
}

plan_gen_status plan_gen_eua(const plan_points *sites, const plan_points *users,
                             const plan_gen_opts *o, plan_instance *out, char *err,
                             size_t err_len)
{
    if (bad_opts(o, err, err_len) != PLAN_GEN_OK)
        return PLAN_GEN_INVALID;
    if (o->servers > sites->n || users->n == 0) {
        snprintf(err, err_len, "generator: the data set has %d sites and %d users", sites->n,
                 users->n);
        return PLAN_GEN_INVALID;
    }
    plan_rng r;
    plan_rng_seed(&r, o->seed);
    int *pick = malloc((size_t)o->servers * sizeof *pick);
    plan_gen_status st = PLAN_GEN_NOMEM;
    if (pick && alloc_instance(out, o) == 0 && nearest_sites(sites, o->servers, &r, pick) == 0) {
        gen_servers_common(out, o, &r);
        for (int m = 0; m < o->servers; m++) {
            out->servers[m].lat = sites->lat[pick[m]];
            out->servers[m].lon = sites->lon[pick[m]];
        }
        st = eua_viewers(out, users, o, &r);
        if (st == PLAN_GEN_INVALID)
            snprintf(err, err_len, "generator: no user is covered by the chosen servers");
    }
    free(pick);
    if (st != PLAN_GEN_OK)
        plan_instance_free(out);
    else
        plan_instance_derive(out);
    return st;
}

/* Metres east/north of a Melbourne origin to degrees (small-area approx). */
static void local_to_deg(double x, double y, double *lat, double *lon)
{
    const double lat0 = -37.8136, lon0 = 144.9631;
    *lat = lat0 + y / 111320.0;
    *lon = lon0 + x / (111320.0 * cos(lat0 * M_PI / 180.0));
}

/* o->users viewers placed uniformly in the box {x0, x1, y0, y1} (metres),
 * with their links and state; -1 without memory (out is freed then). */
static int gen_viewers(plan_instance *out, const plan_gen_opts *o, plan_rng *r, const int *edge,
                       const double *up, const double box[4])
{
    for (int v = 0; v < o->users; v++) {
        plan_viewer *w = &out->viewers[v];
        snprintf(w->id, sizeof w->id, "v%d", v + 1);
        local_to_deg(uniform(r, box[0], box[1]), uniform(r, box[2], box[3]), &w->lat, &w->lon);
        out->n_viewers = v + 1;
        if (gen_links(out, w, r) != 0) {
            plan_instance_free(out);
            return -1;
        }
        gen_viewer_state(out, o, w, edge, up, r);
    }
    return 0;
}

plan_gen_status plan_gen_synthetic(const plan_gen_opts *o, plan_instance *out, char *err,
                                   size_t err_len)
{
    if (bad_opts(o, err, err_len) != PLAN_GEN_OK)
        return PLAN_GEN_INVALID;
    plan_rng r;
    int edge[GEN_STREAMERS];
    double up[GEN_STREAMERS];
    plan_rng_seed(&r, o->seed);
    if (alloc_instance(out, o) != 0) {
        plan_instance_free(out);
        return PLAN_GEN_NOMEM;
    }
    /* Area such that a viewer sees about 15 servers on average. */
    double side = sqrt(o->servers * M_PI * out->p.radius_m * out->p.radius_m / 15.0);
    gen_servers_common(out, o, &r);
    for (int m = 0; m < o->servers; m++)
        local_to_deg(uniform(&r, 0, side), uniform(&r, 0, side), &out->servers[m].lat,
                     &out->servers[m].lon);
    gen_streamers(out, &r, edge, up);
    if (gen_viewers(out, o, &r, edge, up, (const double[4]){0, side, 0, side}) != 0)
        return PLAN_GEN_NOMEM;
    plan_instance_derive(out);
    return PLAN_GEN_OK;
}

double plan_demand_ratio(const plan_instance *in)
{
    double h = in->p.h_vcpu_per_mbps, cap = 0.0;
    if (h <= 0.0)
        return INFINITY;
    for (int m = 0; m < in->n_servers; m++)
        cap += in->servers[m].bandwidth_mbps + in->servers[m].vcpu / h;
    double demand = in->n_viewers * in->ladder[in->n_rungs - 1];
    return cap > 0.0 ? demand / cap : INFINITY;
}

#define OVERLOAD_SPACING_M 350.0 /* < 2 x 300 m radius: neighbours overlap */

/* Uneven capacities, then one common factor so the ratio is exact. */
static void overload_capacity(plan_instance *in, const plan_gen_opts *o, plan_rng *r)
{
    for (int m = 0; m < in->n_servers; m++) {
        in->servers[m].bandwidth_mbps *= uniform(r, 0.5, 1.5);
        in->servers[m].vcpu *= uniform(r, 0.5, 1.5);
    }
    double f = plan_demand_ratio(in) / o->overload;
    for (int m = 0; m < in->n_servers; m++) {
        in->servers[m].bandwidth_mbps *= f;
        in->servers[m].vcpu *= f;
    }
}

plan_gen_status plan_gen_overload(const plan_gen_opts *o, plan_instance *out, char *err,
                                  size_t err_len)
{
    if (bad_opts(o, err, err_len) != PLAN_GEN_OK)
        return PLAN_GEN_INVALID;
    if (!(o->overload > 0.0) || !isfinite(o->overload)) {
        snprintf(err, err_len, "generator: the overload ratio must be > 0");
        return PLAN_GEN_INVALID;
    }
    plan_rng r;
    int edge[GEN_STREAMERS];
    double up[GEN_STREAMERS];
    plan_rng_seed(&r, o->seed);
    if (alloc_instance(out, o) != 0) {
        plan_instance_free(out);
        return PLAN_GEN_NOMEM;
    }
    gen_servers_common(out, o, &r);
    for (int m = 0; m < o->servers; m++)
        local_to_deg(m * OVERLOAD_SPACING_M, 0.0, &out->servers[m].lat, &out->servers[m].lon);
    gen_streamers(out, &r, edge, up);
    /* Viewers within 250 m of the street's ends stay covered (< 300 m). */
    double lo = -250.0, hi = (o->servers - 1) * OVERLOAD_SPACING_M + 250.0;
    if (gen_viewers(out, o, &r, edge, up, (const double[4]){lo, hi, -50.0, 50.0}) != 0)
        return PLAN_GEN_NOMEM;
    plan_instance_derive(out);
    overload_capacity(out, o, &r);
    return PLAN_GEN_OK;
}
