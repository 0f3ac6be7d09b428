-- control.db schema version 8: verification allocations (issue 17, "Content
-- evidence from the step's own sessions"; docs/serve.md#verification-sessions
-- and docs/controller.md document the columns).  Applied by migrate_v8.c
-- inside the same BEGIN IMMEDIATE transaction as the earlier versions, so a
-- file is entirely v7 or entirely v8.  Additive: every grant made before has
-- a verification quota of 0, every allocation made before is a viewer's.

-- A grant's verification quota (`stepctl grant --verification-allocations N`)
-- and how much of it was used: counted here, never in allocated, so a
-- verification session is never a viewer (nor in the viewers' QoE: its
-- session row has kind 'verification').
ALTER TABLE grants ADD COLUMN verification_allocations INTEGER NOT NULL DEFAULT 0
  CHECK (verification_allocations >= 0);
ALTER TABLE grants ADD COLUMN verification_allocated INTEGER NOT NULL DEFAULT 0
  CHECK (verification_allocated >= 0 AND verification_allocated <= verification_allocations);

-- 1: an allocation the canary asked for as a verification session (the
-- request's "verification": true, authorized by the verification token).
-- Its seq lies above the grant's max_allocations (max_allocations + 1 ..
-- max_allocations + verification_allocations), a viewer's within it: the
-- two never share a slot, and the cap trigger holds both.
ALTER TABLE allocations ADD COLUMN verification INTEGER NOT NULL DEFAULT 0
  CHECK (verification IN (0, 1));
DROP TRIGGER allocations_within_cap;
CREATE TRIGGER allocations_within_cap BEFORE INSERT ON allocations
  WHEN CASE NEW.verification
         WHEN 1 THEN NEW.seq <= (SELECT max_allocations FROM grants WHERE id = NEW.grant_id)
                  OR NEW.seq > (SELECT max_allocations + verification_allocations FROM grants
                                WHERE id = NEW.grant_id)
         ELSE NEW.seq > (SELECT max_allocations FROM grants WHERE id = NEW.grant_id) END
  BEGIN SELECT RAISE(ABORT, 'allocation beyond the grant cap'); END;
CREATE INDEX allocations_verification ON allocations (grant_id) WHERE verification = 1;
PRAGMA user_version = 8;
