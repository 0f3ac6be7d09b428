/* The evidence store: one SQLite file holding every Exact-AV check result
 * with its scope and its real observation time (docs/evidence.md).
 *
 * Written by exactav (verify, evidence import), read read-only by
 * `exactav evidence list|show|latest` and by stepctl.  The store knows
 * nothing of either program's logic: it validates, stores and returns rows.
 *
 * Conventions:
 *  - every enum's zero value is the failing / safe one (EVIDENCE_E_INTERNAL,
 *    EVIDENCE_VERDICT_UNKNOWN, EVIDENCE_OPEN_RO), so a forgotten
 *    initialisation can never read as success or MATCH;
 *  - strings in structs passed in are borrowed (NULL = SQL NULL);
 *  - query results are jansson values owned by the caller (json_decref);
 *  - err/errlen receive a one-line human message on failure (may be NULL/0).
 */
#ifndef EVIDENCE_H
#define EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The schema version this build writes (PRAGMA user_version): a writer
 * migrates an older store forward on its first write.  A reader (mode=ro,
 * never migrates) accepts every version from EVIDENCE_OLDEST_READABLE to
 * this one: v2 only adds a column and a table, v3 only a table, v4 to v6
 * only columns, v7 keeps `evidence` as a view of the same columns (the rows
 * in `evidence_rows`, each profile once in `profiles`), v8 only adds the
 * tables of keyed tamper evidence (empty until a store is keyed), and the queries read
 * an older store as v6 would show it (media_sequence, container, part_index,
 * allocation_id and pathway NULL, no probes, no stored reference decodes). */
#define EVIDENCE_SCHEMA_VERSION 8
#define EVIDENCE_OLDEST_READABLE 1
/* The only check kind this build stores. */
#define EVIDENCE_CHECK_KIND "exact-av-v1"
/* Bounds on untrusted input. */
#define EVIDENCE_MAX_REPORT_BYTES (16u * 1024u * 1024u)
#define EVIDENCE_MAX_FETCHES 65536u
#define EVIDENCE_MAX_ID_LEN 128u
/* An observation time later than now + this is refused: it would stay
 * "fresh" for longer than it should. */
#define EVIDENCE_MAX_CLOCK_SKEW_MS (300 * 1000)
/* SQLite busy time-out, and the total time we keep retrying BEGIN IMMEDIATE. */
#define EVIDENCE_BUSY_TIMEOUT_MS 10000
#define EVIDENCE_LOCK_DEADLINE_MS 60000

enum evidence_rc {
    EVIDENCE_E_INTERNAL = 0, /* zero value: failure (SQLite/OpenSSL/memory) */
    EVIDENCE_OK,
    EVIDENCE_E_NOTFOUND,     /* show: no such id */
    EVIDENCE_E_INVALID,      /* a record/report lacks or mistypes a field */
    EVIDENCE_E_CONFLICT,     /* id already stored with different content */
    EVIDENCE_E_OPEN,         /* cannot open / not an evidence database */
    EVIDENCE_E_VERSION,      /* schema version newer (or other) than this build */
    EVIDENCE_E_KEY,          /* v8: the key does not match, or a keyed store written without it */
};

enum evidence_open_mode {
    EVIDENCE_OPEN_RO = 0, /* SQLITE_OPEN_READONLY: never creates, never migrates */
    EVIDENCE_OPEN_RW = 1, /* creates, sets WAL, migrates forward */
};

enum evidence_verdict {
    EVIDENCE_VERDICT_UNKNOWN = 0,
    EVIDENCE_VERDICT_MATCH,
    EVIDENCE_VERDICT_MISMATCH,
};

/* A nullable INTEGER column: the zero value is SQL NULL. */
struct evidence_int {
    bool present;
    int64_t value;
};

/* One row of `fetches` (one HTTP request of the check). */
struct evidence_fetch {
    int64_t seq;                    /* 0-based order in the check */
    const char *url;                /* required, redacted */
    const char *effective_url;      /* redacted, after redirects */
    struct evidence_int http_status;
    struct evidence_int bytes;
    struct evidence_int content_length;
    struct evidence_int started_at_ms;
    struct evidence_int ended_at_ms;
    const char *redirects_json;     /* JSON array of redacted URLs, or NULL */
    const char *age, *via, *x_cache, *server, *etag, *content_type;
    const char *error;              /* NULL on success */
};

