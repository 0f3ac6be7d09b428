/* canary_check.c - one cycle of one target (see canary_check.h). */
#include "canary_check.h"

#include <ctype.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "candidate.h"
#include "canary_command.h"
#include "canary_parts.h"
#include "canary_probe.h"
#include "canary_reload.h"
#include "evidence.h"
#include "exitcodes.h"
#include "redact.h"
#include "util.h"
#include "verify.h"

void canary_env_init(struct canary_env *env, int concurrency)
{
    pthread_mutex_init(&env->slot_mu, NULL);
    pthread_cond_init(&env->slot_cv, NULL);
    env->slots_free = concurrency > 0 ? concurrency : 1;
    atomic_init(&env->stopping, false);
}

void canary_env_destroy(struct canary_env *env)
{
    pthread_cond_destroy(&env->slot_cv);
    pthread_mutex_destroy(&env->slot_mu);
}

void canary_env_stop(struct canary_env *env)
{
    atomic_store(&env->stopping, true);
}

/* A check slot.  A check whose candidate is fetched is in flight: it waits
 * for its slot even while the run stops (the drain decides its fate). */
static void slot_acquire(struct canary_env *env)
{
    pthread_mutex_lock(&env->slot_mu);
    while (env->slots_free == 0)
        pthread_cond_wait(&env->slot_cv, &env->slot_mu);
    env->slots_free--;
    pthread_mutex_unlock(&env->slot_mu);
}

static void slot_release(struct canary_env *env)
{
    pthread_mutex_lock(&env->slot_mu);
    env->slots_free++;
    pthread_cond_signal(&env->slot_cv);
    pthread_mutex_unlock(&env->slot_mu);
}

/* ---- recording ---- */

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Stores a report unless its check was declared interrupted, then tells
 * the metrics and the log.  Takes the report. */
static void record(struct canary_env *env, const struct canary_target *t, struct canary_state *st, json_t *report,
                   int64_t started_ms)
{
    if (!report) {
        canary_log_event(env->log, "error", "%s: out of memory building a report", t->key);
        return;
    }
    char err[512] = "";
    canary_store_lock(env->store);
    bool dropped = st->abandoned;
    int rc = dropped ? 0 : canary_store_report_locked(env->store, report, err, sizeof err);
    st->in_flight = false;
    if (!dropped) {
        const json_t *seq = json_object_get(report, "media_sequence");
        st->have_last = true;
        st->last_have_seq = json_is_integer(seq);
        st->last_seq = (uint64_t)json_integer_value(seq);
        /* a result the store refused (the rules of a valid report, or a
         * failed write) is no evidence: it never counts as MATCH */
        snprintf(st->last_verdict, sizeof st->last_verdict, "%s", rc == 0 ? str_of(report, "verdict") : "UNKNOWN");
        snprintf(st->last_reason, sizeof st->last_reason, "%s", rc == 0 ? str_of(report, "reason") : "not_stored");
        snprintf(st->last_id, sizeof st->last_id, "%s", rc == 0 ? str_of(report, "evidence_id") : "");
        snprintf(st->last_detail, sizeof st->last_detail, "%.300s",
                 rc == 0 ? str_of(json_object_get(json_object_get(report, "candidate"), "delivery_failure"), "detail")
                         : err);
        st->last_observed_ms = json_integer_value(json_object_get(report, "observed_at_ms"));
        snprintf(st->last_path_id, sizeof st->last_path_id, "%s", t->path_id);
        if (rc == 0)
            st->stored[!strcmp(st->last_verdict, "MATCH") ? 1 : !strcmp(st->last_verdict, "MISMATCH") ? 2 : 0]++;
    }
    canary_store_unlock(env->store);
    if (dropped) {
        json_decref(report);
        return;
    }
    int64_t took = util_now_ms() - started_ms;
    if (rc != 0)
        canary_log_event(env->log, "store_failed", "%s: %s", t->key, err);
    else if (env->metrics)
    {
        canary_metrics_check(env->metrics, t, str_of(report, "verdict"), took,
                             json_integer_value(json_object_get(report, "observed_at_ms")));
        canary_metrics_compare(env->metrics, str_of(report, "compare"));
    }
    canary_log_check(env->log, t, report, took);
    json_decref(report);
}

struct unknown_args {
    const char *reason, *detail;
    bool have_seq;
    uint64_t seq;
    const struct canary_playlist *observed;  /* the candidate read it is about, or NULL */
    const char *candidate_object;
    const char *reference_object;
    const struct canary_reload *reload;      /* the cycle's blocking reload, or NULL */
};

