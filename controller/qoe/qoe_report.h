/* qoe_report.h - the QoE object of a situation candidate, computed from
 * the stored sessions (qoe_outcome.h over control.db's rows).
 *
 * The object has exactly the members `decide` reads in a situation
 * (observed_at_ms, cohort, attempts, successes, failures, unknown,
 * startup_p50_ms, startup_p90_ms, rebuffer_ratio, complete), a metric that
 * cannot be computed left out (so decide says qoe_missing_metric), plus
 * unused, out_of_context and provenance.  docs/qoe.md.
 */
#ifndef QOE_REPORT_H
#define QOE_REPORT_H

#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "qoe_outcome.h"
#include "situation.h"

/* Which sessions: those of one grant, or of a cohort and path; created in
 * [since_ms, until_ms).  Verification sessions never count. */
struct qoe_scope {
    const char *grant_id; /* NULL: cohort and path */
    struct sit_cohort cohort;
    const char *path_id;
    int64_t since_ms, until_ms;
};

/* policy.qoe.classes and policy.qoe.min_completeness of a policy object:
 * 0, or 1 with *missing naming what the policy lacks ("qoe_classes_missing"
 * or "qoe_min_completeness_missing"). */
int qoe_rules_from_policy(const json_t *policy, struct qoe_rules *r, const char **missing);

/* Viewer sessions in scope: 0 also when the file predates schema 3 (no
 * sessions table), -1 on an SQLite error. */
long long qoe_count_sessions(sqlite3 *db, const struct qoe_scope *scope);

/* The QoE object (new reference), or NULL with err set (SQLite, memory). */
json_t *qoe_report(sqlite3 *db, const struct qoe_scope *scope, const struct qoe_rules *rules,
                   char *err, size_t errlen);

#endif
