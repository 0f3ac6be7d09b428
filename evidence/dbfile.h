/* dbfile.h - the SQLite files of this project: known by their application
 * id, never modified when they are someone else's, readable by a process
 * that cannot write them.
 *
 * Two stores: evidence.db (exactav writes it, stepctl and `exactav evidence`
 * read it) and control.db (stepctl).  Each carries its own PRAGMA
 * application_id.  The rules (docs/evidence.md, "Knowing our own file"):
 *
 *  - A writer classifies a file BEFORE anything is written to it, through a
 *    read-only connection: absent or empty -> new; our application_id ->
 *    ours (a newer user_version is refused); application_id 0 with
 *    user_version 1 and exactly our schema v1 tables -> ours from before
 *    application_id (adopted: the writer sets the id in its first
 *    transaction); anything else -> foreign, refused, the file untouched.
 *    The writer classifies again inside its BEGIN IMMEDIATE (another process
 *    may have created the file since).
 *  - Writers keep the -wal and -shm files when they close
 *    (SQLITE_FCNTL_PERSIST_WAL), so that a process without write access to
 *    the directory can still read the store (SQLite needs the WAL index,
 *    walformat.html).
 *  - A reader opens with mode=ro.  Only when SQLite cannot open the WAL
 *    index (read-only file system, a directory it cannot write) AND there
 *    is no -wal file (so every committed transaction is in the main file)
 *    does it read the main file with immutable=1; with a -wal file and no
 *    usable index it refuses and says why.
 */
#ifndef DBFILE_H
#define DBFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* PRAGMA application_id of each store: four ASCII letters, big-endian. */
#define DBFILE_APPID_EVIDENCE 0x45584556 /* "EXEV": evidence.db */
#define DBFILE_APPID_CONTROL 0x53544354  /* "STCT": control.db */

struct dbfile_spec {
    const char *what;                  /* "an evidence store", "a control.db": messages */
    int32_t application_id;            /* one of DBFILE_APPID_* */
    int version;                       /* the newest user_version this build knows */
    const char *const *legacy_tables;  /* schema v1's tables (NULL-terminated) */
    int oldest_readable;               /* the oldest user_version a reader reads as it is
                                          (readers never migrate: their queries know what
                                          an older version lacks); 0: version only */
};

/* What a file turned out to be.  The zero value is "nothing usable". */
enum dbfile_state {
    DBFILE_NONE = 0,
    DBFILE_NEW,    /* absent, or a database without any schema object */
    DBFILE_OURS,   /* our application_id */
    DBFILE_LEGACY, /* application_id 0, user_version 1, our schema v1 tables */
};

struct dbfile_found {
    enum dbfile_state state;
    int version;    /* user_version */
    bool immutable; /* read through immutable=1 (see above) */
};

/* Zero value: internal failure. */
enum dbfile_rc {
    DBFILE_E_INTERNAL = 0,
    DBFILE_OK,
    DBFILE_E_MISSING, /* reader: no such file (never created) */
    DBFILE_E_FOREIGN, /* not ours: another application, the other store, not SQLite */
    DBFILE_E_VERSION, /* ours, with a schema version this build cannot use */
    DBFILE_E_OPEN,    /* cannot be opened or read here (permissions, WAL index, ...) */
};

/* A writer's connection: classifies first (nothing is written to a file
 * that is not ours), then opens read-write, creating an absent file.  The
 * caller sets its pragmas and migrates inside BEGIN IMMEDIATE, calling
 * dbfile_classify again there. */
enum dbfile_rc dbfile_open_rw(const char *path, const struct dbfile_spec *spec, sqlite3 **db,
                              struct dbfile_found *found, char *err, size_t errlen);

/* A reader's connection: never creates, never writes.  Requires the file to
 * be ours (or ours from before application_id) with a user_version from
 * spec->oldest_readable (0: spec->version) to spec->version. */
enum dbfile_rc dbfile_open_ro(const char *path, const struct dbfile_spec *spec, sqlite3 **db,
                              struct dbfile_found *found, char *err, size_t errlen);

/* Reads application_id, user_version and the schema through db and
 * classifies them (the rules above).  Used inside a writer's transaction. */
enum dbfile_rc dbfile_classify(sqlite3 *db, const struct dbfile_spec *spec,
                               struct dbfile_found *found, char *err, size_t errlen);

/* PRAGMA user_version of db, or -1 when it cannot be read. */
int dbfile_user_version(sqlite3 *db);

/* The first column of the first row of sql (a statement without
 * parameters) as an integer, or -1 when it cannot be run or has no row. */
int64_t dbfile_query_int(sqlite3 *db, const char *sql);

/* Marks the file as ours: PRAGMA application_id (inside the caller's
 * transaction, with the schema it creates or adopts).  SQLITE_OK or not. */
int dbfile_mark(sqlite3 *db, const struct dbfile_spec *spec);

/* After a read through an immutable connection: false when a -wal file has
 * appeared since (a writer started; what was read may be stale or torn). */
bool dbfile_read_still_valid(const char *path, const struct dbfile_found *found);

#endif
