/* Writing one record: validation, then the evidence row and its fetch rows
 * in one transaction (all or nothing). */
#include "evidence_internal.h"
#include "evidence_fingerprint.h"

#include <assert.h>
#include <string.h>

static bool nonempty(const char *s)
{
    return s && *s;
}

static enum evidence_rc invalid(char *err, size_t errlen, const char *field, const char *why)
{
    evidence_seterr(err, errlen, "%s: %s", field, why);
    return EVIDENCE_E_INVALID;
}

static bool is_json_kind(const char *text, json_type want)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    bool ok = v && json_typeof(v) == want;
    json_decref(v);
    return ok;
}

static enum evidence_rc validate_fetch(const struct evidence_fetch *f, size_t i, char *err,
                                       size_t errlen)
{
    char field[64];
    if (!nonempty(f->url)) {
        snprintf(field, sizeof field, "fetches[%zu].url", i);
        return invalid(err, errlen, field, "required");
    }
    if (f->seq < 0) {
        snprintf(field, sizeof field, "fetches[%zu].seq", i);
        return invalid(err, errlen, field, "must be >= 0");
    }
    if (f->redirects_json && !is_json_kind(f->redirects_json, JSON_ARRAY)) {
        snprintf(field, sizeof field, "fetches[%zu].redirects", i);
        return invalid(err, errlen, field, "must be a JSON array");
    }
    return EVIDENCE_OK;
}

static enum evidence_rc validate_times(const struct evidence_record *r, int64_t now_ms, char *err,
                                       size_t errlen)
{
    /* 0 is the zero value, i.e. "never set": never store it as a time. */
    if (r->observed_at_ms <= 0)
        return invalid(err, errlen, "observed_at_ms", "required (UTC ms > 0)");
    if (r->observed_end_ms < r->observed_at_ms)
        return invalid(err, errlen, "observed_end_ms", "earlier than observed_at_ms");
    if (r->observed_at_ms > now_ms + EVIDENCE_MAX_CLOCK_SKEW_MS)
        return invalid(err, errlen, "observed_at_ms", "lies in the future");
    return EVIDENCE_OK;
}

enum evidence_rc evidence_validate_record(const struct evidence_record *r, int64_t now_ms,
                                          char *err, size_t errlen)
{
    assert(r);
    if (!evidence_id_valid(r->id))
        return invalid(err, errlen, "evidence_id", "required, 1-128 chars of [A-Za-z0-9._:-]");
    if (!r->check_kind || strcmp(r->check_kind, EVIDENCE_CHECK_KIND) != 0)
        return invalid(err, errlen, "check_kind", "must be \"" EVIDENCE_CHECK_KIND "\"");
    if (r->verdict != EVIDENCE_VERDICT_UNKNOWN && r->verdict != EVIDENCE_VERDICT_MATCH &&
        r->verdict != EVIDENCE_VERDICT_MISMATCH)
        return invalid(err, errlen, "verdict", "must be MATCH, MISMATCH or UNKNOWN");
    if (!nonempty(r->reason))
        return invalid(err, errlen, "reason", "required");
    if (!nonempty(r->profile_id))
        return invalid(err, errlen, "profile.id", "required");
    if (!nonempty(r->profile_fingerprint))
        return invalid(err, errlen, "profile.fingerprint", "required");
    enum evidence_rc rc = validate_times(r, now_ms, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    if (r->media_sequence.present && r->media_sequence.value < 0)
        return invalid(err, errlen, "media_sequence", "must be >= 0");
    if (r->container && strcmp(r->container, "ts") && strcmp(r->container, "fmp4"))
        return invalid(err, errlen, "candidate.container", "must be \"ts\" or \"fmp4\"");
    if (r->part_index.present && r->part_index.value < 0)
        return invalid(err, errlen, "parts.part_index", "must be >= 0");
    if (r->allocation_id && !evidence_id_valid(r->allocation_id))
        return invalid(err, errlen, "context.allocation_id", "1-128 chars of [A-Za-z0-9._:-]");
    if (r->pathway && (!nonempty(r->pathway) || strlen(r->pathway) > 255))
        return invalid(err, errlen, "context.pathway", "1-255 characters");
    if (!r->allocation_id != !r->pathway)
        return invalid(err, errlen, "context.pathway",
                       "context.allocation_id and context.pathway go together");
    if (r->fetch_count > EVIDENCE_MAX_FETCHES || (r->fetch_count && !r->fetches))
        return invalid(err, errlen, "fetches", "too many or missing");
    for (size_t i = 0; i < r->fetch_count; i++)
        if ((rc = validate_fetch(&r->fetches[i], i, err, errlen)) != EVIDENCE_OK)
            return rc;
    /* The report itself, and the columns against it (evidence_rules.c). */
    json_t *report = r->report && strlen(r->report) <= EVIDENCE_MAX_REPORT_BYTES
                         ? json_loads(r->report, JSON_REJECT_DUPLICATES, NULL)
                         : NULL;
    rc = json_is_object(report) ? evidence_check_row(r, report, err, errlen)
                                : invalid(err, errlen, "report", "must be a JSON object");
    json_decref(report);
    return rc;
}

void evidence_bind_text(sqlite3_stmt *st, int col, const char *s)
{
    if (s)
        sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, col);
}

