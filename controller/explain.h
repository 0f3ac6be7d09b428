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

#include <stdio.h>

#include <jansson.h>

void xpl_write(FILE *out, const json_t *result);

#endif