/* One row of `evidence` plus its fetches. */
struct evidence_record {
    const char *id;                 /* required; see evidence_new_id */
    const char *check_kind;         /* required: EVIDENCE_CHECK_KIND */
    enum evidence_verdict verdict;
    const char *reason;             /* required, stable reason code */
    const char *profile_id;         /* required */
    const char *profile_fingerprint;/* required */
    const char *path_id, *channel, *rendition, *program_version;
    const char *reference_version;
    const char *object;             /* redacted URL or file */
    struct evidence_int interval_start, interval_end; /* 90 kHz ticks */
    int64_t observed_at_ms;         /* UTC ms, when the bytes were fetched */
    int64_t observed_end_ms;        /* >= observed_at_ms */
    int64_t recorded_at_ms;         /* 0: the insert sets "now" */
    struct evidence_int media_sequence; /* v2: HLS media sequence number of the one segment checked */
    const char *container;          /* v4: "ts" or "fmp4" (report candidate.container), NULL: unsaid */
    struct evidence_int part_index; /* v5: the LL-HLS part of the first difference (report parts.part_index) */
    const char *allocation_id;      /* v6: the allocation followed (report context.allocation_id), NULL: none */
    const char *pathway;            /* v6: the PATHWAY-ID followed (report context.pathway), NULL: none */
    const char *report;             /* required: the full JSON report (object) */
    size_t fetch_count;
    const struct evidence_fetch *fetches;
};

/* Query filters; the zero value selects everything. */
struct evidence_filter {
    const char *path_id, *channel, *rendition, *program_version; /* NULL: any */
    const char *verdict;            /* "MATCH"|"MISMATCH"|"UNKNOWN", NULL: any */
    bool has_max_age;
    int64_t max_age_s;              /* keep rows with now_ms - observed_at_ms <= max_age_s*1000 */
    int64_t now_ms;                 /* the "now" max_age is measured against */
    int64_t limit;                  /* <= 0: no limit */
    bool has_media_sequence;        /* v2: rows of this media sequence number only */
    int64_t media_sequence;
};

struct evidence_db; /* opaque: one SQLite connection */

enum evidence_rc evidence_open(const char *path, enum evidence_open_mode mode,
                               struct evidence_db **db, char *err, size_t errlen);

/* ---- schema v8: keyed tamper evidence (evidence_keyed.c; docs/evidence.md, schema version 8) ----
 * With a key (store_key.h), a writer keys an unkeyed store in one write
 * transaction (every row present gets its MAC, the head, the keying row,
 * checkpoint 1, the MAC triggers) and checks a keyed store's key id; from
 * then on every row inserted gets its MAC and advances the keyed head, and
 * every row deleted adds its MAC to the newest checkpoint, all by triggers
 * that need the key.  A keyed store opened read-write without a key is
 * EVIDENCE_E_KEY (nothing is written: a writer without the key fails
 * closed), as is a key that does not match (never tampering).  A reader
 * with the key can check the MACs (evidence_check_macs); without one it
 * reads as before.  key NULL: evidence_open. */
struct store_key;
#define EVIDENCE_KEY_ENV "EXACTAV_STORE_KEY_FILE"
enum evidence_rc evidence_open_keyed(const char *path, enum evidence_open_mode mode,
                                     const struct store_key *key, struct evidence_db **db,
                                     char *err, size_t errlen);
/* The key file of given (an option) or $EXACTAV_STORE_KEY_FILE loaded into
 * k (*have: one was named).  0, 65, 66 after printing "WHO: --store-key-file
 * FILE: why" (store_key_load). */
