/* feedback.h - resource feedback from a real Prometheus (issue 17).
 *
 * `stepctl next` asks Prometheus, through /api/v1/query_range, what the
 * step really cost (origin and shield requests and bytes per second, the
 * CDN's bytes per second) over the step's window, from the grant's first
 * allocation to the review time, and compares each forecast window's
 * observed maximum with the forecast the grant's decision used for it
 * (background + commitments + step).  Observed above it: VIOLATION
 * `resources_outside_model`.  No data, a stale series, an error, NaN or
 * several series where one is expected: UNKNOWN, named by metric; never a
 * pass.  The queries and their answers are recorded with the review, so the
 * comparison is recomputed from the record without Prometheus
 * (fb_recheck).  Rules and examples: docs/controller.md, "Resource feedback
 * from Prometheus".
 *
 * The parts, one job each: fb_policy.c reads policy.feedback.prometheus,
 * fb_prom.c asks Prometheus (libcurl, a timeout and a body bound), fb_parse.c
 * reads one answer (pure, exact), fb_check.c compares, fb_step.c runs it
 * for `next` and builds the record and the next step's forecast.
 */
#ifndef FEEDBACK_H
#define FEEDBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cond_status.h"
#include "situation.h"

#define FB_MAX_QUERIES 16
#define FB_MAX_POINTS 11000          /* Prometheus refuses more points per series */
#define FB_MAX_BODY (1024 * 1024)    /* one answer; a longer one is an error */
#define FB_MAX_PROMQL 2048
#define FB_VALUE_TEXT 48             /* a value string longer than this is not read */
/* Values above this read as it: still above any forecast (3 x 1e12 units). */
#define FB_SATURATED (4000000000000LL * 1000000LL)

/* ---- fb_parse.c: one Prometheus answer ------------------------------------ */

enum fb_parse_rc {
    FB_PARSE_OK = 0,
    FB_PARSE_NOT_JSON,      /* HTML, garbage, truncated */
    FB_PARSE_ERROR_STATUS,  /* "status": "error" (the error text in err) */
    FB_PARSE_SHAPE,         /* not a matrix answer: data, result or values missing */
    FB_PARSE_NO_SERIES,     /* result [] */
    FB_PARSE_SEVERAL,       /* more than one series */
    FB_PARSE_NOT_A_NUMBER,  /* "NaN", "+Inf", "-Inf" */
    FB_PARSE_BAD_VALUE,     /* a value or time that is not an exact decimal */
};

struct fb_point {
    int64_t t_ms;
    int64_t micro; /* rounded up to the micro-unit */
    char text[FB_VALUE_TEXT]; /* the value string exactly as Prometheus wrote it */
};

struct fb_series {
    struct fb_point *pts; /* in the answer's order (Prometheus: ascending time) */
    size_t n;
};

/* Reads a query_range answer holding exactly one series.  Bounded: at most
 * FB_MAX_BODY bytes, FB_MAX_POINTS points.  err: a sentence (the error text
 * of an error answer, bounded).  *out is filled only on FB_PARSE_OK
 * (fb_series_free). */
enum fb_parse_rc fb_parse(const char *body, size_t len, struct fb_series *out, char *err,
                          size_t errlen);
void fb_series_free(struct fb_series *s);
const char *fb_parse_rc_name(enum fb_parse_rc rc);

/* A Prometheus value string ("0.0024999999999999988", "9.999999999999997e-07",
 * "12", "-3.5") into micro-units, rounded UP (toward VIOLATION); exponent
 * notation is accepted here only.  NaN, infinities and anything else: -1. */
int fb_value_micro(const char *s, size_t n, int64_t *out);

/* ---- fb_policy.c: policy.feedback.prometheus ------------------------------ */

struct fb_query {
    enum sit_resource resource;
    enum sit_metric metric;
    char promql[FB_MAX_PROMQL];
};

struct fb_policy {
    bool present;
    char url[512];
    int64_t timeout_ms, step_s;
    struct fb_query q[FB_MAX_QUERIES];
    size_t n;
    /* background: decide's background_upper where the situation leaves it out */
    struct fb_query bg[FB_MAX_QUERIES];
    size_t n_bg;
    int64_t bg_range_s, bg_factor_micro;
    /* policy.loop.per_allocation_upper: resource x metric, micro; has_ marks given */
    bool has_per_alloc[SIT_RES_N][SIT_MET_N];
    int64_t per_alloc[SIT_RES_N][SIT_MET_N];
};

/* Reads policy.feedback.prometheus and policy.loop.per_allocation_upper from
 * a situation text (absent: present false).  0, or -1 with err naming the
 * field. */
int fb_policy_parse(const char *json, size_t len, struct fb_policy *p, char *err, size_t errlen);

/* The same, only checked (decide refuses a situation that fails it). */
int fb_policy_check(const char *json, size_t len, char *err, size_t errlen);

