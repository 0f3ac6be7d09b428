/* The stored profiles (schema v7, schema_v7.sql): each report's `profile`
 * text is kept once, under its SHA-256, and rebuilt into every report that
 * refers to it.  The writer side is evidence_insert.c's store_profile; this
 * file checks what is stored. */
#include "evidence_internal.h"
#include "evidence_fingerprint.h"

#include <assert.h>
#include <string.h>

enum evidence_rc evidence_check_profiles(struct evidence_db *db, char bad[65], char *err,
                                         size_t errlen)
{
    assert(db && bad);
    bad[0] = '\0';
    if (db->schema_version < 7)
        return EVIDENCE_OK;
    sqlite3_stmt *st = NULL;
    /* One statement: one read snapshot without a transaction of its own. */
    int rc = sqlite3_prepare_v2(db->sql, "SELECT digest, document FROM profiles ORDER BY rowid",
                                -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *digest = (const char *)sqlite3_column_text(st, 0);
        const void *doc = sqlite3_column_blob(st, 1);
        char want[65];
        evidence_sha256_hex(doc ? doc : "", (size_t)sqlite3_column_bytes(st, 1), want);
        if (!digest || strcmp(digest, want) != 0) {
            snprintf(bad, 65, "%s", digest && *digest ? digest : "NULL");
            rc = SQLITE_DONE;
            break;
        }
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        evidence_seterr(err, errlen, "profiles: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    return evidence_read_done(db, err, errlen);
}
