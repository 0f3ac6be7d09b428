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
    store_key_id(k, SMAC_KEY_ID_LABEL, hex);
}

/* stepctl_mac(tbl, chain, col..., prev): the MAC of a row as its trigger
 * writes it (smac_tables.c). */
static void mac_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    static const char keyless[] = "control.db is keyed (docs/security.md#tamper-evidence): "
                                  "--store-key-file is needed to write it";
    if (argc < 3) {
        store_key_sql_mac(ctx, keyless, NULL, 0, NULL, -1); /* the keyless error first */
        return;
    }
    const char *tbl = (const char *)sqlite3_value_text(argv[0]);
    const char *chain = (const char *)sqlite3_value_text(argv[1]);
    const char *prev = (const char *)sqlite3_value_text(argv[argc - 1]);
    const char *const heads[] = {tbl ? tbl : "", chain ? chain : "", prev ? prev : ""};
    store_key_sql_mac(ctx, keyless, heads, 3, argv + 2, argc - 3);
}

int smac_attach(sqlite3 *db, const struct store_key *k)
{
    /* not deterministic, not innocuous (store_key_attach); smac_keyed.c
     * checks triggers and defaults */
    return store_key_attach(db, "stepctl_mac", k, mac_fn);
}
