/* vstore_cli.c - `stepctl verify-store`: control.db's rules of a valid row
 * checked (vstore.h), the first broken one named. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cliutil.h"
#include "record.h"
#include "smac_anchor.h"
#include "smac_cli.h"
#include "smac_keyed.h"
#include "smac_verify.h"
#include "stepctl.h"
#include "vstore.h"

#define VST_TAMPERED 3 /* a row breaks a rule (docs/cli.md) */

static const char vstore_help[] =
    "usage: stepctl verify-store [--db control.db] [--store-key-file F] [--anchor FILE] [--json]\n"
    "\n"
    "Checks every rule a row of control.db keeps when stepctl wrote it: a grant's decision\n"
    "exists and proposed the grant's path, for its cohort, program and policy, with caps within\n"
    "its action; a grant's count is the count of its allocations; every status change and every\n"
    "grant has its event; allocations, reservations and events belong to a grant; no recorded\n"
    "time is past control.db's high-water mark.  Read-only.  `stepctl serve` runs the same\n"
    "check at start and refuses (66) a store that fails it (docs/security.md#tamper-evidence).\n"
    "\n"
    "A keyed store (one a command ran on with --store-key-file) is checked with its key first:\n"
    "every row's MAC and chain, no row without one, none removed, each chain's keyed head\n"
    "(schema 9), the keying checkpoint (rules keying_removed, foreign_schema_object,\n"
    "row_deleted, row_mac_mismatch, row_mac_missing, mac_deleted, head_missing,\n"
    "head_mismatch, checkpoint_mismatch).  Without the key it is not checked\n"
    "at all (64); with a key, an unkeyed store of schema 7 is store_not_keyed (3).\n"
    "\n"
    "--store-key-file F  the key of control.db's MACs (default $STEPCTL_STORE_KEY_FILE);\n"
    "        read only: verify-store never keys a store\n"
    "--anchor FILE  keep the chains' heads outside control.db (a keyed store only): FILE, when\n"
    "        it exists, is checked first (every anchored chain still holds the MAC it had:\n"
    "        rule head_rollback names a chain rolled back to an older copy of the file);\n"
    "        when every check holds, FILE is written anew (0600, MACed under the key).\n"
    "        Keep it off control.db's disk and backups; run this before every start\n"
    "        of the service (docs/security.md#tamper-evidence)\n"
    "--json  {\"kind\": \"store_ok\", \"rules\": N[, \"macs\": M][, \"anchor\": {\"checked\", \"written\"}]} or\n"
    "        {\"kind\": \"store_tampered\", \"table\",\n"
    "        \"row\", \"rule\", \"detail\"}\n"
    "exit: 0 every rule holds, 3 store_tampered (the first broken row named), 64 usage (or a\n"
    "      keyed store without --store-key-file, --anchor on an unkeyed one), 65 the key is not\n"
    "      the store's (or its file is readable by others, or too short; or the anchor is not\n"
    "      this key's or was edited), 66 control.db, the key file or the anchor cannot be\n"
    "      opened or written (missing, not ours, another schema), 70 internal\n";

struct anchor_result {
    bool had;                    /* an anchor existed and was checked */
    size_t checked, written;     /* its chains; the chains of the one written */
};

/* --anchor: the old anchor checked, then (everything holding) a new one
 * written.  0, 1 a finding (f), -1 SQLite, or 65/66 after printing why. */
static int anchor_step(sqlite3 *db, const char *path, struct vst_finding *f, struct anchor_result *ar)
{
    char err[256] = "";
    int rc = smac_anchor_check(db, path, &ar->had, &ar->checked, f, err, sizeof err);
    if (rc == 0)
        rc = smac_anchor_write(db, path, &ar->written, f, err, sizeof err);
    if (rc > 1)
        fprintf(stderr, "stepctl verify-store: --anchor %s: %s\n", path, err);
    return rc;
}

