/* smac_anchor.h - control.db's keyed chain heads kept outside the file
 * (`stepctl verify-store --anchor FILE`; docs/security.md#tamper-evidence).
 *
 * Why: the heads (smac_heads.h) are per chain, so nothing in the file ties
 * one chain's head to another's: a chain rolled back to an older copy of
 * the file (its newest rows, MACs and head put back as they were) verifies.
 * An anchor is a copy of every head as a verified store had it, MACed under
 * the store's key and kept elsewhere; checked later, every anchored chain
 * must still hold the MAC it had as its n-th (it only grows), or the store
 * went back behind the anchor.
 *
 * The file: one JSON object, {"heads": [[tbl, chain, n, last_mac], ...],
 * "key_id", "kind": "store_anchor", "mac", "made_at_ms", "version": 1},
 * mac = stepctl_mac('store_anchor', '', TEXT, '') where TEXT is the object
 * without "mac" dumped compact with sorted keys (jansson).  Written 0600,
 * through a temporary file renamed over it.
 */
#ifndef SMAC_ANCHOR_H
#define SMAC_ANCHOR_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "vstore.h"

#define SMAC_ANCHOR_MAX (256u << 20) /* bytes: a larger anchor file is refused (65) */

/* Checks the anchor at path against db (keyed, stepctl_mac attached to the
 * key).  *had: the file existed; *checked: the chains it anchored.
 * 0 every anchored chain holds (or there is no file), 1 a finding (rule
 * head_rollback, *f), 65 the file is no anchor of this key (edited, another
 * store's, not JSON: err says which), 66 it cannot be read, -1 an SQLite
 * error. */
int smac_anchor_check(sqlite3 *db, const char *path, bool *had, size_t *checked, struct vst_finding *f,
                      char *err, size_t errlen);

/* Writes db's heads, each verified under the key, as the anchor at path
 * (*chains: how many).  0, 1 a head that does not verify (*f, head_mismatch:
 * nothing written), 66 the file cannot be written (err), -1 an SQLite
 * error. */
int smac_anchor_write(sqlite3 *db, const char *path, size_t *chains, struct vst_finding *f, char *err,
                      size_t errlen);

#endif
