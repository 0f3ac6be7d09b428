-- Evidence store schema, version 3: the forward migration from version 2
-- (PRAGMA user_version 2 -> 3), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
-- Nothing of versions 1 and 2 is renamed or re-typed.

-- The clean decodes of references (the fast path's premise, kept across
-- processes): the decoder input with this digest, decoded under the
-- profile with this fingerprint over this interval, gave valid frames and
-- samples only, with no damage.  Only clean decodes are stored: a
-- reference that did not decode cleanly is decoded again by every check.
-- Not evidence of any path: no verdict is read from this table.
CREATE TABLE IF NOT EXISTS reference_decodes (
  input_digest        TEXT NOT NULL,     -- hex SHA-256 of the reference's decoder input (indigest.h)
  profile_fingerprint TEXT NOT NULL,     -- the profile and runtime it was decoded under
  interval_start      INTEGER NOT NULL,  -- 90 kHz ticks, as evidence.interval_start
  interval_end        INTEGER NOT NULL,
  frames              INTEGER NOT NULL CHECK (frames >= 0),   -- pictures of the interval
  samples             INTEGER NOT NULL CHECK (samples >= 0),  -- audio samples of the interval
  reference           TEXT NOT NULL,     -- JSON object: the report's "reference" of that decode
  evidence_id         TEXT,              -- the check whose run decoded it
  decoded_at_ms       INTEGER NOT NULL,  -- UTC ms
  PRIMARY KEY (input_digest, profile_fingerprint, interval_start, interval_end)
);
