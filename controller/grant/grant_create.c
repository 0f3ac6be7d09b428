/* grant_create.c - `stepctl grant`: from a recorded decision to a grant and
 * its reservation, in one write transaction (see grant.h).
 *
 * Everything is checked under the write lock, in this order: the decision
 * (step proposed, not granted yet, young enough, still under the current
 * policy version), the cohort (no other active grant), the caps (never above
 * the step or the policy), then the reservation against the ledger as it is
 * at that moment.  A refusal rolls everything back.
 */
#include "grant.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "decision.h"
#include "ledger.h"
#include "loop_policy.h"
#include "num.h"
#include "replay.h"
#include "tbucket.h"

static enum grt_outcome refuse(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum grt_outcome refuse(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return GRT_REFUSED;
}

/* The other eligible paths in the decision's preference order: the fixed
 * lexicographic rule applied again and again to what is left.  Also checks
 * that the recorded inputs still choose the recorded path.  0, 1 (they do
 * not), -1 (memory). */
static int rank_fallbacks(const struct sit_situation *s, int64_t t, const struct evidence_rows *rows,
                          const char *chosen, char *out, size_t outlen)
{
    struct dcn_result r;
    if (dcn_decide(s, t, rows, &r) < 0)
        return -1;
    int rc = r.chosen >= 0 && !strcmp(r.c[r.chosen].path_id, chosen) ? 0 : 1;
    struct pref_input in[SIT_MAX_CANDIDATES];
    size_t m = 0;
    for (size_t i = 0; i < r.n && rc == 0; i++)
        if (r.c[i].eligible && (long)i != r.chosen)
            in[m++] = (struct pref_input){r.c[i].path_id, r.c[i].cost.low, r.c[i].cost.high,
                                          s->candidates[i].qoe.startup_p90_ms};
    json_t *a = json_array();
    while (m > 0) {
        struct pref_result p;
        pref_choose(in, m, &s->policy, &p);
        json_decref(p.trace);
        assert(p.chosen >= 0 && (size_t)p.chosen < m);
        json_array_append_new(a, json_string(in[p.chosen].path_id));
        memmove(&in[p.chosen], &in[p.chosen + 1], (m - (size_t)p.chosen - 1) * sizeof in[0]);
        m--;
    }
    char *text = json_dumps(a, JSON_COMPACT);
    if (!text || strlen(text) >= outlen)
        rc = -1;
    else
        strcpy(out, text);
    free(text);
    json_decref(a);
    dcn_free(&r);
    return rc;
}

/* Is the record what its inputs give?  The check of `stepctl replay`: the
 * recorded inputs (situation, time, evidence rows, ledger values) decided
 * again and compared with the stored answer, columns and condition rows.
 * 0 identical, 1 not, -1 error. */
static int replays(const struct sit_situation *s, const struct rec_loaded *l, const char *id)
{
    json_t *again = NULL;
    if (rpl_recompute(s, l->decision_time_ms, &l->rows, id, STEPCTL_VERSION, &again) != 0)
        return -1;
    char *lines = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&lines, &len); /* the differences are replay's to print */
    size_t n = sink ? rpl_compare(l, again, sink) : 0;
    if (sink)
        fclose(sink);
    free(lines);
    json_decref(again);
    return !sink ? -1 : n ? 1 : 0;
}

static void stop_conditions(struct grt_grant *g)
{
    json_t *a = json_pack(
        "[{s:s,s:I},{s:s,s:I},{s:s,s:s,s:s,s:s},{s:s},{s:s,s:[s,s,s]}]", "kind", "expiry",
        "valid_until_ms", (json_int_t)g->valid_until_ms, "kind", "quota", "max_allocations",
        (json_int_t)g->max_allocations, "kind", "policy_change", "policy_id", g->policy_id,
        "policy_version", g->policy_version, "intent_version", g->intent_version, "kind",
        "revocation", "kind", "next", "closes_on", "content MISMATCH",
        "QoE or resource guard violated", "insufficient observation (UNKNOWN)");
    char *t = a ? json_dumps(a, JSON_COMPACT) : NULL;
    snprintf(g->stop_conditions, sizeof g->stop_conditions, "%s", t ? t : "[]");
    free(t);
    json_decref(a);
}

