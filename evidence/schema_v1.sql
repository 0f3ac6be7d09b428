-- Evidence store schema, version 1 (PRAGMA user_version = 1).
-- This file is an interface: docs/evidence.md documents every column.
-- Written only by exactav; read (read-only) by stepctl.
-- Times are INTEGER milliseconds since the Unix epoch, UTC.
-- Invariant: observed_at_ms is when the candidate bytes were actually fetched;
-- freshness is counted from it and never from recorded_at_ms.

CREATE TABLE IF NOT EXISTS evidence (
  id                  TEXT PRIMARY KEY,          -- globally unique (uuid-like), idempotency key of import
  check_kind          TEXT NOT NULL,             -- 'exact-av-v1'
  verdict             TEXT NOT NULL CHECK (verdict IN ('MATCH','MISMATCH','UNKNOWN')),
  reason              TEXT NOT NULL,             -- stable reason code (docs/exact-av-v1.md)
  profile_id          TEXT NOT NULL,
  profile_fingerprint TEXT NOT NULL,
  path_id             TEXT,                      -- delivery path (CDN) checked
  channel             TEXT,
  rendition           TEXT,
  program_version     TEXT,
  reference_version   TEXT,                      -- digest of the reference binding
  object              TEXT,                      -- what was checked (URL or file), redacted
  interval_start      INTEGER,                   -- 90 kHz ticks, reference timeline
  interval_end        INTEGER,
  observed_at_ms      INTEGER NOT NULL,
  observed_end_ms     INTEGER NOT NULL,
  recorded_at_ms      INTEGER NOT NULL,
  report              TEXT NOT NULL              -- the full JSON report
);

CREATE TABLE IF NOT EXISTS fetches (
  evidence_id     TEXT NOT NULL REFERENCES evidence(id),
  seq             INTEGER NOT NULL,              -- 0-based order of the request in the check
  url             TEXT NOT NULL,                 -- redacted
  effective_url   TEXT,                          -- redacted, after redirects
  http_status     INTEGER,                       -- NULL when no response
  bytes           INTEGER,                       -- body bytes received
  content_length  INTEGER,                       -- declared, NULL when absent
  started_at_ms   INTEGER,
  ended_at_ms     INTEGER,
  redirects       TEXT,                          -- JSON array of redacted URLs
  age             TEXT,                          -- response headers, verbatim (metadata only)
  via             TEXT,
  x_cache         TEXT,
  server          TEXT,
  etag            TEXT,
  content_type    TEXT,
  error           TEXT,                          -- NULL on success
  PRIMARY KEY (evidence_id, seq)
);

-- Serves the controller's query: newest observation for a path, channel,
-- rendition and program version.
CREATE INDEX IF NOT EXISTS evidence_scope
  ON evidence (path_id, channel, rendition, program_version, observed_at_ms DESC);
CREATE INDEX IF NOT EXISTS evidence_observed ON evidence (observed_at_ms DESC);
