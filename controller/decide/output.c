/* output.c - JSON of a decision (see output.h). */
#include "output.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "evidence_text.h"
#include "num.h"

static json_t *cohort_json(const struct sit_cohort *c)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "channel", c->channel, "region", c->region,
                     "isp", c->isp, "client", c->client, "build", c->build, "rendition",
                     c->rendition);
}

static json_t *action_json(const struct sit_situation *s)
{
    const struct sit_action *a = &s->action;
    json_t *o = json_pack("{s:o,s:s,s:I,s:I}", "cohort", cohort_json(&a->cohort),
                          "program_version", a->program_version, "max_allocations",
                          (json_int_t)a->max_allocations, "window_s", (json_int_t)a->window_s);
    json_object_set_new(o, "max_rate_per_s", num_to_json(a->max_rate_per_s));
    return o;
}

/* {status, reason, detail} followed by the data the condition used. */
static json_t *cond_json(const struct cond_result *c)
{
    json_t *o = json_pack("{s:s,s:s,s:s}", "status", cond_status_name(c->status), "reason",
                          c->reason ? c->reason : "not_evaluated", "detail", c->detail);
    if (c->data)
        json_object_update_missing(o, c->data);
    return o;
}

static json_t *candidate_json(const struct dcn_candidate *d)
{
    json_t *conds = json_object(), *viol = json_array(), *unk = json_array();
    for (int k = 0; k < COND_N; k++) {
        json_object_set_new(conds, cond_kind_name(k), cond_json(&d->cond[k]));
        /* A VIOLATION and an UNKNOWN are never merged into "not eligible". */
        if (d->cond[k].status == COND_VIOLATION)
            json_array_append_new(viol, json_string(cond_kind_name(k)));
        else if (d->cond[k].status == COND_UNKNOWN)
            json_array_append_new(unk, json_string(cond_kind_name(k)));
    }
    return json_pack("{s:s,s:b,s:{s:o,s:o},s:o}", "path_id", d->path_id, "eligible", d->eligible,
                     "excluded_by", "violation", viol, "unknown", unk, "conditions", conds);
}

static json_t *step_json(const struct sit_situation *s, const struct dcn_result *r)
{
    const struct sit_action *a = &s->action;
    json_t *o = json_pack("{s:s,s:o,s:s,s:s,s:s,s:I,s:I,s:I,s:b}", "path_id",
                          r->c[r->chosen].path_id, "cohort", cohort_json(&a->cohort),
                          "program_version", a->program_version, "policy_version",
                          s->policy.version, "intent_version", s->policy.intent_version,
                          "max_allocations", (json_int_t)a->max_allocations, "valid_from_ms",
                          (json_int_t)r->decision_time_ms, "valid_until_ms",
                          (json_int_t)(r->decision_time_ms + a->window_s * 1000),
                          "authorizes", 0);
    json_object_set_new(o, "max_rate_per_s", num_to_json(a->max_rate_per_s));
    json_object_set_new(o, "note", json_string("a proposal: the grant that authorizes it is "
                                               "issued separately and checked at every allocation"));
    return o;
}

