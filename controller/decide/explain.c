/* explain.c - the seven answers (see explain.h). */
#include "explain.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"

static const char *s_(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static long long i_(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

static void q1_action(FILE *f, const json_t *r)
{
    const json_t *a = json_object_get(r, "action"), *c = json_object_get(a, "cohort");
    const json_t *p = json_object_get(r, "policy");
    fprintf(f, "1. Which bounded action, and who sets its conditions?\n"
               "   New sessions of channel %s, rendition %s, program version %s, for region %s, "
               "ISP %s, client %s build %s: at most %lld new allocations (counted by unique "
               "allocation id), at most %.15g per second, within %lld s from %lld ms.\n"
               "   Sessions already playing are not migrated. The mandatory conditions come "
               "from the service owner's policy %s version %s (intent %s).\n\n",
            s_(c, "channel"), s_(c, "rendition"), s_(a, "program_version"), s_(c, "region"),
            s_(c, "isp"), s_(c, "client"), s_(c, "build"), i_(a, "max_allocations"),
            json_number_value(json_object_get(a, "max_rate_per_s")), i_(a, "window_s"),
            i_(r, "decision_time_ms"), s_(p, "id"), s_(p, "version"), s_(p, "intent_version"));
}

static void q2_candidate(FILE *f, const json_t *cand)
{
    const json_t *conds = json_object_get(cand, "conditions");
    const json_t *ev = json_object_get(json_object_get(conds, "content"), "evidence");
    fprintf(f, "   - %s: %s.", s_(cand, "path_id"),
            json_is_true(json_object_get(cand, "eligible")) ? "eligible, every condition PASS"
                                                            : "excluded");
    if (json_is_object(ev))
        fprintf(f, " Content evidence %s (%s, observed at %lld ms, profile %s).", s_(ev, "id"),
                s_(ev, "verdict"), i_(ev, "observed_at_ms"), s_(ev, "profile_id"));
    else
        fprintf(f, " No applicable content evidence.");
    fputc('\n', f);
    const char *name;
    json_t *c;
    json_object_foreach((json_t *)conds, name, c)
    {
        if (!strcmp(s_(c, "status"), "PASS"))
            continue;
        fprintf(f, "       %s %s: %s\n", name, s_(c, "status"), s_(c, "detail"));
    }
}

static void q2_evidence(FILE *f, const json_t *r)
{
    fprintf(f, "2. Which evidence applies, and why was each candidate excluded?\n"
               "   UNKNOWN (missing, stale or inapplicable data) and VIOLATION (confirmed) are "
               "kept apart; neither is ever read as PASS.\n");
    size_t i;
    const json_t *cand;
    json_array_foreach(json_object_get(r, "candidates"), i, cand) q2_candidate(f, cand);
    fputc('\n', f);
}

static void q3_rule(FILE *f, const json_t *r)
{
    const json_t *chosen = json_object_get(r, "chosen");
    fprintf(f, "3. Which rule compared the remaining actions?\n"
               "   Only eligible candidates are compared, lexicographically, never by a weighted "
               "score: (1) lower incremental cost, unless the cost ranges overlap within "
               "tie_abs; (2) startup p90 within startup_tie_ms of the best; (3) the policy's "
               "fixed order.\n");
    if (json_is_string(chosen))
        fprintf(f, "   Result: %s, decided by rule '%s'%s.\n\n", json_string_value(chosen),
                s_(r, "chosen_by"),
                json_array_size(json_object_get(r, "eligible")) == 1
                    ? " (it was the only eligible candidate)"
                    : "");
    else
        fprintf(f, "   Result: no candidate was eligible, nothing was compared.\n\n");
}

static void q4_resources(FILE *f, const json_t *r)
{
    const char *owner = s_(r, "budget_owner");
    fprintf(f, "4. Who allocates the shared resources, and which commitments were counted?\n"
               "   The shared origin/shield budget belongs to %s. P_forecast v1 counted, per "
               "window and item, the upper forecast of background load, of existing commitments "
               "(issued URLs, started plays, possible reuse) and of this step, plus the margin:\n",
            owner[0] ? owner : "the budget owner (not named in the situation)");
    size_t i, j;
    const json_t *cand, *chk;
    const char *chosen = json_string_value(json_object_get(r, "chosen"));
    json_array_foreach(json_object_get(r, "candidates"), i, cand)
    {
        const json_t *res = json_object_get(json_object_get(cand, "conditions"), "resources");
        fprintf(f, "   - %s: %s (%s)\n", s_(cand, "path_id"), s_(res, "status"), s_(res, "detail"));
        /* The chosen path's full accounting; the others only by their verdict. */
        if (!chosen || strcmp(chosen, s_(cand, "path_id")))
            continue;
        json_array_foreach(json_object_get(res, "checks"), j, chk)
            fprintf(f, "       [%lld, %lld) %s/%s: background %.15g + commitments %.15g + step "
                       "%.15g + margin %.15g = %.15g %s limit %.15g\n",
                    i_(chk, "start_ms"), i_(chk, "end_ms"), s_(chk, "resource"), s_(chk, "metric"),
                    json_number_value(json_object_get(chk, "background_upper")),
                    json_number_value(json_object_get(chk, "commitments_upper")),
                    json_number_value(json_object_get(chk, "step_upper")),
                    json_number_value(json_object_get(chk, "margin")),
                    json_number_value(json_object_get(chk, "total")),
                    json_is_true(json_object_get(chk, "ok")) ? "<=" : "> (VIOLATION)",
                    json_number_value(json_object_get(chk, "limit")));
    }
    fprintf(f, "   A passing forecast lets the budget owner place a reservation; it authorizes "
               "nothing.\n\n");
}

static void q5_authorized(FILE *f, const json_t *r)
{
    const json_t *st = json_object_get(r, "step"), *ref = json_object_get(r, "refusal");
    fprintf(f, "5. What exactly is authorized, within which limits?\n");
    if (json_is_object(st))
        fprintf(f, "   This decision proposes one bounded step: path %s for at most %lld new "
                   "allocations at most %.15g/s, valid from %lld to %lld ms, under policy version %s "
                   "and intent %s. The grant is issued separately; the admission service checks "
                   "it at every allocation, and version change, revocation, expiry or an "
                   "exhausted quota end issuance.\n\n",
                s_(st, "path_id"), i_(st, "max_allocations"),
                json_number_value(json_object_get(st, "max_rate_per_s")), i_(st, "valid_from_ms"),
                i_(st, "valid_until_ms"), s_(st, "policy_version"), s_(st, "intent_version"));
    else
        fprintf(f, "   Nothing. New admission requests get the pre-declared refusal %s: %s.\n\n",
                s_(ref, "id"), s_(ref, "description"));
}

static void q6_observations(FILE *f, const json_t *r)
{
    const json_t *a = json_object_get(r, "action"), *c = json_object_get(a, "cohort");
    const json_t *chosen = json_object_get(r, "chosen");
    fprintf(f, "6. Which new observations decide this step?\n");
    if (!json_is_string(chosen)) {
        fprintf(f, "   None for a step (none was proposed); a new decision needs fresh, "
                   "applicable evidence that lets some path pass every condition.\n\n");
        return;
    }
    fprintf(f, "   From sessions of this step on %s: new Exact-AV v1 checks of channel %s, "
               "rendition %s, program version %s, each with its own interval and reference "
               "(a re-sent preflight report does not count); QoE of the same cohort with enough "
               "samples and complete windows; fresh resource feedback and current commitments.\n\n",
            json_string_value(chosen), s_(c, "channel"), s_(c, "rendition"),
            s_(a, "program_version"));
}

static void q7_next(FILE *f)
{
    fprintf(f, "7. What happens next?\n"
               "   Positive (MATCH on both tracks, QoE and resource feedback sufficient and "
               "fresh, no guard violated, behaviour inside the model): recompute with current "
               "commitments and authorize the next bounded step separately.\n"
               "   Violation (confirmed A/V difference, QoE or resource guard violated, "
               "behaviour outside the model): close issuance under the grant, never scale up; "
               "waiting does not reopen it.\n"
               "   UNKNOWN (insufficient observation): close issuance as well, keeping the "
               "reason UNKNOWN. There is no automatic fallback to excluded paths: they must pass "
               "admission again.\n");
}

static void write_answers(FILE *out, const json_t *r)
{
    fprintf(out, "Decision %s (%s)\n\n", s_(r, "decision_id"), s_(r, "outcome"));
    q1_action(out, r);
    q2_evidence(out, r);
    q3_rule(out, r);
    q4_resources(out, r);
    q5_authorized(out, r);
    q6_observations(out, r);
    q7_next(out);
}

static int write_answers_cb(FILE *out, const void *r)
{
    write_answers(out, r);
    return 0;
}

/* The answers quote path ids, reasons and details from the situation and
 * the evidence: printed escaped (out_escaped). */
void xpl_write(FILE *out, const json_t *r)
{
    out_escaped(out, write_answers_cb, r);
}
