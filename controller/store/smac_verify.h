/* smac_verify.h - a keyed control.db's MACs checked (`stepctl verify-store
 * --store-key-file`, `stepctl serve` at start; docs/security.md#tamper-evidence).
 *
 * Rules, in this order, the first broken one named:
 *   keying_removed         MACs without their store_keying row
 *   foreign_schema_object  a trigger stepctl did not create, or anything
 *                          else calling stepctl_mac (it could make stepctl
 *                          MAC rows of another's choosing)
 *   row_deleted            a MAC whose row is gone
 *   row_mac_mismatch       a row (or its chain) that differs from its MAC
 *   row_mac_missing        a row written after keying without its MAC
 *   mac_deleted            a MAC removed (store_macs' numbering has a gap
 *                          or ends before its sequence)
 *   head_missing,          a chain's keyed head gone, or not what its chain
 *   head_mismatch          is (schema 9: smac_heads_verify.h)
 *   checkpoint_mismatch    the rows that existed at keying changed, one
 *                          added or removed among them
 */
#ifndef SMAC_VERIFY_H
#define SMAC_VERIFY_H

#include <stddef.h>

#include <sqlite3.h>

#include "smac.h"
#include "vstore.h"

/* In a read transaction of db (a keyed store, key checked by rec_open).
 * 0 every MAC holds (*macs: how many), 1 tampered (*f), -1 an SQLite error. */
int smac_verify(sqlite3 *db, const struct store_key *k, struct vst_finding *f, size_t *macs);

#endif
