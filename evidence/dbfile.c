/* dbfile.c - opening the project's SQLite files (see dbfile.h). */
#include "dbfile.h"
#include "evidence_text.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DBFILE_BUSY_MS 10000

/* The stores a file may belong to, for a message that says which. */
static const struct {
    int32_t id;
    const char *name;
} KNOWN[] = {
    {DBFILE_APPID_EVIDENCE, "an evidence store (exactav --evidence; stepctl decide --evidence)"},
    {DBFILE_APPID_CONTROL, "a stepctl control.db (stepctl --db)"},
};

static enum dbfile_rc fail(enum dbfile_rc rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum dbfile_rc fail(enum dbfile_rc rc, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static bool exists(const char *path, const char *suffix)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &st) == 0;
}

static int open_ro_conn(const char *path, bool immutable, sqlite3 **db);

/* True when the file's header says WAL (file format versions 2, offset 18).
 * Read through SQLite's own file layer, never with open()/close(): a
 * close() drops every POSIX lock this process holds on the file, and so
 * the locks of a connection already open here (stepctl serve's writer);
 * another process's connection could then believe itself the last one and
 * delete the WAL under it (https://sqlite.org/howtocorrupt.html, 2.2).
 * SQLite defers closing its descriptor while its other connections hold
 * locks on the file. */
static bool header_says_wal(const char *path)
{
    unsigned char h[20];
    sqlite3 *db = NULL;
    sqlite3_file *f = NULL;
    bool wal = open_ro_conn(path, true, &db) == SQLITE_OK &&
               sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK &&
               f && f->pMethods && f->pMethods->xRead(f, h, (int)sizeof h, 0) == SQLITE_OK &&
               !memcmp(h, "SQLite format 3", 16) && h[18] == 2;
    sqlite3_close_v2(db);
    return wal;
}

