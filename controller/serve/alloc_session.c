/* alloc_session.c - the session of a delivered allocation (see alloc_session.h). */
#include "alloc_session.h"

#include <stdio.h>

#include "tbucket.h"

void ases_report_url(const char *base_url, const char *session_id, char *out, size_t cap)
{
    snprintf(out, cap, "%s/v1/sessions/%s/reports", base_url, session_id);
}

/* The keys the event target sends: sn and the custom key must be listed
 * or hls.js's CMCD library drops them. */
static json_t *target_keys(void)
{
    static const char *const keys[] = {"sta", "sn", "ts",  "e",  "ec", "url", "rc",
                                       "ttfb", "ttlb", "bl", "br", "pb", "cen",
                                       "com.exactav-rvfc-ms"};
    json_t *a = json_array();
    for (size_t i = 0; a && i < sizeof keys / sizeof keys[0]; i++)
        json_array_append_new(a, json_string(keys[i]));
    return a;
}

json_t *ases_json(const char *session_id, const char *base_url, const char *channel)
{
    char url[512];
    ases_report_url(base_url, session_id, url, sizeof url);
    /* The top-level includeKeys [] keeps CMCD off the media requests (a
     * ?CMCD= query on every segment would defeat the CDN's cache keys). */
    return json_pack("{s:s,s:s,s:{s:i,s:s,s:s,s:[],s:[{s:s,s:[s,s,s,s,s,s],s:i,s:i,s:o}]}}",
                     "id", session_id, "report_url", url, "cmcd", "version", 2, "sessionId",
                     session_id, "contentId", channel, "includeKeys", "eventTargets", "url", url,
                     "events", "ps", "e", "t", "rr", "bc", "ce", "interval", ASES_INTERVAL_S,
                     "batchSize", 1, "includeKeys", target_keys());
}

int ases_insert(sqlite3 *db, struct stmtcache *cache, const char *session_id,
                const struct areq *req, const struct grt_grant *g, int64_t now_ms,
                int64_t ends_at_ms)
{
    static const char sql[] =
        "INSERT INTO sessions (id, allocation_id, grant_id, kind, channel, region, isp, client, "
        "build, rendition, path_id, created_at_ms, ends_at_ms, rate_tokens_nano, rate_at_ms) "
        "VALUES (?1,?2,?3,?14,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?11)";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    const struct sit_cohort *c = &req->cohort;
    const char *text[] = {session_id, req->allocation_id, g->id,   c->channel,  c->region,
                          c->isp,     c->client,          c->build, c->rendition, g->path_id};
    for (int i = 0; i < 10; i++)
        sqlite3_bind_text(st, i + 1, text[i], -1, SQLITE_STATIC);
    struct tb_bucket b = tb_full(ASES_BURST, now_ms);
    sqlite3_bind_int64(st, 11, now_ms);
    sqlite3_bind_int64(st, 12, ends_at_ms);
    sqlite3_bind_int64(st, 13, b.tokens_nano);
    /* a verification session is never a viewer: QoE counts kind 'viewer' */
    sqlite3_bind_text(st, 14, req->verification ? "verification" : "viewer", -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    stmtcache_done(cache, st);
    return rc;
}
