/* canary_retention.h - the canary's scheduled `evidence prune`
 * (config "retention", docs/canary.md#retention).
 *
 * The prune runs on a connection of its own, not the store's: its batches
 * (evidence_prune, at most EVIDENCE_PRUNE_BATCH rows per transaction)
 * interleave with the checks' writes through SQLite's lock, so a check
 * waits for one batch at most, never for the whole prune. */
#ifndef CANARY_RETENTION_H
#define CANARY_RETENTION_H

#include <stdint.h>

#include "canary_config.h"
#include "canary_log.h"

struct store_key;

/* One prune of evidence_path under r at now_ms; logs one "prune" event
 * (the counts, or why it failed).  With diff_dir (NULL: none), the MISMATCH
 * pictures older than keep_mismatch go too: the PNGs (regular files named
 * *.png, never a link) directly in each target's folder DIR/<target>/, the
 * only files the canary writes there.  key: evidence.db's MAC key
 * (--store-key-file; NULL: none, and a keyed store is then not pruned).
 * 0, or -1 when the prune failed. */
int canary_retention_run(const char *evidence_path, const struct store_key *key, const char *diff_dir, const struct canary_retention *r,
                         int64_t now_ms, const struct canary_log *log);

#endif