static void record_unknown(struct canary_env *env, const struct canary_target *t, struct canary_state *st,
                           const struct unknown_args *a, int64_t started_ms)
{
    char id[37];
    if (evidence_new_id(id) != EVIDENCE_OK) {
        canary_log_event(env->log, "error", "%s: no randomness for an evidence id", t->key);
        return;
    }
    json_t *fetches = json_array();
    if (a->observed && a->observed->fetch)
        json_array_append(fetches, a->observed->fetch);
    int64_t at = a->observed && a->observed->started_at_ms ? a->observed->started_at_ms : started_ms;
    int64_t end = a->observed && a->observed->ended_at_ms ? a->observed->ended_at_ms : util_now_ms();
    struct canary_unknown u = {
        .evidence_id = id, .target = t, .reason = a->reason, .detail = a->detail, .have_seq = a->have_seq,
        .seq = a->seq, .observed_at_ms = at, .observed_end_ms = end,
        .candidate_object = a->candidate_object ? a->candidate_object : a->observed ? a->observed->object : NULL,
        .reference_object = a->reference_object, .fetches = fetches,
    };
    json_t *report = canary_report_unknown(env->run, &u);
    json_t *reload = report && a->reload ? canary_reload_json(a->reload) : NULL;
    if (reload)
        json_object_set_new(json_object_get(report, "canary"), "blocking_reload", reload);
    record(env, t, st, report, started_ms);
    json_decref(fetches);
}

/* ---- the check of one media sequence number ---- */

struct cycle {
    struct canary_env *env;
    const struct canary_target *t;
    struct canary_state *st;
    int64_t started_ms, deadline_ms;
    char *url;                       /* the candidate URL this cycle (a secret when signed) */
    char *cookie;                    /* an allocation target's session cookie this cycle (a secret), or NULL */
    char command_failure[256];       /* candidate_command's reason, "" when it ran */
    struct canary_playlist *cand, *ref;
    struct canary_range c, r;
    struct canary_reload reload;     /* the blocking playlist reload of this cycle, if any */
};

/* Why the candidate could not be read, as a reason code and detail. */
static void candidate_failure(const struct cycle *cy, struct unknown_args *a)
{
    if (cy->command_failure[0]) {
        a->reason = "candidate_command_failed";
        a->detail = cy->command_failure;
    } else if (cy->cand) {
        a->reason = cy->cand->failure ? cy->cand->failure : "internal_error";
        a->detail = cy->cand->detail;
        a->observed = cy->cand;
    } else {
        a->reason = "internal_error";
        a->detail = "out of memory";
    }
}

/* Why the reference playlist could not be read. */
static void reference_failure(const struct cycle *cy, struct unknown_args *a, char *detail, size_t n)
{
    a->reason = "reference_unavailable";
    snprintf(detail, n, "reference playlist: %s: %.260s", cy->ref ? cy->ref->failure : "internal_error",
             cy->ref ? cy->ref->detail : "out of memory");
    a->detail = detail;
    a->observed = cy->cand;
}

static void mark_in_flight(struct cycle *cy, uint64_t seq, bool on)
{
    canary_store_lock(cy->env->store);
    cy->st->in_flight = on;
    cy->st->in_flight_seq = seq;
    cy->st->in_flight_since_ms = util_now_ms();
    canary_store_unlock(cy->env->store);
}

/* The run's fetch options with the target's own headers and cookies, or
 * the cookie its allocation's master playlist set (for the candidate's host
 * only: the fetcher never sends them elsewhere). */
static struct fetch_options target_fetch(const struct canary_env *env, const struct cycle *cy)
{
    struct fetch_options fo = env->fetch;
    fo.headers = (const char *const *)cy->t->headers;
    fo.n_headers = cy->t->n_headers;
    fo.cookie = cy->cookie ? cy->cookie : cy->t->cookie;
    return fo;
}

/* The cycle's copies of its secrets, wiped. */
static void cycle_free_secrets(struct cycle *cy)
{
    if (cy->cookie)
        OPENSSL_cleanse(cy->cookie, strlen(cy->cookie));
    free(cy->cookie);
    free(cy->url);
    cy->cookie = cy->url = NULL;
}

/* One name of the target's folder for pictures: letters, digits, '-' and
 * '_' are kept, anything else (a '/', a '.') becomes '_', so that a
 * configured name never leaves DIR. */
static void append_safe(char *out, size_t len, const char *name)
{
    size_t n = strlen(out);
    for (const char *p = name; *p && n + 1 < len; p++)
        out[n++] = isalnum((unsigned char)*p) || *p == '-' || *p == '_' ? *p : '_';
    out[n] = '\0';
}