int evidence_key_load(const char *who, const char *given, struct store_key *k, bool *have);
/* Whether the store is keyed (any row in the tables of schema v8). */
bool evidence_is_keyed(const struct evidence_db *db);
/* The keyed check (`evidence verify-store --store-key-file`): the keying
 * row, the head, every checkpoint and every row's MAC, and that the head
 * counts and sums every row MAC ever added: the surviving rows' and the
 * checkpoints'.  db was opened with the key.  EVIDENCE_OK with *c filled
 * (c->tampered and the first finding: table, row, rule, detail), or
 * EVIDENCE_E_KEY when the key is not the store's.  Rules: store_not_keyed,
 * keying_removed, checkpoint_mismatch, head_mismatch, row_mac_missing,
 * row_mac_mismatch, row_deleted.  One read snapshot. */
struct evidence_mac_check {
    bool keyed;             /* the store is keyed */
    size_t rows;            /* rows whose MAC verified */
    size_t checkpoints;     /* checkpoints that verified */
    bool tampered;
    char table[32], row[256], rule[48], detail[320];
};
enum evidence_rc evidence_check_macs(struct evidence_db *db, struct evidence_mac_check *c,
                                     char *err, size_t errlen);
void evidence_close(struct evidence_db *db);
/* The schema version found in the file (after migration for RW). */
int evidence_schema_version(const struct evidence_db *db);

/* One evidence row and its fetch rows in one BEGIN IMMEDIATE transaction:
 * all or nothing.  An existing id is EVIDENCE_E_CONFLICT. */
enum evidence_rc evidence_insert(struct evidence_db *db, const struct evidence_record *rec,
                                 char *err, size_t errlen);

/* Parses a verifier JSON report and inserts it (recorded_at_ms = now).
 * Idempotent by evidence_id: the same report again inserts nothing
 * (*inserted = 0) and never touches the stored row; the same id with a
 * different report is EVIDENCE_E_CONFLICT.  A missing/mistyped required
 * field is EVIDENCE_E_INVALID and err names the field. */
enum evidence_rc evidence_import_report(struct evidence_db *db, const char *json_text, size_t len,
                                        int *inserted, char *err, size_t errlen);
/* Same, with an explicit "now" (for tests and replays). */
enum evidence_rc evidence_import_report_at(struct evidence_db *db, const char *json_text,
                                           size_t len, int64_t now_ms, int *inserted,
                                           char *err, size_t errlen);

/* The rules of a valid report (docs/evidence.md): one that `exactav verify`
 * could have produced.  The verdict follows from the track verdicts by the
 * lattice; a MATCH has every track MATCH with everything in the interval
 * compared, clean decodes and no failed delivery; a MISMATCH names its
 * first difference; the counts agree; profile.fingerprint is 64 hex digits
 * equal to the one recomputed from profile.document and profile.runtime
 * (evidence_fingerprint.h), whose pins it matches.  EVIDENCE_OK, or
 * EVIDENCE_E_INVALID with err naming the first broken rule.  Import,
 * insert and evidence_newest all apply it. */
enum evidence_rc evidence_check_report(const json_t *report, char *err, size_t errlen);

/* 128 random bits (OpenSSL RAND_bytes) formatted like a UUIDv4. */
enum evidence_rc evidence_new_id(char out[37]);
/* Wall clock, UTC milliseconds since the Unix epoch. */
int64_t evidence_now_ms(void);

const char *evidence_verdict_name(enum evidence_verdict v);
/* Parses "MATCH"/"MISMATCH"/"UNKNOWN"; false for anything else. */
bool evidence_verdict_parse(const char *s, enum evidence_verdict *out);
const char *evidence_rc_name(enum evidence_rc rc);

/* Queries.  Rows are JSON objects keyed by column name (SQL NULL -> null,
 * `redirects` and `report` parsed back to JSON when valid).  list: newest
 * observation first; latest: the newest observed_at_ms per (path_id,
 * channel, rendition, program_version) among the rows the filter selects;
 * neither includes `report`.  show: every column, `report`, and `fetches`
 * ordered by seq; EVIDENCE_E_NOTFOUND when the id is absent. */
enum evidence_rc evidence_list(struct evidence_db *db, const struct evidence_filter *f,
                               json_t **rows, char *err, size_t errlen);
enum evidence_rc evidence_latest(struct evidence_db *db, const struct evidence_filter *f,
                                 json_t **rows, char *err, size_t errlen);