int stepctl_cmd_verify_store(int argc, char **argv)
{
    const char *db_path = NULL, *key_file = NULL, *anchor = NULL;
    bool json = false, help, have_key = false;
    struct cli_opt opts[] = {
        {"--db", &db_path, NULL}, {"--json", NULL, &json}, {"--store-key-file", &key_file, NULL},
        {"--anchor", &anchor, NULL}};
    size_t npos;
    int rc = cli_parse(argc, argv, opts, 4, &help, NULL, 0, &npos);
    if (rc != CLI_OK || help) {
        bool ok = rc == CLI_OK && help;
        fputs(vstore_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    struct store_key key;
    if ((rc = smac_cli_key("verify-store", key_file, &key, &have_key)) != CLI_OK)
        return rc;
    sqlite3 *db = NULL;
    char err[1024];
    enum rec_status st = rec_open_keyed(db_path ? db_path : "control.db", REC_READ,
                                        have_key ? &key : NULL, &db, err, sizeof err);
    if (st != REC_OK) {
        smac_key_wipe(&key);
        fprintf(stderr, "stepctl verify-store: --db %s\n", err);
        sqlite3_close(db);
        return smac_cli_exit(st);
    }
    int keyed = smac_is_keyed(db);
    if (keyed > 0 && !have_key) {
        fprintf(stderr, "stepctl verify-store: control.db is keyed "
                        "(docs/security.md#tamper-evidence): give --store-key-file (or $%s)\n",
                SMAC_ENV);
        sqlite3_close(db);
        return CLI_USAGE;
    }
    if (anchor && keyed == 0) {
        fprintf(stderr, "stepctl verify-store: --anchor keeps a keyed store's chain heads: control.db "
                        "is not keyed (docs/security.md#tamper-evidence)\n");
        smac_key_wipe(&key);
        sqlite3_close(db);
        return CLI_USAGE;
    }
    struct vst_finding f;
    size_t rules = 0, macs = 0;
    /* the keyed check first: it names what changed, where a rule names
     * only what no longer fits */
    int r = keyed < 0 ? -1 : keyed ? smac_verify(db, &key, &f, &macs) : 0;
    smac_key_wipe(&key);
    if (r == 0 && !keyed && have_key && rec_schema_version(db) >= 7) {
        /* never written with the key, or its keying removed with every MAC:
         * either way nothing in it is proven (docs/security.md) */
        snprintf(f.table, sizeof f.table, "store_keying");
        snprintf(f.row, sizeof f.row, "1");
        snprintf(f.rule, sizeof f.rule, "store_not_keyed");
        snprintf(f.detail, sizeof f.detail, "a key was given, control.db is not keyed (never "
                                            "written with it, or its keying and MACs removed)");
        r = 1;
    }
    if (r == 0)
        r = vst_check(db, &f, &rules);
    struct anchor_result ar = {0};
    if (r == 0 && anchor && (r = anchor_step(db, anchor, &f, &ar)) > 1) {
        sqlite3_close(db);
        return r;
    }
    if (r < 0) {
        fprintf(stderr, "stepctl verify-store: control.db: %s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return CLI_SOFTWARE;
    }
    sqlite3_close(db);
    if (json) {
        json_t *o = r == 0 && keyed ? json_pack("{s:s,s:I,s:I}", "kind", "store_ok", "rules",
                                                (json_int_t)rules, "macs", (json_int_t)macs)
                    : r == 0 ? json_pack("{s:s,s:I}", "kind", "store_ok", "rules", (json_int_t)rules)
                           : json_pack("{s:s,s:s,s:s,s:s,s:s}", "kind", "store_tampered", "table",
                                       f.table, "row", f.row, "rule", f.rule, "detail", f.detail);
        if (o && r == 0 && anchor)
            json_object_set_new(o, "anchor", json_pack("{s:o, s:I}", "checked", ar.had ?
                                                       json_integer((json_int_t)ar.checked) : json_null(),
                                                       "written", (json_int_t)ar.written));
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!text)
            return CLI_SOFTWARE;
        printf("%s\n", text);
        free(text);
    } else if (r == 0 && keyed && anchor) {
        printf("store_ok: %zu MACs and %zu rules hold; anchor %s: ", macs, rules, anchor);
        if (ar.had)
            printf("%zu chains checked, ", ar.checked);
        else
            printf("none before, ");
        printf("%zu written\n", ar.written);
    } else if (r == 0 && keyed) {
        printf("store_ok: %zu MACs and %zu rules hold\n", macs, rules);
    } else if (r == 0) {
        printf("store_ok: %zu rules hold\n", rules);
    } else {
        printf("store_tampered: %s %s breaks %s: %s\n", f.table, f.row, f.rule, f.detail);
    }
    return r == 0 ? CLI_OK : VST_TAMPERED;
}