/* DIR/<path_id>_<channel>_<rendition>: the target's own folder of pictures. */
static void target_diff_dir(const char *dir, const struct canary_target *t, char *out, size_t len)
{
    snprintf(out, len, "%s/", dir);
    append_safe(out, len, t->path_id);
    append_safe(out, len, "_");
    append_safe(out, len, t->channel);
    append_safe(out, len, "_");
    append_safe(out, len, t->rendition);
}

/* One verify_run: the reference side (the shared reference segment with
 * its memo, or, for the parts against their parent, the parent's bytes),
 * a candidate (the segment as delivered, or its parts), the offset. */
struct check_input {
    struct bsrc_segment *ref_segs;
    size_t n_ref;
    const char *ref_object;
    struct canary_segment *memo_of;  /* the reference segment whose memo serves, or NULL */
    struct candidate *cand;
    int64_t offset;
    bool pictures;                   /* --diff-dir applies */
};

static json_t *run_verify(struct cycle *cy, const struct check_input *in, char *err, size_t errlen, int *rc)
{
    struct candidate *cand = in->cand;
    char id[37];
    json_t *ctx = canary_report_context(cy->t);
    struct verify_request rq = {
        .profile = cy->env->run->profile, .ref_segs = in->ref_segs, .n_ref = in->n_ref, .cand_segs = cand->segs,
        .n_cand = cand->nsegs, .offset = in->offset, .reference_object = in->ref_object,
        .candidate_object = cand->object, .context = ctx, .fetches = cand->fetches,
        .observed_at_ms = cand->observed_at_ms, .observed_end_ms = cand->observed_end_ms,
        .candidate_failure = cand->failure, .evidence_id = id,
        /* a body without a declared end: missing frames are UNKNOWN, never MISMATCH */
        .candidate_length_unproven = cand->length_unproven,
    };
    json_t *report = NULL;
    *rc = EXACTAV_EXIT_INTERNAL;
    /* Until the reference's clean decode is known, one check at a time
     * may learn it; afterwards each uses its own copy. */
    struct canary_segment *ref = in->memo_of;
    struct verify_refmemo memo = {0};
    bool known = true;
    if (ref) {
        pthread_mutex_lock(&ref->memo_mu);
        memo = ref->memo;
        known = memo.clean;
        if (known)
            pthread_mutex_unlock(&ref->memo_mu);
        rq.refmemo = &memo;
    }
    rq.compare = cy->env->run->compare;
    char diff_dir[4096 + 3 * CANARY_MAX_NAME + 4];
    if (cy->env->run->diff_dir && in->pictures) {
        target_diff_dir(cy->env->run->diff_dir, cy->t, diff_dir, sizeof diff_dir);
        rq.diff_dir = diff_dir;
    }
    /* stored decodes are of references only (never of a candidate's parent) */
    struct verify_decode_store ds;
    if (ref) {
        canary_store_decodes(cy->env->store, &ds);
        rq.decode_store = &ds;
    }
    if (evidence_new_id(id) == EVIDENCE_OK)
        *rc = verify_run(&rq, &report, err, errlen);
    if (!known) {
        if (memo.clean) {
            ref->memo = memo;
            if (cy->env->metrics)
                canary_metrics_reference_decoded(cy->env->metrics);
        }
        pthread_mutex_unlock(&ref->memo_mu);
    }
    json_decref(ctx);
    if (report)
        candidate_annotate_report(report, cand); /* as exactav verify's report */
    return report;
}

/* verify_run on the shared reference bytes and the delivered candidate. */
static json_t *run_check(struct cycle *cy, struct canary_segment *ref, struct candidate *cand, char *err,
                         size_t errlen, int *rc)
{
    struct bsrc_segment ref_seg = {.data = ref->data, .len = ref->len};
    struct check_input in = {&ref_seg, 1, ref->object, ref, cand, cy->t->time_offset, true};
    return run_verify(cy, &in, err, errlen, rc);
}

/* LL-HLS (canary_parts.h): the parts of segment seq against the reference
 * and against the parent segment, folded with the segment's own report
 * into the one row of the segment.  Takes seg_report (annotated); returns
 * the report to store. */