enum evidence_rc evidence_show(struct evidence_db *db, const char *id, json_t **record,
                               char *err, size_t errlen);

/* The controller's query.  For each scope: the newest row of exactly that
 * scope (path, channel, rendition, program version; the rule of `latest`:
 * newest observed_at_ms, a non-MATCH row first on a tie, then the later
 * recorded_at_ms, then the greater id), or, when there is none, the newest
 * row of the path and channel for any rendition or version (so the caller
 * can say why nothing applies).  Only check_kind exact-av-v1.  All scopes
 * are read in one read transaction (one snapshot).  Every row returned is
 * checked against the rules of a valid row (evidence_check_report, and each
 * column equal to its report): a row that breaks one comes back with
 * malformed = true and why naming the rule - never dropped, so an invalid
 * newest row can never let an older valid one decide. */
#define EVIDENCE_ROW_STR 256
struct evidence_row {
    char id[EVIDENCE_ROW_STR], check_kind[EVIDENCE_ROW_STR], reason[EVIDENCE_ROW_STR];
    char profile_id[EVIDENCE_ROW_STR], path_id[EVIDENCE_ROW_STR], channel[EVIDENCE_ROW_STR];
    char rendition[EVIDENCE_ROW_STR], program_version[EVIDENCE_ROW_STR];
    char reference_version[EVIDENCE_ROW_STR];
    enum evidence_verdict verdict; /* UNKNOWN for anything that is not a verdict */
    int64_t observed_at_ms, recorded_at_ms;
    bool malformed;                /* breaks a rule of a valid row: never applicable */
    char why[256];                 /* the rule, when malformed ("" when not known) */
    /* The report's track verdicts (video.verdict, audio.verdict), read only
     * from a valid row; UNKNOWN otherwise, and for audio null (a reference
     * without audio).  A MATCH on both tracks needs both MATCH. */
    enum evidence_verdict video, audio;
    char allocation_id[EVIDENCE_ROW_STR]; /* v6: "" when the row follows no allocation */
    char pathway[EVIDENCE_ROW_STR];
};
struct evidence_rows {
    struct evidence_row *rows;
    size_t n, cap;
};
struct evidence_scope {
    const char *path_id, *channel, *rendition, *program_version;
};

enum evidence_rc evidence_newest(struct evidence_db *db, const struct evidence_scope *scopes,
                                 size_t n, struct evidence_rows *out, char *err, size_t errlen);
/* The feedback of one step (stepctl next): the rows of exactly one scope
 * and DecodeProfile (check_kind exact-av-v1) observed AFTER a time - a
 * report observed earlier, however recently it was recorded or imported
 * again, is not among them.  Newest first (the order of evidence_newest),
 * at most limit rows; when none of them is a valid MISMATCH, also the
 * newest valid MISMATCH observed after the time (a difference is never
 * hidden behind many later checks).  One snapshot; every row checked
 * against the rules of a valid row like evidence_newest's (malformed, why,
 * and the track verdicts of a valid row). */
struct evidence_since {
    struct evidence_scope scope;
    const char *profile_id;
    int64_t after_ms; /* observed_at_ms > after_ms */
    size_t limit;     /* >= 1 */
    /* v6: a JSON array of allocation ids; only rows checked under one of
     * them (NULL: any row; a store older than v6 has none) */
    const char *allocation_ids;
};
enum evidence_rc evidence_observed_after(struct evidence_db *db, const struct evidence_since *q,
                                         struct evidence_rows *out, char *err, size_t errlen);
/* Every evidence row in the order it was stored, each checked against the
 * rules of a valid row exactly as evidence_newest checks it (row->malformed,
 * row->why), then handed to each with its stored report text (NULL when
 * the column is NULL); a nonzero return from each stops the scan.  One read
 * snapshot.  *rows: the rows handed over (may be NULL). */
typedef int (*evidence_scan_fn)(const struct evidence_row *row, const char *report, size_t len,
                                void *ctx);
enum evidence_rc evidence_scan(struct evidence_db *db, evidence_scan_fn each, void *ctx,
                               size_t *rows, char *err, size_t errlen);
