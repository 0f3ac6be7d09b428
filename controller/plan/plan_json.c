/* plan_json.c - PLAN.json loading (validated) and result output. */
#include "plan_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_geo.h"

typedef struct {
    char *err;
    size_t len;
} errbuf;

static bool fail(errbuf *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err, e->len, fmt, ap);
    va_end(ap);
    return false;
}

/* A finite number in [lo, hi]; absent -> *out = dflt unless required. */
static bool get_num(json_t *obj, const char *key, const char *path, bool required,
                    double lo, double hi, double dflt, double *out, errbuf *e)
{
    json_t *j = json_object_get(obj, key);
    if (!j || json_is_null(j)) {
        if (required)
            return fail(e, "%s.%s: missing (a number is required)", path, key);
        *out = dflt;
        return true;
    }
    if (!json_is_number(j))
        return fail(e, "%s.%s: must be a number", path, key);
    double x = json_number_value(j);
    if (!isfinite(x) || x < lo || x > hi)
        return fail(e, "%s.%s: %g is outside [%g, %g]", path, key, x, lo, hi);
    *out = x;
    return true;
}

static bool get_id(json_t *obj, const char *key, const char *path, char *dst, errbuf *e)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s || !*s || strlen(s) >= PLAN_ID_MAX)
        return fail(e, "%s.%s: must be a non-empty string of at most %d bytes", path, key,
                    PLAN_ID_MAX - 1);
    memcpy(dst, s, strlen(s) + 1);
    return true;
}

static int server_index(const plan_instance *in, const char *id)
{
    for (int m = 0; m < in->n_servers; m++)
        if (id && strcmp(in->servers[m].id, id) == 0)
            return m;
    return -1;
}

/* A server id field: the index of an existing server, or an error. */
static bool get_server_ref(const plan_instance *in, json_t *obj, const char *key,
                           const char *path, bool nullable, int *out, errbuf *e)
{
    json_t *j = json_object_get(obj, key);
    if (nullable && (!j || json_is_null(j))) {
        *out = -1;
        return true;
    }
    int m = server_index(in, json_string_value(j));
    if (m < 0)
        return fail(e, "%s.%s: must name a server id", path, key);
    *out = m;
    return true;
}

static bool parse_params(json_t *root, plan_params *p, errbuf *e)
{
    json_t *o = json_object_get(root, "params");
    plan_params_default(p);
    if (!o)
        return true;
    if (!json_is_object(o))
        return fail(e, "params: must be an object");
    const double big = 1e9;
    return get_num(o, "a", "params", false, 0, big, p->a, &p->a, e) &&
           get_num(o, "b", "params", false, 0, big, p->b, &p->b, e) &&
           get_num(o, "c", "params", false, 0, big, p->c, &p->c, e) &&
           get_num(o, "d", "params", false, 0, big, p->d, &p->d, e) &&
           get_num(o, "beta_ms", "params", false, 1e-6, big, p->beta_ms, &p->beta_ms, e) &&
           get_num(o, "g_ms_per_mbps", "params", false, 0, big, p->g_ms_per_mbps,
                   &p->g_ms_per_mbps, e) &&
           get_num(o, "h_vcpu_per_mbps", "params", false, 0, big, p->h_vcpu_per_mbps,
                   &p->h_vcpu_per_mbps, e) &&
           get_num(o, "gamma", "params", false, 0, big, p->gamma, &p->gamma, e) &&
           get_num(o, "alpha", "params", false, 0, big, p->alpha, &p->alpha, e) &&
           get_num(o, "k", "params", false, 0, big, p->k, &p->k, e) &&
           get_num(o, "radius_m", "params", false, 0, 1e7, p->radius_m, &p->radius_m, e) &&
           get_num(o, "viewer_edge_ms", "params", false, 0, big, p->viewer_edge_ms,
                   &p->viewer_edge_ms, e) &&
           get_num(o, "unserved_qoe", "params", false, -big, big, p->unserved_qoe,
                   &p->unserved_qoe, e);
}

static bool parse_ladder(json_t *root, plan_instance *in, errbuf *e)
{
    json_t *a = json_object_get(root, "ladder_mbps");
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n < 1 || n > PLAN_MAX_RUNGS)
        return fail(e, "ladder_mbps: must be an array of 1..%d bitrates", PLAN_MAX_RUNGS);
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_array_get(a, i);
        double x = json_number_value(j);
        if (!json_is_number(j) || !isfinite(x) || x <= 0 || x > 1e6)
            return fail(e, "ladder_mbps[%zu]: must be a positive number", i);
        if (i > 0 && x <= in->ladder[i - 1])
            return fail(e, "ladder_mbps[%zu]: must be strictly ascending", i);
        in->ladder[i] = x;
    }
    in->n_rungs = (int)n;
    return true;
}