static json_t *check_parts(struct cycle *cy, struct canary_segment *ref, struct candidate *parent,
                           struct canary_parts *parts, json_t *seg_report)
{
    char err[768];
    int rc;
    struct canary_parts_checks k = {.segment = seg_report};
    k.against_reference = run_check(cy, ref, &parts->c, err, sizeof err, &rc);
    if (k.against_reference && canary_report_annotate(k.against_reference, cy->env->run, cy->t, ref) != 0) {
        json_decref(k.against_reference);
        k.against_reference = NULL;
    }
    const char *seg_v = json_string_value(json_object_get(seg_report, "verdict"));
    const char *ref_v = json_string_value(json_object_get(k.against_reference, "verdict"));
    if (canary_parts_same_bytes(parts, parent)) {
        k.against_segment_by = "bytes";
    } else if (seg_v && ref_v && !strcmp(seg_v, "MATCH") && !strcmp(ref_v, "MATCH")) {
        k.against_segment_by = "transitivity";   /* both decode exactly as the reference */
    } else if (!parts->c.failure && !parent->failure) {
        /* the parent as delivered is the reference of this check: the
         * same timeline, no declared offset */
        struct check_input in = {parent->segs, parent->nsegs, parent->object, NULL, &parts->c, 0, false};
        k.against_segment = run_verify(cy, &in, err, sizeof err, &rc);
        if (k.against_segment && canary_report_annotate(k.against_segment, cy->env->run, cy->t, ref) == 0) {
            /* the row stays the evidence of the reference segment */
            json_t *ctx = json_object_get(k.against_segment, "context");
            json_object_set(ctx, "reference_version",
                            json_object_get(json_object_get(seg_report, "context"), "reference_version"));
            k.against_segment_by = "decode";
        } else {
            json_decref(k.against_segment);
            k.against_segment = NULL;
        }
    }
    json_t *out = canary_parts_combine(&k, parts);
    json_decref(k.against_reference);
    json_decref(k.against_segment);
    if (!out)
        return seg_report; /* out of memory: the segment's own report */
    json_decref(seg_report);
    return out;
}

static void check_both(struct cycle *cy, uint64_t seq)
{
    struct canary_env *env = cy->env;
    int64_t started = util_now_ms();
    struct canary_segment *ref = canary_refcache_segment(env->refs, cy->t->reference, cy->ref, seq, cy->deadline_ms);
    if (!ref || !ref->ok) {
        struct unknown_args a = {"reference_unavailable", ref ? ref->detail : "out of memory", true, seq, NULL,
                                 cy->cand->object, ref ? ref->object : NULL, &cy->reload};
        record_unknown(env, cy->t, cy->st, &a, started);
        canary_segment_release(ref);
        return;
    }
    /* two fetches (playlist, segment) share what is left of the deadline */
    struct candidate_options co = {.location = cy->url, .have_sequence = true, .seq_first = seq, .seq_last = seq};
    int64_t left = cy->deadline_ms - util_now_ms();
    struct fetch_options fo = target_fetch(env, cy);
    co.fetch = canary_fetch_options_until(&fo, util_now_ms() + (left > 2 ? left / 2 : 1));
    struct candidate cand;
    char err[4096] = "";
    mark_in_flight(cy, seq, true);
    enum candidate_status cs = candidate_open(&co, &cand, err, sizeof err);
    /* LL-HLS: the parts of a complete segment, as the cycle's playlist lists them */
    struct canary_parts *parts = NULL;
    if (cs == CANDIDATE_OK && canary_parts_listed(cy->cand, seq) && (parts = malloc(sizeof *parts)) &&
        canary_parts_fetch(cy->cand, seq, &fo, cy->deadline_ms, parts) != 0) {
        canary_parts_free(parts);
        free(parts);
        parts = NULL;
    }
    if (cs != CANDIDATE_OK) {
        struct unknown_args a = {cs == CANDIDATE_USAGE ? "candidate_not_media_playlist" : "internal_error",
                                 cs == CANDIDATE_USAGE ? "the candidate is not one media playlist" : "out of memory",
                                 true, seq, NULL, cy->cand->object, ref->object, &cy->reload};
        record_unknown(env, cy->t, cy->st, &a, started);
    } else {
        slot_acquire(env);
        int rc;
        char verr[768] = "";
        json_t *report = run_check(cy, ref, &cand, verr, sizeof verr, &rc);
        bool ok = report && canary_report_annotate(report, env->run, cy->t, ref) == 0;
        if (ok && parts && parts->count)
            report = check_parts(cy, ref, &cand, parts, report);
        json_t *reload = ok ? canary_reload_json(&cy->reload) : NULL;
        if (reload)
            json_object_set_new(json_object_get(report, "canary"), "blocking_reload", reload);
        slot_release(env);
        if (ok) {
            record(env, cy->t, cy->st, report, started);
        } else {
            json_decref(report);
            struct unknown_args a = {rc == EXACTAV_EXIT_UNUSABLE || rc == EXACTAV_EXIT_NOINPUT ? "reference_unusable"
                                                                                              : "internal_error",
                                     verr[0] ? verr : "the check did not run", true, seq, NULL, cand.object,
                                     ref->object, &cy->reload};
            record_unknown(env, cy->t, cy->st, &a, started);
        }
    }
    if (parts) {
        canary_parts_free(parts);
        free(parts);
    }
    candidate_free(&cand);
    canary_segment_release(ref);
}

