/* qoe_ingest.h - storing a session's CMCD report (inside the caller's
 * write transaction: `stepctl serve`'s group commit).
 *
 * The rules, in order: an unknown session, or one that has ended (its
 * allocation's commitment is over, or a record said the player ended or
 * quit), is QING_GONE (410: the player stops sending); a report beyond the
 * session's rate (a token bucket of records in its row) is QING_RATE (429,
 * retry_after_s), nothing of it counted; otherwise every record is stored
 * in session_reports (a record whose sn is already stored is a replay and
 * is not stored twice; a record naming another session's sid is refused;
 * records after the one that ends the session are refused), and the
 * session's counters are updated.  docs/qoe.md.
 */
#ifndef QOE_INGEST_H
#define QOE_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "cmcd.h"
#include "stmtcache.h"

enum qing_status { QING_STORED = 0, QING_GONE, QING_RATE };

struct qing_result {
    enum qing_status status;
    bool unknown;          /* GONE: no such session (else it ended) */
    int64_t retry_after_s; /* RATE */
    unsigned stored, duplicates, refused;
};

/* Which path served a URL the player fetched (the path id), or NULL. */
typedef const char *(*qing_served_by_fn)(const void *ctx, const char *url);

/* Stores batch b for session sid received at now_ms (query: the ?CMCD=
 * form); an rr record's url is attributed by served_by (NULL: none is).
 * 0 with *out set, or -1 on an SQLite failure (roll back). */
int qing_store(sqlite3 *db, struct stmtcache *cache, const char *sid, const struct cmcd_batch *b,
               bool query, int64_t now_ms, qing_served_by_fn served_by, const void *ctx,
               struct qing_result *out);

/* The first fetch of a session's master playlist (kept once).  0 or -1. */
int qing_master_fetched(sqlite3 *db, struct stmtcache *cache, const char *session_id,
                        int64_t now_ms);

#endif
