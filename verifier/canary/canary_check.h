/* canary_check.h - one cycle of one target, and the probes of a target.
 *
 * A cycle: get the candidate URL (candidate, or candidate_command's fresh
 * one), read the candidate's and the reference's media playlists, note how
 * each moved (canary_observe: stalls and regressions are recorded UNKNOWN),
 * pick the media sequence numbers due (canary_select), and for each one,
 * oldest first: the reference segment from the shared cache, the candidate
 * through the delivery layer (candidate.h), the Exact-AV v1 check in
 * process (verify_run, at most `concurrency` at once), and the evidence
 * row.  Whatever cannot be checked is recorded UNKNOWN with its reason.
 * Everything a cycle does is bounded by the target's deadline
 * (timeout_s); what is still due when it passes waits for the next cycle.
 */
#ifndef CANARY_CHECK_H
#define CANARY_CHECK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "canary_alloc.h"
#include "canary_config.h"
#include "canary_log.h"
#include "canary_metrics.h"
#include "canary_refcache.h"
#include "canary_report.h"
#include "canary_sched.h"
#include "canary_store.h"
#include "fetch.h"

/* What the cycles of a run share. */
struct canary_env {
    const struct canary_run_info *run;
    const struct canary_config *cfg;
    struct canary_refcache *refs;
    struct canary_store *store;
    struct canary_metrics *metrics;  /* may be NULL */
    const struct canary_log *log;
    struct fetch_options fetch;      /* redaction names and limits of every fetch */
    atomic_bool stopping;            /* start nothing new */
    bool once;                       /* a pre-flight session: one record per target */
    pthread_mutex_t slot_mu;         /* check slots: at most cfg->concurrency decodes */
    pthread_cond_t slot_cv;
    int slots_free;
};

/* What a target remembers between cycles (zero value: a new target). */
struct canary_state {
    struct canary_seen cand, ref;
    bool have_next;
    uint64_t next;                   /* lowest media sequence not on record */
    unsigned failures;               /* failed cycles in a row (back-off) */
    bool block_reload;               /* LL-HLS: the candidate's last playlist allows blocking reload */
    bool behind_reported;            /* candidate_behind_live_edge is on record for behind_seq */
    uint64_t behind_seq;             /* the candidate's newest number when it was recorded */
    /* the newest record (the answer of a pre-flight session) */
    bool have_last, last_have_seq;
    uint64_t last_seq;
    char last_verdict[16], last_reason[64], last_id[37];
    char last_detail[320];           /* the newest record's delivery_failure detail, "" when none */
    int64_t last_observed_ms;
    uint64_t stored[3];              /* rows stored by this run: UNKNOWN, MATCH, MISMATCH */
    char last_path_id[CANARY_MAX_NAME + 1]; /* the newest record's path_id (an allocation target's pathway) */
    /* an allocation target (canary_alloc.h): the allocation it follows */
    struct canary_alloc_session alloc;
    /* the check in flight, under the store's lock */
    bool in_flight, abandoned;
    uint64_t in_flight_seq;
    int64_t in_flight_since_ms;
};

/* Sets up the slots; the rest is the caller's to fill. */
void canary_env_init(struct canary_env *env, int concurrency);
void canary_env_destroy(struct canary_env *env);
/* Stop: no new check starts; those in flight go on (the runner's drain
 * decides their fate). */
void canary_env_stop(struct canary_env *env);

/* One cycle.  Returns true when the candidate could not be read at all
 * (its playlist, or candidate_command): the runner backs off. */
bool canary_cycle(struct canary_env *env, const struct canary_target *t, struct canary_state *st);

/* One probe of t, stored. */
void canary_probe_target(struct canary_env *env, const struct canary_target *t);

/* The UNKNOWN `interrupted` report of st's check in flight (the store's
 * lock held by the caller, who then marks it abandoned). */
json_t *canary_interrupted_report(struct canary_env *env, const struct canary_target *t, const struct canary_state *st);

#endif
