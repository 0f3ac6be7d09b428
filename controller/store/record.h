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

#include "evidence.h"
#include "ledger.h"

#define REC_SCHEMA_VERSION 9 /* older files are migrated forward (migrate_v2.h ... migrate_v9.h) */
#define REC_ID_LEN 33 /* 32 hex digits + NUL */

enum rec_status {
    REC_OK = 0,
    REC_NOT_FOUND,
    REC_OPEN_FAILED,
    REC_BAD_VERSION,
    REC_FAILED,
    REC_BAD_KEY,  /* rec_open_keyed: the key is not the store's (smac_keyed.h) */
    REC_TAMPERED, /* rec_open_keyed: a writer refused a schema object not stepctl's */
};

struct store_key;

/* How a command opens control.db.  Whose file it is follows
 * evidence/dbfile.h (application_id; a foreign file is refused before
 * anything is written).  The zero value is the safe one: a reader. */
enum rec_mode {
    REC_READ = 0, /* read-only (mode=ro): never creates, adopts or migrates; reads schema 1
                     (the tables of schema 2 are then absent: no grants, no ledger) or 2 */
    REC_WRITE,    /* an existing control.db, adopted and migrated to schema 2 first */
    REC_CREATE,   /* the same, creating it when absent or empty (decide, serve) */
};

enum rec_status rec_open(const char *path, enum rec_mode mode, sqlite3 **db, char *err,
                         size_t errlen);
/* The same with the key of --store-key-file (NULL: none, as rec_open).
 * Every connection gets stepctl_mac (smac.h), keyed with a copy of key or
 * failing without one.  With a key: a writer keys an unkeyed store; the key
 * is checked against a keyed one (REC_BAD_KEY); a writer refuses a store
 * with a schema object stepctl did not create that could make it MAC rows
 * (REC_TAMPERED).  See smac_keyed.h. */
enum rec_status rec_open_keyed(const char *path, enum rec_mode mode, const struct store_key *key,
                               sqlite3 **db, char *err, size_t errlen);
/* An in-memory database holding the schema this build creates, with the
 * MAC triggers: what smac_keyed.c compares a store's triggers with.  NULL
 * when it cannot be made. */
sqlite3 *rec_reference_schema(void);

/* The file's schema version (PRAGMA user_version): 2 after any writer
 * opened it; 1 possible for a reader (then grants, allocations,
 * reservations, grant_events, decision_commitments and next_decisions do
 * not exist). */
int rec_schema_version(sqlite3 *db);

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
/* The same, also storing the commitments taken from the ledger (may be NULL)
 * in the same transaction. */
enum rec_status rec_insert_fills(sqlite3 *db, const struct rec_record *r,
                                 const struct ldg_fills *fills, char *err, size_t errlen);
/* The writes of rec_insert_fills inside the caller's own write transaction
 * (`stepctl next` records a decision together with its review). */
enum rec_status rec_write(sqlite3 *db, const struct rec_record *r, const struct ldg_fills *fills,
                          char *err, size_t errlen);

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
    /* The commitments decide took from the ledger (ledger.h): replay applies
     * them.  Empty for a schema 1 file (it has no ledger);
     * commitments_missing: a schema 2 file whose decision_commitments
     * table is gone (replay reports it). */
    struct ldg_fills fills;
    bool commitments_missing;
};

enum rec_status rec_load(sqlite3 *db, const char *id, struct rec_loaded *out, char *err,
                         size_t errlen);
void rec_loaded_free(struct rec_loaded *l);

/* Runs sql with the text parameter ?1 and returns every row as a JSON
 * object keyed by column name, the stored value as it is (INTEGER ->
 * integer, NULL -> null, TEXT -> string), in row order; NULL on error. */
json_t *rec_rows_json(sqlite3 *db, const char *sql, const char *param);

/* One line per decision, newest first (or a JSON array with --json). */
enum rec_status rec_list(sqlite3 *db, FILE *out, bool json, char *err, size_t errlen);

#endif
