-- Evidence store schema, version 5: the forward migration from version 4
-- (PRAGMA user_version 4 -> 5), applied inside the same BEGIN IMMEDIATE
-- transaction as every migration step (evidence_open.c).
-- This file is an interface: docs/evidence.md documents every column.
-- Nothing of versions 1 to 4 is renamed or re-typed; rows stored before the
-- migration keep part_index NULL.

-- The Low-Latency HLS part a row is about (issue 20): the 0-based index of
-- the part (EXT-X-PART) of the row's segment whose time span holds the first
-- difference, the report's parts.part_index; NULL when the row is not about
-- one part (no parts checked, or no difference to place).
ALTER TABLE evidence ADD COLUMN part_index INTEGER CHECK (part_index IS NULL OR part_index >= 0);
