-- control.db schema version 2: what `stepctl` adds to a version 1 file.
-- This file is an interface: docs/controller.md documents every column.
-- Applied by migrate_v2.c inside the BEGIN IMMEDIATE transaction that opened
-- the file (a fresh file gets schema v1 first, then this), so a file is
-- either entirely v1 or entirely v2.  Times are INTEGER ms since the Unix
-- epoch (UTC); durations are INTEGER seconds; rates and resource amounts are
-- INTEGER micro-units (1e-6), never floating point.

-- A grant: the separate, bounded authorization of one proposed step.
CREATE TABLE grants (
  id                  TEXT PRIMARY KEY,          -- 128 random bits, hex
  decision_id         TEXT NOT NULL UNIQUE REFERENCES decisions(id), -- one grant per decision
  created_at_ms       INTEGER NOT NULL,
  actor               TEXT NOT NULL,             -- who granted (the --actor option, default the user name)
  policy_id           TEXT NOT NULL,
  policy_version      TEXT NOT NULL,
  intent_version      TEXT NOT NULL,
  channel             TEXT NOT NULL,             -- the cohort: six fields
  region              TEXT NOT NULL,
  isp                 TEXT NOT NULL,
  client              TEXT NOT NULL,
  build               TEXT NOT NULL,
  rendition           TEXT NOT NULL,
  program_version     TEXT NOT NULL,
  path_id             TEXT NOT NULL,             -- the allocated path
  fallback_path_ids   TEXT NOT NULL,             -- JSON array: the other eligible paths, preference order
  valid_from_ms       INTEGER NOT NULL,          -- grant validity [from, until)
  valid_until_ms      INTEGER NOT NULL CHECK (valid_until_ms > valid_from_ms),
  url_ttl_s           INTEGER NOT NULL CHECK (url_ttl_s > 0),       -- URL validity of each allocation
  expected_play_s     INTEGER NOT NULL CHECK (expected_play_s >= 0), -- expected play duration
  commitment_until_ms INTEGER NOT NULL,          -- valid_until + (url_ttl + expected_play) * 1000
  max_allocations     INTEGER NOT NULL CHECK (max_allocations > 0),
  max_rate_micro      INTEGER NOT NULL CHECK (max_rate_micro > 0),  -- token bucket rate, per second
  burst               INTEGER NOT NULL CHECK (burst >= 1),          -- token bucket size
  allocated           INTEGER NOT NULL DEFAULT 0
                      CHECK (allocated >= 0 AND allocated <= max_allocations),
  first_allocation_ms INTEGER,                   -- NULL until the first allocation
  bucket_tokens_nano  INTEGER NOT NULL,          -- token bucket content at bucket_at_ms, 1e-9 tokens
  bucket_at_ms        INTEGER NOT NULL,
  status              TEXT NOT NULL CHECK (status IN ('active','revoked','closed')),
  closed_at_ms        INTEGER,                   -- set with status revoked / closed
  close_status        TEXT CHECK (close_status IS NULL OR close_status IN ('PASS','VIOLATION','UNKNOWN')),
  close_reason        TEXT,
  stop_conditions     TEXT NOT NULL,             -- JSON: what ends issuance under this grant
  CHECK ((status = 'active') = (closed_at_ms IS NULL)));
CREATE INDEX grants_cohort ON grants (channel, region, isp, client, build, rendition, created_at_ms DESC);
CREATE TRIGGER grants_close_once BEFORE UPDATE OF status ON grants
  WHEN OLD.status <> 'active'
  BEGIN SELECT RAISE(ABORT, 'a closed grant is never reopened'); END;
CREATE TRIGGER grants_caps_fixed BEFORE UPDATE OF max_allocations, max_rate_micro, burst,
  valid_until_ms, path_id, decision_id ON grants
  BEGIN SELECT RAISE(ABORT, 'the limits of a grant never change'); END;

-- Every admitted allocation; its id is the client's allocation_id (the
-- idempotency key).  Written in the same transaction as grants.allocated.
CREATE TABLE allocations (
  id                  TEXT PRIMARY KEY,
  grant_id            TEXT NOT NULL REFERENCES grants(id),
  seq                 INTEGER NOT NULL CHECK (seq >= 1), -- 1..max_allocations within the grant
  decision_id         TEXT NOT NULL REFERENCES decisions(id),
  path_id             TEXT NOT NULL,
  fallback_path_ids   TEXT NOT NULL,             -- JSON array, fixed for the life of the allocation
  created_at_ms       INTEGER NOT NULL,
  expires_at_ms       INTEGER NOT NULL,          -- created_at + url_ttl: URL validity
  commitment_until_ms INTEGER NOT NULL,          -- expires_at + expected_play
  request_sha256      TEXT NOT NULL,             -- of the canonical request
  request             TEXT NOT NULL,             -- the canonical request body
  response            TEXT NOT NULL,             -- the 201 body, returned byte for byte on a retry
  UNIQUE (grant_id, seq));
