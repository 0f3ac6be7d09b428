/* prefer.h - the fixed lexicographic preference among ELIGIBLE candidates.
 *
 * Never a weighted score.  1. cost: drop every candidate whose cost is
 * established higher than another's (its low > other's high + tie_abs); one
 * left -> chosen by cost.  2. qoe: keep those whose startup_p90_ms is within
 * startup_tie_ms of the best left; one left -> chosen by qoe.  3. the first
 * left in policy.order -> chosen by order.
 */
#ifndef PREFER_H
#define PREFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cost.h"
#include "situation.h"

/* NONE is the zero value: nothing chosen unless the rule ran to the end. */
enum pref_rule { PREF_NONE = 0, PREF_COST, PREF_QOE, PREF_ORDER };

struct pref_input {
    const char *path_id;
    cost_pico low, high;    /* exact dCost range */
    int64_t startup_p90_ms; /* micro */
};

struct pref_result {
    long chosen; /* index into the input, -1 when n == 0 */
    enum pref_rule rule;
    json_t *trace; /* what each step kept and dropped, and why */
};

/* in[0..n) are the eligible candidates (n <= SIT_MAX_CANDIDATES). */
void pref_choose(const struct pref_input *in, size_t n, const struct sit_policy *p,
                 struct pref_result *out);

const char *pref_rule_name(enum pref_rule r); /* NULL for PREF_NONE */

#endif
