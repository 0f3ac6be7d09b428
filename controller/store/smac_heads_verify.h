/* smac_heads_verify.h - the keyed chain heads checked (smac_heads.h), for
 * smac_verify.c after the MACs themselves.
 *
 * Rules, in this order, the first broken one named (table store_heads, row
 * the head's key as a JSON array [tbl, chain]):
 *   head_missing   a store that must have heads lacks one: of a chain that
 *                  has MACs, of a grant's allocations or grant_events, of a
 *                  single-chain table (or store_heads itself is gone)
 *   head_mismatch  a head that does not verify under the key (changed by
 *                  hand), or whose n and last_mac are not its chain's count
 *                  and newest MAC (a truncated tail, a head rolled back); a
 *                  seeding MAC that does not verify (table store_macs)
 */
#ifndef SMAC_HEADS_VERIFY_H
#define SMAC_HEADS_VERIFY_H

#include <sqlite3.h>

#include "smac.h"
#include "vstore.h"

/* In smac_verify's read transaction.  0 the heads hold (or the store need
 * not have them), 1 a finding (*f), -1 an SQLite error. */
int smac_heads_verify(sqlite3 *db, const struct store_key *k, struct vst_finding *f);

#endif
