/* status_cli.c - `stepctl status`.
 *
 * Exit codes (docs/cli.md): 0 printed; 64 usage; 66 a store error on
 * control.db or evidence.db (missing, not ours, another version); 70
 * internal.  Writes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "cliutil.h"
#include "evidence_text.h"
#include "output.h"
#include "record.h"
#include "status.h"
#include "stepctl.h"

static const char status_help[] =
    "usage: stepctl status --db control.db [--evidence evidence.db] [--json]\n"
    "\n"
    "The operator's view of the loop, read-only: for each cohort of control.db its newest\n"
    "decision (outcome, chosen path), the state of its newest grant with the allocations\n"
    "used and remaining, and with --evidence the newest Exact-AV row of each candidate path\n"
    "of that decision and what `stepctl next` of the grant would do now (its dry run: branch,\n"
    "status, reason; the recorded review once there is one).  Nothing is written.\n"
    "\n"
    "exit: 0 printed, 64 usage, 66 control.db or evidence.db cannot be opened or is not\n"
    "      ours, 70 internal\n";

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "-";
}

static void print_grant(FILE *f, const json_t *g)
{
    if (!json_is_object(g)) {
        fprintf(f, "  grant: none\n");
        return;
    }
    fprintf(f, "  grant %s: %s, %lld of %lld allocations used, %lld remaining\n", str(g, "id"),
            str(g, "state"), (long long)json_integer_value(json_object_get(g, "allocated")),
            (long long)json_integer_value(json_object_get(g, "max_allocations")),
            (long long)json_integer_value(json_object_get(g, "remaining")));
    const json_t *n = json_object_get(g, "next");
    if (json_is_object(n) && !strcmp(str(n, "review"), "not_possible"))
        fprintf(f, "  next now: not possible: %s\n", str(n, "reason"));
    else if (json_is_object(n))
        fprintf(f, "  next %s: %s (%s): %s\n",
                !strcmp(str(n, "review"), "recorded") ? "(recorded)" : "now (dry run)",
                str(n, "branch"), str(n, "status"), str(n, "reason"));
}

static int summary(FILE *f, const void *arg)
{
    size_t i, k;
    const json_t *c, *e;
    json_array_foreach(json_object_get(arg, "cohorts"), i, c)
    {
        const json_t *co = json_object_get(c, "cohort"), *d = json_object_get(c, "decision");
        fprintf(f, "cohort %s/%s/%s/%s/%s/%s\n", str(co, "channel"), str(co, "region"),
                str(co, "isp"), str(co, "client"), str(co, "build"), str(co, "rendition"));
        fprintf(f, "  decision %s: %s, chosen %s\n", str(d, "id"), str(d, "outcome"),
                str(d, "chosen"));
        print_grant(f, json_object_get(c, "grant"));
        json_array_foreach(json_object_get(c, "evidence"), k, e)
            fprintf(f, "  evidence %s: %s%s (%s, %s) observed at %lld ms\n", str(e, "path_id"),
                    str(e, "verdict"),
                    json_is_true(json_object_get(e, "malformed")) ? " (malformed)" : "",
                    str(e, "rendition"), str(e, "program_version"),
                    (long long)json_integer_value(json_object_get(e, "observed_at_ms")));
    }
    if (!json_array_size(json_object_get(arg, "cohorts")))
        fprintf(f, "no decision recorded\n");
    return 0;
}

int stepctl_cmd_status(int argc, char **argv)
{
    const char *db_path = NULL, *evidence = NULL;
    bool json = false, help;
    size_t npos;
    struct cli_opt opts[] = {{"--db", &db_path, NULL},
                             {"--evidence", &evidence, NULL},
                             {"--json", NULL, &json}};
    int rc = cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], &help, NULL, 0, &npos);
    if (rc != CLI_OK || help || npos != 0 || !db_path) {
        bool ok = rc == CLI_OK && help;
        fputs(status_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    char why[1024], shown[2048];
    enum rec_status st = rec_open(db_path, REC_READ, &db, why, sizeof why);
    if (st != REC_OK) {
        fprintf(stderr, "stepctl status: --db %s\n", evidence_text_escape(why, false, shown,
                                                                         sizeof shown));
        return cli_store_exit(st == REC_OPEN_FAILED || st == REC_BAD_VERSION);
    }
    json_t *out = NULL;
    rc = stat_collect(db, evidence, cli_now_ms(), &out, why, sizeof why);
    sqlite3_close(db);
    if (rc != 0) {
        fprintf(stderr, "stepctl status: %s\n", evidence_text_escape(why, false, shown,
                                                                     sizeof shown));
        return strncmp(why, "evidence.db", 11) ? CLI_SOFTWARE : CLI_NOINPUT;
    }
    if (json) {
        json_dumpf(out, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (out_escaped(stdout, summary, out) < 0) {
        rc = CLI_SOFTWARE;
    }
    json_decref(out);
    return rc == 0 ? CLI_OK : rc;
}
