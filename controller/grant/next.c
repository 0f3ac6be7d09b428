/* next.c - the review of one grant's step (see next.h). */
#include "next.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cond.h"
#include "feedback.h"
#include "grant.h"
#include "ledger.h"
#include "loop_policy.h"
#include "num.h"
#include "qoe_fill.h"
#include "record.h"
#include "replay.h"
#include "step_evidence.h"

struct review {
    int64_t now;
    int policy_current; /* 1: the grant's policy version is still the current one */
    struct grt_grant g;
    struct rec_loaded l; /* the grant's decision */
    struct sit_situation s;
    struct lpol lp;
    struct evidence_rows ev; /* the step's content evidence (step_evidence.h) */
    /* policy.loop.content_from "step_sessions": the grant's verification
     * allocations (JSON array text) and every check of the path during the
     * step (a MISMATCH there still closes the step: fail closed) */
    char *verif_ids;
    size_t n_verif;
    struct evidence_rows path_ev;
    struct cond_result content; /* the step's content evidence */
    int64_t next_max, next_rate;
    char *next_text; /* the evaluation's situation */
    struct sit_situation ns;
    struct ldg_fills fills;
    char decision_id[REC_ID_LEN], next_id[REC_ID_LEN];
    json_t *eval; /* the evaluation: a decision answer */
    json_t *qoe_source; /* the QoE taken from the step's sessions (qoe_fill.h), or NULL */
    json_t *access_source; /* the access taken from a probe (next_access.c), or NULL */
    const char *evidence_path;
    json_t *paths_obs; /* observations.json's "paths" (the fallbacks'), or NULL */
    bool qoe_rules_missing;
    struct fb_result fb; /* resource feedback from Prometheus (feedback.h) */
};

static void review_free(struct review *r)
{
    rec_loaded_free(&r->l);
    sit_free(&r->s);
    evidence_rows_free(&r->ev);
    evidence_rows_free(&r->path_ev);
    free(r->verif_ids);
    cond_result_clear(&r->content);
    free(r->next_text);
    sit_free(&r->ns);
    ldg_fills_free(&r->fills);
    json_decref(r->eval);
    json_decref(r->qoe_source);
    fb_result_free(&r->fb);
    json_decref(r->access_source);
    json_decref(r->paths_obs);
    free(r);
}

/* ---- the step's content evidence ------------------------------------------ */

/* The newest valid MISMATCH observed by review time, or NULL (rows are
 * newest first). */
static const struct evidence_row *first_mismatch(const struct review *r,
                                                 const struct evidence_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++) {
        const struct evidence_row *e = &rows->rows[i];
        if (e->observed_at_ms <= r->now && e->verdict == EVIDENCE_VERDICT_MISMATCH && !e->malformed)
            return e;
    }
    return NULL;
}

/* policy.loop.content_from in the record: only where the policy names it,
 * so records made before it existed replay identical. */
static void content_from_json(const struct review *r, json_t *data)
{
    if (!r->lp.content_from_named)
        return;
    json_object_set_new(data, "content_from",
                        json_string(r->lp.content_step_sessions ? "step_sessions" : "path"));
    if (r->lp.content_step_sessions)
        json_object_set_new(data, "verification_allocations",
                            r->verif_ids ? json_loads(r->verif_ids, 0, NULL) : json_array());
}

/* content_from "step_sessions": a MISMATCH of the path seen by any check
 * during the step (the canary's own fetch of the public URL, a pre-flight
 * run again) is not step feedback for the positive branch, but it is a
 * difference: the step is not continued over it.  1 decided. */
static int path_mismatch(struct review *r)
{
    const struct evidence_row *mm = first_mismatch(r, &r->path_ev);
    if (!r->lp.content_step_sessions || !mm || first_mismatch(r, &r->ev))
        return 0;
    struct evidence_rows one = {(struct evidence_row *)mm, 1, 1};
    json_object_set_new(r->content.data, "path_mismatch", stev_rows_json(&one));
    cond_set(&r->content, COND_VIOLATION, "mismatch",
             "evidence %s of path %s observed at %lld ms during the step, outside the step's "
             "verification sessions: Exact-AV MISMATCH (%s)",
             mm->id, r->g.path_id, (long long)mm->observed_at_ms, mm->reason);
    return 1;
}

