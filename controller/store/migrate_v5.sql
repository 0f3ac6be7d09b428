-- control.db schema version 5: clock marks (issue 19 "Time";
-- docs/security.md#time and docs/controller.md document the table).  Applied
-- by migrate_v5.c inside the same BEGIN IMMEDIATE transaction as the earlier
-- versions, so a file is entirely v4 or entirely v5.

-- One row per mark: high_water, the latest time any writer acted on (every
-- time it records is at most this once its transaction commits), and
-- serve_heartbeat, the latest time `stepctl serve` confirmed (its writer
-- thread, at least once a second while it runs).
CREATE TABLE clock_marks (
  name   TEXT PRIMARY KEY CHECK (name IN ('high_water', 'serve_heartbeat')),
  at_ms  INTEGER NOT NULL);
CREATE TRIGGER clock_marks_forward BEFORE UPDATE ON clock_marks
  WHEN NEW.at_ms < OLD.at_ms OR NEW.name IS NOT OLD.name
  BEGIN SELECT RAISE(ABORT, 'a clock mark never goes back'); END;
CREATE TRIGGER clock_marks_kept BEFORE DELETE ON clock_marks
  BEGIN SELECT RAISE(ABORT, 'a clock mark is never deleted'); END;
-- A file from before this version starts at the latest time it recorded, so
-- a clock behind that is refused from the first run of the new binary on.
INSERT INTO clock_marks (name, at_ms)
  SELECT 'high_water', t FROM (SELECT MAX(t) AS t FROM (
    SELECT MAX(created_at_ms) AS t FROM grants
    UNION ALL SELECT MAX(closed_at_ms) FROM grants
    UNION ALL SELECT MAX(at_ms) FROM grant_events
    UNION ALL SELECT MAX(created_at_ms) FROM allocations
    UNION ALL SELECT MAX(resolved_at_ms) FROM reservations))
  WHERE t IS NOT NULL;
PRAGMA user_version = 5;
