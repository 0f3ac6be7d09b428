-- control.db schema version 3: QoE sessions (issue 16).  This file is an
-- interface: docs/qoe.md documents every column.  Applied by migrate_v3.c
-- inside the same BEGIN IMMEDIATE transaction as the earlier versions, so a
-- file is entirely v2 or entirely v3.  Times are INTEGER ms since the Unix
-- epoch (UTC) on the server's clock, except the player's own `ts`.

-- One viewer session: made with its allocation (same transaction), so every
-- allocation delivered by `stepctl serve --paths` has exactly one.
CREATE TABLE sessions (
  id                  TEXT PRIMARY KEY,          -- 128 random bits, hex (never the allocation id)
  allocation_id       TEXT NOT NULL UNIQUE REFERENCES allocations(id),
  grant_id            TEXT NOT NULL REFERENCES grants(id),
  kind                TEXT NOT NULL DEFAULT 'viewer' CHECK (kind IN ('viewer','verification')),
  channel             TEXT NOT NULL,             -- the cohort: six fields
  region              TEXT NOT NULL,
  isp                 TEXT NOT NULL,
  client              TEXT NOT NULL,
  build               TEXT NOT NULL,
  rendition           TEXT NOT NULL,
  path_id             TEXT NOT NULL,             -- the allocated path
  created_at_ms       INTEGER NOT NULL,          -- the allocation's created_at_ms
  ends_at_ms          INTEGER NOT NULL,          -- the allocation's commitment_until_ms
  master_fetched_at_ms INTEGER,                  -- first GET of master.m3u8, NULL: never (unused)
  last_sn             INTEGER,                   -- the greatest `sn` received, NULL: none yet
  reports             INTEGER NOT NULL DEFAULT 0 CHECK (reports >= 0),  -- records stored
  invalid_values      INTEGER NOT NULL DEFAULT 0 CHECK (invalid_values >= 0), -- ignored values
  refused_records     INTEGER NOT NULL DEFAULT 0 CHECK (refused_records >= 0), -- v > 2, refused
  rate_tokens_nano    INTEGER NOT NULL,          -- the report rate's token bucket, 1e-9 records
  rate_at_ms          INTEGER NOT NULL,
  ended_at_ms         INTEGER,                   -- a record said the player ended or quit
  end_reason          TEXT,                      -- 'sta=e', 'sta=q', 'pagehide', NULL while open
  outcome             TEXT CHECK (outcome IS NULL OR outcome IN
                        ('unused','unknown','success','failure','exit_before_start',
                         'autoplay_refused')), -- last computed by `stepctl qoe`, NULL: never
  CHECK ((ended_at_ms IS NULL) = (end_reason IS NULL)));
CREATE INDEX sessions_grant ON sessions (grant_id);
CREATE INDEX sessions_cohort ON sessions (channel, region, isp, client, build, rendition,
  path_id, created_at_ms);
CREATE TRIGGER sessions_kept BEFORE DELETE ON sessions
  BEGIN SELECT RAISE(ABORT, 'sessions are never deleted'); END;

-- Every CMCD record stored for a session, in the order received.
CREATE TABLE session_reports (
  session_id          TEXT NOT NULL REFERENCES sessions(id),
  seq                 INTEGER NOT NULL CHECK (seq >= 1), -- 1, 2, ... in receive order
  received_at_ms      INTEGER NOT NULL,          -- the server's clock when it was stored
  form                TEXT NOT NULL CHECK (form IN ('body','query')), -- application/cmcd or ?CMCD=
  sn                  INTEGER,                   -- the record's `sn`, NULL when absent or invalid
  ts                  INTEGER,                   -- the record's `ts` (player clock, ms), NULL likewise
  event               TEXT,                      -- `e` (ps, e, t, rr, bc, ce, ...), NULL likewise
  sta                 TEXT,                      -- `sta` play state, NULL likewise
  invalid_values      INTEGER NOT NULL CHECK (invalid_values >= 0), -- values ignored in it
  record              TEXT NOT NULL,             -- the record's valid key=value pairs, as received
  served_by           TEXT,                      -- an rr record's url: the path of paths.json whose
                                                 -- rendition place it is in; NULL: another record, or no path's
  PRIMARY KEY (session_id, seq));
-- A replayed record (an sn already stored) is stored once.
CREATE UNIQUE INDEX session_reports_sn ON session_reports (session_id, sn) WHERE sn IS NOT NULL;
CREATE TRIGGER session_reports_immutable BEFORE UPDATE ON session_reports
  BEGIN SELECT RAISE(ABORT, 'session reports are immutable'); END;
CREATE TRIGGER session_reports_kept BEFORE DELETE ON session_reports
  BEGIN SELECT RAISE(ABORT, 'session reports are never deleted'); END;
PRAGMA user_version = 3;