static void step_content(struct review *r)
{
    struct cond_result *c = &r->content;
    const struct evidence_rows *rows = &r->ev;
    c->data = json_pack("{s:o,s:o}", "first_allocation_ms",
                        r->g.has_first_allocation ? json_integer(r->g.first_allocation_ms)
                                                  : json_null(),
                        "evidence", stev_rows_json(&r->ev));
    content_from_json(r, c->data);
    if (!r->g.has_first_allocation) {
        cond_set(c, COND_UNKNOWN, "no_allocation",
                 "no allocation was issued under the grant: there is nothing to observe");
        return;
    }
    if (path_mismatch(r))
        return;
    const struct evidence_row *mm = first_mismatch(r, rows), *newest = NULL;
    if (mm) {
        cond_set(c, COND_VIOLATION, "mismatch",
                 "evidence %s observed at %lld ms during the step: Exact-AV MISMATCH (%s)",
                 mm->id, (long long)mm->observed_at_ms, mm->reason);
        return;
    }
    for (size_t i = 0; i < rows->n && !newest; i++)
        if (rows->rows[i].observed_at_ms <= r->now) /* not observed yet at review time: skipped */
            newest = &rows->rows[i];
    if (!newest && r->lp.content_step_sessions)
        cond_set(c, COND_UNKNOWN, "no_step_session_evidence",
                 "no Exact-AV check of path %s (profile %s) delivered under one of the grant's "
                 "%zu verification allocations observed after the first allocation "
                 "(policy.loop.content_from step_sessions)",
                 r->g.path_id, r->s.policy.profile_id, r->n_verif);
    else if (!newest)
        cond_set(c, COND_UNKNOWN, "no_step_evidence",
                 "no Exact-AV check of path %s (profile %s) observed after the first allocation",
                 r->g.path_id, r->s.policy.profile_id);
    else if (newest->malformed)
        cond_set(c, COND_UNKNOWN, "evidence_malformed",
                 "evidence %s breaks the rules of a valid evidence row (docs/evidence.md): %s",
                 newest->id, newest->why[0] ? newest->why : "malformed");
    else if (newest->verdict != EVIDENCE_VERDICT_MATCH)
        cond_set(c, COND_UNKNOWN, "evidence_unknown", "the newest check %s is UNKNOWN (%s)",
                 newest->id, newest->reason);
    else if (cond_freshness(r->now, newest->observed_at_ms, r->s.policy.max_evidence_age_s))
        cond_set(c, COND_UNKNOWN, "evidence_stale",
                 "the newest check %s is older than policy.max_evidence_age_s", newest->id);
    else if (newest->video != EVIDENCE_VERDICT_MATCH || newest->audio != EVIDENCE_VERDICT_MATCH)
        cond_set(c, COND_UNKNOWN, "evidence_tracks_unknown",
                 "the newest check %s does not show MATCH on both tracks (video %s, audio %s)",
                 newest->id, evidence_verdict_name(newest->video),
                 evidence_verdict_name(newest->audio));
    else
        cond_set(c, COND_PASS, "match",
                 "evidence %s observed at %lld ms during the step: MATCH on both tracks",
                 newest->id, (long long)newest->observed_at_ms);
}

/* ---- the next step's evaluation --------------------------------------------- */

static const char *const obs_keys[] = {"access", "qoe", "resources", "cost"};

/* The --input file: an object with any of access, qoe, resources, cost
 * (the schema of a situation candidate's members).  NULL with why set. */
