/* vstore_cli.c - `stepctl verify-store`: control.db's rules of a valid row
 * checked (vstore.h), the first broken one named. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cliutil.h"
#include "record.h"
#include "stepctl.h"
#include "vstore.h"

#define VST_TAMPERED 3 /* a row breaks a rule (docs/cli.md) */

static const char vstore_help[] =
    "usage: stepctl verify-store [--db control.db] [--json]\n"
    "\n"
    "Checks every rule a row of control.db keeps when stepctl wrote it: a grant's decision\n"
    "exists and proposed the grant's path, for its cohort, program and policy, with caps within\n"
    "its action; a grant's count is the count of its allocations; every status change and every\n"
    "grant has its event; allocations, reservations and events belong to a grant; no recorded\n"
    "time is past control.db's high-water mark.  Read-only.  `stepctl serve` runs the same\n"
    "check at start and refuses (66) a store that fails it (docs/security.md#tamper-evidence).\n"
    "\n"
    "--json  {\"kind\": \"store_ok\", \"rules\": N} or {\"kind\": \"store_tampered\", \"table\",\n"
    "        \"row\", \"rule\", \"detail\"}\n"
    "exit: 0 every rule holds, 3 store_tampered (the first broken row named), 64 usage,\n"
    "      66 control.db cannot be opened (missing, not ours, another schema), 70 internal\n";

int stepctl_cmd_verify_store(int argc, char **argv)
{
    const char *db_path = NULL;
    bool json = false, help;
    struct cli_opt opts[] = {{"--db", &db_path, NULL}, {"--json", NULL, &json}};
    size_t npos;
    int rc = cli_parse(argc, argv, opts, 2, &help, NULL, 0, &npos);
    if (rc != CLI_OK || help) {
        bool ok = rc == CLI_OK && help;
        fputs(vstore_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    char err[1024];
    enum rec_status st = rec_open(db_path ? db_path : "control.db", REC_READ, &db, err, sizeof err);
    if (st != REC_OK) {
        fprintf(stderr, "stepctl verify-store: --db %s\n", err);
        sqlite3_close(db);
        return cli_store_exit(st == REC_OPEN_FAILED || st == REC_BAD_VERSION);
    }
    struct vst_finding f;
    size_t rules = 0;
    int r = vst_check(db, &f, &rules);
    if (r < 0) {
        fprintf(stderr, "stepctl verify-store: control.db: %s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return CLI_SOFTWARE;
    }
    sqlite3_close(db);
    if (json) {
        json_t *o = r == 0 ? json_pack("{s:s,s:I}", "kind", "store_ok", "rules", (json_int_t)rules)
                           : json_pack("{s:s,s:s,s:s,s:s,s:s}", "kind", "store_tampered", "table",
                                       f.table, "row", f.row, "rule", f.rule, "detail", f.detail);
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!text)
            return CLI_SOFTWARE;
        printf("%s\n", text);
        free(text);
    } else if (r == 0) {
        printf("store_ok: %zu rules hold\n", rules);
    } else {
        printf("store_tampered: %s %s breaks %s: %s\n", f.table, f.row, f.rule, f.detail);
    }
    return r == 0 ? CLI_OK : VST_TAMPERED;
}
