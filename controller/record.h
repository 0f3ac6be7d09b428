/* record.h - durable decision records in control.db.
 *
 * Schema version 1 (PRAGMA user_version = 1), WAL, synchronous=FULL, busy
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

#include "evidence.h"

#define REC_SCHEMA_VERSION 1
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
    const struct evidence_rows *rows; /* evidence rows as read */
    const json_t *result;       /* the answer (output.h) */
};

enum rec_status rec_insert(sqlite3 *db, const struct rec_record *r, char *err, size_t errlen);

/* The columns of decisions that repeat the answer, named as in the table;
 * rec_columns_of gives their values for an answer (pointers into res; NULL
 * is SQL NULL).  Insert writes exactly these; replay compares the stored
 * ones with a recomputed answer. */
#define REC_N_COLUMNS 10
extern const char *const rec_column_names[REC_N_COLUMNS];
void rec_columns_of(const json_t *res, const char *out[REC_N_COLUMNS]);

/* The decision_conditions rows of an answer, keyed "PATH/CONDITION":
 * {path_id, condition, status, reason, detail, eligible, data}.  Insert
 * writes exactly these; replay compares the stored ones.  New reference. */
json_t *rec_conditions_of(const json_t *res);

/* What replay and explain need, loaded back from the record. */
struct rec_loaded {
    char *situation;
    size_t situation_len;
    int64_t decision_time_ms;
    struct evidence_rows rows;
    json_t *result;
    char tool_version[64];
    /* As stored, for replay to compare: the rec_column_names columns
     * (object), the condition rows (object keyed like rec_conditions_of;
     * NULL when the table is missing), and whether decision_evidence is
     * missing (then rows is empty). */
    json_t *columns, *conditions;
    bool evidence_missing;
};

enum rec_status rec_load(sqlite3 *db, const char *id, struct rec_loaded *out, char *err,
                         size_t errlen);
void rec_loaded_free(struct rec_loaded *l);

/* One line per decision, newest first (or a JSON array with --json). */
enum rec_status rec_list(sqlite3 *db, FILE *out, bool json, char *err, size_t errlen);

#endif
