/* grant.c - grants: rows, state, events, closing (see grant.h). */
#include "grant.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "ledger.h"
#include "num.h"
#include "stmtcache.h"
#include "tbucket.h"

#define GRT_COLUMNS                                                                              \
    "id, decision_id, created_at_ms, actor, policy_id, policy_version, intent_version, channel, " \
    "region, isp, client, build, rendition, program_version, path_id, fallback_path_ids, "       \
    "valid_from_ms, valid_until_ms, url_ttl_s, expected_play_s, commitment_until_ms, "            \
    "max_allocations, max_rate_micro, burst, allocated, first_allocation_ms, "                    \
    "bucket_tokens_nano, bucket_at_ms, status, closed_at_ms, close_status, close_reason, "        \
    "stop_conditions"

static void copy(char *dst, size_t n, sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    snprintf(dst, n, "%s", s ? s : "");
}

static void from_row(sqlite3_stmt *st, struct grt_grant *g)
{
    memset(g, 0, sizeof *g);
    char *text[] = {g->id,           g->decision_id,      NULL,
                    g->actor,        g->policy_id,        g->policy_version,
                    g->intent_version, g->cohort.channel, g->cohort.region,
                    g->cohort.isp,   g->cohort.client,    g->cohort.build,
                    g->cohort.rendition, g->program_version, g->path_id,
                    g->fallbacks};
    size_t len[] = {sizeof g->id,         sizeof g->decision_id,     0,
                    sizeof g->actor,      sizeof g->policy_id,       sizeof g->policy_version,
                    sizeof g->intent_version, SIT_STR, SIT_STR,
                    SIT_STR,              SIT_STR,                   SIT_STR,
                    SIT_STR,              sizeof g->program_version, sizeof g->path_id,
                    sizeof g->fallbacks};
    for (int c = 0; c < 16; c++)
        if (text[c])
            copy(text[c], len[c], st, c);
    g->created_at_ms = sqlite3_column_int64(st, 2);
    int64_t *num[] = {&g->valid_from_ms,   &g->valid_until_ms,      &g->url_ttl_s,
                      &g->expected_play_s, &g->commitment_until_ms, &g->max_allocations,
                      &g->max_rate_micro,  &g->burst,               &g->allocated};
    for (int c = 0; c < 9; c++)
        *num[c] = sqlite3_column_int64(st, 16 + c);
    g->has_first_allocation = sqlite3_column_type(st, 25) != SQLITE_NULL;
    g->first_allocation_ms = sqlite3_column_int64(st, 25);
    g->bucket_tokens_nano = sqlite3_column_int64(st, 26);
    g->bucket_at_ms = sqlite3_column_int64(st, 27);
    copy(g->status, sizeof g->status, st, 28);
    g->closed_at_ms = sqlite3_column_int64(st, 29);
    copy(g->close_status, sizeof g->close_status, st, 30);
    copy(g->close_reason, sizeof g->close_reason, st, 31);
    copy(g->stop_conditions, sizeof g->stop_conditions, st, 32);
}

