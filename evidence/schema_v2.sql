-- Evidence store schema, version 2: the forward migration from version 1
-- (PRAGMA user_version 1 -> 2), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
-- Nothing of version 1 is renamed or re-typed; rows stored before the
-- migration keep media_sequence NULL.

-- The HLS media sequence number of the one segment a check covered (the
-- canary's declared correspondence); NULL when the check was not tied to
-- one segment.
ALTER TABLE evidence ADD COLUMN media_sequence INTEGER;

CREATE INDEX IF NOT EXISTS evidence_media_sequence
  ON evidence (path_id, channel, rendition, media_sequence);

-- Availability probes (the three levels of the client-side failover seed):
-- availability evidence, never content evidence.  One row per probe.
CREATE TABLE IF NOT EXISTS probes (
  id               TEXT PRIMARY KEY,          -- UUIDv4 text (evidence_new_id)
  path_id          TEXT NOT NULL,             -- delivery path probed
  channel          TEXT,
  rendition        TEXT,
  object           TEXT NOT NULL,             -- the media playlist probed, redacted
  status           TEXT NOT NULL CHECK (status IN ('PASS','VIOLATION','UNKNOWN')),
  reason           TEXT NOT NULL,             -- stable code: ok, or <level>_<error>
  observed_at_ms   INTEGER NOT NULL,          -- UTC ms, start of the probe (freshness)
  observed_end_ms  INTEGER NOT NULL,
  recorded_at_ms   INTEGER NOT NULL,
  playlist_status  INTEGER,                   -- HTTP status of the playlist, NULL when no response
  playlist_error   TEXT,
  media_sequence   INTEGER,                   -- the newest segment's media sequence number
  segment          TEXT,                      -- the newest segment's URL, redacted
  tcp_connect_ms   INTEGER,                   -- level 1: TCP connect time to the segment's host
  tcp_error        TEXT,
  header_status    INTEGER,                   -- level 2: status of the segment's response headers
  header_ttfb_ms   INTEGER,                   -- time to first byte (headers received)
  header_error     TEXT,
  download_status  INTEGER,                   -- level 3: full download of the segment
  download_bytes   INTEGER,
  download_ms      INTEGER,
  download_error   TEXT
);

CREATE INDEX IF NOT EXISTS probes_scope
  ON probes (path_id, channel, rendition, observed_at_ms DESC);