/* "file:PATH?mode=ro[&immutable=1]", PATH percent-encoded (RFC 3986). */
static int ro_uri(const char *path, bool immutable, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = (size_t)snprintf(out, n, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && o + 4 < n; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-._~", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    int k = snprintf(out + o, n - o, "?mode=ro%s", immutable ? "&immutable=1" : "");
    return k > 0 && o + (size_t)k < n ? 0 : -1;
}

/* A read-only connection (nothing is created or written). */
static int open_ro_conn(const char *path, bool immutable, sqlite3 **db)
{
    char uri[8192];
    *db = NULL;
    if (ro_uri(path, immutable, uri, sizeof uri) != 0)
        return SQLITE_CANTOPEN;
    int rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (*db) {
        sqlite3_busy_timeout(*db, DBFILE_BUSY_MS);
        sqlite3_extended_result_codes(*db, 1);
    }
    return rc;
}

static int pragma_int(sqlite3 *db, const char *sql, int *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *out = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Is the schema exactly the legacy tables (indexes allowed)?  *objects is the
 * number of schema objects; names lists the first table names for messages. */
static int schema_of(sqlite3 *db, const struct dbfile_spec *spec, int *objects, bool *legacy,
                     char *names, size_t nlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_master ORDER BY name", -1, &st,
                                NULL);
    int tables = 0, matched = 0, want = 0;
    while (spec->legacy_tables[want])
        want++;
    *objects = 0;
    names[0] = '\0';
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        if ((rc = sqlite3_step(st)) != SQLITE_ROW)
            break;
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        (*objects)++;
        if (!type || strcmp(type, "table"))
            continue;
        if (name && !strncmp(name, "sqlite_", 7))
            continue; /* SQLite's own (sqlite_sequence outlives every AUTOINCREMENT table) */
        tables++;
        size_t used = strlen(names);
        if (used + 40 < nlen)
            snprintf(names + used, nlen - used, "%s%.32s", used ? ", " : "", name ? name : "?");
        for (int i = 0; name && i < want; i++)
            matched += !strcmp(name, spec->legacy_tables[i]);
    }
    sqlite3_finalize(st);
    *legacy = tables == want && matched == want;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static const char *known_name(int32_t id)
{
    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
        if (KNOWN[i].id == id)
            return KNOWN[i].name;
    return NULL;
}

enum dbfile_rc dbfile_classify(sqlite3 *db, const struct dbfile_spec *spec,
                               struct dbfile_found *found, char *err, size_t errlen)
{
    int app = 0, version = -1, objects = 0;
    bool legacy = false;
    char names[160];
    /* One read transaction for the three reads: in autocommit mode each
     * would see its own snapshot, and a writer creating the file between
     * them would show its tables with the id and version read before
     * (a file of ours refused as "not ours"). */
    bool own_txn = sqlite3_get_autocommit(db) &&
                   sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    int rc = pragma_int(db, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK)
        rc = pragma_int(db, "PRAGMA user_version", &version);
    if (rc == SQLITE_OK)
        rc = schema_of(db, spec, &objects, &legacy, names, sizeof names);
    if (own_txn)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    if ((rc & 0xff) == SQLITE_NOTADB)
        return fail(DBFILE_E_FOREIGN, err, errlen, "not an SQLite database, so not %s",
                    spec->what);
    if (rc != SQLITE_OK)
        return fail(DBFILE_E_OPEN, err, errlen, "cannot read it: %s", sqlite3_errmsg(db));
    found->version = version;
    if (app == spec->application_id) {
        if (version < 1 || version > spec->version)
            return fail(DBFILE_E_VERSION, err, errlen,
                        "%s of schema version %d; this build knows versions 1 to %d", spec->what,
                        version, spec->version);
        found->state = DBFILE_OURS;
        return DBFILE_OK;
    }
    if (app != 0) {
        const char *other = known_name(app);
        if (other)
            return fail(DBFILE_E_FOREIGN, err, errlen,
                        "this is %s, not %s: were two options swapped?", other, spec->what);
        return fail(DBFILE_E_FOREIGN, err, errlen,
                    "another application's database (application_id 0x%08x; %s has 0x%08x)",
                    (unsigned)app, spec->what, (unsigned)spec->application_id);
    }
    if (objects == 0 && version == 0) {
        found->state = DBFILE_NEW;
        return DBFILE_OK;
    }
    if (legacy && version == 1) {
        found->state = DBFILE_LEGACY; /* ours, written before application_id existed */
        return DBFILE_OK;
    }
    return fail(DBFILE_E_FOREIGN, err, errlen,
                "not %s: no application_id, user_version %d, tables: %s", spec->what, version,
                names[0] ? names : "(none)");
}

/* Starts an open: clears the outputs, then checks the path before SQLite
 * sees it: a regular file (*empty when it has no byte), or absent. */
static enum dbfile_rc stat_path(const char *path, sqlite3 **out, struct dbfile_found *found,
                                bool *absent, bool *empty, char *err, size_t errlen)
{
    struct stat st;
    assert(out && found);
    *out = NULL;
    memset(found, 0, sizeof *found);
    *absent = *empty = false;
    if (!path || !*path)
        return fail(DBFILE_E_OPEN, err, errlen, "no database path");
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) {
            *absent = true;
            return DBFILE_OK;
        }
        char why[128];
        return fail(DBFILE_E_OPEN, err, errlen, "%s", evidence_text_errno(errno, why, sizeof why));
    }
    if (!S_ISREG(st.st_mode))
        return fail(DBFILE_E_OPEN, err, errlen, "not a regular file");
    *empty = st.st_size == 0;
    return DBFILE_OK;
}

/* Classifies an existing, non-empty file through a read-only connection.
 * A WAL file without a -wal file is read immutable: every committed
 * transaction is in the main file, and SQLite then creates no side file
 * next to a database that may not be ours. */
static enum dbfile_rc inspect(const char *path, const struct dbfile_spec *spec,
                              struct dbfile_found *found, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    bool immutable = header_says_wal(path) && !exists(path, "-wal");
    int rc = open_ro_conn(path, immutable, &db);
    enum dbfile_rc out = rc == SQLITE_OK ? dbfile_classify(db, spec, found, err, errlen)
                                         : fail(DBFILE_E_OPEN, err, errlen, "%s",
                                                db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close_v2(db);
    return out;
}

enum dbfile_rc dbfile_open_rw(const char *path, const struct dbfile_spec *spec, sqlite3 **out,
                              struct dbfile_found *found, char *err, size_t errlen)
{
    bool absent, empty;
    enum dbfile_rc rc = stat_path(path, out, found, &absent, &empty, err, errlen);
    if (rc != DBFILE_OK)
        return rc;
    if (absent || empty)
        found->state = DBFILE_NEW;
    else if ((rc = inspect(path, spec, found, err, errlen)) != DBFILE_OK)
        return rc; /* refused before anything was written */
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        rc = fail(DBFILE_E_OPEN, err, errlen, "cannot open it for writing: %s",
                  db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close_v2(db);
        return rc;
    }
    sqlite3_busy_timeout(db, DBFILE_BUSY_MS);
    sqlite3_extended_result_codes(db, 1);
    /* Keep -wal and -shm on close: readers that cannot create them can read. */
    int persist = 1;
    sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    *out = db;
    return DBFILE_OK;
}

/* Why the WAL index cannot be created next to path (for the message). */
static const char *dir_problem(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s", path);
    char *slash = strrchr(buf, '/');
    if (slash)
        *(slash == buf ? slash + 1 : slash) = '\0';
    else
        snprintf(buf, n, ".");
    errno = 0;
    int ok = access(buf, W_OK) == 0;
    char why[128];
    evidence_text_errno(errno, why, sizeof why);
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, ": %s", ok ? "writable, yet SQLite could not use it" : why);
    return buf;
}

