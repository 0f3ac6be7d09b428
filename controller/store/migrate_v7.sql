-- control.db schema version 7: keyed tamper evidence (issue 19 "Tamper
-- evidence"; docs/security.md#tamper-evidence and docs/controller.md
-- document both tables).  Applied by migrate_v7.c inside the same BEGIN
-- IMMEDIATE transaction as the earlier versions, so a file is entirely v6
-- or entirely v7.  Additive: an unkeyed store (no store_keying row) is
-- written and checked exactly as before.
--
-- IF NOT EXISTS: a file taken back to an older version by hand (the tests
-- of the earlier migrations do) keeps these tables and comes forward again.
--
-- The MAC triggers are not created here but when a store is keyed
-- (smac_keyed.c): a trigger calling stepctl_mac would make every plain
-- sqlite3 INSERT into an unkeyed store fail ("no such function").

-- At most one row, written once, by the first command run with
-- --store-key-file on this store.  Never updated, never deleted: a keyed
-- store never becomes unkeyed.
CREATE TABLE IF NOT EXISTS store_keying (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  key_id      TEXT NOT NULL,     -- hex HMAC(key, "stepctl store key id v1"): which key
  keyed_at_ms INTEGER NOT NULL,
  checkpoint  TEXT NOT NULL,     -- hex HMAC chain over every row that existed at keying
  covered     TEXT NOT NULL);    -- JSON {table: greatest rowid at keying}: the checkpoint's rows
CREATE TRIGGER IF NOT EXISTS store_keying_fixed BEFORE UPDATE ON store_keying
  BEGIN SELECT RAISE(ABORT, 'a store is keyed once'); END;
CREATE TRIGGER IF NOT EXISTS store_keying_kept BEFORE DELETE ON store_keying
  BEGIN SELECT RAISE(ABORT, 'a keyed store never becomes unkeyed'); END;

-- One MAC per row written after keying, chained per (tbl, chain): mac covers
-- the row's immutable columns and the previous mac of its chain.
CREATE TABLE IF NOT EXISTS store_macs (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  tbl     TEXT NOT NULL,         -- the table of the row
  row_key TEXT NOT NULL,         -- its key: the id, or a JSON array of the key's columns
  chain   TEXT NOT NULL,         -- allocations, grant_events: the grant id; others ''
  mac     TEXT NOT NULL,         -- hex HMAC-SHA-256
  UNIQUE (tbl, row_key));
CREATE INDEX IF NOT EXISTS store_macs_chain ON store_macs (tbl, chain, seq);
CREATE TRIGGER IF NOT EXISTS store_macs_immutable BEFORE UPDATE ON store_macs
  BEGIN SELECT RAISE(ABORT, 'MACs are immutable'); END;
CREATE TRIGGER IF NOT EXISTS store_macs_kept BEFORE DELETE ON store_macs
  BEGIN SELECT RAISE(ABORT, 'MACs are never deleted'); END;
PRAGMA user_version = 7;