static void check_seq(struct cycle *cy, enum canary_source src, uint64_t seq)
{
    int64_t started = util_now_ms();
    char detail[320];
    struct unknown_args a = {.have_seq = true, .seq = seq};
    switch (src) {
    case CANARY_SOURCE_BOTH:
        check_both(cy, seq);
        return;
    case CANARY_SOURCE_CANDIDATE:
        reference_failure(cy, &a, detail, sizeof detail);
        break;
    case CANARY_SOURCE_REFERENCE:
        candidate_failure(cy, &a);
        break;
    case CANARY_SOURCE_DISJOINT:
        /* a candidate below the reference's window is caught by the live
         * edge check before this; here the candidate is ahead of it */
        a.reason = "reference_lacks_segment";
        snprintf(detail, sizeof detail, "the reference lags: it lists media sequence %llu..%llu, the candidate "
                 "%llu..%llu", (unsigned long long)cy->r.first, (unsigned long long)cy->r.last,
                 (unsigned long long)cy->c.first, (unsigned long long)cy->c.last);
        a.detail = detail;
        a.observed = cy->cand;
        break;
    case CANARY_SOURCE_NONE:
        return;
    }
    record_unknown(cy->env, cy->t, cy->st, &a, started);
}

/* ---- the cycle ---- */

/* candidate_command, or the configured candidate. */
static void candidate_url(struct cycle *cy)
{
    const struct canary_target *t = cy->t;
    if (t->alloc) { /* the media playlist of the allocation followed, with its cookie */
        cy->url = strdup(cy->st->alloc.url);
        cy->cookie = cy->st->alloc.cookie[0] ? strdup(cy->st->alloc.cookie) : NULL;
        return;
    }
    if (!t->command) {
        cy->url = strdup(t->candidate);
        return;
    }
    char e1[CANARY_MAX_LOCATION + 32], e2[CANARY_MAX_NAME + 32], e3[CANARY_MAX_NAME + 32], e4[CANARY_MAX_NAME + 32];
    snprintf(e1, sizeof e1, "EXACTAV_CANDIDATE=%s", t->candidate ? t->candidate : "");
    snprintf(e2, sizeof e2, "EXACTAV_PATH_ID=%s", t->path_id);
    snprintf(e3, sizeof e3, "EXACTAV_CHANNEL=%s", t->channel);
    snprintf(e4, sizeof e4, "EXACTAV_RENDITION=%s", t->rendition);
    char *env[] = {e1, e2, e3, e4, NULL};
    int64_t left = cy->deadline_ms - util_now_ms();
    int64_t limit = cy->env->cfg->command_timeout_ms < left ? cy->env->cfg->command_timeout_ms : left;
    if (canary_command_run(t->command, env, limit > 0 ? limit : 1, &cy->url, cy->command_failure,
                           sizeof cy->command_failure) != CANARY_COMMAND_OK && !cy->command_failure[0])
        snprintf(cy->command_failure, sizeof cy->command_failure, "failed");
}

static void observe(struct cycle *cy, struct canary_seen *seen, const struct canary_playlist *pl,
                    const struct canary_range *range, bool is_candidate)
{
    enum canary_pl o = canary_observe(seen, range->last, pl->pl.endlist, (int64_t)pl->pl.target_duration,
                                      util_now_ms());
    char detail[320];
    struct unknown_args a = {.detail = detail, .observed = is_candidate ? pl : NULL,
                             .candidate_object = is_candidate ? NULL : cy->cand ? cy->cand->object : NULL,
                             .reference_object = is_candidate ? NULL : pl->object,
                             .reload = is_candidate ? &cy->reload : NULL};
    if (o == CANARY_PL_STALLED) {
        a.reason = is_candidate ? "playlist_stalled" : "reference_stalled";
        snprintf(detail, sizeof detail, "newest media sequence %llu for %lld ms (target duration %llu s)",
                 (unsigned long long)range->last, (long long)(util_now_ms() - seen->advanced_at_ms),
                 (unsigned long long)pl->pl.target_duration);
    } else if (o == CANARY_PL_REGRESSED) {
        a.reason = is_candidate ? "playlist_regressed" : "reference_regressed";
        snprintf(detail, sizeof detail, "newest media sequence %llu after %llu", (unsigned long long)range->last,
                 (unsigned long long)seen->newest);
    } else {
        /* a restarted numbering (below by more than a window): start again at its newest */
        if (o == CANARY_PL_REBASED && range->last + pl->pl.segment_count < cy->st->next) {
            cy->st->have_next = false;
            canary_log_event(cy->env->log, "rebased", "%s: the %s playlist now counts from %llu", cy->t->key,
                             is_candidate ? "candidate" : "reference", (unsigned long long)range->last);
        }
        return;
    }
    record_unknown(cy->env, cy->t, cy->st, &a, util_now_ms());
}

