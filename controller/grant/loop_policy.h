/* loop_policy.h - the policy settings of the loop after a decision:
 * `policy.grant` (what a grant may be), `policy.steps` (how the next step
 * grows) and `policy.active_sessions` (what existing sessions do after a
 * content violation).  They live in the situation file next to the rest of the policy
 * and are read from the recorded situation text, so a grant or a `next` uses
 * exactly the policy its decision was made under.  Fields and defaults:
 * docs/controller.md, "policy.grant and policy.steps".
 */
#ifndef LOOP_POLICY_H
#define LOOP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "situation.h"

struct lpol {
    /* policy.grant */
    int64_t max_decision_age_s; /* a decision older than this is not granted */
    int64_t url_ttl_s;          /* URL validity: the default and the maximum */
    int64_t expected_play_s;    /* expected play duration of one allocation */
    int64_t max_burst;          /* token bucket size: the default and the maximum */
    /* policy.steps: next = min(ceiling, floor(granted x factor)) */
    int64_t steps_factor_micro; /* a decimal above 1, micro-units */
    int64_t steps_max_allocations;
    int64_t steps_max_rate_micro;
    /* policy.active_sessions.on_content_violation: keep (true) or
     * steer_away (false, the default): what existing allocations' steering
     * does when the allocated path is found MISMATCH (dlv.h) */
    bool sessions_keep;
    /* policy.loop.content_from (issue 17): which content evidence `next`
     * counts.  "path" (the default: a policy naming no policy.loop is judged
     * as before) any check of the granted path observed during the step;
     * "step_sessions" only checks delivered under a verification allocation
     * of the grant (evidence.allocation_id).  content_from_named: the policy
     * says it (only then does the record of next name it). */
    bool content_step_sessions;
    bool content_from_named;
};

/* Reads both objects (absent: defaults) from the situation text; s is the
 * same text already parsed.  0, or -1 with err naming the field. */
int lpol_parse(const char *json, size_t len, const struct sit_situation *s, struct lpol *p,
               char *err, size_t errlen);

/* The next step's size: min(ceiling, floor(granted x factor_micro / 1e6)),
 * exact (128-bit), rounded down: never toward admitting more.  For counts
 * and for micro-unit rates alike. */
int64_t lpol_grow(int64_t granted, int64_t factor_micro, int64_t ceiling);

#endif
