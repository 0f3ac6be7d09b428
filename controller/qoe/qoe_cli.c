/* qoe_cli.c - `stepctl qoe`: the QoE of a step from its viewers' sessions.
 *
 * Exit codes (docs/cli.md): 0 printed; 64 usage; 65 unknown grant, no
 * recorded decision for the cohort, or a recorded policy without
 * policy.qoe.classes / min_completeness; 66 control.db cannot be opened;
 * 70 internal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliutil.h"
#include "evidence_text.h"
#include "num.h"
#include "qoe_report.h"
#include "record.h"
#include "stepctl.h"

static const char qoe_help[] =
    "usage: stepctl qoe --db control.db (--grant ID | --cohort CHANNEL,REGION,ISP,CLIENT,BUILD,\n"
    "                   RENDITION --path P) [--since MS] [--until MS] [--json]\n"
    "\n"
    "Prints the QoE object of a situation candidate computed from the viewers' own CMCD v2\n"
    "session reports stored by `stepctl serve` (the sessions of the grant, or of the cohort\n"
    "and path, allocated in [--since, --until) ms): attempts, successes, failures, unknown,\n"
    "startup_p50_ms, startup_p90_ms (nearest rank), rebuffer_ratio, complete, observed_at_ms\n"
    "and cohort exactly as a situation's qoe, plus unused, out_of_context and provenance\n"
    "(counts per class, sn gaps, report totals, startup p50/p90/p99 and n, rebuffering with its\n"
    "completeness, the window).  How exit before start and autoplay refused count, and the\n"
    "minimum completeness, come from the recorded policy (policy.qoe.classes,\n"
    "policy.qoe.min_completeness) of the grant's decision or the cohort's newest decision.\n"
    "\n"
    "exit: 0 printed, 64 usage, 65 unknown grant, no decision for the cohort, or a policy\n"
    "      without policy.qoe.classes or min_completeness, 66 control.db cannot be opened,\n"
    "      70 internal\n";

/* "a,b,c,d,e,f" into the six cohort fields: 0 or -1. */
static int cohort_arg(const char *s, struct sit_cohort *c)
{
    char *f[] = {c->channel, c->region, c->isp, c->client, c->build, c->rendition};
    for (int i = 0; i < 6; i++) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= SIT_STR || (i < 5 && s[n] != ',') || (i == 5 && s[n]))
            return -1;
        memcpy(f[i], s, n);
        f[i][n] = '\0';
        s += n + (i < 5);
    }
    return 0;
}

/* The recorded situation whose policy rules these sessions: the grant's
 * decision, or the cohort's newest.  Malloc'd text, or NULL (none). */
static char *recorded_situation(sqlite3 *db, const struct qoe_scope *sc)
{
    static const char by_grant[] =
        "SELECT d.situation FROM grants g JOIN decisions d ON d.id = g.decision_id WHERE g.id = ?1";
    static const char by_cohort[] =
        "SELECT situation FROM decisions WHERE channel = ?1 AND rendition = ?6 AND "
        "json_extract(result, '$.action.cohort.region') = ?2 AND "
        "json_extract(result, '$.action.cohort.isp') = ?3 AND "
        "json_extract(result, '$.action.cohort.client') = ?4 AND "
        "json_extract(result, '$.action.cohort.build') = ?5 "
        "ORDER BY recorded_at_ms DESC, rowid DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sc->grant_id ? by_grant : by_cohort, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    if (sc->grant_id) {
        sqlite3_bind_text(st, 1, sc->grant_id, -1, SQLITE_STATIC);
    } else {
        const struct sit_cohort *c = &sc->cohort;
        const char *v[] = {c->channel, c->region, c->isp, c->client, c->build, c->rendition};
        for (int i = 0; i < 6; i++)
            sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    }
    char *text = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        text = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return text;
}

/* The rules of the recorded policy: 0, or an exit code after printing why. */
static int rules_of(sqlite3 *db, const struct qoe_scope *sc, struct qoe_rules *r)
{
    char *text = recorded_situation(db, sc);
    if (!text) {
        fprintf(stderr, "stepctl qoe: %s\n",
                sc->grant_id ? "unknown grant" : "no recorded decision for this cohort");
        return CLI_DATA;
    }
    json_t *sit = num_json_loadb(text, strlen(text), 0, NULL);
    free(text);
    const char *missing = "qoe_classes_missing";
    int rc = sit && qoe_rules_from_policy(json_object_get(sit, "policy"), r, &missing) == 0
                 ? CLI_OK
                 : CLI_DATA;
    if (rc != CLI_OK)
        fprintf(stderr, "stepctl qoe: UNKNOWN %s: the recorded policy does not say how "
                        "sessions count (policy.qoe.classes, policy.qoe.min_completeness)\n",
                missing);
    json_decref(sit);
    return rc;
}

