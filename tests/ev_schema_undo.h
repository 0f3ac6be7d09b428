/* ev_schema_undo.h - SQL that takes a current evidence store back to schema
 * v7 (EV_V8_UNDONE: an unkeyed store's four empty tables of keyed tamper
 * evidence dropped, evidence/schema_v8.sql) or v6, for the tests that build older stores from a current one: the view
 * `evidence` replaced by its table again, every report whole (the profile
 * text back in place), `profiles` dropped (evidence/schema_v7.sql).  The
 * user_version is left to the caller. */
#ifndef EV_SCHEMA_UNDO_H
#define EV_SCHEMA_UNDO_H

#define EV_V8_UNDONE                                                                              \
    "DROP TABLE evidence_keying; DROP TABLE evidence_macs; DROP TABLE evidence_head; "            \
    "DROP TABLE evidence_checkpoints; "

#define EV_V7_UNDONE                                                                              \
    EV_V8_UNDONE "DROP VIEW evidence; UPDATE evidence_rows SET report = report || (SELECT document FROM "     \
    "profiles WHERE digest = profile_digest) || report_tail, report_tail = NULL, "              \
    "profile_digest = NULL WHERE profile_digest IS NOT NULL; "                                    \
    "ALTER TABLE evidence_rows DROP COLUMN profile_digest; "                                      \
    "ALTER TABLE evidence_rows DROP COLUMN report_tail; "                                         \
    "ALTER TABLE evidence_rows RENAME TO evidence; DROP TABLE profiles; "

#endif
