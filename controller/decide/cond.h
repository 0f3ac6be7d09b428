/* cond.h - the five admission conditions of one candidate.
 *
 * Each function is pure: it reads the situation (and, for content, the
 * evidence rows as read) at decision time T and fills a cond_result.  The
 * result always carries a stable reason code, a sentence for humans and the
 * data it used (JSON object, owned by the result).  Rules: docs/controller.md.
 */
#ifndef COND_H
#define COND_H

#include <stdint.h>

#include <jansson.h>

#include "cond_status.h"
#include "cost.h"
#include "evidence.h"
#include "situation.h"

enum cond_kind { COND_CONTENT, COND_ACCESS, COND_QOE, COND_RESOURCES, COND_COST, COND_N };

struct cond_result {
    enum cond_status status; /* zero value: UNKNOWN */
    const char *reason;      /* stable reason code (static string) */
    char detail[320];        /* one plain sentence */
    json_t *data;            /* the inputs used; never NULL after a cond_* call */
};

/* Cost is also needed by the preference: the exact delta range. */
struct cond_cost_range {
    bool known;
    cost_pico low, high; /* 1e-12 currency units */
};

const char *cond_kind_name(enum cond_kind k);

void cond_content(const struct sit_situation *s, const struct sit_candidate *c,
                  const struct evidence_rows *rows, int64_t t_ms, struct cond_result *out);
void cond_access(const struct sit_situation *s, const struct sit_candidate *c, int64_t t_ms,
                 struct cond_result *out);
void cond_qoe(const struct sit_situation *s, const struct sit_candidate *c, int64_t t_ms,
              struct cond_result *out);
void cond_resources(const struct sit_situation *s, const struct sit_candidate *c, int64_t t_ms,
                    struct cond_result *out);
void cond_cost(const struct sit_situation *s, const struct sit_candidate *c,
               struct cond_result *out, struct cond_cost_range *range);

/* Freshness of one observation at t_ms: 0 fresh, 1 observed after t_ms,
 * 2 older than max_age_s.  Age is counted from the observation time. */
int cond_freshness(int64_t t_ms, int64_t observed_at_ms, int64_t max_age_s);

/* Sets status, reason and a formatted detail sentence. */
void cond_set(struct cond_result *r, enum cond_status st, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cond_result_clear(struct cond_result *r);

#endif
