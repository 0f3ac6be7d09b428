/* cond_qoe.c - the minimum-QoE condition.
 *
 * UNKNOWN when the report is missing, not fresh, measured on another cohort,
 * incomplete, inconsistent, below min_samples or missing a required metric.
 * The start-success ratio is bounded, never guessed: unknown attempts never
 * count as successes (lower bound successes/attempts) and are never counted
 * as failures either (upper bound (successes+unknown)/attempts).  Only a
 * bound that settles the question gives PASS or VIOLATION.
 */
#include "cond.h"

#include <string.h>

#include "num.h"

static const char *cohort_diff(const struct sit_cohort *a, const struct sit_cohort *b)
{
    if (strcmp(a->channel, b->channel))
        return "channel";
    if (strcmp(a->region, b->region))
        return "region";
    if (strcmp(a->isp, b->isp))
        return "isp";
    if (strcmp(a->client, b->client))
        return "client";
    if (strcmp(a->build, b->build))
        return "build";
    if (strcmp(a->rendition, b->rendition))
        return "rendition";
    return NULL;
}

/* The reasons that make the report unusable; NULL when it is usable. */
static const char *unusable(const struct sit_situation *s, const struct sit_qoe *q, int64_t t,
                            struct cond_result *out)
{
    const struct sit_qoe_policy *p = &s->policy.qoe;
    const char *field;
    if (!q->present && q->classes_missing)
        return cond_set(out, COND_UNKNOWN, "qoe_classes_missing",
                        "the candidate's viewer sessions cannot be judged: the policy lacks "
                        "policy.qoe.classes or policy.qoe.min_completeness"),
               "";
    if (!q->present || !q->has_observed)
        return cond_set(out, COND_UNKNOWN, "qoe_missing", "no dated QoE report"), "";
    int age = cond_freshness(t, q->observed_at_ms, p->max_age_s);
    if (age)
        return cond_set(out, COND_UNKNOWN, age == 1 ? "qoe_after_decision_time" : "qoe_stale",
                        "the QoE report observed at %lld is %s", (long long)q->observed_at_ms,
                        age == 1 ? "after the decision time" : "older than policy.qoe.max_age_s"),
               "";
    if (!q->has_cohort)
        return cond_set(out, COND_UNKNOWN, "qoe_other_cohort", "the QoE report names no cohort"),
               "";
    if ((field = cohort_diff(&q->cohort, &s->action.cohort)))
        return cond_set(out, COND_UNKNOWN, "qoe_other_cohort",
                        "the QoE report was measured on another %s", field),
               "";
    if (!q->has_complete || !q->complete)
        return cond_set(out, COND_UNKNOWN, "qoe_incomplete", "the QoE window is incomplete"), "";
    if (!q->has_counts || !q->has_p90 || !q->has_rebuffer)
        return cond_set(out, COND_UNKNOWN, "qoe_missing_metric",
                        "a required QoE metric (counts, startup_p90_ms, rebuffer_ratio) is missing"),
               "";
    if (q->successes + q->failures + q->unknown != q->attempts)
        return cond_set(out, COND_UNKNOWN, "qoe_counts_inconsistent",
                        "successes + failures + unknown != attempts"),
               "";
    if (q->successes + q->failures < p->min_samples)
        return cond_set(out, COND_UNKNOWN, "qoe_insufficient_samples",
                        "%lld attempts with a known outcome, policy needs %lld",
                        (long long)(q->successes + q->failures), (long long)p->min_samples),
               "";
    return NULL;
}

static void data_of(const struct sit_situation *s, const struct sit_qoe *q, struct cond_result *o)
{
    const struct sit_qoe_policy *p = &s->policy.qoe;
    o->data = json_pack("{s:I,s:o,s:o,s:o,s:o,s:I}", "min_samples", (json_int_t)p->min_samples,
                        "min_start_success_ratio", num_to_json(p->min_start_success_ratio),
                        "max_startup_p90_ms", num_to_json(p->max_startup_p90_ms),
                        "max_rebuffer_ratio", num_to_json(p->max_rebuffer_ratio),
                        "startup_tie_ms", num_to_json(p->startup_tie_ms), "max_age_s",
                        (json_int_t)p->max_age_s);
    if (!q->present)
        return;
    if (q->has_observed)
        json_object_set_new(o->data, "observed_at_ms", json_integer(q->observed_at_ms));
    if (q->has_counts)
        json_object_set_new(o->data, "counts",
                            json_pack("{s:I,s:I,s:I,s:I}", "attempts", (json_int_t)q->attempts,
                                      "successes", (json_int_t)q->successes, "failures",
                                      (json_int_t)q->failures, "unknown", (json_int_t)q->unknown));
    if (q->has_p50)
        json_object_set_new(o->data, "startup_p50_ms", num_to_json(q->startup_p50_ms));
    if (q->has_p90)
        json_object_set_new(o->data, "startup_p90_ms", num_to_json(q->startup_p90_ms));
    if (q->has_rebuffer)
        json_object_set_new(o->data, "rebuffer_ratio", num_to_json(q->rebuffer_ratio));
}

void cond_qoe(const struct sit_situation *s, const struct sit_candidate *c, int64_t t_ms,
              struct cond_result *out)
{
    memset(out, 0, sizeof *out);
    const struct sit_qoe *q = &c->qoe;
    const struct sit_qoe_policy *p = &s->policy.qoe;
    data_of(s, q, out);
    if (unusable(s, q, t_ms, out))
        return;
    /* ratio >= min  <=>  count * 1e6 >= min_micro * attempts (exact, int128). */
    __int128 need = (__int128)p->min_start_success_ratio * q->attempts;
    __int128 low = (__int128)q->successes * NUM_MICRO;
    __int128 high = (__int128)(q->successes + q->unknown) * NUM_MICRO;
    if (q->attempts > 0 && high < need)
        cond_set(out, COND_VIOLATION, "qoe_start_success_below_min",
                 "%lld of %lld starts succeeded (%lld unknown): below the minimum ratio",
                 (long long)q->successes, (long long)q->attempts, (long long)q->unknown);
    else if (q->startup_p90_ms > p->max_startup_p90_ms)
        cond_set(out, COND_VIOLATION, "qoe_startup_p90_above_max",
                 "startup p90 is above policy.qoe.max_startup_p90_ms");
    else if (q->rebuffer_ratio > p->max_rebuffer_ratio)
        cond_set(out, COND_VIOLATION, "qoe_rebuffer_above_max",
                 "rebuffer ratio is above policy.qoe.max_rebuffer_ratio");
    else if (q->attempts == 0 || low < need)
        cond_set(out, COND_UNKNOWN, "qoe_unknown_attempts_decide",
                 "%lld unknown attempts decide whether the start-success minimum is met",
                 (long long)q->unknown);
    else
        cond_set(out, COND_PASS, "qoe_meets_minimum", "QoE meets every minimum of the policy");
}