void evidence_bind_int(sqlite3_stmt *st, int col, struct evidence_int v)
{
    if (v.present)
        sqlite3_bind_int64(st, col, v.value);
    else
        sqlite3_bind_null(st, col);
}

/* Runs a prepared, bound statement to completion.  Maps a constraint
 * failure (duplicate id / seq, NOT NULL, CHECK) to CONFLICT or INVALID. */
static enum evidence_rc step_done(sqlite3 *sql, sqlite3_stmt *st, const char *what, char *err,
                                  size_t errlen)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return EVIDENCE_OK;
    evidence_seterr(err, errlen, "%s: %s", what, sqlite3_errmsg(sql));
    if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE)
        return strcmp(what, "evidence") == 0 ? EVIDENCE_E_CONFLICT : EVIDENCE_E_INVALID;
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return EVIDENCE_E_INVALID;
    return EVIDENCE_E_INTERNAL;
}

static const char INSERT_EVIDENCE[] =
    "INSERT INTO evidence (id, check_kind, verdict, reason, profile_id, profile_fingerprint,"
    " path_id, channel, rendition, program_version, reference_version, object,"
    " interval_start, interval_end, observed_at_ms, observed_end_ms, recorded_at_ms, report,"
    " media_sequence, container, part_index, allocation_id, pathway)"
    " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)";

static const char INSERT_FETCH[] =
    "INSERT INTO fetches (evidence_id, seq, url, effective_url, http_status, bytes,"
    " content_length, started_at_ms, ended_at_ms, redirects, age, via, x_cache, server,"
    " etag, content_type, error)"
    " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)";

static enum evidence_rc insert_evidence_row(sqlite3 *sql, const struct evidence_record *r,
                                            char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, INSERT_EVIDENCE, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare evidence: %s", sqlite3_errmsg(sql));
        return EVIDENCE_E_INTERNAL;
    }
    const char *text[] = {r->id, r->check_kind, evidence_verdict_name(r->verdict), r->reason,
                          r->profile_id, r->profile_fingerprint, r->path_id, r->channel,
                          r->rendition, r->program_version, r->reference_version, r->object};
    for (int i = 0; i < (int)(sizeof text / sizeof text[0]); i++)
        evidence_bind_text(st, i + 1, text[i]);
    evidence_bind_int(st, 13, r->interval_start);
    evidence_bind_int(st, 14, r->interval_end);
    sqlite3_bind_int64(st, 15, r->observed_at_ms);
    sqlite3_bind_int64(st, 16, r->observed_end_ms);
    sqlite3_bind_int64(st, 17, r->recorded_at_ms);
    evidence_bind_text(st, 18, r->report);
    evidence_bind_int(st, 19, r->media_sequence);
    evidence_bind_text(st, 20, r->container);
    evidence_bind_int(st, 21, r->part_index);
    evidence_bind_text(st, 22, r->allocation_id);
    evidence_bind_text(st, 23, r->pathway);
    return step_done(sql, st, "evidence", err, errlen);
}

