/* cond.c - helpers shared by the five conditions (see cond.h). */
#include "cond.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

static const char *const kind_names[COND_N] = {"content", "access", "qoe", "resources", "cost"};

const char *cond_kind_name(enum cond_kind k)
{
    assert(k < COND_N);
    return kind_names[k];
}

int cond_freshness(int64_t t_ms, int64_t observed_at_ms, int64_t max_age_s)
{
    if (observed_at_ms > t_ms)
        return 1; /* not yet observed at decision time: cannot be used */
    return t_ms - observed_at_ms > max_age_s * 1000 ? 2 : 0;
}

void cond_set(struct cond_result *r, enum cond_status st, const char *reason, const char *fmt, ...)
{
    r->status = st;
    r->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

void cond_result_clear(struct cond_result *r)
{
    json_decref(r->data);
    r->data = NULL;
}
