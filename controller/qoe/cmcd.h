/* cmcd.h - a tolerant parser of CMCD v2 (CTA-5004-B) event reports.
 *
 * A report arrives either as an application/cmcd body (records separated
 * by newlines) or as the query form (?CMCD=<one record>, what
 * navigator.sendBeacon can send).  A record is key=value pairs separated
 * by commas; a value is an integer, a decimal, a "string", a token, a
 * boolean (a key alone, ?0, ?1) or an inner list "(a b)".  As the spec
 * requires, unknown keys are ignored, invalid values are ignored and
 * counted, and a record with v above 2 is refused whole and counted.
 * Pure functions of their input: no allocation beyond the caller's batch,
 * every size bounded (untrusted input).
 */
#ifndef CMCD_H
#define CMCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMCD_MAX_RECORDS 64   /* records per report at most (more: refused, counted) */
#define CMCD_MAX_TEXT 2048    /* bytes of one record's stored text */
#define CMCD_MAX_URL 1024

/* What the QoE rules read of one record; has_* false when absent or invalid. */
struct cmcd_record {
    bool has_v, has_sn, has_ts, has_rc, has_ttfb, has_ttlb, has_rvfc;
    int64_t v, sn, ts, rc, ttfb, ttlb, rvfc_ms; /* rvfc_ms: com.exactav-rvfc-ms */
    char sid[72]; /* sid, at most 64 characters ("" absent) */
    char e[8];    /* event: ps, e, t, rr, bc, ce ... ("" absent) */
    char sta[4];  /* play state: s, p, r, f, e, q ... */
    char cen[96]; /* custom event name */
    char url[CMCD_MAX_URL];
    unsigned invalid; /* values ignored in this record */
    char text[CMCD_MAX_TEXT + 1]; /* the valid pairs, as received, joined by ',' */
    size_t text_len;
};

/* The records grow with the report (most reports hold one record: a batch
 * of 64 fixed records would be 200 KB zeroed a request).  Zero-initialise,
 * parse, then cmcd_batch_free(). */
struct cmcd_batch {
    struct cmcd_record *r; /* n records kept, room for cap */
    size_t n, cap;         /* n <= cap <= CMCD_MAX_RECORDS */
    bool oom;              /* a record could not be kept: out of memory */
    unsigned invalid;      /* values ignored, over every record (kept or not) */
    unsigned refused;      /* records refused whole: v above 2 */
    unsigned not_cmcd;     /* non-empty lines with no valid pair at all */
    struct cmcd_record spill; /* where a record beyond CMCD_MAX_RECORDS is read */
};

/* Parses one record (no newline in it) into *r; returns its well-formed
 * pairs (0: not CMCD).  What `stepctl qoe` re-reads a stored record with. */
unsigned cmcd_parse_record(const char *p, size_t len, struct cmcd_record *r);

/* Parses an application/cmcd body (len bytes, NUL bytes allowed: they make
 * their pair invalid).  Appends to *out (zero it first). */
void cmcd_parse_body(const char *body, size_t len, struct cmcd_batch *out);

/* Parses one record of the query form (the CMCD argument, already
 * percent-decoded).  Appends to *out. */
void cmcd_parse_query(const char *value, size_t len, struct cmcd_batch *out);

/* Frees the records and zeroes *b (ready for another parse). */
void cmcd_batch_free(struct cmcd_batch *b);

#endif
