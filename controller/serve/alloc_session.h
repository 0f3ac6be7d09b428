/* alloc_session.h - the viewer session made with each delivered allocation.
 *
 * An allocation that the service delivers (its 201 has playback_url) gets a
 * session: a row of `sessions` written in the allocation's transaction, and
 * the 201 member "session": {"id", "report_url", "cmcd"} placed before
 * playback_url.  "cmcd" is the hls.js 1.7.4 `cmcd` configuration object
 * that makes the player send CMCD v2 event reports to report_url (see
 * docs/qoe.md).  The id is 128 random bits (RAND_bytes), never the
 * client-chosen allocation id.  The report rate of a session (a token
 * bucket in its row) is fixed here.
 */
#ifndef ALLOC_SESSION_H
#define ALLOC_SESSION_H

#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "areq.h"
#include "grant.h"
#include "record.h"
#include "stmtcache.h"

#define ASES_RATE_MICRO 20000000LL /* reports (records) per second, x 1e6 */
#define ASES_BURST 200LL           /* records at once */
#define ASES_INTERVAL_S 10         /* hls.js's timed (t) event interval */

/* The "session" member (new), or NULL without memory. */
json_t *ases_json(const char *session_id, const char *base_url, const char *channel);

/* The report URL of a session into out (cap bytes). */
void ases_report_url(const char *base_url, const char *session_id, char *out, size_t cap);

/* The sessions row of a new allocation (inside its transaction), of kind
 * 'verification' for a verification request (issue 17), else 'viewer'.
 * 0 or -1. */
int ases_insert(sqlite3 *db, struct stmtcache *cache, const char *session_id,
                const struct areq *req, const struct grt_grant *g, int64_t now_ms,
                int64_t ends_at_ms);

#endif
