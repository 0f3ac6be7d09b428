-- Evidence store schema, version 6: the forward migration from version 5
-- (PRAGMA user_version 5 -> 6), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
-- Nothing of versions 1 to 5 is renamed or re-typed; rows stored before the
-- migration keep both columns NULL.

-- The allocation a row's check was delivered under (issue 17, "Content
-- evidence from the step's own sessions"): the report's
-- context.allocation_id, the id of the admission service's verification
-- allocation the canary followed (or `exactav verify --allocation-id`);
-- NULL for a check of a path's public URL.  `stepctl next` under
-- policy.loop.content_from "step_sessions" counts only rows whose
-- allocation is a verification allocation of the grant.
ALTER TABLE evidence ADD COLUMN allocation_id TEXT
  CHECK (allocation_id IS NULL OR length(allocation_id) BETWEEN 1 AND 128);
-- The HLS pathway (PATHWAY-ID) the check followed: the report's
-- context.pathway; NULL when no allocation was followed.
ALTER TABLE evidence ADD COLUMN pathway TEXT
  CHECK (pathway IS NULL OR length(pathway) BETWEEN 1 AND 255);
CREATE INDEX evidence_allocation ON evidence (allocation_id) WHERE allocation_id IS NOT NULL;
