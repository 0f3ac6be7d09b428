/* canary_run.c - the canary worker (see canary_run.h).
 *
 * Threads: the caller's thread takes the signals and the run's clock;
 * each target has a check thread (its cycles) and, when probe_period_s is
 * not 0, a probe thread; libmicrohttpd serves the metrics on its own
 * thread.  Shared: the configuration (read-only while threads run: a
 * reload stops them first), the reference cache, the store, the metrics,
 * the check slots.  r->mu guards the workers' stop/done flags. */
#include "canary_run.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "canary_check.h"
#include "canary_retention.h"
#include "canary_sched.h"
#include "exitcodes.h"
#include "profile.h"
#include "util.h"

/* How often the caller's thread looks at the clock and the workers. */
#define TICK_MS 200

struct worker {
    struct runner *r;
    const struct canary_target *t;
    struct canary_state st;
    pthread_t check_thread, probe_thread;
    bool check_started, probe_started;
    bool stop, check_done, probe_done;  /* under r->mu */
};

struct runner {
    const struct canary_options *o;
    struct canary_config cfg;
    struct profile profile;
    struct canary_run_info run;
    struct canary_log log;
    struct canary_env env;
    struct canary_metrics *metrics;
    struct worker *w;
    size_t nw;
    pthread_mutex_t mu;
    pthread_cond_t cv;               /* CLOCK_MONOTONIC */
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec mono_abs(int64_t ms)
{
    return (struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
}

/* Sleeps until due (monotonic ms); false when the worker must stop. */
static bool wait_until(struct worker *w, int64_t due)
{
    struct runner *r = w->r;
    pthread_mutex_lock(&r->mu);
    while (!w->stop && mono_ms() < due) {
        struct timespec ts = mono_abs(due);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    bool go = !w->stop;
    pthread_mutex_unlock(&r->mu);
    return go;
}

static void finished(struct worker *w, bool *flag)
{
    pthread_mutex_lock(&w->r->mu);
    *flag = true;
    pthread_cond_broadcast(&w->r->cv);
    pthread_mutex_unlock(&w->r->mu);
}

static void *check_main(void *arg)
{
    struct worker *w = arg;
    struct runner *r = w->r;
    for (;;) {
        int64_t start = mono_ms();
        canary_cycle(&r->env, w->t, &w->st);
        if (r->env.once)
            break;
        int64_t wait = canary_backoff_ms(w->t->period_ms, r->cfg.max_backoff_ms, w->st.failures);
        if (!wait_until(w, start + wait))
            break;
    }
    finished(w, &w->check_done);
    return NULL;
}

static void *probe_main(void *arg)
{
    struct worker *w = arg;
    struct runner *r = w->r;
    for (;;) {
        int64_t start = mono_ms();
        canary_probe_target(&r->env, w->t);
        if (r->env.once || !wait_until(w, start + w->t->probe_period_ms))
            break;
    }
    finished(w, &w->probe_done);
    return NULL;
}

/* ---- workers ---- */

static bool in_shard(const struct runner *r, const struct canary_target *t)
{
    return !r->o->have_shard || canary_in_shard(t->key, r->o->shard_k, r->o->shard_n);
}

/* Workers for the targets of cfg in this shard, keeping the state of the
 * targets old already had (matched by path_id/channel/rendition). */
static int make_workers(struct runner *r, const struct worker *old, size_t nold)
{
    r->w = calloc(r->cfg.n_targets ? r->cfg.n_targets : 1, sizeof *r->w);
    if (!r->w)
        return -1;
    r->nw = 0;
    for (size_t i = 0; i < r->cfg.n_targets; i++) {
        const struct canary_target *t = &r->cfg.targets[i];
        if (!in_shard(r, t))
            continue;
        struct worker *w = &r->w[r->nw++];
        w->r = r;
        w->t = t;
        for (size_t j = 0; j < nold; j++)
            if (!strcmp(old[j].t->key, t->key)) {
                w->st = old[j].st;
                w->st.in_flight = w->st.abandoned = false;
            }
    }
    return 0;
}

static int start_workers(struct runner *r)
{
    for (size_t i = 0; i < r->nw; i++) {
        struct worker *w = &r->w[i];
        w->stop = w->check_done = w->probe_done = false;
        w->check_started = pthread_create(&w->check_thread, NULL, check_main, w) == 0;
        if (!w->check_started)
            w->check_done = true;
        w->probe_started = w->t->probe_period_ms > 0 && pthread_create(&w->probe_thread, NULL, probe_main, w) == 0;
        if (!w->probe_started)
            w->probe_done = true;
        if (!w->check_started)
            return -1;
    }
    if (r->metrics)
        canary_metrics_set_targets(r->metrics, r->nw);
    return 0;
}

static bool all_done(const struct runner *r)
{
    for (size_t i = 0; i < r->nw; i++)
        if (!r->w[i].check_done || !r->w[i].probe_done)
            return false;
    return true;
}

/* Asks every worker to stop and waits up to timeout_ms (< 0: forever).
 * True when all have finished. */
static bool drain(struct runner *r, int64_t timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->nw; i++)
        r->w[i].stop = true;
    pthread_cond_broadcast(&r->cv);
    while (!all_done(r) && (timeout_ms < 0 || mono_ms() < deadline)) {
        struct timespec ts = mono_abs(timeout_ms < 0 ? mono_ms() + 1000 : deadline);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    bool done = all_done(r);
    pthread_mutex_unlock(&r->mu);
    return done;
}

static void join_workers(struct runner *r)
{
    for (size_t i = 0; i < r->nw; i++) {
        if (r->w[i].check_started)
            pthread_join(r->w[i].check_thread, NULL);
        if (r->w[i].probe_started)
            pthread_join(r->w[i].probe_thread, NULL);
    }
}

/* ---- the environment of the cycles ---- */

static int env_setup(struct runner *r)
{
    struct canary_env *env = &r->env;
    env->run = &r->run;
    env->cfg = &r->cfg;
    env->log = &r->log;
    env->metrics = r->metrics;
    env->once = r->o->once;
    env->slots_free = r->cfg.concurrency;
    env->fetch = fetch_options_default();
    env->fetch.redact = (struct redact_policy){
        .keep = (const char *const *)r->cfg.keep_params, .n_keep = r->cfg.n_keep,
        .redact = (const char *const *)r->cfg.redact_params, .n_redact = r->cfg.n_redact};
    env->fetch.total_timeout_ms = (long)r->cfg.timeout_ms;
    int64_t longest = r->cfg.period_ms;
    for (size_t i = 0; i < r->cfg.n_targets; i++)
        if (r->cfg.targets[i].period_ms > longest)
            longest = r->cfg.targets[i].period_ms;
    /* a playlist read is shared by the checks of one moment; a segment is
     * kept while any path may still reach it */
    int64_t keep = 10 * longest > 60000 ? 10 * longest : 60000;
    canary_refcache_free(env->refs);
    env->refs = canary_refcache_new(&env->fetch, r->cfg.period_ms / 2 < 1000 ? r->cfg.period_ms / 2 : 1000, keep);
    return env->refs ? 0 : -1;
}

/* SIGHUP: a valid new configuration replaces the old one between cycles. */
static void reload(struct runner *r)
{
    struct canary_config nc;
    char err[512];
    if (canary_config_load(r->o->config_path, &nc, err, sizeof err) != 0) {
        canary_log_event(&r->log, "reload_refused", "%s (the running configuration stays)", err);
        return;
    }
    drain(r, -1);
    join_workers(r);
    struct worker *old = r->w;
    size_t nold = r->nw;
    struct canary_config prev = r->cfg;
    r->cfg = nc;
    r->run.diff_dir = r->o->diff_dir ? r->o->diff_dir : r->cfg.diff_dir; /* prev's is freed below */
    int rc = make_workers(r, old, nold);
    free(old);
    canary_config_free(&prev);
    if (rc == 0)
        rc = env_setup(r);
    if (rc == 0)
        rc = start_workers(r);
    canary_log_event(&r->log, rc == 0 ? "reload" : "error", "%zu target(s)%s", r->nw,
                     rc == 0 ? "" : ": cannot start the workers");
}

/* Checks in flight that did not finish in time: UNKNOWN `interrupted`, and
 * every later write refused. */
static void interrupt_in_flight(struct runner *r)
{
    canary_store_lock(r->env.store);
    for (size_t i = 0; i < r->nw; i++) {
        struct worker *w = &r->w[i];
        if (!w->st.in_flight || w->st.abandoned)
            continue;
        json_t *rep = canary_interrupted_report(&r->env, w->t, &w->st);
        char err[512] = "";
        if (rep && canary_store_report_locked(r->env.store, rep, err, sizeof err) == 0) {
            w->st.have_last = w->st.last_have_seq = true;
            w->st.last_seq = w->st.in_flight_seq;
            snprintf(w->st.last_verdict, sizeof w->st.last_verdict, "UNKNOWN");
            snprintf(w->st.last_reason, sizeof w->st.last_reason, "interrupted");
            snprintf(w->st.last_id, sizeof w->st.last_id, "%s", json_string_value(json_object_get(rep, "evidence_id")));
            w->st.last_observed_ms = w->st.in_flight_since_ms;
            w->st.stored[0]++;
            canary_log_check(&r->log, w->t, rep, 0);
        }
        json_decref(rep);
        w->st.abandoned = true;
    }
    canary_store_seal_locked(r->env.store);
    canary_store_unlock(r->env.store);
}

static void collect(struct runner *r, struct canary_session *out)
{
    out->outcomes = calloc(r->nw ? r->nw : 1, sizeof *out->outcomes);
    if (!out->outcomes)
        return;
    out->n = r->nw;
    canary_store_lock(r->env.store);
    for (size_t i = 0; i < r->nw; i++) {
        const struct canary_target *t = r->w[i].t;
        const struct canary_state *st = &r->w[i].st;
        struct canary_outcome *c = &out->outcomes[i];
        snprintf(c->key, sizeof c->key, "%s", t->key);
        snprintf(c->path_id, sizeof c->path_id, "%s", st->last_path_id[0] ? st->last_path_id : t->path_id);
        snprintf(c->channel, sizeof c->channel, "%s", t->channel);
        snprintf(c->rendition, sizeof c->rendition, "%s", t->rendition);
        snprintf(c->program_version, sizeof c->program_version, "%s", t->program_version);
        c->recorded = st->have_last;
        c->have_seq = st->last_have_seq;
        c->seq = st->last_seq;
        snprintf(c->verdict, sizeof c->verdict, "%s", st->have_last ? st->last_verdict : "UNKNOWN");
        snprintf(c->reason, sizeof c->reason, "%s", st->have_last ? st->last_reason : "not_checked");
        snprintf(c->evidence_id, sizeof c->evidence_id, "%s", st->last_id);
        snprintf(c->detail, sizeof c->detail, "%s", st->have_last ? st->last_detail : "");
        c->observed_at_ms = st->last_observed_ms;
        memcpy(c->stored, st->stored, sizeof c->stored);
    }
    canary_store_unlock(r->env.store);
}

/* ---- the run ---- */

static int prepare(struct runner *r, char *err, size_t errlen)
{
    if (profile_load(NULL, &r->profile, err, errlen) != 0)
        return EXACTAV_EXIT_UNUSABLE;
    r->run.profile = &r->profile;
    r->run.runtime = profile_runtime_description();
    char diff[512];
    if (!r->run.runtime)
        return EXACTAV_EXIT_INTERNAL;
    if (profile_check_runtime(&r->profile, r->run.runtime, diff, sizeof diff)) {
        snprintf(err, errlen, "runtime does not match profile %s: %s", r->profile.id, diff);
        return EXACTAV_EXIT_UNUSABLE;
    }
    profile_fingerprint(&r->profile, r->run.runtime, r->run.fingerprint);
    r->run.compare = r->o->compare_full ? VERIFY_COMPARE_FULL : VERIFY_COMPARE_AUTO;
    r->run.diff_dir = r->o->diff_dir ? r->o->diff_dir : r->cfg.diff_dir;
    int rc = 0;
    r->env.store = canary_store_open(r->o->evidence_path, r->o->sign_key, r->o->store_key, &rc, err, errlen);
    if (!r->env.store)
        return rc;
    if (!(r->metrics = canary_metrics_new()))
        return EXACTAV_EXIT_INTERNAL;
    if (r->o->metrics_listen) {
        char bound[160];
        if (canary_metrics_serve(r->metrics, r->o->metrics_listen, bound, sizeof bound, err, errlen) != 0)
            return EXACTAV_EXIT_USAGE;
        canary_log_event(&r->log, "metrics", "serving http://%s/metrics and /healthz", bound);
    }
    canary_metrics_set_up(r->metrics, true);
    return env_setup(r) == 0 ? 0 : EXACTAV_EXIT_INTERNAL;
}

/* The scheduled prune (config "retention"), when due: at the start and
 * every every_ms; never in a pre-flight session (--once). */
static void retention_due(struct runner *r, int64_t *next_ms)
{
    if (!r->cfg.retention.on || r->o->once || mono_ms() < *next_ms)
        return;
    canary_retention_run(r->o->evidence_path, r->o->store_key, r->run.diff_dir, &r->cfg.retention, util_now_ms(), &r->log);
    *next_ms = mono_ms() + r->cfg.retention.every_ms;
}

/* Takes the signals until it is time to stop. */
static void main_loop(struct runner *r, const sigset_t *sigs)
{
    int64_t end = r->o->duration_ms > 0 ? mono_ms() + r->o->duration_ms : 0;
    int64_t next_prune = mono_ms();
    for (;;) {
        retention_due(r, &next_prune);
        struct timespec tick = {0, TICK_MS * 1000000L};
        int sig = sigtimedwait(sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            canary_log_event(&r->log, "stop", "signal %d: draining (at most %lld ms)", sig,
                             (long long)r->cfg.timeout_ms);
            return;
        }
        if (sig == SIGHUP) {
            if (r->o->once)
                canary_log_event(&r->log, "reload_refused", "a pre-flight session does not reload");
            else
                reload(r);
        }
        if (end && mono_ms() >= end) {
            canary_log_event(&r->log, "stop", "--duration reached: draining");
            return;
        }
        if (r->o->once) {
            pthread_mutex_lock(&r->mu);
            bool done = all_done(r);
            pthread_mutex_unlock(&r->mu);
            if (done)
                return;
        }
    }
}

static void shutdown_run(struct runner *r, struct canary_session *out)
{
    canary_metrics_set_up(r->metrics, false);
    canary_env_stop(&r->env);
    if (drain(r, r->cfg.timeout_ms))
        join_workers(r);
    else {
        out->abandoned = true;
        interrupt_in_flight(r);
        canary_log_event(&r->log, "stop", "checks still running after %lld ms were recorded UNKNOWN interrupted",
                         (long long)r->cfg.timeout_ms);
    }
    collect(r, out);
    out->ended_at_ms = util_now_ms();
}

static void cleanup(struct runner *r)
{
    canary_metrics_free(r->metrics); /* stops the endpoint first */
    canary_refcache_free(r->env.refs);
    canary_store_close(r->env.store);
    canary_env_destroy(&r->env);
    json_decref(r->run.runtime);
    profile_free(&r->profile);
    canary_config_free(&r->cfg);
    free(r->w);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

int canary_run(const struct canary_options *o, struct canary_config *cfg, struct canary_session *out, char *err,
               size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->started_at_ms = util_now_ms();
    struct runner *r = calloc(1, sizeof *r);
    if (!r) {
        canary_config_free(cfg);
        return EXACTAV_EXIT_INTERNAL;
    }
    r->o = o;
    r->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    r->log = (struct canary_log){o->log ? o->log : stderr, o->json};
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    canary_env_init(&r->env, r->cfg.concurrency);
    /* every thread started from here on inherits the blocked signals */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    int rc = prepare(r, err, errlen);
    if (rc == 0 && (make_workers(r, NULL, 0) != 0 || start_workers(r) != 0)) {
        snprintf(err, errlen, "cannot start the workers");
        rc = EXACTAV_EXIT_INTERNAL;
    }
    if (rc == 0) {
        canary_log_event(&r->log, "start", "%zu target(s)%s, concurrency %d, evidence %s", r->nw,
                         o->have_shard ? " in this shard" : "", r->cfg.concurrency, o->evidence_path);
        main_loop(r, &sigs);
        shutdown_run(r, out);
    } else if (r->w) {
        canary_env_stop(&r->env);
        drain(r, -1);
        join_workers(r);
    }
    if (out->abandoned)
        return 0; /* threads still run: the caller prints and leaves with _exit */
    cleanup(r);
    free(r);
    return rc;
}

void canary_session_free(struct canary_session *s)
{
    free(s->outcomes);
    memset(s, 0, sizeof *s);
}
