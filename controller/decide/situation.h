/* situation.h - the input of one decision (SITUATION.json), parsed and bounded.
 *
 * The schema is documented field by field in docs/controller.md.  Parsing
 * rejects (error naming the field) what is structurally wrong: wrong types,
 * negative counts, unsorted tiers, oversized arrays.  Data that is merely
 * absent from a candidate (no QoE report, no access probe, a missing metric)
 * is NOT an error: it is kept as "absent" so that the condition reports
 * UNKNOWN for that candidate.  Decimals are int64 micro-units (num.h).
 */
#ifndef SITUATION_H
#define SITUATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cond_status.h"

#define SIT_MAX_INPUT_BYTES (4u << 20) /* 4 MiB situation file */
#define SIT_STR 128                    /* max identifier length + 1 */
#define SIT_MAX_CANDIDATES 64
#define SIT_MAX_WINDOWS 64
#define SIT_MAX_ITEMS 32
#define SIT_MAX_CATEGORIES 16
#define SIT_MAX_TIERS 32
#define SIT_MAX_PRICE_UNITS 1000000LL /* unit prices above 1e6 are refused */

struct sit_cohort {
    char channel[SIT_STR], region[SIT_STR], isp[SIT_STR];
    char client[SIT_STR], build[SIT_STR], rendition[SIT_STR];
};

struct sit_qoe_policy {
    int64_t min_samples;
    int64_t min_start_success_ratio; /* micro */
    int64_t max_startup_p90_ms;      /* micro */
    int64_t max_rebuffer_ratio;      /* micro */
    int64_t max_age_s;
    int64_t startup_tie_ms; /* micro */
};

struct sit_policy {
    char id[SIT_STR], version[SIT_STR], intent_version[SIT_STR];
    int64_t max_evidence_age_s;
    char profile_id[SIT_STR];
    struct sit_qoe_policy qoe;
    int64_t resources_max_age_s;
    char budget_owner[SIT_STR];  /* optional, "" when not named */
    int64_t access_max_age_s;    /* optional, default max_evidence_age_s */
    char currency[SIT_STR];
    int64_t budget_per_step; /* micro */
    int64_t tie_abs;         /* micro */
    char (*order)[SIT_STR];
    size_t n_order;
    char refusal_id[SIT_STR];
    char refusal_text[512];
    int64_t refusal_http_status;   /* 400..599 as declared; 0: not declared (serve answers 403) */
    int64_t refusal_retry_after_s; /* Retry-After, 0..86400; declared only when has_retry */
    bool refusal_has_retry;
};

struct sit_action {
    struct sit_cohort cohort;
    char program_version[SIT_STR];
    int64_t max_allocations;
    int64_t max_rate_per_s; /* micro */
    int64_t window_s;
};

struct sit_access {
    bool present, has_status, has_observed;
    enum cond_status status;
    int64_t observed_at_ms;
};

/* QoE report of one candidate; every metric may be absent. */
struct sit_qoe {
    /* qoe left out and the candidate's qoe_source (written by decide's
     * fill from sessions) says the policy lacks its classes. */
    bool classes_missing;
    bool present, has_observed, has_cohort, has_counts, has_p50, has_p90, has_rebuffer,
        has_complete;
    int64_t observed_at_ms;
    struct sit_cohort cohort;
    int64_t attempts, successes, failures, unknown;
    int64_t startup_p50_ms, startup_p90_ms, rebuffer_ratio; /* micro */
    bool complete;
};

enum sit_resource { SIT_RES_ORIGIN, SIT_RES_SHIELD, SIT_RES_CDN, SIT_RES_N };
enum sit_metric { SIT_MET_RPS, SIT_MET_BYTES_PER_S, SIT_MET_N };

struct sit_item {
    enum sit_resource resource;
    enum sit_metric metric;
    int64_t limit, margin, background_upper, commitments_upper, step_upper; /* micro */
    /* commitments_upper may be left out: `decide` then takes it from the
     * commitments ledger (ledger.h) and marks it; absent and not filled, the
     * resources condition is UNKNOWN. */
    bool has_commitments, commitments_from_ledger;
};

struct sit_window {
    int64_t start_ms, end_ms;
    struct sit_item *items;
    size_t n_items;
};

struct sit_resources {
    bool present, has_observed, has_model_valid;
    int64_t observed_at_ms;
    bool model_valid;
    struct sit_window *windows;
    size_t n_windows;
};

struct sit_tier {
    bool bounded;     /* false: "up_to": null, no upper bound */
    int64_t up_to;    /* micro, cumulative upper bound of usage */
    int64_t unit_price; /* micro */
};

struct sit_category {
    char name[SIT_STR];
    struct sit_tier *tiers;
    size_t n_tiers;
    /* usage of this category, micro; absent usage counts as zero */
    int64_t baseline, step_low, step_high;
};

struct sit_cost {
    bool present, has_currency;
    char currency[SIT_STR];
    struct sit_category *categories;
    size_t n_categories;
    /* A usage category with no price in the contract makes cost UNKNOWN. */
    char unpriced[SIT_STR];
};

struct sit_candidate {
    char path_id[SIT_STR];
    struct sit_access access;
    struct sit_qoe qoe;
    struct sit_resources resources;
    struct sit_cost cost;
};

struct sit_situation {
    bool has_decision_time;
    int64_t decision_time_ms;
    struct sit_policy policy;
    struct sit_action action;
    struct sit_candidate *candidates;
    size_t n_candidates;
};

/* Parses len bytes of JSON.  Returns 0, or -1 with a message naming the field
 * in err (exit code 65 for the CLI).  On success *s must be freed with
 * sit_free; on failure nothing needs freeing. */
int sit_parse(const char *json, size_t len, struct sit_situation *s, char *err, size_t errlen);
void sit_free(struct sit_situation *s);

const char *sit_resource_name(enum sit_resource r);
const char *sit_metric_name(enum sit_metric m);

#endif
