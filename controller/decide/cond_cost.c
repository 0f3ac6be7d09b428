/* cond_cost.c - the budget condition and the cost range for preference.
 *
 * dCost = F(baseline + step) - F(baseline) for step_usage.low and .high.
 * VIOLATION when the high end exceeds policy.cost.budget_per_step: the
 * budget must hold for the whole forecast range, not just its likely part.
 * UNKNOWN when cost data is missing, in another currency, or the contract
 * cannot price the usage (unpriced category or beyond the last tier).
 */
#include "cond.h"

#include <string.h>

#include "num.h"

static json_t *money(cost_pico p)
{
    return num_to_json(cost_to_micro(p));
}

/* Per category: the usage and the dCost range it contributes. */
static json_t *categories_json(const struct sit_cost *k)
{
    json_t *a = json_array();
    for (size_t i = 0; i < k->n_categories; i++) {
        const struct sit_category *c = &k->categories[i];
        cost_pico b, lo, hi;
        json_t *o = json_pack("{s:s,s:o,s:o,s:o}", "name", c->name, "baseline",
                              num_to_json(c->baseline), "step_low", num_to_json(c->step_low),
                              "step_high", num_to_json(c->step_high));
        if (cost_category_f(c, c->baseline, &b) == 0 &&
            cost_category_f(c, c->baseline + c->step_low, &lo) == 0 &&
            cost_category_f(c, c->baseline + c->step_high, &hi) == 0) {
            json_object_set_new(o, "delta_low", money(lo - b));
            json_object_set_new(o, "delta_high", money(hi - b));
        }
        json_array_append_new(a, o);
    }
    return a;
}

void cond_cost(const struct sit_situation *s, const struct sit_candidate *c,
               struct cond_result *out, struct cond_cost_range *range)
{
    memset(out, 0, sizeof *out);
    memset(range, 0, sizeof *range);
    const struct sit_cost *k = &c->cost;
    out->data = json_pack("{s:s,s:o,s:o}", "currency", s->policy.currency, "budget_per_step",
                          num_to_json(s->policy.budget_per_step), "tie_abs",
                          num_to_json(s->policy.tie_abs));
    if (!k->present || !k->has_currency) {
        cond_set(out, COND_UNKNOWN, "cost_missing", "no cost model for path %s", c->path_id);
        return;
    }
    if (strcmp(k->currency, s->policy.currency)) {
        json_object_set_new(out->data, "candidate_currency", json_string(k->currency));
        cond_set(out, COND_UNKNOWN, "cost_currency_mismatch",
                 "cost is in %s, the policy budget in %s", k->currency, s->policy.currency);
        return;
    }
    if (k->unpriced[0]) {
        cond_set(out, COND_UNKNOWN, "cost_unpriced_category",
                 "usage category %s has no price in the contract", k->unpriced);
        return;
    }
    cost_pico low, high;
    if (cost_delta(k, false, &low) < 0 || cost_delta(k, true, &high) < 0) {
        cond_set(out, COND_UNKNOWN, "cost_beyond_contract",
                 "usage exceeds the last bounded tier of the contract");
        return;
    }
    json_object_set_new(out->data, "categories", categories_json(k));
    range->known = true;
    range->low = low;
    range->high = high;
    json_object_set_new(out->data, "delta_cost",
                        json_pack("{s:o,s:o}", "low", money(low), "high", money(high)));
    cost_pico budget = (cost_pico)s->policy.budget_per_step * COST_PICO_PER_MICRO;
    char lo[64], hi[64]; /* exact: the sentence shows what was compared */
    cost_format(low, lo, sizeof lo);
    cost_format(high, hi, sizeof hi);
    if (high > budget)
        cond_set(out, COND_VIOLATION, "cost_over_budget",
                 "dCost up to %s %s exceeds the budget per step", hi, s->policy.currency);
    else
        cond_set(out, COND_PASS, "cost_within_budget", "dCost %s..%s %s is within the budget", lo,
                 hi, s->policy.currency);
}
