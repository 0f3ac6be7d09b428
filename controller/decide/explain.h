/* explain.h - a recorded decision in plain words: the seven questions of the
 * decision-loop seed (what bounded action and who sets its conditions; which
 * evidence applied and why each candidate was excluded; the comparison rule;
 * who owns the shared resources and which commitments were counted; what is
 * authorized and within which limits; which new observations decide the
 * step; what happens on a positive result, a violation or UNKNOWN).
 * It formats the stored answer only; it recomputes nothing.
 */
#ifndef EXPLAIN_H
#define EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <sqlite3.h>

void xpl_write(FILE *out, const json_t *result);

/* explain_loop.c: explains id when it names a grant (what is authorized,
 * the three durations, the reservation, what ends issuance, what happened,
 * fallbacks, what follows) or a `next` review (the step, the observations
 * that counted, the evaluation of the next step, the outcome): 0 done, 1
 * neither (also for a control.db of schema 1, which has neither), -1 error.
 * Printed escaped like every human output (output.h, out_escaped). */
int xpl_loop(FILE *out, sqlite3 *db, const char *id, int64_t now_ms);

#endif
