/* Importing a verifier JSON report (the `exactav verify --json` contract,
 * docs/evidence.md): parse, map to the columns, validate (the rules of a
 * valid report, evidence_rules.c, run inside evidence_validate_record),
 * insert once per evidence id. */
#include "evidence_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void evidence_report_buf_free(struct evidence_report_buf *b)
{
    for (size_t i = 0; i < b->nowned; i++)
        free(b->owned[i]);
    free(b->owned);
    free(b->fetches);
    memset(b, 0, sizeof *b);
}

static enum evidence_rc bad(char *err, size_t errlen, const char *field, const char *why)
{
    evidence_seterr(err, errlen, "%s: %s", field, why);
    return EVIDENCE_E_INVALID;
}

/* Missing or null -> NULL; a string -> its value; anything else invalid. */
static enum evidence_rc opt_string(const json_t *obj, const char *key, const char *field,
                                   const char **out, char *err, size_t errlen)
{
    const json_t *v = obj ? json_object_get(obj, key) : NULL;
    *out = NULL;
    if (!v || json_is_null(v))
        return EVIDENCE_OK;
    if (!json_is_string(v))
        return bad(err, errlen, field, "must be a string or null");
    *out = json_string_value(v);
    return EVIDENCE_OK;
}

static enum evidence_rc req_string(const json_t *obj, const char *key, const char *field,
                                   const char **out, char *err, size_t errlen)
{
    enum evidence_rc rc = opt_string(obj, key, field, out, err, errlen);
    if (rc == EVIDENCE_OK && (!*out || !**out))
        return bad(err, errlen, field, "required (non-empty string)");
    return rc;
}

static enum evidence_rc opt_int(const json_t *obj, const char *key, const char *field,
                                struct evidence_int *out, char *err, size_t errlen)
{
    const json_t *v = obj ? json_object_get(obj, key) : NULL;
    *out = (struct evidence_int){0};
    if (!v || json_is_null(v))
        return EVIDENCE_OK;
    if (!json_is_integer(v))
        return bad(err, errlen, field, "must be an integer or null");
    *out = (struct evidence_int){.present = true, .value = json_integer_value(v)};
    return EVIDENCE_OK;
}

static enum evidence_rc req_int(const json_t *obj, const char *key, const char *field,
                                int64_t *out, char *err, size_t errlen)
{
    struct evidence_int v;
    enum evidence_rc rc = opt_int(obj, key, field, &v, err, errlen);
    if (rc == EVIDENCE_OK && !v.present)
        return bad(err, errlen, field, "required (integer)");
    *out = v.value;
    return rc;
}

/* Missing or null -> NULL; present -> must be an object. */
static enum evidence_rc opt_object(const json_t *obj, const char *key, const char *field,
                                   const json_t **out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return EVIDENCE_OK;
    if (!json_is_object(v))
        return bad(err, errlen, field, "must be an object");
    *out = v;
    return EVIDENCE_OK;
}

static char *own(struct evidence_report_buf *b, char *s)
{
    if (!s)
        return NULL;
    assert(b->nowned < b->capowned);
    b->owned[b->nowned++] = s;
    return s;
}

/* Response headers are metadata only; a non-string value (e.g. several
 * Via lines as an array) is kept as compact JSON text. */
static const char *header_value(struct evidence_report_buf *b, const json_t *headers, const char *key)
{
    const json_t *v = headers ? json_object_get(headers, key) : NULL;
    if (!v || json_is_null(v))
        return NULL;
    if (json_is_string(v))
        return json_string_value(v);
    return own(b, json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY));
}

static enum evidence_rc parse_redirects(struct evidence_report_buf *b, const json_t *f, const char *field,
                                        const char **out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(f, "redirects");
    *out = NULL;
    if (!v || json_is_null(v))
        return EVIDENCE_OK;
    size_t i;
    const json_t *u;
    if (!json_is_array(v))
        return bad(err, errlen, field, "must be an array of strings");
    json_array_foreach(v, i, u) {
        if (!json_is_string(u))
            return bad(err, errlen, field, "must be an array of strings");
    }
    *out = own(b, json_dumps(v, JSON_COMPACT));
    return *out ? EVIDENCE_OK : bad(err, errlen, field, "out of memory");
}

