/* next_fallback.c - the next step's decision keeps its eligible fallbacks.
 *
 * `next` used to evaluate the granted path alone, so the decision it
 * proposed had no other eligible path and the next step's grant (and every
 * allocation under it) had no fallback pathway.  Now every other candidate
 * of the grant's decision is evaluated again beside it, against current
 * evidence only: its old access, qoe and resources are dropped (a path must
 * pass again; nothing carries over), and it takes
 *   - the members of observations.json's "paths": {"D": {access, qoe,
 *     resources, cost}} when given;
 *   - else its access from its newest availability probe (access_probe.h),
 *     its qoe from viewers' sessions of that path and the cohort within
 *     policy.qoe.max_age_s (qoe_fill.h), as decide does;
 *   - its content from its newest Exact-AV row in the decision's scope
 *     (evidence_newest, the query decide uses), added to the rows the new
 *     decision records so that replay needs no store.
 * The granted path stays the first candidate; when the rule now prefers
 * another path the review is negative (preferred_other_path): switching
 * paths is a new decision's business, never an automatic fallback. */
#include "next.h"

#include <stdio.h>
#include <string.h>

#include "access_probe.h"
#include "qoe_fill.h"

static const char *const member_keys[] = {"access", "qoe", "resources", "cost"};

static bool member_key(const char *k)
{
    for (size_t i = 0; i < 4; i++)
        if (!strcmp(k, member_keys[i]))
            return true;
    return false;
}

int nxt_paths_check(const json_t *paths, char *why, size_t len)
{
    if (!json_is_object(paths)) {
        snprintf(why, len, "invalid_observations: paths: must be an object of path ids");
        return -1;
    }
    const char *id, *k;
    json_t *p, *v;
    json_object_foreach((json_t *)paths, id, p)
    {
        if (!json_is_object(p)) {
            snprintf(why, len, "invalid_observations: paths.%.64s: must be an object", id);
            return -1;
        }
        json_object_foreach(p, k, v) if (!member_key(k) || !json_is_object(v))
        {
            snprintf(why, len, "invalid_observations: paths.%.64s.%.64s: %s", id, k,
                     member_key(k) ? "must be an object"
                                   : "unknown member (access, qoe, resources, cost)");
            return -1;
        }
    }
    return 0;
}

/* Is path id a candidate of the decision other than the granted path? */
static const json_t *decision_candidate(const json_t *cands, const char *id, const char *granted)
{
    size_t i;
    const json_t *c;
    json_array_foreach(cands, i, c)
    {
        const char *p = json_string_value(json_object_get(c, "path_id"));
        if (p && !strcmp(p, id) && strcmp(p, granted))
            return c;
    }
    return NULL;
}

/* The fallback's QoE from its viewers' sessions, when it has none. */
static int qoe_of_sessions(const struct nxt_fallback_in *in, json_t *cand, const char *path)
{
    if (json_object_get(cand, "qoe"))
        return 0;
    const json_t *age = json_object_get(json_object_get(in->policy, "qoe"), "max_age_s");
    struct qoe_scope sc = {.cohort = in->g->cohort, .path_id = path, .until_ms = in->now_ms + 1};
    sc.since_ms = json_is_integer(age) ? in->now_ms - json_integer_value(age) * 1000 : in->now_ms;
    json_t *qoe = NULL, *source = NULL;
    enum qoe_fill f = qoe_fill(in->db, &sc, in->policy, &qoe, &source);
    if (qoe)
        json_object_set_new(cand, "qoe", qoe);
    if (source)
        json_object_set_new(cand, "qoe_source", source);
    return f == QOE_FILL_ERROR ? -1 : 0;
}

/* One fallback candidate, re-observed; NULL when out of memory. */
static json_t *reobserved(const struct nxt_fallback_in *in, const json_t *old, const char *path)
{
    json_t *c = json_deep_copy(old);
    if (!c)
        return NULL;
    static const char *const dropped[] = {"access", "qoe", "resources", "qoe_source"};
    for (size_t k = 0; k < 4; k++)
        json_object_del(c, dropped[k]);
    const json_t *given = json_object_get(in->paths, path);
    if (given)
        json_object_update(c, (json_t *)given);
    if (acp_fill_candidate(in->evidence_path, c, in->g->cohort.channel, in->g->cohort.rendition,
                           in->now_ms) < 0 ||
        qoe_of_sessions(in, c, path) != 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* The newest content rows of the fallbacks' scopes, appended to rows. */
static int content_rows(const struct nxt_fallback_in *in, const json_t *cands,
                        struct evidence_rows *rows)
{
    struct evidence_scope sc[SIT_MAX_CANDIDATES];
    size_t n = 0, i;
    const json_t *c;
    json_array_foreach(cands, i, c) if (i > 0 && n < SIT_MAX_CANDIDATES) sc[n++] =
        (struct evidence_scope){json_string_value(json_object_get(c, "path_id")),
                                in->g->cohort.channel, in->g->cohort.rendition,
                                in->g->program_version};
    struct evidence_db *db = NULL;
    struct evidence_rows got = {0};
    if (n == 0 || evidence_open(in->evidence_path, EVIDENCE_OPEN_RO, &db, NULL, 0) != EVIDENCE_OK)
        return 0; /* no store: every fallback's content is UNKNOWN no_evidence */
    enum evidence_rc rc = evidence_newest(db, sc, n, &got, NULL, 0);
    evidence_close(db);
    int res = rc == EVIDENCE_OK ? 0 : -1;
    for (size_t k = 0; res == 0 && k < got.n; k++)
        res = evidence_rows_append(rows, &got.rows[k]);
    evidence_rows_free(&got);
    return res;
}

int nxt_fallbacks(const struct nxt_fallback_in *in, json_t *cands, struct evidence_rows *rows,
                  char *why, size_t len)
{
    const char *id;
    json_t *v;
    json_object_foreach((json_t *)in->paths, id, v) if (!decision_candidate(in->candidates, id,
                                                                          in->g->path_id))
    {
        snprintf(why, len, "invalid_observations: paths.%.64s: %s", id,
                 strcmp(id, in->g->path_id)
                     ? "not a candidate of the grant's decision"
                     : "the granted path's observations are the top-level members");
        return 1;
    }
    size_t i;
    const json_t *c;
    json_array_foreach(in->candidates, i, c)
    {
        const char *path = json_string_value(json_object_get(c, "path_id"));
        if (!path || !strcmp(path, in->g->path_id))
            continue;
        json_t *fb = reobserved(in, c, path);
        if (!fb || json_array_append_new(cands, fb) != 0)
            return -1;
    }
    return content_rows(in, cands, rows);
}

bool nxt_other_preferred(const json_t *eval, const char *granted, char *reason, size_t len)
{
    const char *chosen = json_string_value(json_object_get(eval, "chosen"));
    if (!chosen || !strcmp(chosen, granted))
        return false;
    const char *by = json_string_value(json_object_get(eval, "chosen_by"));
    snprintf(reason, len,
             "preference UNKNOWN preferred_other_path: the granted path %s passes, but the rule "
             "(%s) now prefers path %s; growing %s would ignore that and switching is no "
             "fallback: it needs a decision of its own (stepctl decide)",
             granted, by ? by : "order", chosen, granted);
    return true;
}
