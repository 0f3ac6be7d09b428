/* next_cli.c - `stepctl next`.
 *
 * Exit codes (docs/cli.md): 0 positive (the next step proposed as a new
 * decision; nothing granted); 4 negative (issuance under the grant closed,
 * VIOLATION or UNKNOWN, recorded); 64 usage; 65 unknown grant, a grant
 * already reviewed or revoked, invalid observations; 66 a file cannot be
 * opened; 70 internal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliutil.h"
#include "evidence_text.h"
#include "next.h"
#include "output.h"
#include "record.h"
#include "smac_cli.h"
#include "situation.h"
#include "stepctl.h"

static const char next_help[] =
    "usage: stepctl next GRANT_ID --db control.db --evidence evidence.db\n"
    "                    [--input observations.json] [--actor NAME] [--dry-run] [--json]\n"
    "                    [--store-key-file F]\n"
    "\n"
    "Reviews the step authorized by a grant, from observations made after its first\n"
    "allocation only: the content evidence of the granted path, cohort rendition and program\n"
    "(evidence.db, read-only; policy.loop.content_from step_sessions: only the checks of\n"
    "the grant's verification allocations), and the step's access, QoE and resource\n"
    "feedback from observations.json ({\"access\", \"qoe\", \"resources\", \"cost\"}: the members of\n"
    "a situation candidate; without access, the newest availability probe of the path in\n"
    "evidence.db gives it, as in decide, named by access_source).  Positive (no MISMATCH,\n"
    "the newest check a fresh MATCH on both tracks, and the next step, sized by\n"
    "policy.steps, passes every condition with current commitments): records a new\n"
    "decision proposing the next step; it grants nothing.  Negative (MISMATCH, a violated\n"
    "guard, or insufficient observation): closes issuance under the grant with the reason\n"
    "(VIOLATION or UNKNOWN).  Either way the grant's issuance ends; no other path is tried\n"
    "(it must pass decide again).  The other candidates of the grant's decision are\n"
    "evaluated again beside the granted path (observations.json \"paths\": {\"D\": {...}},\n"
    "else D's probes and viewers' sessions), so the proposed decision keeps the fallbacks\n"
    "that pass; when the rule now prefers another path the review is negative\n"
    "(preferred_other_path).\n"
    "With policy.feedback.prometheus in the decision's policy, Prometheus is asked first\n"
    "(query_range over the step, within timeout_ms and 1 MiB): a window's observed maximum\n"
    "above the decision's forecast closes issuance (VIOLATION resources_outside_model); no\n"
    "data, an error, NaN, a stale series or several series: UNKNOWN, named by metric.  The\n"
    "answers are recorded (resource_feedback; stepctl replay NEXT_ID recomputes them), and\n"
    "without resources in observations.json the next step's forecast comes from them.\n"
    "\n"
    "--dry-run  computes and prints the same answer (\"dry_run\": true) and exits as next\n"
    "           would, but writes nothing: control.db is opened read-only, no decision is\n"
    "           recorded, the grant stays open and may still be reviewed.\n"
    SMAC_CLI_HELP
    "\n"
    "exit: 0 positive (next step proposed), 4 negative (issuance closed), 64 usage,\n"
    "      65 unknown grant, already reviewed or revoked, invalid observations, a key not\n"
    "      control.db's,\n"
    "      66 a file cannot be opened, 70 internal\n";

/* The step's content evidence, whatever the branch: which check counted and,
 * where the policy names it, where it came from (policy.loop.content_from). */
static void content_line(FILE *f, const json_t *c)
{
    const char *status = json_string_value(json_object_get(c, "status"));
    if (!status)
        return;
    const char *from = json_string_value(json_object_get(c, "content_from"));
    const json_t *va = json_object_get(c, "verification_allocations");
    fprintf(f, "  content %s %s: %s", status, json_string_value(json_object_get(c, "reason")),
            json_string_value(json_object_get(c, "detail")));
    if (from && json_is_array(va))
        fprintf(f, " (content from %s: %zu verification allocation(s))", from, json_array_size(va));
    else if (from)
        fprintf(f, " (content from %s)", from);
    fputc('\n', f);
}