/* The caps: each option at most the step's (or the policy's) value. */
static enum grt_outcome caps(const struct grt_options *o, const struct sit_situation *s,
                             const struct lpol *lp, int64_t t, int64_t now, struct grt_grant *g,
                             char *why, size_t len)
{
    const struct sit_action *a = &s->action;
    int64_t step_until = t + a->window_s * 1000;
    if (a->max_rate_per_s <= 0)
        return refuse(why, len, "step_rate_zero: the step allows no allocation rate");
    if (o->max_allocations > a->max_allocations)
        return refuse(why, len, "above_step: --max-allocations %lld is above the step's %lld",
                      (long long)o->max_allocations, (long long)a->max_allocations);
    if (o->max_rate_micro > a->max_rate_per_s) {
        char x[32], y[32];
        num_format(o->max_rate_micro, x, sizeof x);
        num_format(a->max_rate_per_s, y, sizeof y);
        return refuse(why, len, "above_step: --max-rate %s is above the step's %s", x, y);
    }
    if (o->burst > lp->max_burst)
        return refuse(why, len, "above_policy: --burst %lld is above policy.grant.max_burst %lld",
                      (long long)o->burst, (long long)lp->max_burst);
    if (o->url_ttl_s > lp->url_ttl_s)
        return refuse(why, len, "above_policy: --url-ttl %lld is above policy.grant.url_ttl_s %lld",
                      (long long)o->url_ttl_s, (long long)lp->url_ttl_s);
    g->valid_from_ms = now;
    g->valid_until_ms = o->valid_for_s ? now + o->valid_for_s * 1000 : step_until;
    if (g->valid_until_ms > step_until)
        return refuse(why, len, "above_step: --valid-for %lld s ends after the step's window "
                                "(valid until %lld ms)",
                      (long long)o->valid_for_s, (long long)step_until);
    if (g->valid_until_ms <= now)
        return refuse(why, len, "step_window_over: the step's window ended at %lld ms",
                      (long long)step_until);
    g->max_allocations = o->max_allocations ? o->max_allocations : a->max_allocations;
    g->verification_max = o->verification_allocations;
    g->max_rate_micro = o->max_rate_micro ? o->max_rate_micro : a->max_rate_per_s;
    g->burst = o->burst ? o->burst : lp->max_burst;
    g->url_ttl_s = o->url_ttl_s ? o->url_ttl_s : lp->url_ttl_s;
    g->expected_play_s = lp->expected_play_s;
    g->commitment_until_ms = g->valid_until_ms + (g->url_ttl_s + g->expected_play_s) * 1000;
    struct tb_bucket b = tb_full(g->burst, now);
    g->bucket_tokens_nano = b.tokens_nano;
    g->bucket_at_ms = b.at_ms;
    return GRT_CREATED;
}