static json_t *observations(const struct nxt_request *rq, char *why, size_t len)
{
    if (!rq->observations)
        return json_object();
    json_error_t je;
    /* Numbers keep their text (num_json_loadb): the situation built from them
     * reads every decimal exactly, as decide does. */
    json_t *o = num_json_loadb(rq->observations, rq->observations_len, JSON_REJECT_DUPLICATES,
                               &je);
    if (!o) {
        snprintf(why, len, "invalid_observations: line %d column %d: %s", je.line, je.column,
                 je.text);
        return NULL;
    }
    const char *k;
    json_t *v;
    bool ok = json_is_object(o);
    json_object_foreach(o, k, v)
    {
        size_t i = 0;
        while (i < 4 && strcmp(k, obs_keys[i]))
            i++;
        if (i == 4 && !strcmp(k, "paths")) { /* the fallbacks' (next_fallback.c) */
            ok = nxt_paths_check(v, why, len) == 0;
            if (!ok)
                break;
            continue;
        }
        if (i == 4 || !json_is_object(v)) {
            snprintf(why, len, "invalid_observations: %.64s: %s", k,
                     i == 4 ? "unknown member (access, qoe, resources, cost, paths)"
                            : "must be an object");
            ok = false;
            break;
        }
    }
    if (!ok && !json_is_object(o))
        snprintf(why, len, "invalid_observations: must be a JSON object");
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The decision's situation, at now, sized per policy.steps, with the granted
 * path as the first candidate and the step's observations in place of the
 * old ones (cost stays the decision's unless observed again), then the
 * decision's other candidates re-observed (next_fallback.c).  0 with
 * *out, 1 (invalid observations: why), -1. */
static int next_situation(sqlite3 *db, struct review *r, const json_t *obs, char **out,
                          char *why, size_t len)
{
    json_t *root = num_json_loadb(r->l.situation, r->l.situation_len, JSON_REJECT_DUPLICATES,
                                  NULL);
    json_t *pol = json_object_get(root, "policy"), *act = json_object_get(root, "action");
    json_t *cand = NULL, *c;
    size_t i;
    json_array_foreach(json_object_get(root, "candidates"), i, c)
    {
        if (json_is_string(json_object_get(c, "path_id")) &&
            !strcmp(json_string_value(json_object_get(c, "path_id")), r->g.path_id))
            cand = json_deep_copy(c);
    }
    char rate[48], ceil_rate[48], factor[48];
    num_format(r->next_rate, rate, sizeof rate);
    num_format(r->lp.steps_max_rate_micro, ceil_rate, sizeof ceil_rate);
    num_format(r->lp.steps_factor_micro, factor, sizeof factor);
    char *text = NULL;
    int rc = -1;
    if (root && json_is_object(pol) && json_is_object(act) && cand) {
        json_object_set_new(root, "decision_time_ms", json_integer(r->now));
        /* The growth rule written out: a later review keeps the same ceiling. */
        json_object_set_new(pol, "steps", json_pack("{s:s,s:I,s:s}", "factor", factor,
                                                    "max_allocations",
                                                    (json_int_t)r->lp.steps_max_allocations,
                                                    "max_rate_per_s", ceil_rate));
        json_object_set_new(act, "max_allocations", json_integer(r->next_max));
        json_object_set_new(act, "max_rate_per_s", json_string(rate));
        for (int k = 0; k < 3; k++)
            json_object_del(cand, obs_keys[k]);
        json_object_update(cand, (json_t *)obs);
        json_t *cands = json_pack("[O]", cand);
        struct nxt_fallback_in in = {db, r->evidence_path, &r->g, r->now, pol,
                                     json_object_get(root, "candidates"), r->paths_obs};
        rc = cands ? nxt_fallbacks(&in, cands, &r->ev, why, len) : -1;
        json_object_set_new(root, "candidates", cands);
        text = rc == 0 ? num_json_dumps(root, JSON_COMPACT) : NULL;
    }
    json_decref(cand);
    json_decref(root);
    *out = text;
    return rc == 0 && !text ? -1 : rc;
}

/* Parses, fills commitments from the ledger and decides.  0, 1 (invalid
 * observations: why), -1. */
static int evaluate(sqlite3 *db, struct review *r, const json_t *obs, char *why, size_t len)
{
    char err[512];
    int ns = next_situation(db, r, obs, &r->next_text, why, len);
    if (ns != 0)
        return ns;
    if (sit_parse(r->next_text, strlen(r->next_text), &r->ns, err, sizeof err) != 0) {
        snprintf(why, len, "invalid_observations: %s", err);
        return 1;
    }
    if (ldg_fill(db, &r->ns, &r->fills) != 0 || rec_new_id(r->decision_id) != 0)
        return -1;
    return rpl_recompute(&r->ns, r->now, &r->ev, r->decision_id, STEPCTL_VERSION,
                         &r->eval) == 0
               ? 0
               : -1;
}

/* No qoe observed by hand: the step's own sessions (only those allocated
 * under this grant), when it has any.  0 or -1. */
static int qoe_from_sessions(sqlite3 *db, struct review *r, json_t *obs)
{
    if (json_object_get(obs, "qoe"))
        return 0; /* a hand-written qoe wins */
    json_t *root = num_json_loadb(r->l.situation, r->l.situation_len, 0, NULL), *qoe = NULL;
    struct qoe_scope sc = {.grant_id = r->g.id, .until_ms = INT64_MAX};
    enum qoe_fill f = root ? qoe_fill(db, &sc, json_object_get(root, "policy"), &qoe,
                                      &r->qoe_source)
                           : QOE_FILL_ERROR;
    json_decref(root);
    if (f == QOE_FILL_FILLED)
        json_object_set_new(obs, "qoe", qoe);
    r->qoe_rules_missing = f == QOE_FILL_RULES_MISSING;
    return f == QOE_FILL_ERROR ? -1 : 0;
}

/* ---- branch, reason, answer ------------------------------------------------- */

static bool positive(const struct review *r)
{
    const char *o = json_string_value(json_object_get(r->eval, "outcome"));
    const char *chosen = json_string_value(json_object_get(r->eval, "chosen"));
    return r->policy_current == 1 && r->content.status == COND_PASS && o &&
           !strcmp(o, "step_proposed") && chosen && !strcmp(chosen, r->g.path_id) &&
           (!r->fb.used || r->fb.status == COND_PASS);
}

/* VIOLATION when anything was confirmed wrong, else UNKNOWN; the reason
 * names the first condition that failed. */
static enum cond_status negative_status(const struct review *r, char *reason, size_t len)
{
    /* A proposal under a superseded policy would make it current again. */
    if (r->policy_current != 1 && r->content.status != COND_VIOLATION) {
        snprintf(reason, len, "policy_changed UNKNOWN: policy %s version %s is no longer current; "
                              "the next step needs a decision under the current version",
                 r->g.policy_id, r->g.policy_version);
        return COND_UNKNOWN;
    }
    if (r->content.status != COND_PASS) {
        snprintf(reason, len, "content %s %s: %s", cond_status_name(r->content.status),
                 r->content.reason, r->content.detail);
        return r->content.status;
    }
    if (r->fb.used && r->fb.status != COND_PASS) {
        snprintf(reason, len, "resources %s %s: %s", cond_status_name(r->fb.status),
                 r->fb.reason, r->fb.detail);
        return r->fb.status;
    }
    if (nxt_other_preferred(r->eval, r->g.path_id, reason, len))
        return COND_UNKNOWN;
    const json_t *cand = json_array_get(json_object_get(r->eval, "candidates"), 0);
    const json_t *conds = json_object_get(cand, "conditions");
    const json_t *ex = json_object_get(cand, "excluded_by");
    const json_t *viol = json_object_get(ex, "violation"), *unk = json_object_get(ex, "unknown");
    const json_t *first = json_array_size(viol) ? viol : unk;
    const char *name = json_string_value(json_array_get(first, 0));
    const json_t *c = json_object_get(conds, name ? name : "");
    const char *code = json_string_value(json_object_get(c, "reason"));
    const char *detail = json_string_value(json_object_get(c, "detail"));
    snprintf(reason, len, "%s %s %s: %s", name ? name : "evaluation",
             json_array_size(viol) ? "VIOLATION" : "UNKNOWN", code ? code : "no_step",
             detail ? detail : "no step proposed");
    return json_array_size(viol) ? COND_VIOLATION : COND_UNKNOWN;
}

static json_t *answer(const struct review *r, bool pos, enum cond_status st, const char *reason)
{
    char rate[48], ceil_rate[48], factor[48];
    num_format(r->next_rate, rate, sizeof rate);
    num_format(r->lp.steps_max_rate_micro, ceil_rate, sizeof ceil_rate);
    num_format(r->lp.steps_factor_micro, factor, sizeof factor);
    json_t *content = json_pack("{s:s,s:s,s:s}", "status", cond_status_name(r->content.status),
                                "reason", r->content.reason, "detail", r->content.detail);
    json_object_update_missing(content, r->content.data);
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:s,s:I,s:o,s:s,s:s,s:s,s:{s:s,s:I,s:I},s:o,s:{s:s,s:I,s:s,s:I,s:s},s:O}",
        "next_id", r->next_id, "tool_version", STEPCTL_VERSION, "grant_id", r->g.id,
        "decision_id", r->g.decision_id, "decided_at_ms", (json_int_t)r->now,
        "first_allocation_ms",
        r->g.has_first_allocation ? json_integer(r->g.first_allocation_ms) : json_null(), "branch",
        pos ? "positive" : "negative", "status", cond_status_name(st), "reason", reason, "step",
        "path_id", r->g.path_id, "allocated", (json_int_t)r->g.allocated, "max_allocations",
        (json_int_t)r->g.max_allocations, "content", content, "growth", "factor",
        factor, "ceiling_max_allocations",
        (json_int_t)r->lp.steps_max_allocations, "ceiling_max_rate_per_s", ceil_rate,
        "next_max_allocations", (json_int_t)r->next_max, "next_max_rate_per_s", rate,
        "evaluation", r->eval);
    if (!o)
        return NULL;
    json_object_set_new(o, "next_decision_id", pos ? json_string(r->decision_id) : json_null());
    json_object_set_new(o, "proposed_step",
                        pos ? json_deep_copy(json_object_get(r->eval, "step")) : json_null());
    json_object_set_new(o, "issuance_closed", json_true());
    json_object_set_new(o, "authorizes", json_false());
    if (r->qoe_source) /* new member: only where the step's sessions were read */
        json_object_set(o, "qoe_source", r->qoe_source);
    if (r->fb.record) /* new member: only where policy.feedback.prometheus is declared */
        json_object_set(o, "resource_feedback", r->fb.record);
    if (r->access_source) /* new member: only where a probe gave the access */
        json_object_set(o, "access_source", r->access_source);
    return o;
}

