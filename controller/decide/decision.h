/* decision.h - one decision as a pure function of (situation, evidence rows).
 *
 * dcn_decide never touches a file, a clock or a random source: given the same
 * situation, decision time and rows it yields the same result, which is what
 * makes `stepctl replay` meaningful.  Admission first (every condition PASS),
 * then preference among the eligible only (prefer.h).
 */
#ifndef DECISION_H
#define DECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cond.h"
#include "evidence.h"
#include "prefer.h"
#include "situation.h"

/* The safe value is the zero value: no step unless a path was chosen. */
enum dcn_outcome { DCN_NO_ELIGIBLE_PATH = 0, DCN_STEP_PROPOSED };

struct dcn_candidate {
    const char *path_id; /* points into the situation */
    struct cond_result cond[COND_N];
    struct cond_cost_range cost;
    bool eligible;
};

struct dcn_result {
    int64_t decision_time_ms;
    size_t n;
    struct dcn_candidate *c;
    long chosen; /* index into c, -1 when none */
    struct pref_result pref;
    enum dcn_outcome outcome;
};

/* Returns 0, or -1 when memory runs out (then *out needs no freeing). */
int dcn_decide(const struct sit_situation *s, int64_t t_ms, const struct evidence_rows *rows,
               struct dcn_result *out);
void dcn_free(struct dcn_result *r);

const char *dcn_outcome_name(enum dcn_outcome o);

#endif