static bool parse_server(json_t *o, int m, plan_server *s, errbuf *e)
{
    char path[48];
    snprintf(path, sizeof path, "servers[%d]", m);
    if (!json_is_object(o))
        return fail(e, "%s: must be an object", path);
    s->admit = PLAN_ADMIT_PASS; /* no admission object: the paper's setting */
    return get_id(o, "id", path, s->id, e) &&
           get_num(o, "lat", path, false, -90, 90, NAN, &s->lat, e) &&
           get_num(o, "lon", path, false, -180, 180, NAN, &s->lon, e) &&
           get_num(o, "bandwidth_mbps", path, true, 0, 1e9, 0, &s->bandwidth_mbps, e) &&
           get_num(o, "vcpu", path, true, 0, 1e9, 0, &s->vcpu, e);
}

static bool parse_servers(json_t *root, plan_instance *in, errbuf *e)
{
    json_t *a = json_object_get(root, "servers");
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n > PLAN_MAX_SERVERS)
        return fail(e, "servers: must be an array of at most %d servers", PLAN_MAX_SERVERS);
    in->servers = calloc(n ? n : 1, sizeof *in->servers);
    in->edge_ms = calloc(n > 0 ? n * n : 1, sizeof *in->edge_ms);
    if (!in->servers || !in->edge_ms)
        return fail(e, "out of memory");
    for (size_t m = 0; m < n; m++) {
        if (!parse_server(json_array_get(a, m), (int)m, &in->servers[m], e))
            return false;
        if (server_index(in, in->servers[m].id) >= 0)
            return fail(e, "servers[%zu].id: duplicate id \"%s\"", m, in->servers[m].id);
        in->n_servers = (int)m + 1;
    }
    return true;
}

static bool parse_edge_matrix(json_t *root, plan_instance *in, errbuf *e)
{
    json_t *a = json_object_get(root, "edge_latency_ms");
    size_t n = (size_t)in->n_servers;
    if (!a && n <= 1)
        return true; /* a single server needs no edge-edge latency */
    if (!json_is_array(a) || json_array_size(a) != n)
        return fail(e, "edge_latency_ms: must be a %zu x %zu array of arrays", n, n);
    for (size_t i = 0; i < n; i++) {
        json_t *row = json_array_get(a, i);
        if (!json_is_array(row) || json_array_size(row) != n)
            return fail(e, "edge_latency_ms[%zu]: must be an array of %zu numbers", i, n);
        for (size_t j = 0; j < n; j++) {
            json_t *x = json_array_get(row, j);
            double ms = json_number_value(x);
            if (!json_is_number(x) || !isfinite(ms) || ms < 0 || ms > 1e7)
                return fail(e, "edge_latency_ms[%zu][%zu]: must be a number in [0, 1e7]", i, j);
            in->edge_ms[i * n + j] = ms;
        }
    }
    return true;
}

/* "admission": {"server id": "PASS" | anything else}.  Present = a mask:
 * only servers listed as exactly "PASS" may be assigned. */
static bool parse_admission(json_t *root, plan_instance *in, errbuf *e)
{
    json_t *o = json_object_get(root, "admission");
    if (!o || json_is_null(o))
        return true;
    if (!json_is_object(o))
        return fail(e, "admission: must be an object of server id -> verdict");
    const char *key;
    json_t *val;
    for (int m = 0; m < in->n_servers; m++)
        in->servers[m].admit = PLAN_ADMIT_DENIED;
    json_object_foreach(o, key, val) {
        int m = server_index(in, key);
        if (m < 0)
            return fail(e, "admission.%s: not a server id", key);
        if (!json_is_string(val))
            return fail(e, "admission.%s: must be a verdict string (PASS, FAIL, UNKNOWN)", key);
        if (strcmp(json_string_value(val), "PASS") == 0)
            in->servers[m].admit = PLAN_ADMIT_PASS;
    }
    return true;
}

static bool parse_links(json_t *o, const char *path, plan_instance *in, plan_viewer *w,
                        errbuf *e)
{
    json_t *a = json_object_get(o, "links");
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n > (size_t)in->n_servers)
        return fail(e, "%s.links: must be an array of at most one link per server", path);
    w->links = calloc(n ? n : 1, sizeof *w->links);
    if (!w->links)
        return fail(e, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char lp[96];
        json_t *l = json_array_get(a, i);
        snprintf(lp, sizeof lp, "%s.links[%zu]", path, i);
        if (!json_is_object(l))
            return fail(e, "%s: must be an object", lp);
        plan_link *k = &w->links[i];
        if (!get_server_ref(in, l, "server", lp, false, &k->server, e) ||
            !get_num(l, "latency_ms", lp, true, 0, 1e7, 0, &k->latency_ms, e))
            return false;
        for (size_t j = 0; j < i; j++)
            if (w->links[j].server == k->server)
                return fail(e, "%s.server: duplicate link", lp);
        w->n_links = (int)i + 1;
    }
    return true;
}

