/* smac_heads.h - a keyed head per chain of store_macs (control.db schema 9;
 * docs/security.md#tamper-evidence).
 *
 * Why: a MAC covers its chain backwards only, so the newest MACs of a
 * chain, deleted with their rows (and sqlite_sequence lowered), left no
 * trace.  store_heads holds one row per (tbl, chain): n, the number of MACs
 * of the chain, last_mac, its newest, and head_mac = stepctl_mac(
 * 'store_heads', tbl, chain, n, last_mac), which needs the key.  One row per
 * chain, so writers of different grants advance different rows.
 *
 * Written by two triggers created at keying with the MAC triggers:
 *   smac_heads         AFTER INSERT ON store_macs: advances the chain's head,
 *                      only from a head that verifies (a head changed by
 *                      hand stays behind and stays named), never creates one
 *                      (a chain removed with its head is not started again
 *                      unnoticed);
 *   smac_heads_grants  AFTER INSERT ON grants: the grant's allocations and
 *                      grant_events heads, n = 0, so a whole per-grant chain
 *                      removed with its head leaves a grant without heads.
 * The single-chain heads, and the per-grant heads of the grants that exist
 * then, are made when the store is keyed (seeding).  A store keyed before
 * schema 9 is seeded by its first writer with the key, from the MACs as they
 * are then (trusted, as the keying checkpoint trusts the rows at keying).
 *
 * Which stores must have heads: one keyed at schema 9 or later (its keying
 * covered, under the checkpoint, holds "heads": 1), or one seeded later (a
 * MAC in store_macs, tbl 'store_heads', row_key 'seeded').
 */
#ifndef SMAC_HEADS_H
#define SMAC_HEADS_H

#include <stdbool.h>

#include <sqlite3.h>

#define SMAC_HEADS_COVERED "\"heads\": 1" /* in store_keying.covered: keyed with heads */
#define SMAC_HEADS_SEEDED "seeded"        /* the seeding MAC's row_key */

/* Creates smac_heads and smac_heads_grants (IF NOT EXISTS) on db, a file of
 * schema 9 or later.  SQLITE_OK or not. */
int smac_heads_triggers(sqlite3 *db);

/* 1 the keyed store db must have heads (see above), 0 not, -1 an error. */
int smac_heads_required(sqlite3 *db);

/* In the writer's transaction, with the key attached and the triggers in
 * place: the head of every chain of store_macs as it is now, the per-grant
 * heads of every grant (n = 0 where no MAC), the single-chain heads.
 * seeded: first the seeding MAC (a store keyed before schema 9).  Heads
 * already there are kept.  SQLITE_OK or not. */
int smac_heads_seed(sqlite3 *db, bool seeded);

#endif
