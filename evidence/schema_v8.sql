-- Evidence store schema, version 8: the forward migration from version 7
-- (PRAGMA user_version 7 -> 8), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
--
-- Keyed tamper evidence (issue 19; docs/security.md#tamper-evidence): four
-- tables, empty until a writer run with --store-key-file keys the store
-- (evidence_keyed.c), which then creates the triggers that fill them.  A
-- store never keyed keeps them empty and works exactly as version 7 did.
-- Nothing of versions 1 to 7 changes: the view `evidence`, its columns and
-- its report bytes are as before.
--
-- Every MAC is hex HMAC-SHA-256 under the key over the canonical encoding
-- of evidence/store_key.h: "v1", the table's name, then the values listed.
-- A sum is 64 hex digits, the sum modulo 2^256 of MACs read as big-endian
-- numbers.

-- One row: when and under which key the store was keyed.  rows and sum
-- cover the evidence rows present then (each got its MAC at keying).
-- mac = MAC('evidence_keying', key_id, keyed_at_ms, rows, sum).
CREATE TABLE evidence_keying (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  key_id      TEXT NOT NULL,     -- hex HMAC(key, 'exactav evidence key id v1')
  keyed_at_ms INTEGER NOT NULL,
  rows        INTEGER NOT NULL,
  sum         TEXT NOT NULL,
  mac         TEXT NOT NULL);

-- One row per keyed evidence row: MAC('evidence', the row as the view
-- `evidence` returns it: every column in the view's order, report the text
-- the view rebuilds).  Written by the trigger evidence_mac_insert; removed
-- with its row by evidence_mac_delete.
CREATE TABLE evidence_macs (
  id  TEXT PRIMARY KEY,          -- evidence_rows.id
  mac TEXT NOT NULL) WITHOUT ROWID;

-- One row: n, every row MAC ever added, and sum, their sum.
-- head_mac = MAC('evidence_head', n, sum); advanced by evidence_mac_insert
-- only from a head that verifies.
CREATE TABLE evidence_head (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  n        INTEGER NOT NULL,
  sum      TEXT NOT NULL,
  head_mac TEXT NOT NULL);

-- What was deleted with the key: seq 1 is made at keying, one more by each
-- prune; evidence_mac_delete adds each deleted row's MAC to the newest one.
-- mac = MAC('evidence_checkpoints', seq, at_ms, n, sum).
CREATE TABLE evidence_checkpoints (
  seq   INTEGER PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  n     INTEGER NOT NULL,
  sum   TEXT NOT NULL,
  mac   TEXT NOT NULL);