/* promql with every ${path_id} replaced by path_id.  0, -1 when too long. */
int fb_expand(const char *promql, const char *path_id, char *out, size_t n);

/* ---- fb_prom.c: asking Prometheus ------------------------------------------ */

struct fb_answer {
    int64_t queried_at_ms;
    long http_status;    /* 0: no answer */
    char *body;          /* NULL when none or over FB_MAX_BODY */
    size_t len;
    char error[256];     /* transport: refused, timed out, too big; "" otherwise */
};

/* GET url/api/v1/query_range?query=..&start=..&end=..&step=.. within
 * timeout_ms, reading at most FB_MAX_BODY bytes.  0 (an HTTP answer, any
 * status) or -1 (error says why). */
int fb_prom_query(const char *url, const char *promql, int64_t start_ms, int64_t end_ms,
                  int64_t step_s, int64_t timeout_ms, struct fb_answer *out);
void fb_answer_free(struct fb_answer *a);

/* The query's step: at least step_s, raised so that [start, end] holds at
 * most FB_MAX_POINTS points. */
int64_t fb_step_for(int64_t start_ms, int64_t end_ms, int64_t step_s);

/* ---- fb_check.c: the observations against the decision's forecast -------- */

/* One query as asked and answered (fetched now, or read from a record). */
struct fb_obs {
    enum sit_resource resource;
    enum sit_metric metric;
    const char *promql;          /* as sent (${path_id} replaced) */
    long http_status;
    const char *body;            /* NULL: no answer */
    size_t len;
    const char *transport_error; /* "" when answered */
};

struct fb_verdict {
    enum cond_status status;
    char reason[64];
    char detail[512];
};

/* Judges one query over [from_ms, to_ms] against candidate c's forecast
 * windows (background + commitments + step of the same resource and
 * metric), query step step_s; appends its window checks to checks; the
 * whole observed maximum into *max (when status is PASS or VIOLATION). */
void fb_check_one(const struct sit_candidate *c, const struct fb_obs *o, int64_t from_ms,
                  int64_t to_ms, int64_t step_s, json_t *checks, struct fb_verdict *v,
                  int64_t *max);
/* The review's verdict: any VIOLATION first, else the first UNKNOWN, else
 * PASS (resources_within_model). */
void fb_combine(const struct fb_verdict *v, size_t n, struct fb_verdict *out);

/* ---- fb_step.c: the step under review ------------------------- */

struct fb_result {
    bool used;              /* policy.feedback.prometheus was declared */
    enum cond_status status;
    char reason[64];        /* resources_outside_model, resources_feedback_* */
    char detail[512];
    json_t *record;         /* the record member (queries, answers, checks), or NULL */
    json_t *resources;      /* the next step's forecast (a candidate's resources), or NULL */
};

struct fb_step {
    const char *situation;  /* the grant's decision, as recorded */
    size_t situation_len;
    const struct sit_situation *s; /* the same, parsed, its commitments as decided */
    const char *path_id;
    int64_t from_ms, now_ms;       /* first allocation, review time */
    int64_t granted_max, next_max; /* allocations: the step reviewed, the next one */
    int64_t next_window_s;         /* the next step's horizon */
};

/* Runs the queries (no database is touched: call it outside any
 * transaction) and judges them.  A policy without feedback: used false.
 * 0, or -1 on an internal error. */
int fb_run(const struct fb_step *st, struct fb_result *out);
/* The same judgement from a recorded member (fb_result.record), without
 * Prometheus: *out->record is a fresh copy with the recomputed checks. */
int fb_recheck(const struct fb_step *st, const json_t *recorded, struct fb_result *out);
void fb_result_free(struct fb_result *r);

/* fb_background.c: for `stepctl decide`, every resource item without
 * background_upper whose resource and metric has a background query gets
 * max(query over [decision time - range_s, decision time]) x factor,
 * rounded up, and a background_source member holding the query and the
 * answer (the completed situation is recorded, so replay needs no
 * Prometheus).  0 (*out NULL when nothing was filled; else free() it), 1
 * refused with err (Prometheus could not give a usable value), -1. */
int fb_fill_background(const char *text, size_t len, char **out, size_t *out_len, char *err,
                       size_t errlen);

/* fb_grant.c: fb_run (recorded NULL) or fb_recheck for the step of a
 * grant, reviewed at now_ms.  A grant without an allocation or that cannot
 * be read: used false (`next` itself says why).  0 or -1. */
int fb_for_grant(sqlite3 *db, const char *grant_id, int64_t now_ms, const json_t *recorded,
                 struct fb_result *out);

/* fb_replay.c: recomputes a recorded review's resource_feedback (review:
 * the next record) and prints whether it is identical.  0 identical, 1
 * different, -1 not a review with feedback or an error. */
int fb_replay(sqlite3 *db, const json_t *review, bool as_json, FILE *out);

#endif
