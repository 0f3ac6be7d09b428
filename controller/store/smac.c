/* smac.c - the key and the row MAC (see smac.h). */
#include "smac.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *smac_key_file(const char *given)
{
    return store_key_file(given, SMAC_ENV);
}

int smac_key_load(const char *cmd, const char *file, struct store_key *k)
{
    char who[128];
    snprintf(who, sizeof who, "stepctl %s", cmd);
    return store_key_load(who, "--store-key-file", file, k);
}

void smac_key_wipe(struct store_key *k)
{
    store_key_wipe(k);
}

bool smac_hex_same(const char *a, const char *b)
{
    return store_key_hex_same(a, b);
}

int smac_row(const struct store_key *k, const char *tbl, const char *chain, const char *prev,
             sqlite3_value **vals, int n, char hex[SMAC_HEX])
{
    const char *const heads[] = {tbl, chain, prev};
    return store_key_mac(k, heads, 3, vals, n, hex);
}

void smac_key_id(const struct store_key *k, char hex[SMAC_HEX])
{
    store_key_id(k, "stepctl store key id v1", hex);
}

/* stepctl_mac(tbl, chain, col..., prev): the MAC of a row as its trigger
 * writes it (smac_tables.c). */
static void mac_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const struct store_key *k = sqlite3_user_data(ctx);
    if (!k) {
        sqlite3_result_error(ctx, "control.db is keyed (docs/security.md#tamper-evidence): "
                                  "--store-key-file is needed to write it", -1);
        return;
    }
    if (argc < 3) {
        sqlite3_result_error(ctx, "stepctl_mac(tbl, chain, col..., prev)", -1);
        return;
    }
    const char *tbl = (const char *)sqlite3_value_text(argv[0]);
    const char *chain = (const char *)sqlite3_value_text(argv[1]);
    const char *prev = (const char *)sqlite3_value_text(argv[argc - 1]);
    char hex[SMAC_HEX];
    if (smac_row(k, tbl ? tbl : "", chain ? chain : "", prev ? prev : "", argv + 2, argc - 3,
                 hex) != 0) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
}

static void free_key(void *p)
{
    if (p) {
        smac_key_wipe(p);
        free(p);
    }
}

int smac_attach(sqlite3 *db, const struct store_key *k)
{
    struct store_key *copy = NULL;
    if (k) {
        if (!(copy = malloc(sizeof *copy)))
            return SQLITE_NOMEM;
        memcpy(copy, k, sizeof *copy);
    }
    /* Not deterministic and not innocuous: SQLite then refuses it in CHECK
     * constraints, generated columns and indexes a hand-made schema could
     * use to make stepctl MAC rows of its choosing (smac_keyed.c checks
     * triggers and defaults). */
    return sqlite3_create_function_v2(db, "stepctl_mac", -1, SQLITE_UTF8, copy, mac_fn, NULL,
                                      NULL, free_key);
}
