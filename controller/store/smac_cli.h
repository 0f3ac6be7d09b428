/* smac_cli.h - --store-key-file for the commands that open control.db
 * (docs/cli.md#store-key): the option, else $STEPCTL_STORE_KEY_FILE. */
#ifndef SMAC_CLI_H
#define SMAC_CLI_H

#include <stdbool.h>

#include <sqlite3.h>

#include "record.h"
#include "smac.h"

/* The help line every such command prints. */
#define SMAC_CLI_HELP                                                                              \
    "  --store-key-file F  the key of control.db's MACs (default $STEPCTL_STORE_KEY_FILE;\n"       \
    "                      docs/security.md#tamper-evidence): keys an unkeyed store, is\n"         \
    "                      needed to write a keyed one\n"

/* Loads the key of given or $STEPCTL_STORE_KEY_FILE into k (*have: one
 * was named).  0, 65, 66 after printing why. */
int smac_cli_key(const char *cmd, const char *given, struct store_key *k, bool *have);

/* rec_open_keyed with that key.  0, or the exit code after printing
 * "stepctl CMD: --db ...": 65 a wrong key (or key file), 66 control.db
 * cannot be opened, or holds a schema object not stepctl's (store_tampered),
 * 70 internal. */
int smac_cli_open(const char *cmd, const char *path, enum rec_mode mode, const char *given,
                  sqlite3 **db);

/* The exit code of a rec_open_keyed status (cliutil.h). */
int smac_cli_exit(enum rec_status st);

#endif
