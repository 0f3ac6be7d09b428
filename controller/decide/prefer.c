/* prefer.c - cost, then comparable QoE, then fixed order (see prefer.h). */
#include "prefer.h"

#include <assert.h>
#include <string.h>

#include "num.h"

const char *pref_rule_name(enum pref_rule r)
{
    return r == PREF_COST ? "cost" : r == PREF_QOE ? "qoe" : r == PREF_ORDER ? "order" : NULL;
}

static json_t *money(cost_pico p)
{
    return num_to_json(cost_to_micro(p));
}

/* Step 1: keep[i] stays true unless i is established dearer than some j. */
static size_t by_cost(const struct pref_input *in, size_t n, cost_pico tie, bool *keep,
                      json_t *trace)
{
    json_t *dropped = json_array();
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        keep[i] = true;
        for (size_t j = 0; j < n && keep[i]; j++)
            if (j != i && in[i].low > in[j].high + tie) {
                keep[i] = false;
                json_array_append_new(
                    dropped, json_pack("{s:s,s:s,s:o,s:o}", "path_id", in[i].path_id,
                                       "dearer_than", in[j].path_id, "its_low", money(in[i].low),
                                       "other_high", money(in[j].high)));
            }
        left += keep[i];
    }
    json_array_append_new(trace, json_pack("{s:s,s:o}", "rule", "cost", "dropped", dropped));
    return left;
}

/* Step 2: among keep[], keep those within startup_tie_ms of the best p90. */
static size_t by_qoe(const struct pref_input *in, size_t n, int64_t tie, bool *keep, json_t *trace)
{
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (keep[i] && in[i].startup_p90_ms < best)
            best = in[i].startup_p90_ms;
    json_t *dropped = json_array();
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        /* both <= 1e18 micro: the sum cannot overflow */
        if (in[i].startup_p90_ms > best + tie) {
            keep[i] = false;
            json_array_append_new(dropped,
                                  json_pack("{s:s,s:o,s:o}", "path_id", in[i].path_id,
                                            "startup_p90_ms", num_to_json(in[i].startup_p90_ms),
                                            "best_p90_ms", num_to_json(best)));
        }
        left += keep[i];
    }
    json_array_append_new(trace, json_pack("{s:s,s:o}", "rule", "qoe", "dropped", dropped));
    return left;
}

static size_t rank(const struct sit_policy *p, const char *id)
{
    for (size_t k = 0; k < p->n_order; k++)
        if (!strcmp(p->order[k], id))
            return k;
    return p->n_order; /* cannot happen: sit_parse checks every id is listed */
}

static long first_kept(const bool *keep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (keep[i])
            return (long)i;
    return -1;
}

void pref_choose(const struct pref_input *in, size_t n, const struct sit_policy *p,
                 struct pref_result *out)
{
    assert(n <= SIT_MAX_CANDIDATES);
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    out->trace = json_array();
    if (n == 0)
        return;
    bool keep[SIT_MAX_CANDIDATES];
    size_t left = by_cost(in, n, (cost_pico)p->tie_abs * COST_PICO_PER_MICRO, keep, out->trace);
    assert(left >= 1); /* the candidate with the lowest high is never dropped */
    if (left == 1) {
        out->chosen = first_kept(keep, n);
        out->rule = PREF_COST;
        return;
    }
    left = by_qoe(in, n, p->qoe.startup_tie_ms, keep, out->trace);
    assert(left >= 1);
    if (left == 1) {
        out->chosen = first_kept(keep, n);
        out->rule = PREF_QOE;
        return;
    }
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (keep[i] && (best == SIZE_MAX || rank(p, in[i].path_id) < rank(p, in[best].path_id)))
            best = i;
    json_array_append_new(out->trace, json_pack("{s:s,s:s}", "rule", "order", "first",
                                                in[best].path_id));
    out->chosen = (long)best;
    out->rule = PREF_ORDER;
}