static void print_num(const json_t *o, const char *key, const char *unit)
{
    int64_t v;
    char buf[48];
    const json_t *x = json_object_get(o, key);
    if (x && num_from_json(x, NUM_MAX_UNITS, &v) == 0) {
        num_format(v, buf, sizeof buf);
        printf("  %-16s %s%s\n", key, buf, unit);
    } else {
        printf("  %-16s (not observed)\n", key);
    }
}

static void print_text(const json_t *o)
{
    const json_t *p = json_object_get(o, "provenance"), *c = json_object_get(p, "classes");
    printf("qoe from sessions: %lld attempts: %lld successes, %lld failures, %lld unknown\n",
           (long long)json_integer_value(json_object_get(o, "attempts")),
           (long long)json_integer_value(json_object_get(o, "successes")),
           (long long)json_integer_value(json_object_get(o, "failures")),
           (long long)json_integer_value(json_object_get(o, "unknown")));
    printf("  classes          success %lld, failure %lld, unknown %lld, exit_before_start %lld, "
           "autoplay_refused %lld; unused %lld, out of context %lld, excluded %lld\n",
           (long long)json_integer_value(json_object_get(c, "success")),
           (long long)json_integer_value(json_object_get(c, "failure")),
           (long long)json_integer_value(json_object_get(c, "unknown")),
           (long long)json_integer_value(json_object_get(c, "exit_before_start")),
           (long long)json_integer_value(json_object_get(c, "autoplay_refused")),
           (long long)json_integer_value(json_object_get(o, "unused")),
           (long long)json_integer_value(json_object_get(o, "out_of_context")),
           (long long)json_integer_value(json_object_get(p, "excluded")));
    print_num(o, "startup_p50_ms", " ms");
    print_num(o, "startup_p90_ms", " ms");
    print_num(o, "rebuffer_ratio", "");
    print_num(json_object_get(p, "rebuffer"), "completeness", "");
    printf("  complete         %s\n", json_is_true(json_object_get(o, "complete")) ? "yes" : "no");
    printf("  sn gaps          %lld sessions\n",
           (long long)json_integer_value(json_object_get(p, "sessions_with_sn_gaps")));
}

static int run(const char *db_path, struct qoe_scope *sc, bool json)
{
    sqlite3 *db = NULL;
    char err[1024];
    enum rec_status st = rec_open(db_path, REC_READ, &db, err, sizeof err);
    if (st != REC_OK) {
        fprintf(stderr, "stepctl qoe: %s\n", err);
        return cli_store_exit(st == REC_OPEN_FAILED || st == REC_BAD_VERSION);
    }
    struct qoe_rules rules;
    int rc = rules_of(db, sc, &rules);
    json_t *o = rc == CLI_OK ? qoe_report(db, sc, &rules, err, sizeof err) : NULL;
    if (rc == CLI_OK && !o) {
        fprintf(stderr, "stepctl qoe: %s\n", err);
        rc = CLI_SOFTWARE;
    }
    if (o && json) {
        char *t = num_json_dumps(o, JSON_PRESERVE_ORDER | JSON_INDENT(2));
        rc = t ? CLI_OK : CLI_SOFTWARE;
        if (t)
            printf("%s\n", t);
        free(t);
    } else if (o) {
        print_text(o);
    }
    json_decref(o);
    sqlite3_close(db);
    return rc;
}

int stepctl_cmd_qoe(int argc, char **argv)
{
    const char *db_path = NULL, *grant = NULL, *cohort = NULL, *path = NULL, *since = NULL,
               *until = NULL;
    bool json = false, help;
    size_t npos;
    struct cli_opt opts[] = {{"--db", &db_path, NULL},     {"--grant", &grant, NULL},
                             {"--cohort", &cohort, NULL},  {"--path", &path, NULL},
                             {"--since", &since, NULL},    {"--until", &until, NULL},
                             {"--json", NULL, &json}};
    int rc = cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], &help, NULL, 0, &npos);
    struct qoe_scope sc = {.grant_id = grant, .path_id = path, .until_ms = INT64_MAX};
    bool scoped = grant ? !cohort && !path : cohort && path;
    if (rc == CLI_OK && !help && scoped && cohort && cohort_arg(cohort, &sc.cohort) != 0) {
        fprintf(stderr, "stepctl qoe: --cohort: CHANNEL,REGION,ISP,CLIENT,BUILD,RENDITION\n");
        return CLI_USAGE;
    }
    if (rc == CLI_OK && !help && scoped &&
        (cli_int("qoe", "--since", since, 0, INT64_MAX - 1, &sc.since_ms) != 0 ||
         cli_int("qoe", "--until", until, 1, INT64_MAX, &sc.until_ms) != 0))
        return CLI_USAGE;
    if (rc != CLI_OK || help || !db_path || !scoped) {
        bool ok = rc == CLI_OK && help;
        fputs(qoe_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    return run(db_path, &sc, json);
}
