/* smac_cli.c - --store-key-file (see smac_cli.h). */
#include "smac_cli.h"

#include <stdio.h>

#include "cliutil.h"

int smac_cli_key(const char *cmd, const char *given, struct store_key *k, bool *have)
{
    const char *file = smac_key_file(given);
    *have = file != NULL;
    return file ? smac_key_load(cmd, file, k) : CLI_OK;
}

int smac_cli_exit(enum rec_status st)
{
    return st == REC_OK         ? CLI_OK
           : st == REC_BAD_KEY  ? CLI_DATA
           : st == REC_TAMPERED ? CLI_NOINPUT
                                : cli_store_exit(st == REC_OPEN_FAILED || st == REC_BAD_VERSION);
}

int smac_cli_open(const char *cmd, const char *path, enum rec_mode mode, const char *given,
                  sqlite3 **db)
{
    struct store_key k;
    bool have = false;
    *db = NULL;
    int rc = smac_cli_key(cmd, given, &k, &have);
    if (rc != CLI_OK)
        return rc;
    char err[1024];
    enum rec_status st = rec_open_keyed(path, mode, have ? &k : NULL, db, err, sizeof err);
    smac_key_wipe(&k); /* the connection holds its own copy */
    if (st != REC_OK)
        fprintf(stderr, "stepctl %s: --db %s\n", cmd, err);
    return smac_cli_exit(st);
}
