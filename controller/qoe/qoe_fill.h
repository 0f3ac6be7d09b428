/* qoe_fill.h - a candidate's qoe from its sessions, where a situation or
 * `next`'s observations leave it out (issue 16).
 *
 * Used only where sessions exist: a grant (or a cohort and path) without
 * any viewer session is left exactly as before, so every record made
 * before sessions existed replays identical.  The rules come from the
 * recorded policy; a policy without policy.qoe.classes or
 * min_completeness gives UNKNOWN qoe_classes_missing, never a guess.
 * The source object says which QoE was used: {"source": "sessions",
 * "status": "filled"|"UNKNOWN", "reason", "provenance"}.
 */
#ifndef QOE_FILL_H
#define QOE_FILL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "qoe_report.h"

enum qoe_fill { QOE_FILL_UNUSED = 0, QOE_FILL_FILLED, QOE_FILL_RULES_MISSING, QOE_FILL_ERROR };

/* The scope's sessions under the policy object: FILLED with *qoe (the
 * situation members only) and *source, RULES_MISSING with *source, UNUSED
 * (no viewer session in scope), ERROR.  New references. */
enum qoe_fill qoe_fill(sqlite3 *db, const struct qoe_scope *scope, const json_t *policy,
                       json_t **qoe, json_t **source);

#endif
