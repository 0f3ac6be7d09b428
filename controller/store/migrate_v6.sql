-- control.db schema version 6: the subject of each allocation (issue 19,
-- `stepctl serve --client-auth`; docs/serve.md#client-auth).  Applied by
-- migrate_v6.c inside the same BEGIN IMMEDIATE transaction as the earlier
-- versions, so a file is entirely v5 or entirely v6.
--
-- subject: the sub claim of the token that allocated it; NULL when the
-- service ran without --client-auth (and for every row older than v6).
-- Under --client-auth the idempotency key is (subject, id): another subject
-- reusing an id is refused (422) without learning the first answer.
ALTER TABLE allocations ADD COLUMN subject TEXT;
-- the per-subject cap counts a subject's allocations still committed
CREATE INDEX IF NOT EXISTS allocations_subject ON allocations (subject, commitment_until_ms)
  WHERE subject IS NOT NULL;
PRAGMA user_version = 6;
