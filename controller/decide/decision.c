/* decision.c - admission, then preference (see decision.h). */
#include "decision.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const char *dcn_outcome_name(enum dcn_outcome o)
{
    return o == DCN_STEP_PROPOSED ? "step_proposed" : "no_eligible_path";
}

static void admit(const struct sit_situation *s, const struct sit_candidate *c, int64_t t,
                  const struct evidence_rows *rows, struct dcn_candidate *d)
{
    d->path_id = c->path_id;
    cond_content(s, c, rows, t, &d->cond[COND_CONTENT]);
    cond_access(s, c, t, &d->cond[COND_ACCESS]);
    cond_qoe(s, c, t, &d->cond[COND_QOE]);
    cond_resources(s, c, t, &d->cond[COND_RESOURCES]);
    cond_cost(s, c, &d->cond[COND_COST], &d->cost);
    /* Eligible only when EVERY condition is PASS: nothing compensates. */
    d->eligible = true;
    for (int k = 0; k < COND_N; k++)
        d->eligible = d->eligible && d->cond[k].status == COND_PASS;
    assert(!d->eligible || d->cost.known);
}

int dcn_decide(const struct sit_situation *s, int64_t t_ms, const struct evidence_rows *rows,
               struct dcn_result *out)
{
    assert(s && rows && out && s->n_candidates <= SIT_MAX_CANDIDATES);
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    out->decision_time_ms = t_ms;
    out->c = calloc(s->n_candidates, sizeof *out->c);
    if (!out->c)
        return -1;
    out->n = s->n_candidates;
    struct pref_input in[SIT_MAX_CANDIDATES];
    size_t map[SIT_MAX_CANDIDATES], m = 0;
    for (size_t i = 0; i < s->n_candidates; i++) {
        struct dcn_candidate *d = &out->c[i];
        admit(s, &s->candidates[i], t_ms, rows, d);
        if (!d->eligible)
            continue;
        in[m] = (struct pref_input){d->path_id, d->cost.low, d->cost.high,
                                    s->candidates[i].qoe.startup_p90_ms};
        map[m++] = i;
    }
    pref_choose(in, m, &s->policy, &out->pref);
    if (out->pref.chosen >= 0) {
        out->chosen = (long)map[out->pref.chosen];
        assert(out->c[out->chosen].eligible);
        out->outcome = DCN_STEP_PROPOSED;
    }
    return 0;
}

void dcn_free(struct dcn_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        for (int k = 0; k < COND_N; k++)
            cond_result_clear(&r->c[i].cond[k]);
    free(r->c);
    json_decref(r->pref.trace);
    memset(r, 0, sizeof *r);
}
