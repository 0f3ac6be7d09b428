/* Stored clean decodes of references (schema v3, table reference_decodes):
 * the fast path's premise ("the reference decodes cleanly under the
 * profile", docs/exact-av-v1.md) kept across processes, so that an
 * unmodified candidate of a reference already decoded costs no decode.
 * The store validates and keeps rows; what a row means is the verifier's. */
#include "evidence_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static bool hex64(const char *s)
{
    if (!s || strlen(s) != 64)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

static enum evidence_rc check_key(const struct evidence_decode_key *k, char *err, size_t errlen)
{
    if (!hex64(k->input_digest))
        evidence_seterr(err, errlen, "decode input_digest: 64 lowercase hex digits required");
    else if (!hex64(k->profile_fingerprint))
        evidence_seterr(err, errlen, "decode profile_fingerprint: 64 lowercase hex digits required");
    else if (k->interval_end < k->interval_start)
        evidence_seterr(err, errlen, "decode interval: end before start");
    else
        return EVIDENCE_OK;
    return EVIDENCE_E_INVALID;
}

static void bind_key(sqlite3_stmt *st, const struct evidence_decode_key *k)
{
    evidence_bind_text(st, 1, k->input_digest);
    evidence_bind_text(st, 2, k->profile_fingerprint);
    sqlite3_bind_int64(st, 3, k->interval_start);
    sqlite3_bind_int64(st, 4, k->interval_end);
}

static const char INSERT_DECODE[] =
    "INSERT OR IGNORE INTO reference_decodes (input_digest, profile_fingerprint, interval_start,"
    " interval_end, frames, samples, reference, evidence_id, decoded_at_ms)"
    " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)";

enum evidence_rc evidence_decode_put(struct evidence_db *db, const struct evidence_decode_key *k,
                                     const struct evidence_decode *d, char *err, size_t errlen)
{
    assert(db && k && d);
    enum evidence_rc rc = check_key(k, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    if (d->frames < 0 || d->samples < 0 || !json_is_object(d->reference) ||
        (d->evidence_id && !evidence_id_valid(d->evidence_id))) {
        evidence_seterr(err, errlen, "decode: frames/samples < 0, no reference object, or a bad evidence id");
        return EVIDENCE_E_INVALID;
    }
    if (db->schema_version < 3) {
        evidence_seterr(err, errlen, "this store (schema version %d) has no reference_decodes table",
                        db->schema_version);
        return EVIDENCE_E_VERSION;
    }
    char *text = json_dumps(d->reference, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text || strlen(text) > EVIDENCE_MAX_DECODE_JSON) {
        free(text);
        evidence_seterr(err, errlen, "decode reference: too large or out of memory");
        return text ? EVIDENCE_E_INVALID : EVIDENCE_E_INTERNAL;
    }
    if ((rc = evidence_begin_immediate(db->sql, err, errlen)) != EVIDENCE_OK) {
        free(text);
        return rc;
    }
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(db->sql, INSERT_DECODE, -1, &st, NULL);
    if (src == SQLITE_OK) {
        bind_key(st, k);
        sqlite3_bind_int64(st, 5, d->frames);
        sqlite3_bind_int64(st, 6, d->samples);
        evidence_bind_text(st, 7, text);
        evidence_bind_text(st, 8, d->evidence_id);
        sqlite3_bind_int64(st, 9, d->decoded_at_ms ? d->decoded_at_ms : evidence_now_ms());
        src = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    free(text);
    if (src != SQLITE_DONE) {
        evidence_seterr(err, errlen, "reference_decodes: %s", sqlite3_errmsg(db->sql));
        evidence_rollback(db->sql);
        return EVIDENCE_E_INTERNAL;
    }
    return evidence_commit(db->sql, err, errlen);
}

static const char SELECT_DECODE[] =
    "SELECT frames, samples, reference, decoded_at_ms FROM reference_decodes"
    " WHERE input_digest = ?1 AND profile_fingerprint = ?2 AND interval_start = ?3 AND interval_end = ?4";

/* The row's values, checked as untrusted (the file is the user's). */
static enum evidence_rc read_row(sqlite3_stmt *st, struct evidence_decode *d, char *err, size_t errlen)
{
    const char *text = (const char *)sqlite3_column_text(st, 2);
    int bytes = sqlite3_column_bytes(st, 2);
    json_t *ref = text && bytes > 0 && (size_t)bytes <= EVIDENCE_MAX_DECODE_JSON
                      ? json_loadb(text, (size_t)bytes, JSON_REJECT_DUPLICATES, NULL) : NULL;
    int64_t frames = sqlite3_column_int64(st, 0), samples = sqlite3_column_int64(st, 1);
    if (!json_is_object(ref) || sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
        sqlite3_column_type(st, 1) != SQLITE_INTEGER || frames < 0 || samples < 0) {
        json_decref(ref);
        evidence_seterr(err, errlen, "reference_decodes: a stored row breaks the table's rules");
        return EVIDENCE_E_INVALID;
    }
    *d = (struct evidence_decode){.frames = frames, .samples = samples, .reference = ref,
                                  .decoded_at_ms = sqlite3_column_int64(st, 3)};
    return EVIDENCE_OK;
}

enum evidence_rc evidence_decode_get(struct evidence_db *db, const struct evidence_decode_key *k,
                                     struct evidence_decode *d, char *err, size_t errlen)
{
    assert(db && k && d);
    *d = (struct evidence_decode){0};
    enum evidence_rc rc = check_key(k, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    if (db->schema_version < 3)
        return EVIDENCE_E_NOTFOUND;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, SELECT_DECODE, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    bind_key(st, k);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        rc = read_row(st, d, err, errlen);
    else if (src == SQLITE_DONE)
        rc = EVIDENCE_E_NOTFOUND;
    else {
        evidence_seterr(err, errlen, "reference_decodes: %s", sqlite3_errmsg(db->sql));
        rc = EVIDENCE_E_INTERNAL;
    }
    sqlite3_finalize(st);
    if (rc == EVIDENCE_OK && (rc = evidence_read_done(db, err, errlen)) != EVIDENCE_OK) {
        json_decref(d->reference);
        d->reference = NULL;
    }
    return rc;
}
