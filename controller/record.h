/* record.h - durable decision records in control.db.
 *
 * Schema version 2 (PRAGMA user_version = 2), WAL, synchronous=FULL, busy
 * time-out 5 s.  A decision is written in ONE transaction (decisions row,
 * every evidence row as read, every condition) before the CLI prints its
 * answer; if the write fails, there is no answer.  Schema: docs/controller.md.
 */
#ifndef RECORD_H
#define RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <sqlite3.h>

#include "evidence_read.h"
#include "ledger.h"

#define REC_SCHEMA_VERSION 2 /* v1 files are migrated forward (migrate_v2.h) */
#define REC_ID_LEN 33 /* 32 hex digits + NUL */

enum rec_status { REC_OK = 0, REC_NOT_FOUND, REC_OPEN_FAILED, REC_BAD_VERSION, REC_FAILED };

/* Opens (create: creates and migrates an empty file) control.db. */
enum rec_status rec_open(const char *path, bool create, sqlite3 **db, char *err, size_t errlen);

/* A fresh random decision id (OpenSSL RAND_bytes, 128 bits, hex). 0 or -1. */
int rec_new_id(char id[REC_ID_LEN]);

struct rec_record {
    const char *id;
    int64_t recorded_at_ms;
    const char *situation; /* the input file as given, verbatim */
    size_t situation_len;
    const struct evr_set *rows; /* evidence rows as read */
    const json_t *result;       /* the answer (output.h) */
};

enum rec_status rec_insert(sqlite3 *db, const struct rec_record *r, char *err, size_t errlen);
/* The same, also storing the commitments taken from the ledger (may be NULL)
 * in the same transaction. */
enum rec_status rec_insert_fills(sqlite3 *db, const struct rec_record *r,
                                 const struct ldg_fills *fills, char *err, size_t errlen);
/* The writes of rec_insert_fills inside the caller's own write transaction
 * (`stepctl next` records a decision together with its review). */
enum rec_status rec_write(sqlite3 *db, const struct rec_record *r, const struct ldg_fills *fills,
                          char *err, size_t errlen);

/* What replay and explain need, loaded back from the record. */
struct rec_loaded {
    char *situation;
    size_t situation_len;
    int64_t decision_time_ms;
    struct evr_set rows;
    json_t *result;
    char tool_version[64];
    struct ldg_fills fills; /* replay applies them (ledger.h) */
};

enum rec_status rec_load(sqlite3 *db, const char *id, struct rec_loaded *out, char *err,
                         size_t errlen);
void rec_loaded_free(struct rec_loaded *l);

/* One line per decision, newest first (or a JSON array with --json). */
enum rec_status rec_list(sqlite3 *db, FILE *out, bool json, char *err, size_t errlen);

#endif