static int insert_review(sqlite3 *db, const struct review *r, const struct nxt_request *rq,
                         const json_t *o, bool pos)
{
    static const char sql[] = "INSERT INTO next_decisions VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)";
    char *text = json_dumps(o, JSON_COMPACT);
    sqlite3_stmt *st = NULL;
    int rc = text ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, r->next_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, r->g.id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, r->now);
        sqlite3_bind_text(st, 4, STEPCTL_VERSION, -1, SQLITE_STATIC);
        if (r->g.has_first_allocation)
            sqlite3_bind_int64(st, 5, r->g.first_allocation_ms);
        sqlite3_bind_text(st, 6, pos ? "positive" : "negative", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, json_string_value(json_object_get(o, "status")), -1,
                          SQLITE_STATIC);
        sqlite3_bind_text(st, 8, json_string_value(json_object_get(o, "reason")), -1,
                          SQLITE_STATIC);
        if (pos)
            sqlite3_bind_text(st, 9, r->decision_id, -1, SQLITE_STATIC);
        if (rq->observations)
            sqlite3_bind_text(st, 10, rq->observations, (int)rq->observations_len, SQLITE_STATIC);
        sqlite3_bind_text(st, 11, text, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    free(text);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Records everything: the new decision (positive), the grant's closing,
 * the review.  Under the caller's transaction.  0 or -1. */
static int record(sqlite3 *db, struct review *r, const struct nxt_request *rq, const json_t *o,
                  bool pos, enum cond_status st, const char *reason)
{
    char err[256];
    struct rec_record d = {r->decision_id, r->now, r->next_text, strlen(r->next_text),
                           &r->ev, r->eval};
    char why[700];
    snprintf(why, sizeof why, "%s%s%s", pos ? "positive: next step proposed as decision " : "",
             pos ? r->decision_id : "", pos ? "" : reason);
    if (pos && rec_write(db, &d, &r->fills, err, sizeof err) != REC_OK)
        return -1;
    return grt_close(db, &r->g, "closed_by_next", cond_status_name(st), why, r->now, rq->actor) ==
                       0 &&
                   insert_review(db, r, rq, o, pos) == 0
               ? 0
               : -1;
}

/* ---- the whole review ------------------------------------------------------- */

static enum nxt_outcome refuse(char *why, size_t len, const char *text)
{
    snprintf(why, len, "%s", text);
    return NXT_REFUSED;
}

/* Loads the grant and its decision.  NXT_FAILED with *ok when loaded;
 * otherwise the outcome to return (a grant that cannot be reviewed). */
static enum nxt_outcome load(sqlite3 *db, struct review *r, const char *grant_id, bool *ok,
                             char *why, size_t len)
{
    char err[512];
    *ok = false;
    int g = grt_load(db, grant_id, &r->g);
    if (g != 0)
        return g == 1 ? (snprintf(why, len, "no grant with this id"), NXT_NOT_FOUND) : NXT_FAILED;
    json_t *prev = NULL;
    int seen = nxt_load(db, grant_id, &prev);
    json_decref(prev);
    if (seen < 0)
        return NXT_FAILED;
    if (seen == 0)
        return refuse(why, len, "already_reviewed: this grant's step was reviewed before");
    if (!strcmp(r->g.status, "revoked"))
        return refuse(why, len, "grant_revoked: a revoked grant is not reviewed");
    if (rec_load(db, r->g.decision_id, &r->l, why, len) != REC_OK)
        return NXT_FAILED;
    if (sit_parse(r->l.situation, r->l.situation_len, &r->s, err, sizeof err) != 0 ||
        lpol_parse(r->l.situation, r->l.situation_len, &r->s, &r->lp, err, sizeof err) != 0) {
        snprintf(why, len, "decision_unreadable: %s", err);
        return NXT_REFUSED;
    }
    *ok = true;
    return NXT_FAILED;
}

static enum nxt_outcome review(sqlite3 *db, struct review *r, const struct nxt_request *rq,
                               json_t **result, char *why, size_t len)
{
    bool loaded;
    enum nxt_outcome rc = load(db, r, rq->grant_id, &loaded, why, len);
    if (!loaded)
        return rc;
    if (r->g.has_first_allocation) {
        if (r->lp.content_step_sessions &&
            stev_verification_ids(db, r->g.id, &r->verif_ids, &r->n_verif) != 0)
            return NXT_FAILED;
        struct stev_scope sc = {r->g.path_id, r->g.cohort.channel, r->g.cohort.rendition,
                                r->g.program_version, r->s.policy.profile_id,
                                r->g.first_allocation_ms, r->verif_ids};
        char err[700] = "";
        enum evidence_rc es = stev_read(rq->evidence_path, &sc, &r->ev, err, sizeof err);
        sc.allocation_ids = NULL; /* every check of the path, for its MISMATCH */
        if (es == EVIDENCE_OK && r->verif_ids)
            es = stev_read(rq->evidence_path, &sc, &r->path_ev, err, sizeof err);
        if (es != EVIDENCE_OK) {
            snprintf(why, len, "--evidence %s: %s", rq->evidence_path, err);
            return es == EVIDENCE_E_OPEN || es == EVIDENCE_E_VERSION ? NXT_NOINPUT : NXT_FAILED;
        }
    }
    step_content(r);
    r->policy_current = grt_policy_current(db, NULL, r->g.policy_id, r->g.policy_version,
                                           r->g.intent_version);
    if (r->policy_current < 0)
        return NXT_FAILED;
    r->next_max = lpol_grow(r->g.max_allocations, r->lp.steps_factor_micro,
                            r->lp.steps_max_allocations);
    r->next_rate = lpol_grow(r->g.max_rate_micro, r->lp.steps_factor_micro,
                             r->lp.steps_max_rate_micro);
    json_t *obs = observations(rq, why, len);
    if (!obs)
        return NXT_REFUSED;
    if (r->fb.resources && !json_object_get(obs, "resources")) /* the forecast from Prometheus */
        json_object_set(obs, "resources", r->fb.resources);
    r->evidence_path = rq->evidence_path;
    r->paths_obs = json_incref(json_object_get(obs, "paths"));
    json_object_del(obs, "paths");
    if (qoe_from_sessions(db, r, obs) != 0 ||
        nxt_access_fill(rq->evidence_path, &r->g, r->now, obs, &r->access_source) != 0) {
        json_decref(obs);
        return NXT_FAILED;
    }
    int ev = evaluate(db, r, obs, why, len);
    json_decref(obs);
    if (ev != 0 || rec_new_id(r->next_id) != 0)
        return ev == 1 ? NXT_REFUSED : NXT_FAILED;
    bool pos = positive(r);
    char reason[700];
    enum cond_status st = pos ? COND_PASS : negative_status(r, reason, sizeof reason);
    if (!pos && r->qoe_rules_missing && !strncmp(reason, "qoe ", 4))
        snprintf(reason, sizeof reason, "qoe UNKNOWN qoe_classes_missing: the recorded policy "
                                        "does not say how sessions count (policy.qoe.classes, "
                                        "policy.qoe.min_completeness); QoE is never guessed");
    if (pos)
        snprintf(reason, sizeof reason,
                 "step observed: content %s; QoE, access, resources and cost of a next step of %lld "
                 "allocations PASS",
                 r->content.detail, (long long)r->next_max);
    *result = answer(r, pos, st, reason);
    if (*result && rq->dry_run) /* computed, nothing recorded */
        return nxt_dry_mark(*result) == 0 ? (pos ? NXT_POSITIVE : NXT_NEGATIVE) : NXT_FAILED;
    if (!*result || record(db, r, rq, *result, pos, st, reason) != 0)
        return NXT_FAILED;
    return pos ? NXT_POSITIVE : NXT_NEGATIVE;
}

/* The review's time is control.db's acting time (clock.h), raised as its
 * high-water mark; a dry run writes nothing, but refuses as next would.
 * NXT_POSITIVE to go on, NXT_REFUSED (clock_behind) or NXT_FAILED. */
static enum nxt_outcome at_acting_time(sqlite3 *db, struct review *r, bool dry_run, char *why,
                                       size_t whylen)
{
    int64_t clock = r->now;
    enum clk_rc c = dry_run ? clk_check(db, clock, &r->now) : clk_enter(db, clock, &r->now);
    if (c == CLK_BEHIND)
        clk_behind_text(why, whylen, clock, r->now);
    return c == CLK_OK ? NXT_POSITIVE : c == CLK_BEHIND ? NXT_REFUSED : NXT_FAILED;
}

enum nxt_outcome nxt_run(sqlite3 *db, const struct nxt_request *rq, int64_t now_ms,
                         json_t **result, char *why, size_t whylen)
{
    assert(db && rq && rq->grant_id && rq->evidence_path && rq->actor && result);
    *result = NULL;
    why[0] = '\0';
    struct review *r = calloc(1, sizeof *r);
    if (!r)
        return NXT_FAILED;
    r->now = now_ms;
    /* Prometheus is asked before the write transaction: its answer time
     * never holds control.db's lock. */
    if (fb_for_grant(db, rq->grant_id, now_ms, NULL, &r->fb) != 0) {
        snprintf(why, whylen, "resource feedback: out of memory or control.db unreadable");
        review_free(r);
        return NXT_FAILED;
    }
    /* A dry run reads one snapshot (its connection may be read-only). */
    if (sqlite3_exec(db, rq->dry_run ? "BEGIN" : "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
        SQLITE_OK) {
        snprintf(why, whylen, "control.db: begin: %s", sqlite3_errmsg(db));
        review_free(r);
        return NXT_FAILED;
    }
    enum nxt_outcome rc = at_acting_time(db, r, rq->dry_run, why, whylen);
    if (rc == NXT_POSITIVE)
        rc = review(db, r, rq, result, why, whylen);
    bool ok = rc == NXT_POSITIVE || rc == NXT_NEGATIVE;
    if (ok && rq->dry_run)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* nothing was written */
    else if (ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        ok = false, rc = NXT_FAILED;
    if (!ok) {
        if (rc == NXT_FAILED && !why[0])
            snprintf(why, whylen, "control.db: %s", sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        json_decref(*result);
        *result = NULL;
    }
    review_free(r);
    return rc;
}

int nxt_load(sqlite3 *db, const char *id, json_t **result)
{
    static const char sql[] = "SELECT result FROM next_decisions WHERE id = ?1 OR grant_id = ?1";
    sqlite3_stmt *st = NULL;
    *result = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *result = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? (*result ? 0 : -1) : rc == SQLITE_DONE ? 1 : -1;
}