/* No "links": M(v) = servers within radius_m (WGS-84 geodesic). */
static bool geometric_links(const char *path, plan_instance *in, plan_viewer *w, errbuf *e)
{
    if (!plan_geo_valid(w->lat, w->lon))
        return fail(e, "%s: needs lat and lon, or links", path);
    w->links = calloc((size_t)(in->n_servers ? in->n_servers : 1), sizeof *w->links);
    if (!w->links)
        return fail(e, "out of memory");
    for (int m = 0; m < in->n_servers; m++) {
        const plan_server *s = &in->servers[m];
        if (!plan_geo_valid(s->lat, s->lon))
            return fail(e, "servers[%d]: needs lat and lon (viewer %s has no links)", m, w->id);
        if (plan_geo_covers(w->lat, w->lon, s->lat, s->lon, in->p.radius_m))
            w->links[w->n_links++] = (plan_link){m, in->p.viewer_edge_ms};
    }
    return true;
}

static bool parse_viewer(json_t *o, int v, plan_instance *in, errbuf *e)
{
    char path[48];
    plan_viewer *w = &in->viewers[v];
    snprintf(path, sizeof path, "viewers[%d]", v);
    if (!json_is_object(o))
        return fail(e, "%s: must be an object", path);
    w->prev_mbps = -1.0;
    if (!get_id(o, "id", path, w->id, e) ||
        !get_num(o, "lat", path, false, -90, 90, NAN, &w->lat, e) ||
        !get_num(o, "lon", path, false, -180, 180, NAN, &w->lon, e) ||
        !get_num(o, "interaction_freq", path, true, 0, 1e9, 0, &w->freq, e) ||
        !get_num(o, "gift", path, false, 0, 1e15, 0, &w->gift, e) ||
        !get_num(o, "expected_mbps", path, true, 1e-6, 1e6, 0, &w->expected_mbps, e) ||
        !get_num(o, "prev_mbps", path, false, 1e-6, 1e6, -1.0, &w->prev_mbps, e) ||
        !get_server_ref(in, o, "prev_server", path, true, &w->prev_server, e) ||
        !get_server_ref(in, o, "streamer_edge", path, false, &w->streamer_edge, e) ||
        !get_num(o, "streamer_uplink_ms", path, false, 0, 1e7, 0, &w->uplink_ms, e))
        return false;
    if (json_object_get(o, "links"))
        return parse_links(o, path, in, w, e);
    return geometric_links(path, in, w, e);
}

static bool parse_viewers(json_t *root, plan_instance *in, errbuf *e)
{
    json_t *a = json_object_get(root, "viewers");
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n > PLAN_MAX_VIEWERS)
        return fail(e, "viewers: must be an array of at most %d viewers", PLAN_MAX_VIEWERS);
    in->viewers = calloc(n ? n : 1, sizeof *in->viewers);
    if (!in->viewers)
        return fail(e, "out of memory");
    for (size_t v = 0; v < n; v++) {
        in->n_viewers = (int)v + 1; /* owns links from here on, even on failure */
        if (!parse_viewer(json_array_get(a, v), (int)v, in, e))
            return false;
    }
    return true;
}

plan_load_status plan_json_parse(json_t *root, plan_instance *in, char *err, size_t err_len)
{
    errbuf e = {err, err_len};
    memset(in, 0, sizeof *in);
    if (!json_is_object(root)) {
        fail(&e, "(top level): must be a JSON object");
        return PLAN_LOAD_INVALID;
    }
    bool ok = parse_params(root, &in->p, &e) && parse_ladder(root, in, &e) &&
              parse_servers(root, in, &e) && parse_edge_matrix(root, in, &e) &&
              parse_admission(root, in, &e) && parse_viewers(root, in, &e);
    if (!ok) {
        plan_instance_free(in);
        return strcmp(err, "out of memory") == 0 ? PLAN_LOAD_NOMEM : PLAN_LOAD_INVALID;
    }
    plan_instance_derive(in);
    return PLAN_LOAD_OK;
}

plan_load_status plan_json_load_file(const char *path, plan_instance *in, char *err,
                                     size_t err_len)
{
    plan_load_status st = PLAN_LOAD_INVALID;
    size_t len = 0;
    memset(in, 0, sizeof *in);
    plan_read_status rs;
    /* At most PLAN_INPUT_MAX_BYTES: the input may be anything a user names. */
    char *buf = plan_read_file(path, PLAN_INPUT_MAX_BYTES, &len, &rs, err, err_len);
    if (!buf)
        return rs == PLAN_READ_NOFILE ? PLAN_LOAD_NOFILE : rs == PLAN_READ_NOMEM ? PLAN_LOAD_NOMEM : PLAN_LOAD_INVALID;
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    free(buf);
    if (!root) {
        snprintf(err, err_len, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column,
                 je.text);
        return PLAN_LOAD_INVALID;
    }
    st = plan_json_parse(root, in, err, err_len);
    json_decref(root);
    return st;
}