json_t *out_result(const struct sit_situation *s, const struct dcn_result *r,
                   const char *decision_id, const char *tool_version)
{
    assert(s && r && decision_id && tool_version);
    json_t *cands = json_array(), *elig = json_array();
    for (size_t i = 0; i < r->n; i++) {
        json_array_append_new(cands, candidate_json(&r->c[i]));
        if (r->c[i].eligible)
            json_array_append_new(elig, json_string(r->c[i].path_id));
    }
    const char *by = pref_rule_name(r->pref.rule);
    json_t *o = json_pack(
        "{s:s,s:s,s:I,s:{s:s,s:s,s:s},s:o,s:o,s:o,s:o,s:o,s:O,s:s}", "decision_id", decision_id,
        "tool_version", tool_version, "decision_time_ms", (json_int_t)r->decision_time_ms,
        "policy", "id", s->policy.id, "version", s->policy.version, "intent_version",
        s->policy.intent_version, "action", action_json(s), "candidates", cands, "eligible", elig,
        "chosen", r->chosen >= 0 ? json_string(r->c[r->chosen].path_id) : json_null(),
        "chosen_by", by ? json_string(by) : json_null(), "preference", r->pref.trace, "outcome",
        dcn_outcome_name(r->outcome));
    if (!o)
        return NULL;
    if (r->outcome == DCN_STEP_PROPOSED) {
        json_object_set_new(o, "step", step_json(s, r));
        json_object_set_new(o, "refusal", json_null());
    } else {
        json_object_set_new(o, "step", json_null());
        json_t *rf = json_pack("{s:s,s:s}", "id", s->policy.refusal_id, "description",
                               s->policy.refusal_text);
        /* How serve answers it: members only where the policy declares them,
         * so decisions recorded before them replay identically. */
        if (rf && s->policy.refusal_http_status)
            json_object_set_new(rf, "http_status", json_integer(s->policy.refusal_http_status));
        if (rf && s->policy.refusal_has_retry)
            json_object_set_new(rf, "retry_after_s",
                                json_integer(s->policy.refusal_retry_after_s));
        json_object_set_new(o, "refusal", rf);
    }
    json_object_set_new(o, "budget_owner", json_string(s->policy.budget_owner));
    return o;
}

/* Path ids, reasons and details come from the situation and the evidence:
 * printed escaped (evidence_text.h), a few slots per line. */
struct shown {
    char slot[4][1024];
    int next;
};

static const char *text(struct shown *sh, const json_t *v)
{
    char *buf = sh->slot[sh->next++ % 4];
    return evidence_text_escape(json_string_value(v), false, buf, sizeof sh->slot[0]);
}

static void list_reasons(FILE *f, const json_t *cand, const char *label, const char *key)
{
    const json_t *a = json_object_get(json_object_get(cand, "excluded_by"), key);
    const json_t *conds = json_object_get(cand, "conditions");
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        struct shown sh = {.next = 0};
        const json_t *c = json_object_get(conds, json_string_value(v));
        fprintf(f, "    %s %s: %s (%s)\n", label, text(&sh, v), text(&sh, json_object_get(c, "reason")),
                text(&sh, json_object_get(c, "detail")));
    }
}

void out_summary(FILE *f, const json_t *res)
{
    struct shown sh = {.next = 0};
    const json_t *chosen = json_object_get(res, "chosen");
    fprintf(f, "decision %s: %s\n", text(&sh, json_object_get(res, "decision_id")),
            text(&sh, json_object_get(res, "outcome")));
    if (json_is_string(chosen))
        fprintf(f, "  chosen %s by %s\n", text(&sh, chosen), text(&sh, json_object_get(res, "chosen_by")));
    else
        fprintf(f, "  no eligible path: refusal %s\n",
                text(&sh, json_object_get(json_object_get(res, "refusal"), "id")));
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(res, "candidates"), i, c)
    {
        int ok = json_is_true(json_object_get(c, "eligible"));
        fprintf(f, "  %s: %s\n", text(&sh, json_object_get(c, "path_id")), ok ? "eligible" : "excluded");
        list_reasons(f, c, "VIOLATION", "violation");
        list_reasons(f, c, "UNKNOWN  ", "unknown");
    }
}

int out_escaped(FILE *out, int (*write)(FILE *, const void *), const void *arg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return -1;
    int rc = write(mem, arg);
    fclose(mem);
    /* An escape is at most four bytes per input byte ("\\xNN"; a 3-byte
     * format character becomes the 8 of "\\u{XXXX}"). */
    char *shown = text ? malloc(len * 4 + 16) : NULL;
    if (!shown) {
        free(text);
        return -1;
    }
    for (char *line = text, *next; *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        else
            next = line + strlen(line);
        fprintf(out, "%s\n", evidence_text_escape(line, false, shown, len * 4 + 16));
    }
    free(shown);
    free(text);
    return rc;
}