static struct canary_range range_of(const struct canary_playlist *p)
{
    struct canary_range r = {0};
    r.have = canary_playlist_range(p, &r.first, &r.last);
    return r;
}

/* Nothing could be picked: say why, when there is something to say. */
static void nothing_due(struct cycle *cy)
{
    struct unknown_args a = {0};
    char detail[320];
    if (!cy->c.have)
        candidate_failure(cy, &a);
    else if (!cy->r.have)
        reference_failure(cy, &a, detail, sizeof detail);
    else if (cy->env->once) {
        a.reason = "no_segment_due";
        snprintf(detail, sizeof detail, "candidate %llu..%llu, reference %llu..%llu, lag %u",
                 (unsigned long long)cy->c.first, (unsigned long long)cy->c.last, (unsigned long long)cy->r.first,
                 (unsigned long long)cy->r.last, cy->env->cfg->lag_segments);
        a.detail = detail;
        a.observed = cy->cand;
    } else {
        return; /* nothing new yet */
    }
    record_unknown(cy->env, cy->t, cy->st, &a, util_now_ms());
}

static void report_lag(struct cycle *cy, const struct canary_pick *p)
{
    struct canary_env *env = cy->env;
    if (p->skipped) {
        canary_log_event(env->log, "skipped", "%s: %llu due segment(s) given up (out of the window or over the "
                         "catch-up limit)", cy->t->key, (unsigned long long)p->skipped);
        if (env->metrics)
            canary_metrics_skipped(env->metrics, cy->t, p->skipped);
    }
    uint64_t newest = cy->c.have && cy->r.have ? (cy->c.last < cy->r.last ? cy->c.last : cy->r.last)
                      : cy->c.have            ? cy->c.last
                                              : cy->r.last;
    if (env->metrics && cy->st->have_next && (cy->c.have || cy->r.have))
        canary_metrics_lag(env->metrics, cy->t, (int64_t)newest - (int64_t)(cy->st->next - 1));
}

/* The candidate's live edge against the reference's: true when the
 * candidate's newest segment is behind by more than max_behind_s (one of
 * the reference's target durations by default).  Ended playlists have no
 * live edge. */
static bool behind_live_edge(const struct cycle *cy, char *detail, size_t n)
{
    if (!cy->c.have || !cy->r.have || cy->cand->pl.endlist || cy->ref->pl.endlist)
        return false;
    uint64_t behind = canary_behind_ms(&cy->ref->pl, cy->c.last);
    int64_t bound = cy->env->cfg->max_behind_ms ? cy->env->cfg->max_behind_ms
                                                : (int64_t)cy->ref->pl.target_duration * 1000;
    if (behind <= (uint64_t)bound)
        return false;
    snprintf(detail, n, "the candidate lags: its newest segment is media sequence %llu, the reference's %llu; "
             "the candidate is %s%llu ms behind the reference's live edge (bound %lld ms)",
             (unsigned long long)cy->c.last, (unsigned long long)cy->r.last,
             cy->c.last < cy->r.first ? "at least " : "", (unsigned long long)behind, (long long)bound);
    return true;
}

/* One UNKNOWN candidate_behind_live_edge per newest candidate number: a
 * frozen playlist is on record once, a lagging one at each new segment. */
static void record_behind(struct cycle *cy, const char *detail)
{
    if (cy->st->behind_reported && cy->st->behind_seq == cy->c.last)
        return;
    struct unknown_args a = {.reason = "candidate_behind_live_edge", .detail = detail, .have_seq = true,
                             .seq = cy->c.last, .observed = cy->cand};
    record_unknown(cy->env, cy->t, cy->st, &a, util_now_ms());
    cy->st->behind_reported = true;
    cy->st->behind_seq = cy->c.last;
}

/* Due numbers given up become evidence, oldest first; past
 * CANARY_MAX_GIVEN_UP_ROWS in one cycle the rest share one row. */
