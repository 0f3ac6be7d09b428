-- Evidence store schema, version 4: the forward migration from version 3
-- (PRAGMA user_version 3 -> 4), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
-- Nothing of versions 1 to 3 is renamed or re-typed; rows stored before the
-- migration keep container NULL (they were all MPEG-TS).

-- The container the candidate was read as (issue 20): 'ts' or 'fmp4', the
-- report's candidate.container; NULL when the report does not say.
ALTER TABLE evidence ADD COLUMN container TEXT CHECK (container IS NULL OR container IN ('ts', 'fmp4'));