CREATE TRIGGER allocations_within_cap BEFORE INSERT ON allocations
  WHEN NEW.seq > (SELECT max_allocations FROM grants WHERE id = NEW.grant_id)
  BEGIN SELECT RAISE(ABORT, 'allocation beyond the grant cap'); END;
CREATE TRIGGER allocations_immutable BEFORE UPDATE ON allocations
  BEGIN SELECT RAISE(ABORT, 'allocations are immutable'); END;
CREATE TRIGGER allocations_kept BEFORE DELETE ON allocations
  BEGIN SELECT RAISE(ABORT, 'allocations are never deleted'); END;

-- The commitments ledger: headroom reserved per resource, scope, metric and
-- window.  pending -> posted | voided, resolved at most once.
CREATE TABLE reservations (
  id                  INTEGER PRIMARY KEY,
  grant_id            TEXT NOT NULL REFERENCES grants(id),
  resource            TEXT NOT NULL CHECK (resource IN ('origin','shield','cdn')),
  scope               TEXT NOT NULL,             -- '' for the shared origin/shield, the path id for cdn
  metric              TEXT NOT NULL CHECK (metric IN ('rps','bytes_per_s')),
  start_ms            INTEGER NOT NULL,
  end_ms              INTEGER NOT NULL CHECK (end_ms > start_ms),
  amount_micro        INTEGER NOT NULL CHECK (amount_micro >= 0),
  state               TEXT NOT NULL CHECK (state IN ('pending','posted','voided')),
  created_at_ms       INTEGER NOT NULL,
  resolved_at_ms      INTEGER,
  resolve_reason      TEXT,
  CHECK ((state = 'pending') = (resolved_at_ms IS NULL AND resolve_reason IS NULL)),
  UNIQUE (grant_id, resource, scope, metric));
CREATE INDEX reservations_key ON reservations (resource, scope, metric, end_ms);
CREATE TRIGGER reservations_resolve_once BEFORE UPDATE ON reservations
  WHEN OLD.state <> 'pending' OR NEW.amount_micro <> OLD.amount_micro
    OR NEW.start_ms <> OLD.start_ms OR NEW.end_ms <> OLD.end_ms
  BEGIN SELECT RAISE(ABORT, 'a reservation is resolved once and never resized'); END;
CREATE TRIGGER reservations_kept BEFORE DELETE ON reservations
  BEGIN SELECT RAISE(ABORT, 'reservations are never deleted'); END;

-- What happened to a grant, when and why.  Each kind at most once per grant.
CREATE TABLE grant_events (
  grant_id            TEXT NOT NULL REFERENCES grants(id),
  seq                 INTEGER NOT NULL,          -- 1, 2, ... in order of recording
  at_ms               INTEGER NOT NULL,
  kind                TEXT NOT NULL CHECK (kind IN ('created','revoked','expired','quota_exhausted',
                        'closed_by_next','reservations_posted','reservations_voided')),
  reason              TEXT NOT NULL,
  actor               TEXT NOT NULL,             -- 'stepctl grant', 'stepctl serve', ...
  PRIMARY KEY (grant_id, seq),
  UNIQUE (grant_id, kind));

-- The ledger values `stepctl decide` used for items whose situation left
-- commitments_upper out (replay applies them instead of reading the ledger).
CREATE TABLE decision_commitments (
  decision_id         TEXT NOT NULL REFERENCES decisions(id),
  path_id             TEXT NOT NULL,
  window_index        INTEGER NOT NULL,          -- index in candidates[].resources.windows
  item_index          INTEGER NOT NULL,          -- index in that window's items
  resource            TEXT NOT NULL,
  scope               TEXT NOT NULL,
  metric              TEXT NOT NULL,
  start_ms            INTEGER NOT NULL,
  end_ms              INTEGER NOT NULL,
  commitments_micro   INTEGER NOT NULL,          -- pending + posted amounts overlapping the window
  PRIMARY KEY (decision_id, path_id, window_index, item_index));

-- `stepctl next`: the review of one grant's step, at most one per grant.
CREATE TABLE next_decisions (
  id                  TEXT PRIMARY KEY,          -- 128 random bits, hex
  grant_id            TEXT NOT NULL UNIQUE REFERENCES grants(id),
  decided_at_ms       INTEGER NOT NULL,
  tool_version        TEXT NOT NULL,
  first_allocation_ms INTEGER,                   -- only observations after it count
  branch              TEXT NOT NULL CHECK (branch IN ('positive','negative')),
  status              TEXT NOT NULL CHECK (status IN ('PASS','VIOLATION','UNKNOWN')),
  reason              TEXT NOT NULL,
  next_decision_id    TEXT REFERENCES decisions(id), -- the proposed next step (positive only)
  observations        TEXT,                      -- the --input file as given, NULL without
  result              TEXT NOT NULL,             -- the --json answer (compact)
  CHECK ((branch = 'positive') = (status = 'PASS' AND next_decision_id IS NOT NULL)));

CREATE INDEX decisions_policy ON decisions (policy_id, recorded_at_ms DESC);
CREATE INDEX decisions_scope ON decisions (channel, rendition, recorded_at_ms DESC);
PRAGMA user_version = 2;
