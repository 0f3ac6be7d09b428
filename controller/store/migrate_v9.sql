-- control.db schema version 9: a keyed head per chain of store_macs (issue
-- 19 "Tamper evidence"; docs/security.md#tamper-evidence and
-- docs/controller.md document the table).  Applied by migrate_v9.c inside
-- the same BEGIN IMMEDIATE transaction as the earlier versions, so a file is
-- entirely v8 or entirely v9.  Additive: an unkeyed store never has a row
-- here and is written and checked exactly as before.
--
-- Why: the newest MACs of a chain, deleted with their rows and with
-- sqlite_sequence lowered, left no trace (the MACs chain backwards only).
-- A head records how many MACs its chain has and the newest one, under the
-- key, so a truncated tail no longer matches its head.  One row per chain:
-- writers of different grants advance different rows, there is no global
-- head to serialize on.
--
-- The triggers that write heads call stepctl_mac and are created when a
-- store is keyed (smac_heads.c), never here: a trigger calling an unknown
-- function makes every plain sqlite3 INSERT into an unkeyed store fail (see
-- migrate_v7.sql).  IF NOT EXISTS: a file taken back to an older version by
-- hand (the tests do) comes forward again.
CREATE TABLE IF NOT EXISTS store_heads (
  tbl      TEXT NOT NULL,        -- the chain's table, as store_macs.tbl
  chain    TEXT NOT NULL,        -- the chain, as store_macs.chain (a grant id, or '')
  n        INTEGER NOT NULL,     -- how many MACs the chain has
  last_mac TEXT NOT NULL,        -- its newest MAC ('' while n = 0)
  head_mac TEXT NOT NULL,        -- hex HMAC(key, "v1" | 'store_heads' | tbl | last_mac | chain | n)
  PRIMARY KEY (tbl, chain));
-- A head is advanced, never removed: a chain never loses a MAC.
CREATE TRIGGER IF NOT EXISTS store_heads_kept BEFORE DELETE ON store_heads
  BEGIN SELECT RAISE(ABORT, 'a chain head is never deleted'); END;
PRAGMA user_version = 9;