static enum evidence_rc insert_fetch_row(sqlite3 *sql, const char *id,
                                         const struct evidence_fetch *f, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, INSERT_FETCH, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare fetches: %s", sqlite3_errmsg(sql));
        return EVIDENCE_E_INTERNAL;
    }
    evidence_bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, f->seq);
    evidence_bind_text(st, 3, f->url);
    evidence_bind_text(st, 4, f->effective_url);
    const struct evidence_int ints[] = {f->http_status, f->bytes, f->content_length,
                                        f->started_at_ms, f->ended_at_ms};
    for (int i = 0; i < 5; i++)
        evidence_bind_int(st, 5 + i, ints[i]);
    const char *text[] = {f->redirects_json, f->age, f->via, f->x_cache, f->server,
                          f->etag, f->content_type, f->error};
    for (int i = 0; i < 8; i++)
        evidence_bind_text(st, 10 + i, text[i]);
    return step_done(sql, st, "fetches", err, errlen);
}

/* Schema v7 stores each report's `profile` text once: it goes into
 * `profiles` under its SHA-256 before the row, so that the view's insert
 * trigger (schema_v7.sql) finds it and keeps only the rest of the report in
 * the row.  The text is SQLite's own extraction of the member, the very
 * text the trigger compares; a report without a JSON profile stores
 * nothing here and is kept whole. */
static enum evidence_rc store_profile(sqlite3 *sql, const char *report, char *err, size_t errlen)
{
    sqlite3_stmt *get = NULL, *put = NULL;
    int rc = sqlite3_prepare_v2(sql,
                                "SELECT CASE WHEN json_valid(?1) THEN json_extract(?1, '$.profile')"
                                " END",
                                -1, &get, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(sql, "INSERT OR IGNORE INTO profiles (digest, document) VALUES (?1, ?2)",
                                -1, &put, NULL);
    if (rc == SQLITE_OK) {
        evidence_bind_text(get, 1, report);
        rc = sqlite3_step(get);
    }
    if (rc == SQLITE_ROW && sqlite3_column_type(get, 0) == SQLITE_TEXT) {
        const unsigned char *doc = sqlite3_column_text(get, 0);
        int len = sqlite3_column_bytes(get, 0);
        char digest[65];
        evidence_sha256_hex(doc, (size_t)len, digest);
        sqlite3_bind_text(put, 1, digest, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(put, 2, (const char *)doc, len, SQLITE_TRANSIENT);
        rc = sqlite3_step(put);
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    if (rc != SQLITE_OK)
        evidence_seterr(err, errlen, "profiles: %s", sqlite3_errmsg(sql));
    sqlite3_finalize(get);
    sqlite3_finalize(put);
    return rc == SQLITE_OK ? EVIDENCE_OK : EVIDENCE_E_INTERNAL;
}

enum evidence_rc evidence_insert_in_txn(sqlite3 *sql, const struct evidence_record *r, char *err,
                                        size_t errlen)
{
    assert(!sqlite3_get_autocommit(sql)); /* the caller holds the transaction */
    enum evidence_rc rc = store_profile(sql, r->report, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = insert_evidence_row(sql, r, err, errlen);
    for (size_t i = 0; rc == EVIDENCE_OK && i < r->fetch_count; i++)
        rc = insert_fetch_row(sql, r->id, &r->fetches[i], err, errlen);
    return rc;
}

enum evidence_rc evidence_insert(struct evidence_db *db, const struct evidence_record *rec,
                                 char *err, size_t errlen)
{
    assert(db && rec);
    int64_t now = evidence_now_ms();
    enum evidence_rc rc = evidence_validate_record(rec, now, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    struct evidence_record r = *rec;
    if (r.recorded_at_ms == 0)
        r.recorded_at_ms = now;
    rc = evidence_begin_immediate(db->sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    rc = evidence_insert_in_txn(db->sql, &r, err, errlen);
    if (rc != EVIDENCE_OK) {
        evidence_rollback(db->sql);
        return rc;
    }
    return evidence_commit(db->sql, err, errlen);
}