enum dbfile_rc dbfile_open_ro(const char *path, const struct dbfile_spec *spec, sqlite3 **out,
                              struct dbfile_found *found, char *err, size_t errlen)
{
    bool absent, empty;
    enum dbfile_rc rc = stat_path(path, out, found, &absent, &empty, err, errlen);
    if (rc != DBFILE_OK)
        return rc;
    if (absent)
        return fail(DBFILE_E_MISSING, err, errlen, "no such file (a reader never creates one)");
    if (empty)
        return fail(DBFILE_E_FOREIGN, err, errlen, "an empty file, not %s", spec->what);
    sqlite3 *db = NULL;
    int orc = open_ro_conn(path, false, &db);
    rc = orc == SQLITE_OK ? dbfile_classify(db, spec, found, err, errlen) : DBFILE_E_OPEN;
    if (rc == DBFILE_E_OPEN && header_says_wal(path)) {
        /* mode=ro needs the WAL index (-shm), which this process could not
         * open or create.  Without a -wal file the main file holds every
         * committed transaction: read it immutable.  With one, it cannot be
         * read correctly here. */
        sqlite3_close_v2(db);
        db = NULL;
        char dir[512];
        if (exists(path, "-wal"))
            rc = fail(DBFILE_E_OPEN, err, errlen,
                      "cannot read it read-only: its write-ahead log (%s-wal) may hold committed "
                      "transactions, and its WAL index (%s-shm) is missing or unusable and "
                      "cannot be created (%s). Open it once where its directory is writable "
                      "(any reader recreates the index; writers of this version keep it)",
                      path, path, dir_problem(path, dir, sizeof dir));
        else if ((orc = open_ro_conn(path, true, &db)) == SQLITE_OK &&
                 (rc = dbfile_classify(db, spec, found, err, errlen)) == DBFILE_OK)
            found->immutable = true;
    } else if (orc != SQLITE_OK) {
        rc = fail(DBFILE_E_OPEN, err, errlen, "%s", db ? sqlite3_errmsg(db) : "cannot open");
    }
    if (rc == DBFILE_OK && found->state == DBFILE_NEW)
        rc = fail(DBFILE_E_FOREIGN, err, errlen, "an empty database, not %s", spec->what);
    int oldest = spec->oldest_readable ? spec->oldest_readable : spec->version;
    if (rc == DBFILE_OK && (found->version < oldest || found->version > spec->version)) {
        if (oldest == spec->version)
            rc = fail(DBFILE_E_VERSION, err, errlen, "%s of schema version %d; this build reads %d",
                      spec->what, found->version, spec->version);
        else
            rc = fail(DBFILE_E_VERSION, err, errlen,
                      "%s of schema version %d; this build reads versions %d to %d", spec->what,
                      found->version, oldest, spec->version);
    }
    if (rc != DBFILE_OK) {
        sqlite3_close_v2(db);
        return rc;
    }
    *out = db;
    return DBFILE_OK;
}

int64_t dbfile_query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int dbfile_user_version(sqlite3 *db)
{
    int v = -1;
    return pragma_int(db, "PRAGMA user_version", &v) == SQLITE_OK ? v : -1;
}

int dbfile_mark(sqlite3 *db, const struct dbfile_spec *spec)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d", (int)spec->application_id);
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

bool dbfile_read_still_valid(const char *path, const struct dbfile_found *found)
{
    return !found->immutable || !exists(path, "-wal");
}