/* Schema v7 (profiles stored once): every `profiles` row's digest must be
 * the hex SHA-256 of its document, the text every report that refers to it
 * is rebuilt with.  *bad gets the first digest that is not (empty when all
 * hold, and always for a store older than v7).  One read snapshot. */
enum evidence_rc evidence_check_profiles(struct evidence_db *db, char bad[65], char *err,
                                         size_t errlen);
/* The rule of "newest" as a comparison, exactly the order evidence_newest
 * and `latest` use in SQL: true when a is newer than b. */
bool evidence_row_newer(const struct evidence_row *a, const struct evidence_row *b);
/* Appends a copy of row; 0, or -1 when memory runs out. */
int evidence_rows_append(struct evidence_rows *set, const struct evidence_row *row);
void evidence_rows_free(struct evidence_rows *set);
/* Copies src (NULL: "") into the field dst of row; a value that does not
 * fit marks the row malformed. */
void evidence_row_set(struct evidence_row *row, char *dst, const char *src);

/* What `exactav report` draws (issue 22): in one snapshot, the checks
 * observed at or after since_ms (JSON objects: id, path_id, channel,
 * rendition, program_version, verdict, reason, media_sequence,
 * observed_at_ms, diff_images: the report's member or null), ordered by
 * path, channel, rendition, version, then time; and the probes of the same
 * time (id, path_id, channel, rendition, object, status, reason,
 * observed_at_ms, the three levels' statuses and times), newest first per
 * path.  At most limit of each (>= 1).  Read-only is enough. */
enum evidence_rc evidence_timeline(struct evidence_db *db, int64_t since_ms, int64_t limit, json_t **checks,
                                   json_t **probes, char *err, size_t errlen);

/* ---- availability probes (schema v2, table `probes`) ----
 * Availability evidence, never content evidence: a probe says whether a
 * path answered, at three levels (TCP connect, response headers of the
 * newest segment, full download of it).  The status is decided by the
 * writer (the canary) and only stored here. */
enum evidence_probe_status {
    EVIDENCE_PROBE_UNKNOWN = 0,      /* could not be observed */
    EVIDENCE_PROBE_PASS,             /* all three levels succeeded */
    EVIDENCE_PROBE_VIOLATION,        /* the path answered with an error */
};

struct evidence_probe {
    const char *id;                  /* required; see evidence_new_id */
    const char *path_id;             /* required */
    const char *channel, *rendition;
    const char *object;              /* required: the playlist probed, redacted */
    enum evidence_probe_status status;
    const char *reason;              /* required, stable code */
    int64_t observed_at_ms, observed_end_ms; /* as for evidence rows */
    int64_t recorded_at_ms;          /* 0: the insert sets "now" */
    struct evidence_int playlist_status, media_sequence;
    const char *playlist_error, *segment;
    struct evidence_int tcp_connect_ms, header_status, header_ttfb_ms;
    struct evidence_int download_status, download_bytes, download_ms;
    const char *tcp_error, *header_error, *download_error;
};

const char *evidence_probe_status_name(enum evidence_probe_status s);
/* Parses "PASS"/"VIOLATION"/"UNKNOWN"; false for anything else. */
bool evidence_probe_status_parse(const char *s, enum evidence_probe_status *out);

/* Validates and inserts one probe row (its own transaction). */
enum evidence_rc evidence_probe_insert(struct evidence_db *db, const struct evidence_probe *p,
                                       char *err, size_t errlen);
/* The newest probe of (path_id, channel, rendition) observed at or before
 * at_ms (ties: the non-PASS row, then the later recording, then the id),
 * as a JSON object keyed by column name; *row = NULL when there is none
 * (also on a version-1 store, which has no probes).  Read-only is enough. */
enum evidence_rc evidence_probe_newest(struct evidence_db *db, const char *path_id,
                                       const char *channel, const char *rendition, int64_t at_ms,
                                       json_t **row, char *err, size_t errlen);

/* ---- schema v3: stored clean decodes of references (reference_decodes) ----
 * The fast path's premise kept across processes: the reference decoder
 * input with this digest, decoded under this profile fingerprint over this
 * interval, was decoded cleanly (docs/evidence.md).  Never a verdict. */
