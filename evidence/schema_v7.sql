-- Evidence store schema, version 7: the forward migration from version 6
-- (PRAGMA user_version 6 -> 7), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
--
-- The profile document is stored once (issue 22, retention): every report
-- carries its DecodeProfile (`profile`: document, runtime, fingerprint),
-- about a third of the row, the same text in every row a worker writes.
-- The rows move to the table `evidence_rows`, each report's `profile` value
-- to `profiles` (keyed by the hex SHA-256 of its text), and `evidence`
-- becomes a view with exactly the columns, in the order, of version 6:
-- `evidence.report` is the report byte for byte as it was written, so every
-- reader, every rule of a valid row and every signature reads what it read
-- before.
--
-- Invariant: evidence.report = evidence_rows.report when profile_digest is
-- NULL, else evidence_rows.report || profiles.document || report_tail.  A
-- report is split only where the exact text `"profile":` followed by a
-- stored document occurs in it, so the concatenation is the written text
-- whatever the report's layout; a report that is not JSON, whose profile is
-- not yet in `profiles`, or whose text holds its profile in another form is
-- stored whole.  Nothing of versions 1 to 6 is renamed or re-typed: the
-- renamed table keeps its indexes, and `fetches` now references it.
ALTER TABLE evidence RENAME TO evidence_rows;
-- With profile_digest set, `report` holds the report's text up to and
-- including `"profile":` and report_tail the text after the profile value.
ALTER TABLE evidence_rows ADD COLUMN report_tail TEXT;
ALTER TABLE evidence_rows ADD COLUMN profile_digest TEXT
  CHECK ((profile_digest IS NULL) = (report_tail IS NULL));

-- One row per distinct `profile` text (its bytes as the report holds them).
-- Written by exactav before the row that uses it; never changed, never
-- deleted (a row's report would no longer be what was written).
CREATE TABLE profiles (
  digest   TEXT PRIMARY KEY CHECK (length(digest) = 64),  -- hex SHA-256 of document
  document TEXT NOT NULL);                                -- the report's `profile` value, verbatim
CREATE TRIGGER profiles_immutable BEFORE UPDATE ON profiles
  BEGIN SELECT RAISE(ABORT, 'a stored profile is never changed'); END;
CREATE TRIGGER profiles_kept BEFORE DELETE ON profiles
  BEGIN SELECT RAISE(ABORT, 'a stored profile is never deleted'); END;

CREATE VIEW evidence AS SELECT
  id, check_kind, verdict, reason, profile_id, profile_fingerprint, path_id, channel, rendition,
  program_version, reference_version, object, interval_start, interval_end, observed_at_ms,
  observed_end_ms, recorded_at_ms,
  CASE WHEN profile_digest IS NULL THEN report
       ELSE report || (SELECT document FROM profiles WHERE digest = profile_digest) || report_tail
  END AS report,
  media_sequence, container, part_index, allocation_id, pathway
FROM evidence_rows;

-- Writers (exactav, the tests, other programs) keep writing `evidence`.
-- Each change stores the report whole, then splits it where its profile is
-- a stored document.  The split statement is the same in both triggers.
CREATE TRIGGER evidence_insert INSTEAD OF INSERT ON evidence BEGIN
  INSERT INTO evidence_rows (id, check_kind, verdict, reason, profile_id, profile_fingerprint,
    path_id, channel, rendition, program_version, reference_version, object, interval_start,
    interval_end, observed_at_ms, observed_end_ms, recorded_at_ms, report, media_sequence,
    container, part_index, allocation_id, pathway)
  VALUES (NEW.id, NEW.check_kind, NEW.verdict, NEW.reason, NEW.profile_id,
    NEW.profile_fingerprint, NEW.path_id, NEW.channel, NEW.rendition, NEW.program_version,
    NEW.reference_version, NEW.object, NEW.interval_start, NEW.interval_end,
    NEW.observed_at_ms, NEW.observed_end_ms, NEW.recorded_at_ms, NEW.report,
    NEW.media_sequence, NEW.container, NEW.part_index, NEW.allocation_id, NEW.pathway);
  UPDATE evidence_rows SET report = substr(report, 1, m.at + 9),
                           report_tail = substr(report, m.at + 10 + m.len),
                           profile_digest = m.digest
  FROM (SELECT digest, instr(NEW.report, '"profile":' || document) AS at,
               length(document) AS len
        FROM profiles
        WHERE document = CASE WHEN typeof(NEW.report) = 'text' AND json_valid(NEW.report)
                              THEN json_extract(NEW.report, '$.profile') END) AS m
  WHERE evidence_rows.id = NEW.id AND m.at > 0;
END;

CREATE TRIGGER evidence_update INSTEAD OF UPDATE ON evidence BEGIN
  UPDATE evidence_rows SET id = NEW.id, check_kind = NEW.check_kind, verdict = NEW.verdict,
    reason = NEW.reason, profile_id = NEW.profile_id, profile_fingerprint = NEW.profile_fingerprint,
    path_id = NEW.path_id, channel = NEW.channel, rendition = NEW.rendition,
    program_version = NEW.program_version, reference_version = NEW.reference_version,
    object = NEW.object, interval_start = NEW.interval_start, interval_end = NEW.interval_end,
    observed_at_ms = NEW.observed_at_ms, observed_end_ms = NEW.observed_end_ms,
    recorded_at_ms = NEW.recorded_at_ms, report = NEW.report, report_tail = NULL,
    profile_digest = NULL, media_sequence = NEW.media_sequence, container = NEW.container,
    part_index = NEW.part_index, allocation_id = NEW.allocation_id, pathway = NEW.pathway
  WHERE id = OLD.id;
  UPDATE evidence_rows SET report = substr(report, 1, m.at + 9),
                           report_tail = substr(report, m.at + 10 + m.len),
                           profile_digest = m.digest
  FROM (SELECT digest, instr(NEW.report, '"profile":' || document) AS at,
               length(document) AS len
        FROM profiles
        WHERE document = CASE WHEN typeof(NEW.report) = 'text' AND json_valid(NEW.report)
                              THEN json_extract(NEW.report, '$.profile') END) AS m
  WHERE evidence_rows.id = NEW.id AND m.at > 0;
END;

CREATE TRIGGER evidence_delete INSTEAD OF DELETE ON evidence BEGIN
  DELETE FROM evidence_rows WHERE id = OLD.id;
END;