static int summary(FILE *f, const void *arg)
{
    const json_t *r = arg;
    bool dry = json_is_true(json_object_get(r, "dry_run"));
    const char *id = json_string_value(json_object_get(r, "next_id"));
    fprintf(f, "%s%s for grant %s: %s (%s)\n", dry ? "dry run of next" : "next ",
            dry ? "" : id, json_string_value(json_object_get(r, "grant_id")),
            json_string_value(json_object_get(r, "branch")),
            json_string_value(json_object_get(r, "status")));
    const char *reason = json_string_value(json_object_get(r, "reason"));
    fprintf(f, "  %s\n", reason);
    if (!reason || strncmp(reason, "content ", 8)) /* else the line above says it */
        content_line(f, json_object_get(r, "content"));
    const json_t *d = json_object_get(r, "next_decision_id");
    if (dry)
        fprintf(f, "  nothing recorded: next would %s\n",
                !strcmp(json_string_value(json_object_get(r, "branch")), "positive")
                    ? "propose the next step as a new decision and close issuance"
                    : "close issuance under the grant");
    else if (json_is_string(d))
        fprintf(f, "  proposed: decision %s, %lld allocations (grant it with: stepctl grant %s)\n",
                json_string_value(d),
                (long long)json_integer_value(
                    json_object_get(json_object_get(r, "growth"), "next_max_allocations")),
                json_string_value(d));
    else
        fprintf(f, "  issuance under the grant is closed; nothing grows\n");
    return 0;
}

int stepctl_cmd_next(int argc, char **argv)
{
    const char *db_path = NULL, *evidence = NULL, *input = NULL, *actor = NULL, *key_file = NULL,
               *pos[1];
    bool json = false, dry_run = false, help;
    size_t npos;
    struct cli_opt opts[] = {{"--db", &db_path, NULL},
                             {"--evidence", &evidence, NULL},
                             {"--input", &input, NULL},
                             {"--actor", &actor, NULL},
                             {"--dry-run", NULL, &dry_run},
                             {"--json", NULL, &json},
                             {"--store-key-file", &key_file, NULL}};
    int rc = cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], &help, pos, 1, &npos);
    if (rc != CLI_OK || help || npos != 1 || !db_path || !evidence) {
        bool ok = rc == CLI_OK && help;
        fputs(next_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    struct nxt_request rq = {pos[0], evidence, NULL, NULL, 0, dry_run};
    if ((rc = cli_actor("next", actor, SIT_STR - 1, &rq.actor)) != CLI_OK)
        return rc;
    char *obs = NULL;
    if (input && (rc = cli_slurp(input, SIT_MAX_INPUT_BYTES, &obs, &rq.observations_len)) != CLI_OK)
        return rc;
    rq.observations = obs;
    sqlite3 *db = NULL;
    char why[1024];
    if ((rc = smac_cli_open("next", db_path, dry_run ? REC_READ : REC_WRITE,
                            dry_run ? NULL : key_file, &db)) != CLI_OK) {
        free(obs);
        return rc;
    }
    json_t *result = NULL;
    enum nxt_outcome o = nxt_run(db, &rq, cli_now_ms(), &result, why, sizeof why);
    sqlite3_close(db);
    free(obs);
    if (o != NXT_POSITIVE && o != NXT_NEGATIVE) {
        char shown[2048];
        fprintf(stderr, "stepctl next: %s%s\n", o == NXT_REFUSED ? "refused: " : "",
                evidence_text_escape(why, false, shown, sizeof shown));
        return o == NXT_NOINPUT ? CLI_NOINPUT : o == NXT_FAILED ? CLI_SOFTWARE : CLI_DATA;
    }
    /* Recorded: only now is the answer printed. */
    if (json) {
        json_dumpf(result, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (out_escaped(stdout, summary, result) < 0) {
        json_decref(result);
        return CLI_SOFTWARE;
    }
    json_decref(result);
    return o == NXT_POSITIVE ? CLI_OK : CLI_NEGATIVE;
}
