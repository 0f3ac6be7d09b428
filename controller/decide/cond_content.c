/* cond_content.c - the content condition: Exact-AV v1 evidence for the scope.
 *
 * The newest row (by observed_at_ms; on equal times a non-MATCH row first, so
 * a MATCH never hides a simultaneous MISMATCH or UNKNOWN, then the later
 * recorded_at_ms, then the id: the rule of `exactav evidence latest`) of this path, channel,
 * rendition and program version decides: MATCH -> PASS, MISMATCH ->
 * VIOLATION, UNKNOWN -> UNKNOWN.  It must also be for the policy's profile,
 * observed no later than T and no longer ago than max_evidence_age_s;
 * otherwise it does not apply and the condition is UNKNOWN with that reason.
 * Freshness is counted from observed_at_ms, never recorded_at_ms, so a
 * re-imported old report does not become fresh.
 */
#include "cond.h"

#include <string.h>

static bool in_scope(const struct sit_situation *s, const char *path_id, const struct evidence_row *r)
{
    return !strcmp(r->path_id, path_id) && !strcmp(r->channel, s->action.cohort.channel) &&
           !strcmp(r->check_kind, EVIDENCE_CHECK_KIND);
}

/* "Newest" is evidence/'s rule (evidence_row_newer), the one its queries use. */
static bool newer(const struct evidence_row *a, const struct evidence_row *b)
{
    return !b || evidence_row_newer(a, b);
}

/* Newest row of the exact scope, and newest row of the path+channel. */
static void pick(const struct sit_situation *s, const char *path_id, const struct evidence_rows *rows,
                 const struct evidence_row **exact, const struct evidence_row **any)
{
    *exact = *any = NULL;
    for (size_t i = 0; i < rows->n; i++) {
        const struct evidence_row *r = &rows->rows[i];
        if (!in_scope(s, path_id, r))
            continue;
        if (newer(r, *any))
            *any = r;
        if (!strcmp(r->rendition, s->action.cohort.rendition) &&
            !strcmp(r->program_version, s->action.program_version) && newer(r, *exact))
            *exact = r;
    }
}

static json_t *row_json(const struct evidence_row *r)
{
    return json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:s,s:s,s:s,s:b}", "id", r->id, "verdict",
                     evidence_verdict_name(r->verdict), "reason", r->reason, "observed_at_ms",
                     (json_int_t)r->observed_at_ms, "recorded_at_ms",
                     (json_int_t)r->recorded_at_ms, "profile_id", r->profile_id,
                     "reference_version", r->reference_version, "program_version",
                     r->program_version, "rendition", r->rendition, "malformed", r->malformed);
}

static void inapplicable(const struct sit_situation *s, const struct evidence_row *any,
                         struct cond_result *out)
{
    json_object_set_new(out->data, "newest_other_scope", row_json(any));
    if (strcmp(any->program_version, s->action.program_version))
        cond_set(out, COND_UNKNOWN, "evidence_other_program_version",
                 "no evidence for program version %s; the newest (%s) is for %s",
                 s->action.program_version, any->id, any->program_version);
    else
        cond_set(out, COND_UNKNOWN, "evidence_other_rendition",
                 "no evidence for rendition %s; the newest (%s) is for %s",
                 s->action.cohort.rendition, any->id, any->rendition);
}

static void judge_row(const struct sit_situation *s, const struct evidence_row *r, int64_t t,
                      struct cond_result *out)
{
    int age = cond_freshness(t, r->observed_at_ms, s->policy.max_evidence_age_s);
    if (r->malformed)
        cond_set(out, COND_UNKNOWN, "evidence_malformed",
                 "evidence %s breaks the rules of a valid evidence row (docs/evidence.md); "
                 "stepctl decide said which when it read it", r->id);
    else if (strcmp(r->profile_id, s->policy.profile_id))
        cond_set(out, COND_UNKNOWN, "evidence_other_profile",
                 "evidence %s was checked with profile %s, policy requires %s", r->id,
                 r->profile_id, s->policy.profile_id);
    else if (age == 1)
        cond_set(out, COND_UNKNOWN, "evidence_after_decision_time",
                 "evidence %s was observed after the decision time", r->id);
    else if (age == 2)
        cond_set(out, COND_UNKNOWN, "evidence_stale",
                 "evidence %s was observed %lld s before the decision (max %lld s)", r->id,
                 (long long)((t - r->observed_at_ms) / 1000), (long long)s->policy.max_evidence_age_s);
    else if (r->verdict == EVIDENCE_VERDICT_MATCH)
        cond_set(out, COND_PASS, "match", "evidence %s: Exact-AV MATCH", r->id);
    else if (r->verdict == EVIDENCE_VERDICT_MISMATCH)
        cond_set(out, COND_VIOLATION, "mismatch", "evidence %s: Exact-AV MISMATCH (%s)", r->id,
                 r->reason);
    else
        cond_set(out, COND_UNKNOWN, "evidence_unknown", "evidence %s: verdict UNKNOWN (%s)",
                 r->id, r->reason);
}

void cond_content(const struct sit_situation *s, const struct sit_candidate *c,
                  const struct evidence_rows *rows, int64_t t_ms, struct cond_result *out)
{
    memset(out, 0, sizeof *out);
    out->data = json_pack("{s:s,s:s,s:s,s:s,s:I}", "channel", s->action.cohort.channel,
                          "rendition", s->action.cohort.rendition, "program_version",
                          s->action.program_version, "profile_id", s->policy.profile_id,
                          "max_evidence_age_s", (json_int_t)s->policy.max_evidence_age_s);
    const struct evidence_row *exact, *any;
    pick(s, c->path_id, rows, &exact, &any);
    if (exact) {
        json_object_set_new(out->data, "evidence", row_json(exact));
        json_object_set_new(out->data, "age_ms", json_integer(t_ms - exact->observed_at_ms));
        judge_row(s, exact, t_ms, out);
    } else if (any) {
        inapplicable(s, any, out);
    } else {
        json_object_set_new(out->data, "evidence", json_null());
        cond_set(out, COND_UNKNOWN, "no_evidence",
                 "no Exact-AV evidence for path %s, channel %s", c->path_id,
                 s->action.cohort.channel);
    }
}
