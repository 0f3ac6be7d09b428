/* status.h - `stepctl status`: the operator's view of the loop.
 *
 * For each cohort of control.db (the cohort of a decision's action), its
 * newest decision, the state of its newest grant with its used and
 * remaining allocations, the newest Exact-AV row of each candidate path of
 * that decision (with evidence.db), and what `stepctl next` of that grant
 * would do now (its dry run, next.h; with evidence.db, for a grant not yet
 * reviewed nor revoked), or the review it had.  Reads only: control.db on a
 * read-only connection, evidence.db read-only.  Rules: docs/controller.md.
 */
#ifndef STATUS_H
#define STATUS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

/* At most this many decisions are read, newest first (their cohorts). */
#define STAT_MAX_DECISIONS 100000

/* {"at_ms", "cohorts": [...]} into *out.  evidence_path may be NULL.
 * 0, or -1 with why (SQLite, evidence.db, memory). */
int stat_collect(sqlite3 *db, const char *evidence_path, int64_t now_ms, json_t **out,
                 char *why, size_t whylen);

#endif
