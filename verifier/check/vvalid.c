/* vvalid.c - video validity by decode dependency (see vvalid.h). */
#include "vvalid.h"

#include <stdlib.h>
#include <string.h>

#include "ts33.h"

int vvalid_init(struct vvalid *v)
{
    memset(v, 0, sizeof *v);
    v->cap = 64;
    v->units = calloc((size_t)v->cap, sizeof *v->units);
    return v->units ? 0 : -1;
}

void vvalid_free(struct vvalid *v)
{
    free(v->units);
    v->units = NULL;
}

static struct vv_unit *unit(const struct vvalid *v, int64_t d)
{
    return &v->units[d % v->cap];
}

static void resolve(struct vvalid *v, struct vv_unit *u)
{
    if (u->resolved)
        return;
    u->resolved = true;
    if (!u->output && u->in_interval)
        v->dropped_in_interval++;
}

static void advance(struct vvalid *v)
{
    while (v->min_unresolved < v->next && unit(v, v->min_unresolved)->resolved)
        v->min_unresolved++;
    /* units below min_unresolved are final; keep a margin for late outputs */
    while (v->base < v->min_unresolved && v->min_unresolved - v->base > VV_MAX_CUTS)
        v->base++;
}

static int grow(struct vvalid *v)
{
    int64_t cap = v->cap * 2;
    struct vv_unit *n = calloc((size_t)cap, sizeof *n);
    if (!n)
        return -1;
    for (int64_t d = v->base; d < v->next; d++)
        n[d % cap] = v->units[d % v->cap];
    free(v->units);
    v->units = n;
    v->cap = cap;
    return 0;
}

int64_t vvalid_feed(struct vvalid *v, int64_t pts, bool preroll, bool in_interval, enum vv_cut cut)
{
    if (v->next - v->base >= v->cap && (v->cap >= VV_MAX_WINDOW || grow(v))) {
        /* the decoder holds far more than any DPB: give up on the oldest */
        v->anomaly = true;
        resolve(v, unit(v, v->base));
        advance(v);
        if (v->next - v->base >= v->cap)
            v->base++;
    }
    int64_t d = v->next++;
    *unit(v, d) = (struct vv_unit){.pts = pts, .preroll = preroll, .in_interval = in_interval};
    /* a picture not output while a whole DPB of later ones was decoded will not be */
    for (int64_t k = v->min_unresolved; k < d - VV_DROP_DISTANCE; k++)
        resolve(v, unit(v, k));
    advance(v);
    if (cut != VV_CUT_NONE) {
        int i = (v->cut_head + v->ncuts) % VV_MAX_CUTS;
        if (v->ncuts == VV_MAX_CUTS)
            v->cut_head = (v->cut_head + 1) % VV_MAX_CUTS;
        else
            v->ncuts++;
        v->cuts[i].d = d, v->cuts[i].pts = pts, v->cuts[i].kind = cut;
    }
    return d;
}

void vvalid_damage(struct vvalid *v, int64_t d)
{
    if (d >= v->base && d < v->next && unit(v, d)->preroll)
        return;
    for (int i = 0; i < v->ndamage; i++)
        if (v->damage[i] == d)
            return;
    if (v->ndamage == VV_MAX_DAMAGE) {
        v->saturated = true;
        return;
    }
    v->damage[v->ndamage++] = d;
}

void vvalid_output(struct vvalid *v, int64_t d, int64_t pts)
{
    if (d < v->base || d >= v->next) {
        v->anomaly = true;       /* a frame from no unit we fed, or long gone */
        return;
    }
    struct vv_unit *u = unit(v, d);
    if (u->output || u->resolved) {
        v->anomaly = true;       /* output twice, or after we concluded it never would be */
        return;
    }
    u->output = true;
    resolve(v, u);
    /* pre-roll pictures the decoder holds back (not recovered) never come
     * out: once a picture displayed after one has, it is given up.  Others
     * are not judged by their PTS (a wrong PTS does not reorder the
     * decoder's output), only by decode distance (vvalid_feed). */
    for (int64_t k = v->min_unresolved; k < v->next; k++) {
        struct vv_unit *o = unit(v, k);
        if (!o->resolved && o->preroll && o->pts >= 0 && pts >= 0 && ts33_diff(o->pts, pts) < 0)
            resolve(v, o);
    }
    advance(v);
}

bool vvalid_preroll(const struct vvalid *v, int64_t d)
{
    return d >= v->base && d < v->next && unit(v, d)->preroll;
}

void vvalid_force(struct vvalid *v, int64_t d)
{
    v->anomaly = true;
    for (int64_t k = v->min_unresolved; k <= d && k < v->next; k++)
        resolve(v, unit(v, k));
    advance(v);
}

void vvalid_flush(struct vvalid *v)
{
    for (int64_t k = v->min_unresolved; k < v->next; k++)
        resolve(v, unit(v, k));
    advance(v);
}

bool vvalid_final(const struct vvalid *v, int64_t d)
{
    return d < v->min_unresolved;
}

static bool cut_between(const struct vvalid *v, int64_t k, int64_t d, int64_t pts)
{
    for (int i = 0; i < v->ncuts; i++) {
        const int j = (v->cut_head + i) % VV_MAX_CUTS;
        if (v->cuts[j].d <= k || v->cuts[j].d > d)
            continue;
        if (v->cuts[j].kind == VV_CUT_IDR || (pts >= 0 && ts33_diff(pts, v->cuts[j].pts) >= 0))
            return true;
    }
    return false;
}

bool vvalid_valid(const struct vvalid *v, int64_t d, int64_t pts)
{
    if (v->anomaly || v->saturated)
        return false;
    for (int i = 0; i < v->ndamage; i++)
        if (v->damage[i] <= d && !cut_between(v, v->damage[i], d, pts))
            return false;
    return true;
}