#define CANARY_MAX_GIVEN_UP_ROWS 100
static void record_given_up(struct cycle *cy, const struct canary_pick *p)
{
    char detail[320];
    for (uint64_t i = 0; i < p->skipped; i++) {
        uint64_t seq = p->skip_first + i;
        bool rest = i == CANARY_MAX_GIVEN_UP_ROWS - 1 && p->skipped > CANARY_MAX_GIVEN_UP_ROWS;
        struct unknown_args a = {.reason = "segment_given_up", .detail = detail, .have_seq = !rest, .seq = seq,
                                 .observed = cy->cand};
        if (rest)
            snprintf(detail, sizeof detail, "media sequence %llu..%llu were given up unchecked (left the window or "
                     "over catchup_segments %u)", (unsigned long long)seq,
                     (unsigned long long)(p->skip_first + p->skipped - 1), cy->env->cfg->catchup_segments);
        else if (i < p->window_skipped)
            snprintf(detail, sizeof detail, "left the playlists' common window (it now starts at %llu) before it "
                     "was checked", (unsigned long long)(p->skip_first + p->window_skipped));
        else
            snprintf(detail, sizeof detail, "over the catch-up limit (catchup_segments %u): the newer segments "
                     "were checked first", cy->env->cfg->catchup_segments);
        record_unknown(cy->env, cy->t, cy->st, &a, util_now_ms());
        if (rest)
            break;
    }
}

/* The cycle's copy of an allocation target follows allocation s: its rows
 * carry the allocation id and the pathway, which is their path_id. */
static void on_allocation(struct canary_target *tt, const struct canary_alloc_session *s)
{
    tt->path_id = (char *)s->pathway; /* the copy is only read */
    tt->pathway = s->pathway;
    tt->allocation_id = s->allocation_id;
}

/* An allocation target (canary_alloc.h): a new allocation when one is due,
 * and the cycle's copy of the target carrying it (path_id the pathway).
 * False when there is none to follow: the failure is on record. */
static bool follow_allocation(struct canary_env *env, const struct canary_target *t, struct canary_state *st,
                              int64_t deadline_ms, struct canary_target *tt)
{
    *tt = *t;
    int64_t started = util_now_ms();
    bool due = canary_alloc_due(t->alloc, &st->alloc, started);
    if (!due) { /* steering at its TTL, as a player reloads it */
        char moved[320];
        int steer = canary_alloc_steer(t, &env->fetch, deadline_ms, &st->alloc, moved, sizeof moved);
        if (steer > 0)
            canary_log_event(env->log, "allocation", "%s: %s %s", t->key, st->alloc.allocation_id, moved);
        due = steer < 0; /* the session ended: a new allocation now */
    }
    if (!due) {
        on_allocation(tt, &st->alloc);
        return true;
    }
    char detail[320];
    enum canary_alloc_status as = canary_alloc_take(t, &env->fetch, deadline_ms, &st->alloc, detail, sizeof detail);
    if (as == CANARY_ALLOC_OK) {
        canary_log_event(env->log, "allocation", "%s: %s on pathway %s", t->key, st->alloc.allocation_id,
                         st->alloc.pathway);
        on_allocation(tt, &st->alloc);
        return true;
    }
    /* what the service allocated (and the pathway, once chosen) is on the row */
    if (st->alloc.allocation_id[0] && st->alloc.pathway[0])
        on_allocation(tt, &st->alloc);
    struct unknown_args a = {.reason = canary_alloc_reason(as), .detail = detail};
    record_unknown(env, tt, st, &a, started);
    return false;
}