static int load_one(sqlite3 *db, struct stmtcache *cache, const char *sql,
                    const char *const *params, int n, struct grt_grant *g)
{
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    for (int i = 0; i < n; i++)
        sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        from_row(st, g);
    stmtcache_done(cache, st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int grt_load(sqlite3 *db, const char *id, struct grt_grant *g)
{
    static const char sql[] = "SELECT " GRT_COLUMNS " FROM grants WHERE id = ?1";
    const char *p[] = {id};
    int r = load_one(db, NULL, sql, p, 1, g);
    return r == 0 && grt_load_verification(db, NULL, g) != 0 ? -1 : r;
}

int grt_load_verification(sqlite3 *db, struct stmtcache *cache, struct grt_grant *g)
{
    static const char sql[] =
        "SELECT verification_allocations, verification_allocated FROM grants WHERE id = ?1";
    g->verification_max = g->verification_allocated = 0;
    sqlite3_stmt *st = NULL;
    /* a reader of a file before schema 8: no such column, no quota */
    if (cache ? !(st = stmtcache_prepare(db, cache, sql))
              : sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, g->id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        g->verification_max = sqlite3_column_int64(st, 0);
        g->verification_allocated = sqlite3_column_int64(st, 1);
    }
    if (cache)
        stmtcache_done(cache, st);
    else
        sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int grt_load_cohort(sqlite3 *db, struct stmtcache *cache, const struct sit_cohort *c,
                    struct grt_grant *g)
{
    static const char sql[] =
        "SELECT " GRT_COLUMNS " FROM grants WHERE channel = ?1 AND region = ?2 AND isp = ?3 AND "
        "client = ?4 AND build = ?5 AND rendition = ?6 ORDER BY created_at_ms DESC, id DESC "
        "LIMIT 1";
    const char *p[] = {c->channel, c->region, c->isp, c->client, c->build, c->rendition};
    return load_one(db, cache, sql, p, 6, g);
}

enum grt_state grt_state(const struct grt_grant *g, int64_t now_ms)
{
    if (!strcmp(g->status, "revoked"))
        return GRT_REVOKED;
    if (!strcmp(g->status, "closed"))
        return GRT_CLOSED;
    if (strcmp(g->status, "active"))
        return GRT_STATE_UNKNOWN;
    if (now_ms >= g->valid_until_ms)
        return GRT_EXPIRED;
    if (g->allocated >= g->max_allocations)
        return GRT_EXHAUSTED;
    return GRT_ACTIVE;
}

const char *grt_state_name(enum grt_state s)
{
    static const char *const names[] = {"unknown", "active",  "revoked",
                                        "closed",  "expired", "exhausted"};
    return names[s];
}

int grt_insert(sqlite3 *db, const struct grt_grant *g)
{
    static const char sql[] =
        "INSERT INTO grants (" GRT_COLUMNS ", verification_allocations) VALUES (?1,?2,?3,?4,?5,?6,"
        "?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,NULL,?26,?27,"
        "'active',NULL,NULL,NULL,?28,?29)"; /* a writer: the file is schema 8 */
    assert(!strcmp(g->status, "active") && g->allocated == 0);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    const char *text[] = {g->id,
                          g->decision_id,
                          NULL,
                          g->actor,
                          g->policy_id,
                          g->policy_version,
                          g->intent_version,
                          g->cohort.channel,
                          g->cohort.region,
                          g->cohort.isp,
                          g->cohort.client,
                          g->cohort.build,
                          g->cohort.rendition,
                          g->program_version,
                          g->path_id,
                          g->fallbacks};
    for (int c = 0; c < 16; c++)
        if (text[c])
            sqlite3_bind_text(st, c + 1, text[c], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, g->created_at_ms);
    const int64_t num[] = {g->valid_from_ms,   g->valid_until_ms,      g->url_ttl_s,
                           g->expected_play_s, g->commitment_until_ms, g->max_allocations,
                           g->max_rate_micro,  g->burst,               g->allocated,
                           g->bucket_tokens_nano, g->bucket_at_ms};
    for (int c = 0; c < 11; c++)
        sqlite3_bind_int64(st, 17 + c, num[c]);
    sqlite3_bind_text(st, 28, g->stop_conditions, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 29, g->verification_max);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

int grt_event(sqlite3 *db, const char *grant_id, int64_t at_ms, const char *kind,
              const char *reason, const char *actor)
{
    static const char sql[] =
        "INSERT OR IGNORE INTO grant_events (grant_id, seq, at_ms, kind, reason, actor) "
        "VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM grant_events WHERE grant_id = ?1), "
        "?2, ?3, ?4, ?5)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, grant_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, at_ms);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, reason, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, actor, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(db) : -1;
    sqlite3_finalize(st);
    return rc;
}

int grt_settle(sqlite3 *db, const struct grt_grant *g, int64_t now_ms, const char *actor)
{
    enum grt_state s = grt_state(g, now_ms);
    if (s == GRT_ACTIVE)
        return 0;
    char why[160];
    if (s == GRT_EXPIRED) {
        snprintf(why, sizeof why, "grant validity ended at %lld ms", (long long)g->valid_until_ms);
        if (grt_event(db, g->id, now_ms, "expired", why, actor) < 0)
            return -1;
    } else if (s == GRT_EXHAUSTED &&
               grt_event(db, g->id, now_ms, "quota_exhausted", "every allowed allocation was issued",
                         actor) < 0) {
        return -1;
    }
    if (g->allocated == 0)
        return 0; /* nothing was issued: the reservation stays pending until released */
    snprintf(why, sizeof why,
             "issuance ended (%s) after %lld allocations: their URLs and plays are commitments "
             "until %lld ms",
             grt_state_name(s), (long long)g->allocated, (long long)g->commitment_until_ms);
    int changed;
    if (ldg_resolve(db, g->id, true, now_ms, why, &changed) < 0)
        return -1;
    return changed ? (grt_event(db, g->id, now_ms, "reservations_posted", why, actor) < 0 ? -1 : 0)
                   : 0;
}

int grt_expiry_confirmed(sqlite3 *db, const struct grt_grant *g, int64_t *heartbeat_ms)
{
    static const char sql[] =
        "SELECT 1 FROM grant_events WHERE grant_id = ?1 AND kind = 'expired'";
    *heartbeat_ms = 0;
    int r = clk_read(db, CLK_SERVE_HEARTBEAT, heartbeat_ms);
    if (r < 0)
        return -1;
    if (r == 0 && *heartbeat_ms >= g->valid_until_ms)
        return 1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, g->id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int grt_close(sqlite3 *db, struct grt_grant *g, const char *kind, const char *close_status,
              const char *reason, int64_t now_ms, const char *actor)
{
    static const char sql[] = "UPDATE grants SET status = ?1, closed_at_ms = ?2, "
                              "close_status = ?3, close_reason = ?4 WHERE id = ?5 AND "
                              "status = 'active'";
    assert(!strcmp(kind, "revoked") || !strcmp(kind, "closed_by_next"));
    const char *status = !strcmp(kind, "revoked") ? "revoked" : "closed";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now_ms);
    sqlite3_bind_text(st, 3, close_status, -1, SQLITE_STATIC); /* NULL for a revocation */
    sqlite3_bind_text(st, 4, reason, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, g->id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(db) : -1;
    sqlite3_finalize(st);
    if (rc <= 0)
        return rc < 0 ? -1 : 1;
    snprintf(g->status, sizeof g->status, "%s", status);
    g->closed_at_ms = now_ms;
    snprintf(g->close_status, sizeof g->close_status, "%s", close_status ? close_status : "");
    snprintf(g->close_reason, sizeof g->close_reason, "%s", reason);
    if (grt_event(db, g->id, now_ms, kind, reason, actor) < 0)
        return -1;
    return grt_settle(db, g, now_ms, actor);
}

static json_t *rate_json(const struct grt_grant *g, int64_t now_ms)
{
    struct tb_bucket b = {g->bucket_tokens_nano, g->bucket_at_ms};
    tb_refill(&b, g->max_rate_micro, g->burst, now_ms);
    json_t *o = json_pack("{s:o,s:I,s:f}", "max_rate_per_s", num_to_json(g->max_rate_micro),
                          "burst", (json_int_t)g->burst, "tokens",
                          (double)b.tokens_nano / (double)TB_NANO);
    int64_t wait = 0;
    if (b.tokens_nano < TB_NANO)
        wait = (TB_NANO - b.tokens_nano + g->max_rate_micro - 1) / g->max_rate_micro;
    json_object_set_new(o, "next_token_in_ms", json_integer(wait));
    return o;
}

json_t *grt_json(const struct grt_grant *g, int64_t now_ms)
{
    json_t *fb = json_loads(g->fallbacks, 0, NULL);
    json_t *stop = json_loads(g->stop_conditions, 0, NULL);
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:s,s:I,s:s,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:o}",
        "grant_id", g->id, "decision_id", g->decision_id, "state",
        grt_state_name(grt_state(g, now_ms)), "status", g->status, "created_at_ms",
        (json_int_t)g->created_at_ms, "actor", g->actor, "policy", "id", g->policy_id, "version",
        g->policy_version, "intent_version", g->intent_version, "cohort", "channel",
        g->cohort.channel, "region", g->cohort.region, "isp", g->cohort.isp, "client",
        g->cohort.client, "build", g->cohort.build, "rendition", g->cohort.rendition,
        "program_version", g->program_version, "path_id", g->path_id, "fallback_path_ids",
        fb ? fb : json_array());
    if (!o) {
        json_decref(stop);
        return NULL;
    }
    json_object_set_new(o, "validity", json_pack("{s:I,s:I}", "valid_from_ms",
                                                 (json_int_t)g->valid_from_ms, "valid_until_ms",
                                                 (json_int_t)g->valid_until_ms));
    json_object_set_new(o, "url_ttl_s", json_integer(g->url_ttl_s));
    json_object_set_new(o, "expected_play_s", json_integer(g->expected_play_s));
    json_object_set_new(o, "commitment_until_ms", json_integer(g->commitment_until_ms));
    json_object_set_new(o, "max_allocations", json_integer(g->max_allocations));
    json_object_set_new(o, "used", json_integer(g->allocated));
    json_object_set_new(o, "remaining", json_integer(g->max_allocations - g->allocated));
    if (g->verification_max > 0) /* issue 17: only a grant that has a verification quota */
        json_object_set_new(o, "verification",
                            json_pack("{s:I,s:I,s:I}", "max_allocations",
                                      (json_int_t)g->verification_max, "used",
                                      (json_int_t)g->verification_allocated, "remaining",
                                      (json_int_t)(g->verification_max - g->verification_allocated)));
    json_object_set_new(o, "first_allocation_ms", g->has_first_allocation
                                                      ? json_integer(g->first_allocation_ms)
                                                      : json_null());
    json_object_set_new(o, "rate", rate_json(g, now_ms));
    json_object_set_new(o, "closed",
                        strcmp(g->status, "active")
                            ? json_pack("{s:I,s:s?,s:s}", "at_ms", (json_int_t)g->closed_at_ms,
                                        "status", g->close_status[0] ? g->close_status : NULL,
                                        "reason", g->close_reason)
                            : json_null());
    json_object_set_new(o, "stop_conditions", stop ? stop : json_array());
    return o;
}

json_t *grt_events_json(sqlite3 *db, const char *grant_id)
{
    return rec_rows_json(db,
                         "SELECT seq, at_ms, kind, reason, actor FROM grant_events WHERE "
                         "grant_id = ?1 ORDER BY seq",
                         grant_id);
}

int grt_policy_current(sqlite3 *db, struct stmtcache *cache, const char *policy_id,
                       const char *version, const char *intent)
{
    static const char sql[] = "SELECT policy_version = ?2 AND intent_version = ?3 FROM decisions "
                              "WHERE policy_id = ?1 ORDER BY recorded_at_ms DESC, rowid DESC "
                              "LIMIT 1";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, policy_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, intent, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int res = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) != 0 : rc == SQLITE_DONE ? 0 : -1;
    stmtcache_done(cache, st);
    return res;
}
