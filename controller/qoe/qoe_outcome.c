/* qoe_outcome.c - session outcomes and the step's QoE (see qoe_outcome.h). */
#include "qoe_outcome.h"

#include <stdlib.h>
#include <string.h>

const char *qoe_class_name(enum qoe_class c)
{
    static const char *const names[] = {"unused",  "unknown",           "success",
                                        "failure", "exit_before_start", "autoplay_refused"};
    return c < QOE_N_CLASSES ? names[c] : "?";
}

static int by_sn(const void *a, const void *b)
{
    const struct qoe_row *x = a, *y = b;
    if (x->has_sn != y->has_sn)
        return x->has_sn ? -1 : 1; /* rows without sn last: never read */
    return x->sn < y->sn ? -1 : x->sn > y->sn;
}

/* The class a record decides, or QOE_UNUSED when it decides nothing. */
static enum qoe_class decides(const struct qoe_row *r)
{
    if (r->autoplay_refused)
        return QOE_AUTOPLAY_REFUSED;
    if (r->exit_before_start)
        return QOE_EXIT_BEFORE_START;
    if (!strcmp(r->sta, "f") || !strcmp(r->e, "e"))
        return QOE_FAILURE;
    if (!strcmp(r->sta, "p"))
        return QOE_SUCCESS;
    return QOE_UNUSED;
}

/* The windows of a success, from row first (the first playing record).
 * After a gap the play state is not known (a missing record may have
 * changed it) until a record that carries one: nothing is counted until
 * then.  A play-state record's ts is at least every earlier record's (an
 * rr's ts is its request's start, before it was sent), so the clock is
 * the truth's again from there. */
static void windows(const struct qoe_row *rows, size_t n, size_t first, struct qoe_session *s)
{
    int64_t clock = rows[first].ts;
    char state = 'p';
    bool known = true;
    for (size_t i = first + 1; i < n && rows[i].has_sn; i++) {
        const struct qoe_row *r = &rows[i];
        int64_t next = r->has_ts && r->ts > clock ? r->ts : clock;
        bool window = r->sn == rows[i - 1].sn + 1 && r->has_ts && rows[i - 1].has_ts;
        if (!window)
            known = false;
        if (window && known) {
            int64_t d = next - clock;
            s->observed_ms += d;
            if (state == 'p')
                s->playing_ms += d;
            else if (state == 'r')
                s->rebuffer_ms += d;
        }
        s->span_ms += next - clock;
        clock = next;
        if (r->sta[0] && r->has_ts) {
            state = r->sta[0];
            known = true;
        }
    }
}

static void startup(const struct qoe_row *rows, size_t n, size_t first, bool has_request,
                    int64_t request_ts, struct qoe_session *s)
{
    if (!has_request || !rows[first].has_ts)
        return;
    int64_t at = rows[first].ts;
    for (size_t i = 0; i < n && rows[i].has_sn; i++)
        if (rows[i].has_rvfc) { /* the frame presented: preferred over the play state */
            at = rows[i].rvfc_ms;
            break;
        }
    if (at >= request_ts) {
        s->has_startup = true;
        s->startup_ms = at - request_ts;
    }
}

void qoe_session_outcome(bool master_fetched, struct qoe_row *rows, size_t n,
                         struct qoe_session *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].received_at_ms > out->newest_received_ms)
            out->newest_received_ms = rows[i].received_at_ms;
        out->out_of_context |= rows[i].elsewhere;
    }
    if (!master_fetched) {
        out->cls = QOE_UNUSED;
        return;
    }
    qsort(rows, n, sizeof *rows, by_sn);
    out->cls = QOE_UNKNOWN;
    bool decided = false, has_request = false;
    int64_t request_ts = 0;
    for (size_t i = 0; i < n && rows[i].has_sn; i++) {
        bool gap = i > 0 && rows[i].sn != rows[i - 1].sn + 1;
        out->sn_gap = out->sn_gap || gap;
        if (decided)
            continue;
        if (gap) { /* what the missing records said is not known */
            decided = true;
            continue;
        }
        if (!has_request && !strcmp(rows[i].sta, "s") && rows[i].has_ts) {
            has_request = true;
            request_ts = rows[i].ts;
        }
        enum qoe_class c = decides(&rows[i]);
        if (c == QOE_UNUSED)
            continue;
        decided = true;
        if (!has_request && rows[0].sn > 0) /* hls.js numbers from 0 */
            continue; /* the session's start was not received: what came first is not known */
        out->cls = c;
        if (c == QOE_SUCCESS) {
            startup(rows, n, i, has_request, request_ts, out);
            windows(rows, n, i, out);
        }
    }
}

/* ---- the step -------------------------------------------------------------- */

static void count_as(struct qoe_agg *a, enum qoe_count how)
{
    if (how == QOE_AS_FAILURE) {
        a->attempts++;
        a->failures++;
    } else if (how == QOE_AS_UNKNOWN) {
        a->attempts++;
        a->unknown++;
    } else {
        a->excluded++;
    }
}

int qoe_agg_add(struct qoe_agg *a, const struct qoe_rules *r, const struct qoe_session *s)
{
    /* a session that landed elsewhere needs its applicability checked
     * again: kept apart, never counted as the allocated path's */
    if (s->out_of_context && s->cls != QOE_UNUSED) {
        a->out_of_context++;
        return 0;
    }
    a->by_class[s->cls]++;
    a->sn_gaps += s->sn_gap;
    if (s->cls != QOE_UNUSED && s->newest_received_ms > a->observed_at_ms)
        a->observed_at_ms = s->newest_received_ms;
    switch (s->cls) {
    case QOE_UNUSED:
        return 0; /* never an attempt */
    case QOE_UNKNOWN:
        a->attempts++;
        a->unknown++;
        return 0;
    case QOE_FAILURE:
        a->attempts++;
        a->failures++;
        return 0;
    case QOE_EXIT_BEFORE_START:
        count_as(a, r->exit_before_start);
        return 0;
    case QOE_AUTOPLAY_REFUSED:
        count_as(a, r->autoplay_refused);
        return 0;
    default:
        break;
    }
    a->attempts++;
    a->successes++;
    a->playing_ms += s->playing_ms;
    a->rebuffer_ms += s->rebuffer_ms;
    a->observed_ms += s->observed_ms;
    a->span_ms += s->span_ms;
    if (!s->has_startup)
        return 0;
    if (a->n_startups == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        int64_t *p = realloc(a->startups, cap * sizeof *p);
        if (!p)
            return -1;
        a->startups = p;
        a->cap = cap;
    }
    a->startups[a->n_startups++] = s->startup_ms;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t qoe_agg_percentile(struct qoe_agg *a, int p)
{
    if (!a->n_startups)
        return 0;
    qsort(a->startups, a->n_startups, sizeof *a->startups, cmp_i64);
    size_t rank = ((size_t)p * a->n_startups + 99) / 100; /* nearest rank: ceil(p n / 100) */
    return a->startups[rank ? rank - 1 : 0];
}

bool qoe_agg_rebuffer_ratio(const struct qoe_agg *a, int64_t *micro)
{
    int64_t total = a->playing_ms + a->rebuffer_ms;
    if (total <= 0)
        return false;
    *micro = (a->rebuffer_ms * 1000000 + total - 1) / total; /* rounded up */
    return true;
}

int64_t qoe_agg_completeness(const struct qoe_agg *a)
{
    if (a->span_ms <= 0)
        return 1000000;
    return a->observed_ms * 1000000 / a->span_ms;
}

void qoe_agg_free(struct qoe_agg *a)
{
    free(a->startups);
    a->startups = NULL;
}