#define EVIDENCE_MAX_DECODE_JSON (64u * 1024u)
struct evidence_decode_key {
    const char *input_digest;        /* 64 lowercase hex digits */
    const char *profile_fingerprint; /* 64 lowercase hex digits */
    int64_t interval_start, interval_end;
};
struct evidence_decode {
    int64_t frames, samples;         /* >= 0 */
    json_t *reference;               /* an object; put: borrowed, get: a new reference */
    const char *evidence_id;         /* put: may be NULL; get: not filled */
    int64_t decoded_at_ms;           /* put: 0 = now */
};
/* Stores a clean decode (its own transaction); an existing one of the same
 * key is kept.  EVIDENCE_E_VERSION on a store older than v3 (read-only). */
enum evidence_rc evidence_decode_put(struct evidence_db *db, const struct evidence_decode_key *k,
                                     const struct evidence_decode *d, char *err, size_t errlen);
/* EVIDENCE_OK with *d filled when a clean decode of k is stored,
 * EVIDENCE_E_NOTFOUND when none is (also on a store older than v3), and
 * EVIDENCE_E_INVALID when the stored row breaks the table's rules. */
enum evidence_rc evidence_decode_get(struct evidence_db *db, const struct evidence_decode_key *k,
                                     struct evidence_decode *d, char *err, size_t errlen);

/* ---- retention (exactav evidence prune, docs/evidence.md#retention) ----
 * Deletes evidence rows (with their fetches) and probes observed before
 * now - keep_ms, and stored reference decodes made before it, in
 * transactions of at most `batch` rows each; never the newest evidence row
 * of a scope (path, channel, rendition, program version: the row
 * evidence_newest returns), never a MISMATCH observed at or after
 * now - keep_mismatch_ms, never the newest probe of a (path, channel,
 * rendition).  Then gives the space back (incremental_vacuum; a store that
 * is not auto_vacuum=INCREMENTAL yet is converted once by VACUUM).  Needs a
 * read-write handle. */
#define EVIDENCE_PRUNE_BATCH 1000
#define EVIDENCE_PRUNE_KEEP_MISMATCH_MS (30 * 24 * 3600 * INT64_C(1000))
struct evidence_prune_opts {
    int64_t now_ms;           /* > 0 */
    int64_t keep_ms;          /* >= 0 */
    int64_t keep_mismatch_ms; /* >= 0 */
    size_t batch;             /* rows per transaction; 0: EVIDENCE_PRUNE_BATCH */
};
struct evidence_prune_result {
    int64_t evidence_rows, fetch_rows, probe_rows, decode_rows; /* deleted */
    int64_t kept_newest;   /* older than keep, kept as the newest row of their scope */
    int64_t kept_mismatch; /* older than keep, kept as a MISMATCH younger than keep_mismatch */
    int64_t transactions;  /* delete transactions run */
    int64_t bytes_before, bytes_after; /* page_count * page_size */
    const char *vacuum;    /* "full", "incremental" or "none" (static) */
};
enum evidence_rc evidence_prune(struct evidence_db *db, const struct evidence_prune_opts *opts,
                                struct evidence_prune_result *r, char *err, size_t errlen);
/* The result as JSON (`evidence prune --json`, the canary's log):
 * {"deleted": {"evidence", "fetches", "probes", "reference_decodes"},
 *  "kept": {"newest", "mismatch"}, "transactions", "bytes_before",
 *  "bytes_after", "bytes_reclaimed", "vacuum"}; NULL on out of memory. */
json_t *evidence_prune_json(const struct evidence_prune_result *r);
/* "7d", "12h", "30m", "45s": a whole number and one unit, at most 100
 * years; false for anything else. */
bool evidence_duration_parse(const char *s, int64_t *ms);

/* Writers: format what the queries returned, compute nothing.  Untrusted
 * text is printed with control characters escaped (evidence_text.h). */
int evidence_write_table(FILE *out, const json_t *rows, int64_t now_ms);
int evidence_write_record(FILE *out, const json_t *record);
int evidence_write_json(FILE *out, const json_t *value);

#endif