/* The decision itself: proposed, not yet granted, young, current policy. */
static enum grt_outcome check_decision(sqlite3 *db, const struct rec_loaded *l,
                                       const struct sit_situation *s, const struct lpol *lp,
                                       int64_t now, char *why, size_t len)
{
    const json_t *r = l->result;
    const char *outcome = json_string_value(json_object_get(r, "outcome"));
    if (!outcome || strcmp(outcome, "step_proposed"))
        return refuse(why, len, "decision_not_step_proposed: the decision's outcome is %s",
                      outcome ? outcome : "unknown");
    struct grt_grant other;
    static const char by_decision[] = "SELECT id FROM grants WHERE decision_id = ?1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, by_decision, -1, &st, NULL) != SQLITE_OK)
        return GRT_FAILED;
    sqlite3_bind_text(st, 1, json_string_value(json_object_get(r, "decision_id")), -1,
                      SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        snprintf(other.id, sizeof other.id, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return refuse(why, len, "already_granted: the decision was granted as %s", other.id);
    if (rc != SQLITE_DONE)
        return GRT_FAILED;
    if (l->decision_time_ms > now)
        return refuse(why, len, "decision_in_future: decision time %lld ms is after now",
                      (long long)l->decision_time_ms);
    if (now - l->decision_time_ms > lp->max_decision_age_s * 1000)
        return refuse(why, len,
                      "decision_too_old: decided %lld s ago, policy.grant.max_decision_age_s is "
                      "%lld",
                      (long long)((now - l->decision_time_ms) / 1000),
                      (long long)lp->max_decision_age_s);
    int cur = grt_policy_current(db, NULL, s->policy.id, s->policy.version, s->policy.intent_version);
    if (cur < 0)
        return GRT_FAILED;
    if (cur == 0)
        return refuse(why, len, "policy_changed: a newer decision of policy %s carries another "
                                "version than %s (intent %s)",
                      s->policy.id, s->policy.version, s->policy.intent_version);
    return GRT_CREATED;
}

/* No second active grant for the cohort; a grant that has ended is settled.
 * A grant under a policy version that is no longer current issues nothing
 * any more (the service refuses policy_changed): it is revoked here, with
 * that reason, so the new version's decision can be granted. */
static enum grt_outcome check_cohort(sqlite3 *db, const struct sit_cohort *c, int64_t now,
                                     const char *actor, char *why, size_t len)
{
    struct grt_grant other;
    int rc = grt_load_cohort(db, NULL, c, &other);
    if (rc < 0)
        return GRT_FAILED;
    if (rc == 1)
        return GRT_CREATED;
    if (grt_state(&other, now) == GRT_ACTIVE) {
        int cur = grt_policy_current(db, NULL, other.policy_id, other.policy_version,
                                     other.intent_version);
        if (cur < 0)
            return GRT_FAILED;
        if (cur == 1)
            return refuse(why, len,
                          "cohort_has_active_grant: grant %s is still active for this cohort",
                          other.id);
        char reason[SIT_STR * 3 + 96];
        snprintf(reason, sizeof reason,
                 "policy_changed: policy %s version %s (intent %s) is no longer current",
                 other.policy_id, other.policy_version, other.intent_version);
        return grt_close(db, &other, "revoked", NULL, reason, now, actor) < 0 ? GRT_FAILED
                                                                              : GRT_CREATED;
    }
    return grt_settle(db, &other, now, actor) == 0 ? GRT_CREATED : GRT_FAILED;
}

static enum grt_outcome create_locked(sqlite3 *db, const struct grt_options *o, int64_t now,
                                      const struct rec_loaded *l, struct grt_grant *g, char *why,
                                      size_t len)
{
    struct sit_situation s;
    struct lpol lp;
    char err[512];
    if (sit_parse(l->situation, l->situation_len, &s, err, sizeof err) != 0)
        return refuse(why, len, "decision_unreadable: the recorded situation no longer parses: %s",
                      err);
    enum grt_outcome rc = GRT_CREATED;
    if (ldg_apply(&s, &l->fills, err, sizeof err) != 0 ||
        lpol_parse(l->situation, l->situation_len, &s, &lp, err, sizeof err) != 0)
        rc = refuse(why, len, "decision_unreadable: %s", err);
    if (rc == GRT_CREATED)
        rc = check_decision(db, l, &s, &lp, now, why, len);
    if (rc == GRT_CREATED)
        rc = check_cohort(db, &s.action.cohort, now, o->actor, why, len);
    if (rc == GRT_CREATED)
        rc = caps(o, &s, &lp, l->decision_time_ms, now, g, why, len);
    const json_t *step = json_object_get(l->result, "step");
    const char *path = json_string_value(json_object_get(step, "path_id"));
    long ci = -1;
    for (size_t i = 0; path && i < s.n_candidates; i++)
        if (!strcmp(s.candidates[i].path_id, path))
            ci = (long)i;
    if (rc == GRT_CREATED && ci < 0)
        rc = refuse(why, len, "decision_unreadable: the step's path is not a candidate");
    if (rc == GRT_CREATED) {
        int r = rank_fallbacks(&s, l->decision_time_ms, &l->rows, path, g->fallbacks,
                               sizeof g->fallbacks);
        if (r == 0)
            r = replays(&s, l, o->decision_id);
        rc = r < 0    ? GRT_FAILED
             : r == 1 ? refuse(why, len, "decision_does_not_replay: its recorded inputs do not "
                                         "give its record (choosing %s); see stepctl replay",
                               path)
                      : GRT_CREATED;
    }
    if (rc == GRT_CREATED) {
        snprintf(g->decision_id, sizeof g->decision_id, "%s", o->decision_id);
        snprintf(g->actor, sizeof g->actor, "%s", o->actor);
        snprintf(g->policy_id, sizeof g->policy_id, "%s", s.policy.id);
        snprintf(g->policy_version, sizeof g->policy_version, "%s", s.policy.version);
        snprintf(g->intent_version, sizeof g->intent_version, "%s", s.policy.intent_version);
        g->cohort = s.action.cohort;
        snprintf(g->program_version, sizeof g->program_version, "%s", s.action.program_version);
        snprintf(g->path_id, sizeof g->path_id, "%s", path);
        snprintf(g->status, sizeof g->status, "active");
        g->created_at_ms = now;
        stop_conditions(g);
        struct ldg_request rq = {g->id, &s.candidates[ci], l->decision_time_ms,
                                 l->decision_time_ms + s.action.window_s * 1000, g->valid_from_ms,
                                 g->commitment_until_ms, now};
        char ev[160];
        snprintf(ev, sizeof ev, "granted from decision %s by %s", g->decision_id, o->actor);
        if (grt_insert(db, g) != 0 || grt_event(db, g->id, now, "created", ev, o->actor) < 0)
            rc = GRT_FAILED;
        else {
            int r = ldg_reserve(db, &rq, why, len);
            rc = r < 0 ? GRT_FAILED : r == 1 ? GRT_REFUSED : GRT_CREATED;
        }
    }
    sit_free(&s);
    return rc;
}

enum grt_outcome grt_create(sqlite3 *db, const struct grt_options *o, int64_t now_ms,
                            struct grt_grant *out, char *why, size_t whylen)
{
    assert(db && o && o->decision_id && o->actor && out);
    memset(out, 0, sizeof *out);
    why[0] = '\0';
    if (rec_new_id(out->id) != 0)
        return GRT_FAILED;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(why, whylen, "control.db: begin: %s", sqlite3_errmsg(db));
        return GRT_FAILED;
    }
    /* The grant's times are control.db's acting time (clock.h): never
     * before anything the file recorded. */
    int64_t acting = 0;
    enum clk_rc c = clk_enter(db, now_ms, &acting);
    if (c != CLK_OK) {
        if (c == CLK_BEHIND)
            clk_behind_text(why, whylen, now_ms, acting);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return c == CLK_BEHIND ? GRT_REFUSED : GRT_FAILED;
    }
    struct rec_loaded l;
    enum rec_status ls = rec_load(db, o->decision_id, &l, why, whylen);
    enum grt_outcome rc = ls == REC_NOT_FOUND ? GRT_NOT_FOUND
                          : ls != REC_OK      ? GRT_FAILED
                                              : create_locked(db, o, acting, &l, out, why, whylen);
    if (ls == REC_OK)
        rec_loaded_free(&l);
    if (rc == GRT_CREATED && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
        return GRT_CREATED;
    if (rc == GRT_CREATED || (rc == GRT_FAILED && !why[0]))
        snprintf(why, whylen, "control.db: %s", sqlite3_errmsg(db));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc == GRT_CREATED ? GRT_FAILED : rc;
}