bool canary_cycle(struct canary_env *env, const struct canary_target *t, struct canary_state *st)
{
    struct cycle cy = {.env = env, .t = t, .st = st, .started_ms = util_now_ms()};
    cy.deadline_ms = cy.started_ms + env->cfg->timeout_ms;
    struct canary_target tt;
    if (t->alloc) {
        if (!follow_allocation(env, t, st, cy.deadline_ms, &tt)) {
            st->failures++;
            return true;
        }
        cy.t = t = &tt;
    }
    /* the reference first: a number due because the reference lists it
     * (lag included) was published before the candidate was looked at */
    cy.ref = canary_refcache_playlist(env->refs, t->reference, cy.deadline_ms);
    candidate_url(&cy);
    struct fetch_options fo = target_fetch(env, &cy);
    /* LL-HLS (canary_reload.h): when the reference lists a segment newer
     * than the candidate's last look, ask the candidate to block until it
     * has that one too, so that it is checked the moment the CDN has it */
    cy.r = range_of(cy.ref);
    bool block = st->block_reload && !env->once && cy.r.have && cy.r.last > st->cand.last;
    if (cy.url)
        cy.cand = canary_reload_read(cy.url, block, cy.r.last, &fo, cy.deadline_ms, &cy.reload);
    cy.c = range_of(cy.cand);
    if (t->alloc && cy.cand && cy.cand->http_status == 410)
        st->alloc.have = false; /* the session ended: the next cycle takes a new allocation */
    if (cy.c.have)
        observe(&cy, &st->cand, cy.cand, &cy.c, true);
    if (cy.r.have)
        observe(&cy, &st->ref, cy.ref, &cy.r, false);
    /* the next cycle blocks only after one that read the playlist (st->cand.last is its newest) */
    st->block_reload = cy.c.have && cy.cand->pl.server_control.can_block_reload && !cy.cand->pl.endlist &&
                       st->cand.have;
    char behind_detail[320];
    bool behind = behind_live_edge(&cy, behind_detail, sizeof behind_detail);
    if (!behind)
        st->behind_reported = false;
    struct canary_pick p = canary_select(st->have_next && !env->once, st->next, cy.c, cy.r,
                                         env->cfg->lag_segments, env->once ? 1 : env->cfg->catchup_segments);
    /* a pre-flight (--once) on a lagging candidate never says "may start";
     * a candidate below the reference's window has nothing to check */
    if (behind && (env->once || p.source == CANARY_SOURCE_DISJOINT))
        p = (struct canary_pick){0};
    else if (p.count == 0)
        nothing_due(&cy);
    if (p.skipped && !atomic_load(&env->stopping))
        record_given_up(&cy, &p);
    for (uint64_t seq = p.first; p.count && seq <= p.last; seq++) {
        /* a check still due when the deadline has passed waits for the next
         * cycle; a failure to record costs nothing and is recorded now */
        if (atomic_load(&env->stopping) || (p.source == CANARY_SOURCE_BOTH && util_now_ms() >= cy.deadline_ms))
            break;
        check_seq(&cy, p.source, seq);
        st->have_next = true;
        st->next = seq + 1;
    }
    if (behind && !atomic_load(&env->stopping))
        record_behind(&cy, behind_detail);
    report_lag(&cy, &p);
    bool failed = !cy.c.have;
    st->failures = failed ? st->failures + 1 : 0;
    canary_playlist_release(cy.cand);
    canary_playlist_release(cy.ref);
    cycle_free_secrets(&cy);
    return failed;
}

/* ---- probes ---- */

void canary_probe_target(struct canary_env *env, const struct canary_target *t)
{
    struct cycle cy = {.env = env, .t = t, .started_ms = util_now_ms()};
    cy.deadline_ms = cy.started_ms + env->cfg->timeout_ms;
    candidate_url(&cy);
    struct canary_probe p;
    if (cy.url) {
        struct fetch_options fo = target_fetch(env, &cy);
        struct canary_probe_options po = {(const char *const *)env->cfg->player_origins,
                                          env->cfg->n_player_origins};
        canary_probe_run(cy.url, &fo, &po, cy.deadline_ms, &p);
    } else { /* the command failed: the path could not be observed */
        memset(&p, 0, sizeof p);
        if (evidence_new_id(p.id) != EVIDENCE_OK)
            return;
        p.object = t->candidate ? redact_url_dup(t->candidate, &env->fetch.redact)
                                : strdup("candidate_command");
        snprintf(p.playlist_error, sizeof p.playlist_error, "candidate_command_failed: %s", cy.command_failure);
        p.row = (struct evidence_probe){.id = p.id, .object = p.object ? p.object : "candidate_command",
                                        .status = EVIDENCE_PROBE_UNKNOWN, .reason = "candidate_command_failed",
                                        .observed_at_ms = cy.started_ms, .observed_end_ms = util_now_ms(),
                                        .playlist_error = p.playlist_error};
    }
    p.row.path_id = t->path_id;
    p.row.channel = t->channel;
    p.row.rendition = t->rendition;
    char err[512];
    if (canary_store_probe(env->store, &p.row, err, sizeof err) != 0)
        canary_log_event(env->log, "store_failed", "%s: probe: %s", t->key, err);
    else if (env->metrics)
        canary_metrics_probe(env->metrics, t, evidence_probe_status_name(p.row.status),
                             util_now_ms() - cy.started_ms);
    canary_probe_free(&p);
    cycle_free_secrets(&cy);
}

json_t *canary_interrupted_report(struct canary_env *env, const struct canary_target *t, const struct canary_state *st)
{
    char id[37];
    if (evidence_new_id(id) != EVIDENCE_OK)
        return NULL;
    struct canary_target tt = *t; /* an allocation target's check: under its allocation */
    if (t->alloc && st->alloc.have)
        on_allocation(&tt, &st->alloc);
    struct canary_unknown u = {
        .evidence_id = id, .target = &tt, .reason = "interrupted",
        .detail = "the canary stopped and the check did not finish within timeout_s", .have_seq = true,
        .seq = st->in_flight_seq, .observed_at_ms = st->in_flight_since_ms, .observed_end_ms = util_now_ms(),
    };
    return canary_report_unknown(env->run, &u);
}
