/* qoe_outcome.h - a session's outcome and measures, and a step's QoE, as
 * pure functions of the stored rows (so `replay` can recompute them).
 *
 * One session (qoe_session): its records are ordered by sn (an rr
 * record's ts is its request's start, so ts is legitimately out of
 * order); records without sn cannot be placed and are not read.  The play
 * request is the first sta=s.  The outcome is decided by the first record
 * (in sn order) that decides it: sta=p success; cen autoplay-refused /
 * exit-before-start their own classes; sta=f or an e (error) event a
 * failure.  A gap in sn before that record, the session's start not
 * received (no sta=s and the first sn above 0: hls.js numbers from 0), or no such record: unknown.
 * Never fetched (no master playlist): unused.
 * Measures of a success: startup = the RVFC frame time when reported,
 * else the first playing record's ts, minus the play request's ts (the
 * player's clock).  Windows: the span between two received records with
 * consecutive sn, from the first playing record on, on the player clock
 * as it advances (the running maximum of ts: an out-of-order ts adds no
 * time); the play state in force at a window's start owns it (p playing,
 * r rebuffering).  A span across a gap is not observed, never zero;
 * nothing after the last record is claimed.  docs/qoe.md.
 */
#ifndef QOE_OUTCOME_H
#define QOE_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qoe_class {
    QOE_UNUSED = 0,
    QOE_UNKNOWN,
    QOE_SUCCESS,
    QOE_FAILURE,
    QOE_EXIT_BEFORE_START,
    QOE_AUTOPLAY_REFUSED,
    QOE_N_CLASSES
};

const char *qoe_class_name(enum qoe_class c);

/* What the rules read of one stored record. */
struct qoe_row {
    bool has_sn, has_ts, has_rvfc;
    int64_t sn, ts, rvfc_ms, received_at_ms;
    char e[8], sta[4];
    bool autoplay_refused, exit_before_start; /* cen */
    bool elsewhere; /* an rr record's media came from another path than the allocation's */
};

struct qoe_session {
    enum qoe_class cls;
    bool sn_gap; /* anywhere in the session */
    bool out_of_context; /* some media came from another path: never this path's QoE */
    bool has_startup;
    int64_t startup_ms;
    int64_t playing_ms, rebuffer_ms, observed_ms, span_ms; /* success only */
    int64_t newest_received_ms; /* of the records read, 0 none */
};

/* rows: the session's records, any order (sorted here by sn). */
void qoe_session_outcome(bool master_fetched, struct qoe_row *rows, size_t n,
                         struct qoe_session *out);

/* How the policy counts exit before start and autoplay refused
 * (policy.qoe.classes). */
enum qoe_count { QOE_AS_FAILURE, QOE_AS_EXCLUDED, QOE_AS_UNKNOWN };

struct qoe_rules {
    enum qoe_count exit_before_start, autoplay_refused;
    int64_t min_completeness; /* micro-units, policy.qoe.min_completeness */
};

/* A step's QoE over many sessions. */
struct qoe_agg {
    int64_t by_class[QOE_N_CLASSES];
    int64_t attempts, successes, failures, unknown, excluded, sn_gaps, out_of_context;
    int64_t playing_ms, rebuffer_ms, observed_ms, span_ms;
    int64_t observed_at_ms; /* the newest record counted */
    int64_t *startups;
    size_t n_startups, cap;
};

/* 0, or -1 out of memory. */
int qoe_agg_add(struct qoe_agg *a, const struct qoe_rules *r, const struct qoe_session *s);

/* Nearest-rank percentile p (1..100) of the startups (sorted here), ms. */
int64_t qoe_agg_percentile(struct qoe_agg *a, int p);

/* rebuffer_ratio in micro-units, rounded up; false when nothing was played. */
bool qoe_agg_rebuffer_ratio(const struct qoe_agg *a, int64_t *micro);

/* observed / span in micro-units, rounded down (never toward PASS); 1e6 when
 * no success span exists. */
int64_t qoe_agg_completeness(const struct qoe_agg *a);

void qoe_agg_free(struct qoe_agg *a);

#endif