static enum evidence_rc parse_fetch(struct evidence_report_buf *b, const json_t *f, size_t i,
                                    struct evidence_fetch *out, char *err, size_t errlen)
{
    char fld[96];
    const json_t *headers = NULL;
    enum evidence_rc rc = EVIDENCE_OK;
    /* FIELD names the offending field in the error, e.g. fetches[2].url */
#define FIELD(name) (snprintf(fld, sizeof fld, "fetches[%zu].%s", i, name), fld)
    if (!json_is_object(f))
        return bad(err, errlen, FIELD("*"), "must be an object");
    struct evidence_int seq;
    if ((rc = opt_int(f, "seq", FIELD("seq"), &seq, err, errlen)) != EVIDENCE_OK)
        return rc;
    if (!seq.present)
        return bad(err, errlen, fld, "required (integer)");
    out->seq = seq.value;
    if ((rc = req_string(f, "url", FIELD("url"), &out->url, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_string(f, "effective_url", FIELD("effective_url"), &out->effective_url, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_int(f, "http_status", FIELD("http_status"), &out->http_status, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_int(f, "bytes", FIELD("bytes"), &out->bytes, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_int(f, "content_length", FIELD("content_length"), &out->content_length, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_int(f, "started_at_ms", FIELD("started_at_ms"), &out->started_at_ms, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_int(f, "ended_at_ms", FIELD("ended_at_ms"), &out->ended_at_ms, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_string(f, "error", FIELD("error"), &out->error, err, errlen)) != EVIDENCE_OK ||
        (rc = parse_redirects(b, f, FIELD("redirects"), &out->redirects_json, err, errlen)) != EVIDENCE_OK ||
        (rc = opt_object(f, "headers", FIELD("headers"), &headers, err, errlen)) != EVIDENCE_OK)
        return rc;
#undef FIELD
    out->age = header_value(b, headers, "age");
    out->via = header_value(b, headers, "via");
    out->x_cache = header_value(b, headers, "x_cache");
    out->server = header_value(b, headers, "server");
    out->etag = header_value(b, headers, "etag");
    out->content_type = header_value(b, headers, "content_type");
    return EVIDENCE_OK;
}

static enum evidence_rc parse_fetches(struct evidence_report_buf *b, const json_t *root,
                                      struct evidence_record *r, char *err, size_t errlen)
{
    const json_t *arr = json_object_get(root, "fetches");
    if (!arr || json_is_null(arr))
        return EVIDENCE_OK;
    if (!json_is_array(arr))
        return bad(err, errlen, "fetches", "must be an array");
    size_t n = json_array_size(arr);
    if (n > EVIDENCE_MAX_FETCHES)
        return bad(err, errlen, "fetches", "too many entries");
    if (n == 0)
        return EVIDENCE_OK;
    b->fetches = calloc(n, sizeof *b->fetches);
    b->capowned = n * 7; /* redirects + 6 headers per fetch at most */
    b->owned = calloc(b->capowned, sizeof *b->owned);
    if (!b->fetches || !b->owned)
        return EVIDENCE_E_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        enum evidence_rc rc = parse_fetch(b, json_array_get(arr, i), i, &b->fetches[i], err, errlen);
        if (rc != EVIDENCE_OK)
            return rc;
    }
    r->fetches = b->fetches;
    r->fetch_count = n;
    return EVIDENCE_OK;
}

static enum evidence_rc parse_verdict(const json_t *root, struct evidence_record *r, char *err,
                                      size_t errlen)
{
    const char *v = NULL;
    enum evidence_rc rc = req_string(root, "verdict", "verdict", &v, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    if (!evidence_verdict_parse(v, &r->verdict))
        return bad(err, errlen, "verdict", "must be MATCH, MISMATCH or UNKNOWN");
    return EVIDENCE_OK;
}

/* Schema v5: the LL-HLS part a canary row is about (parts.part_index);
 * a report without parts (every report before issue 20's stage 3) has
 * none. */
static enum evidence_rc parse_parts(const json_t *root, struct evidence_record *r, char *err, size_t errlen)
{
    const json_t *parts = NULL;
    enum evidence_rc rc = opt_object(root, "parts", "parts", &parts, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = opt_int(parts, "part_index", "parts.part_index", &r->part_index, err, errlen);
    if (rc == EVIDENCE_OK && r->part_index.present && r->part_index.value < 0)
        return bad(err, errlen, "parts.part_index", "must be >= 0");
    return rc;
}

static enum evidence_rc parse_scope(const json_t *root, struct evidence_record *r, char *err,
                                    size_t errlen)
{
    const json_t *ctx = NULL, *cand = NULL, *iv = NULL;
    enum evidence_rc rc;
    if ((rc = opt_object(root, "context", "context", &ctx, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "path_id", "context.path_id", &r->path_id, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "channel", "context.channel", &r->channel, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "rendition", "context.rendition", &r->rendition, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "program_version", "context.program_version", &r->program_version, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "reference_version", "context.reference_version", &r->reference_version, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "allocation_id", "context.allocation_id", &r->allocation_id, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(ctx, "pathway", "context.pathway", &r->pathway, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_object(root, "candidate", "candidate", &cand, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(cand, "object", "candidate.object", &r->object, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_string(cand, "container", "candidate.container", &r->container, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_object(root, "interval", "interval", &iv, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_int(iv, "start", "interval.start", &r->interval_start, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_int(iv, "end", "interval.end", &r->interval_end, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_int(root, "media_sequence", "media_sequence", &r->media_sequence, err, errlen)) == EVIDENCE_OK &&
        (rc = parse_parts(root, r, err, errlen)) == EVIDENCE_OK)
        return EVIDENCE_OK;
    return rc;
}

enum evidence_rc evidence_record_from_report(const json_t *root, struct evidence_report_buf *b,
                                             struct evidence_record *r, char *err, size_t errlen)
{
    const json_t *profile = NULL;
    enum evidence_rc rc;
    if ((rc = req_string(root, "check_kind", "check_kind", &r->check_kind, err, errlen)) == EVIDENCE_OK &&
        (rc = req_string(root, "evidence_id", "evidence_id", &r->id, err, errlen)) == EVIDENCE_OK &&
        (rc = parse_verdict(root, r, err, errlen)) == EVIDENCE_OK &&
        (rc = req_string(root, "reason", "reason", &r->reason, err, errlen)) == EVIDENCE_OK &&
        (rc = opt_object(root, "profile", "profile", &profile, err, errlen)) == EVIDENCE_OK &&
        (rc = req_string(profile, "id", "profile.id", &r->profile_id, err, errlen)) == EVIDENCE_OK &&
        (rc = req_string(profile, "fingerprint", "profile.fingerprint", &r->profile_fingerprint, err, errlen)) == EVIDENCE_OK &&
        (rc = req_int(root, "observed_at_ms", "observed_at_ms", &r->observed_at_ms, err, errlen)) == EVIDENCE_OK &&
        (rc = req_int(root, "observed_end_ms", "observed_end_ms", &r->observed_end_ms, err, errlen)) == EVIDENCE_OK &&
        (rc = parse_scope(root, r, err, errlen)) == EVIDENCE_OK &&
        (rc = parse_fetches(b, root, r, err, errlen)) == EVIDENCE_OK)
        return EVIDENCE_OK;
    return rc;
}

/* Inside the write transaction: is this id stored, and with the same
 * report?  Same report (compared as JSON values, so formatting does not
 * matter) -> *exists = true; different -> CONFLICT. */
static enum evidence_rc check_existing(sqlite3 *sql, const char *id, const json_t *report,
                                       bool *exists, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    *exists = false;
    if (sqlite3_prepare_v2(sql, "SELECT report FROM evidence WHERE id = ?1", -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "%s", sqlite3_errmsg(sql));
        return EVIDENCE_E_INTERNAL;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    enum evidence_rc out = EVIDENCE_OK;
    if (rc == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        json_t *stored = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
        *exists = true;
        if (!stored || !json_equal(stored, report)) {
            evidence_seterr(err, errlen, "evidence_id: %s is already stored with a different report", id);
            out = EVIDENCE_E_CONFLICT;
        }
        json_decref(stored);
    } else if (rc != SQLITE_DONE) {
        evidence_seterr(err, errlen, "%s", sqlite3_errmsg(sql));
        out = EVIDENCE_E_INTERNAL;
    }
    sqlite3_finalize(st);
    return out;
}

static enum evidence_rc store_once(struct evidence_db *db, const struct evidence_record *r,
                                   const json_t *root, int *inserted, char *err, size_t errlen)
{
    bool exists = false;
    enum evidence_rc rc = evidence_begin_immediate(db->sql, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    rc = check_existing(db->sql, r->id, root, &exists, err, errlen);
    if (rc == EVIDENCE_OK && !exists)
        rc = evidence_insert_in_txn(db->sql, r, err, errlen);
    if (rc != EVIDENCE_OK || exists) {
        /* nothing to write: an existing row is never touched */
        evidence_rollback(db->sql);
        return rc;
    }
    rc = evidence_commit(db->sql, err, errlen);
    if (rc == EVIDENCE_OK)
        *inserted = 1;
    return rc;
}

enum evidence_rc evidence_import_report_at(struct evidence_db *db, const char *json_text,
                                           size_t len, int64_t now_ms, int *inserted,
                                           char *err, size_t errlen)
{
    assert(db && inserted);
    *inserted = 0;
    if (!json_text || len == 0 || len > EVIDENCE_MAX_REPORT_BYTES)
        return bad(err, errlen, "report", "empty or larger than 16 MiB");
    json_error_t jerr;
    json_t *root = json_loadb(json_text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root || !json_is_object(root)) {
        evidence_seterr(err, errlen, "report: not a JSON object (%s at line %d)",
                        root ? "wrong type" : jerr.text, root ? 0 : jerr.line);
        json_decref(root);
        return EVIDENCE_E_INVALID;
    }
    struct evidence_report_buf b = {0};
    struct evidence_record r = {.recorded_at_ms = now_ms};
    char *text = strndup(json_text, len); /* the report column: the text as given */
    enum evidence_rc rc = text ? evidence_record_from_report(root, &b, &r, err, errlen) : EVIDENCE_E_INTERNAL;
    r.report = text;
    if (rc == EVIDENCE_OK)
        rc = evidence_validate_record(&r, now_ms, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = store_once(db, &r, root, inserted, err, errlen);
    free(text);
    evidence_report_buf_free(&b);
    json_decref(root);
    return rc;
}

enum evidence_rc evidence_import_report(struct evidence_db *db, const char *json_text, size_t len,
                                        int *inserted, char *err, size_t errlen)
{
    return evidence_import_report_at(db, json_text, len, evidence_now_ms(), inserted, err, errlen);
}
