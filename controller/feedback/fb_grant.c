/* fb_grant.c - the step of one grant, as fb_run needs it (see feedback.h):
 * the grant, its decision's recorded situation with the commitments that
 * decision took from the ledger, the size of the next step.  Read with
 * plain reads, outside `next`'s write transaction, so that Prometheus's
 * answer time never holds control.db's write lock. */
#include "feedback.h"

#include <stdlib.h>
#include <string.h>

#include "grant.h"
#include "ledger.h"
#include "loop_policy.h"
#include "record.h"

struct loaded {
    struct grt_grant g;
    struct rec_loaded l;
    struct sit_situation s;
    bool parsed;
};

static void loaded_free(struct loaded *x)
{
    rec_loaded_free(&x->l);
    if (x->parsed)
        sit_free(&x->s);
    free(x);
}

/* 0 with st filled, 1 nothing to review here (no grant, no allocation, a
 * decision that cannot be read: `next` says why), -1 error. */
static int load_step(sqlite3 *db, const char *grant_id, int64_t now_ms, struct loaded *x,
                     struct fb_step *st)
{
    char err[512];
    struct lpol lp;
    int g = grt_load(db, grant_id, &x->g);
    if (g != 0)
        return g == 1 ? 1 : -1;
    if (!x->g.has_first_allocation || rec_load(db, x->g.decision_id, &x->l, err, sizeof err) !=
                                          REC_OK)
        return 1;
    if (sit_parse(x->l.situation, x->l.situation_len, &x->s, err, sizeof err) != 0)
        return 1;
    x->parsed = true;
    if (lpol_parse(x->l.situation, x->l.situation_len, &x->s, &lp, err, sizeof err) != 0 ||
        ldg_apply(&x->s, &x->l.fills, err, sizeof err) != 0)
        return 1;
    *st = (struct fb_step){x->l.situation, x->l.situation_len, &x->s, x->g.path_id,
                           x->g.first_allocation_ms, now_ms, x->g.max_allocations,
                           lpol_grow(x->g.max_allocations, lp.steps_factor_micro,
                                     lp.steps_max_allocations),
                           x->s.action.window_s};
    return 0;
}

int fb_for_grant(sqlite3 *db, const char *grant_id, int64_t now_ms, const json_t *recorded,
                 struct fb_result *out)
{
    memset(out, 0, sizeof *out);
    struct loaded *x = calloc(1, sizeof *x);
    struct fb_step st;
    if (!x)
        return -1;
    int rc = load_step(db, grant_id, now_ms, x, &st);
    if (rc == 0)
        rc = recorded ? fb_recheck(&st, recorded, out) : fb_run(&st, out);
    loaded_free(x);
    return rc < 0 ? -1 : 0;
}
