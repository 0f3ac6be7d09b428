-- control.db schema version 4: paths removed from a decision's fallback list
-- (issue 22; docs/delivery.md#removals documents every column).  Applied by
-- migrate_v4.c inside the same BEGIN IMMEDIATE transaction as the earlier
-- versions, so a file is entirely v3 or entirely v4.
--
-- `stepctl serve` of schema 3 created this table itself the first time it
-- recorded a removal (CREATE TABLE IF NOT EXISTS, the same columns): such a
-- file keeps its rows, hence IF NOT EXISTS here.

-- One path removed from one decision's fallbacks by a MISMATCH of
-- evidence.db: recorded once, read before evidence.db on every later look,
-- so no restart, missing file or pruned evidence brings the path back.
CREATE TABLE IF NOT EXISTS delivery_removals (
  decision_id     TEXT NOT NULL REFERENCES decisions(id),
  path_id         TEXT NOT NULL,
  evidence_id     TEXT NOT NULL,     -- the MISMATCH that removed it
  observed_at_ms  INTEGER NOT NULL,  -- that row's observation time
  removed_at_ms   INTEGER NOT NULL,  -- when serve recorded the removal (its clock)
  PRIMARY KEY (decision_id, path_id));
CREATE TRIGGER IF NOT EXISTS delivery_removals_kept BEFORE DELETE ON delivery_removals
  BEGIN SELECT RAISE(ABORT, 'a removal is never undone (a new decision is needed)'); END;
PRAGMA user_version = 4;
