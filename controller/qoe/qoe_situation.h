/* qoe_situation.h - `stepctl decide`: a candidate whose situation leaves
 * `qoe` out takes it from the viewer sessions of its path and the
 * action's cohort allocated within policy.qoe.max_age_s before the
 * decision time (qoe_fill.h), as access_probe.h does for access.  The
 * situation so completed is the one decided and recorded, so replay
 * recomputes it as it is; each filled candidate carries "qoe_source" (the
 * record says which QoE was used).  Candidates with a hand-written qoe,
 * and candidates without sessions, are left exactly as given.
 */
#ifndef QOE_SITUATION_H
#define QOE_SITUATION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "situation.h"

/* db_path: control.db (absent or unreadable: nothing filled).  *out: a new
 * situation text (malloc'd, *outlen) when a candidate was filled, else
 * NULL.  0, or -1 out of memory / SQLite failure. */
int qoe_fill_situation(const char *db_path, const char *text, size_t len, int64_t now_ms,
                       char **out, size_t *outlen);

/* The cohort object {channel, region, isp, client, build, rendition} of a
 * situation's action (a missing member: ""). */
void qoe_cohort_of(const json_t *c, struct sit_cohort *out);

#endif
