/* dlv_removals.c - a path removed from a decision's fallback list, kept in
 * control.db (table delivery_removals, docs/delivery.md#removals).
 *
 * Why: the removal follows from a MISMATCH row of evidence.db, and that row
 * may be pruned (exactav evidence prune); a removal that lived only in the
 * process's memory would then come back after a restart.  Recorded once,
 * it is read before evidence.db on every later look, by every process.
 *
 * The table is control.db schema 4 (controller/store/migrate_v4.sql): every
 * file this build writes has it.  A read-only look at an older file without
 * it (schema 3 serve created it only when it first removed a path) finds
 * that nothing was removed. */
#include <stdio.h>

#include "dlv_internal.h"
#include "record.h"

int dlv_removal_find(sqlite3 *ro, const char *decision_id, const char *path_id)
{
    sqlite3_stmt *st = NULL;
    /* no table (a control.db where nothing was removed yet) is "none" */
    if (sqlite3_prepare_v2(ro, "SELECT 1 FROM delivery_removals WHERE decision_id = ?1 AND path_id = ?2",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    sqlite3_bind_text(st, 1, decision_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int dlv_removal_record(const char *db_path, const char *decision_id, const char *path_id,
                       const char *evidence_id, int64_t observed_at_ms, int64_t now_ms)
{
    sqlite3 *db = NULL;
    char err[512] = "";
    if (rec_open(db_path, REC_WRITE, &db, err, sizeof err) != REC_OK) {
        fprintf(stderr, "stepctl serve: removal of path %s not recorded: %s\n", path_id, err);
        sqlite3_close(db);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO delivery_removals VALUES (?1, ?2, ?3, ?4, ?5)", -1,
                                &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, decision_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, path_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, evidence_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, observed_at_ms);
        sqlite3_bind_int64(st, 5, now_ms);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "stepctl serve: removal of path %s not recorded: %s\n", path_id, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}
