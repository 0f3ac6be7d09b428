/* explain_loop.c - a grant and a `next` review in plain words (see
 * explain.h).  Formats what is recorded; recomputes nothing. */
#include "explain.h"

#include <string.h>

#include "grant.h"
#include "ledger.h"
#include "next.h"
#include "num.h"
#include "output.h"
#include "record.h"

static const char *s_(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static long long i_(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

static void grant_authorized(FILE *f, const struct grt_grant *g, const char *state)
{
    char rate[48];
    num_format(g->max_rate_micro, rate, sizeof rate);
    fprintf(f, "Grant %s (%s)\n\n", g->id, state);
    fprintf(f, "1. What is authorized?\n"
               "   New sessions of channel %s, rendition %s, program version %s, for region %s, "
               "ISP %s, client %s build %s, on path %s: at most %lld new allocations (counted by "
               "unique allocation id: a retry adds nothing), at most %s per second (token bucket, "
               "burst %lld). It was granted by %s from decision %s under policy %s version %s "
               "(intent %s); the decision proposed the step, the grant authorizes it.\n\n",
            g->cohort.channel, g->cohort.rendition, g->program_version, g->cohort.region,
            g->cohort.isp, g->cohort.client, g->cohort.build, g->path_id,
            (long long)g->max_allocations, rate, (long long)g->burst, g->actor, g->decision_id,
            g->policy_id, g->policy_version, g->intent_version);
    fprintf(f, "2. For how long?  Three separate quantities:\n"
               "   - grant validity: new allocations from %lld to %lld ms;\n"
               "   - URL validity: each allocation's URL is valid %lld s from its issue, even after "
               "issuance under the grant has ended;\n"
               "   - expected play duration: %lld s after a URL's expiry.\n"
               "   The step's commitments are therefore counted until %lld ms.\n\n",
            (long long)g->valid_from_ms, (long long)g->valid_until_ms, (long long)g->url_ttl_s,
            (long long)g->expected_play_s, (long long)g->commitment_until_ms);
}

static void grant_reservation(FILE *f, const json_t *res)
{
    fprintf(f, "3. Which headroom is reserved?\n"
               "   The budget owner's ledger holds, per resource and metric, the step's upper "
               "forecast (pending, then posted once allocations were issued; only an explicit, "
               "recorded release voids it):\n");
    size_t i;
    const json_t *r;
    json_array_foreach(res, i, r)
    {
        char amount[48];
        num_format(json_integer_value(json_object_get(r, "amount_micro")), amount, sizeof amount);
        fprintf(f, "   - %s%s%s/%s: %s over [%lld, %lld), %s\n", s_(r, "resource"),
                strlen(s_(r, "scope")) ? " of path " : "", s_(r, "scope"), s_(r, "metric"),
                amount, i_(r, "start_ms"), i_(r, "end_ms"), s_(r, "state"));
    }
    fputc('\n', f);
}

static void grant_history(FILE *f, const struct grt_grant *g, const json_t *events)
{
    fprintf(f, "4. What ends issuance?\n"
               "   Expiry at %lld ms; the quota of %lld allocations; a newer decision under another "
               "version of policy %s; revocation; `stepctl next` on a MISMATCH, a violated guard "
               "or insufficient observation. Ending issuance revokes no URL and stops no play.\n\n",
            (long long)g->valid_until_ms, (long long)g->max_allocations, g->policy_id);
    fprintf(f, "5. What happened?\n   %lld of %lld allocations issued", (long long)g->allocated,
            (long long)g->max_allocations);
    if (g->has_first_allocation)
        fprintf(f, ", the first at %lld ms", (long long)g->first_allocation_ms);
    fprintf(f, ".\n");
    size_t i;
    const json_t *e;
    json_array_foreach(events, i, e)
        fprintf(f, "   - %lld ms %s (%s): %s\n", i_(e, "at_ms"), s_(e, "kind"), s_(e, "actor"),
                s_(e, "reason"));
    fputc('\n', f);
}

static int xpl_grant(FILE *f, sqlite3 *db, const struct grt_grant *g, int64_t now_ms)
{
    json_t *res = ldg_grant_json(db, g->id), *ev = grt_events_json(db, g->id);
    int rc = res && ev ? 0 : -1;
    if (rc == 0) {
        grant_authorized(f, g, grt_state_name(grt_state(g, now_ms)));
        grant_reservation(f, res);
        grant_history(f, g, ev);
        fprintf(f, "6. Which paths may a player fall back to?\n"
                   "   Only those eligible in the same decision, in its preference order: %s. "
                   "Any other path must pass `stepctl decide` again.\n\n"
                   "7. What follows?\n"
                   "   `stepctl next %s` reviews the step from observations made after the first "
                   "allocation: positive proposes the next, larger step as a new decision (to be "
                   "granted separately); negative closes issuance with the reason kept.\n",
                g->fallbacks, g->id);
    }
    json_decref(res);
    json_decref(ev);
    return rc;
}

static void next_observed(FILE *f, const json_t *r)
{
    const json_t *c = json_object_get(r, "content"), *st = json_object_get(r, "step");
    fprintf(f, "1. Which step was reviewed?\n"
               "   Grant %s (decision %s): %lld of %lld allocations on path %s.\n\n",
            s_(r, "grant_id"), s_(r, "decision_id"), i_(st, "allocated"),
            i_(st, "max_allocations"), s_(st, "path_id"));
    fprintf(f, "2. Which observations counted?\n"
               "   Only those made after the first allocation (%lld ms); a pre-flight report, "
               "however recent, never counts. Content: %s %s (%s)\n",
            i_(r, "first_allocation_ms"), s_(c, "status"), s_(c, "reason"), s_(c, "detail"));
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(c, "evidence"), i, e)
        fprintf(f, "   - evidence %s: %s (video %s, audio %s), observed at %lld ms\n", s_(e, "id"),
                s_(e, "verdict"), s_(e, "video"), s_(e, "audio"), i_(e, "observed_at_ms"));
    fputc('\n', f);
}

static void next_evaluated(FILE *f, const json_t *r)
{
    const json_t *g = json_object_get(r, "growth");
    const json_t *cand = json_array_get(json_object_get(json_object_get(r, "evaluation"),
                                                        "candidates"),
                                        0);
    fprintf(f, "3. How was the next step evaluated?\n"
               "   policy.steps: the granted %lld allocations times %s (rounded down), at most "
               "%lld: %lld allocations at most %s/s, on the same path only, with the step's "
               "access, QoE and "
               "resource observations and the current commitments of the ledger:\n",
            i_(json_object_get(r, "step"), "max_allocations"), s_(g, "factor"),
            i_(g, "ceiling_max_allocations"), i_(g, "next_max_allocations"),
            s_(g, "next_max_rate_per_s"));
    const char *name;
    json_t *c;
    json_object_foreach(json_object_get(cand, "conditions"), name, c)
        fprintf(f, "   - %s %s: %s\n", name, s_(c, "status"), s_(c, "detail"));
    fputc('\n', f);
}

static void xpl_next(FILE *f, const json_t *r)
{
    fprintf(f, "Next decision %s (%s, %s)\n\n", s_(r, "next_id"), s_(r, "branch"), s_(r, "status"));
    next_observed(f, r);
    next_evaluated(f, r);
    fprintf(f, "4. What was decided?\n   %s\n", s_(r, "reason"));
    if (json_is_string(json_object_get(r, "next_decision_id")))
        fprintf(f, "   Positive: decision %s proposes the next step; it authorizes nothing until "
                   "`stepctl grant %s`. Issuance under grant %s has ended (PASS).\n",
                s_(r, "next_decision_id"), s_(r, "next_decision_id"), s_(r, "grant_id"));
    else
        fprintf(f, "   Negative: issuance under grant %s is closed (%s), nothing grows, and no "
                   "other path is tried: it must pass `stepctl decide` again. URLs already "
                   "issued keep playing and stay counted as commitments.\n",
                s_(r, "grant_id"), s_(r, "status"));
}

struct loop_arg {
    sqlite3 *db;
    const char *id;
    int64_t now_ms;
};

static int explain_loop(FILE *f, const void *arg)
{
    const struct loop_arg *a = arg;
    struct grt_grant g;
    int r = grt_load(a->db, a->id, &g);
    if (r == 0)
        return xpl_grant(f, a->db, &g, a->now_ms);
    json_t *nx = NULL;
    if (r < 0 || (r = nxt_load(a->db, a->id, &nx)) < 0)
        return -1;
    if (r == 1)
        return 1;
    /* nxt_load also finds a review by its grant id; a grant id was handled above. */
    xpl_next(f, nx);
    json_decref(nx);
    return 0;
}

int xpl_loop(FILE *f, sqlite3 *db, const char *id, int64_t now_ms)
{
    /* A control.db of schema 1 (read as it is) has no grants and no reviews. */
    if (rec_schema_version(db) < 2)
        return 1;
    struct loop_arg a = {db, id, now_ms};
    /* Grants and reviews quote actors, reasons and path ids: printed escaped. */
    return out_escaped(f, explain_loop, &a);
}
