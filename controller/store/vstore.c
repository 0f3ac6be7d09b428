/* vstore.c - control.db's rules of a valid row (see vstore.h). */
#include "vstore.h"

#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "tbucket.h"

/* One rule: a query whose first row, if any, is (row key, detail) of a row
 * that breaks it.  `since`: the schema version that has the tables. */
struct rule {
    const char *name, *table;
    int since;
    const char *sql;
};

/* The decision a grant was made from, as `stepctl grant` checked it
 * (grant_create.c): proposed a step choosing the grant's path, for the
 * grant's cohort, program and policy, with the grant's caps within its
 * action. */
#define COHORT_OF(col) "json_extract(d.situation, '$.action.cohort." col "')"
static const struct rule rules[] = {
    {"grant_decision_proposed", "grants", 2,
     "SELECT g.id, 'its decision ' || g.decision_id || CASE WHEN d.id IS NULL THEN "
     "' does not exist' ELSE ' is ' || d.outcome || ' choosing ' || COALESCE(d.chosen, "
     "'nothing') || ', the grant allocates ' || g.path_id END "
     "FROM grants g LEFT JOIN decisions d ON d.id = g.decision_id "
     "WHERE d.id IS NULL OR d.outcome <> 'step_proposed' OR d.chosen IS NOT g.path_id LIMIT 1"},
    {"grant_cohort_of_decision", "grants", 2,
     "SELECT g.id, 'its cohort, program or policy is not its decision''s (' || d.id || ')' "
     "FROM grants g JOIN decisions d ON d.id = g.decision_id "
     "WHERE g.channel IS NOT d.channel OR g.rendition IS NOT d.rendition "
     "OR g.program_version IS NOT d.program_version OR g.policy_id IS NOT d.policy_id "
     "OR g.policy_version IS NOT d.policy_version OR g.intent_version IS NOT d.intent_version "
     "OR g.region IS NOT " COHORT_OF("region") " OR g.isp IS NOT " COHORT_OF("isp") " "
     "OR g.client IS NOT " COHORT_OF("client") " OR g.build IS NOT " COHORT_OF("build") " "
     "LIMIT 1"},
    {"grant_caps_within_decision", "grants", 2,
     "SELECT g.id, 'caps ' || g.max_allocations || ' allocations, ' || g.max_rate_micro || "
     "' micro/s exceed its decision''s action (' || "
     "json_extract(d.situation, '$.action.max_allocations') || ', ' || "
     "json_extract(d.situation, '$.action.max_rate_per_s') || '/s)' "
     "FROM grants g JOIN decisions d ON d.id = g.decision_id "
     "WHERE g.max_allocations > json_extract(d.situation, '$.action.max_allocations') "
     "OR g.max_rate_micro > CAST(json_extract(d.situation, '$.action.max_rate_per_s') AS REAL) "
     "* 1000000 + 1 LIMIT 1"},
    {"grant_created_recorded", "grants", 2,
     "SELECT g.id, 'no created event' FROM grants g WHERE NOT EXISTS (SELECT 1 FROM "
     "grant_events e WHERE e.grant_id = g.id AND e.kind = 'created') LIMIT 1"},
    {"grant_status_recorded", "grants", 2,
     "SELECT g.id, 'status ' || g.status || ' without its event' FROM grants g WHERE "
     "(g.status = 'revoked' AND NOT EXISTS (SELECT 1 FROM grant_events e WHERE e.grant_id = "
     "g.id AND e.kind = 'revoked')) OR (g.status = 'closed' AND NOT EXISTS (SELECT 1 FROM "
     "grant_events e WHERE e.grant_id = g.id AND e.kind = 'closed_by_next')) LIMIT 1"},
    /* viewers' slots are 1..max_allocations; schema 8's verification
     * allocations lie above them (migrate_v8.sql) and are counted apart */
#define VIEWERS_OF_G "FROM allocations a WHERE a.grant_id = g.id AND a.seq <= g.max_allocations"
    {"grant_count_of_allocations", "grants", 2,
     "SELECT g.id, 'allocated ' || g.allocated || ' but ' || (SELECT count(*) " VIEWERS_OF_G
     ") || ' allocations, numbered up to ' || COALESCE((SELECT MAX(seq) " VIEWERS_OF_G "), 0) "
     "FROM grants g WHERE g.allocated <> (SELECT count(*) " VIEWERS_OF_G ") OR "
     "g.allocated <> COALESCE((SELECT MAX(seq) " VIEWERS_OF_G "), 0) LIMIT 1"},
#undef VIEWERS_OF_G
    {"grant_count_of_verification_allocations", "grants", 8,
     "SELECT g.id, 'verification_allocated ' || g.verification_allocated || ' but ' || "
     "(SELECT count(*) FROM allocations a WHERE a.grant_id = g.id AND a.verification = 1) || "
     "' verification allocations, or one in a viewer''s slot' FROM grants g WHERE "
     "g.verification_allocated <> (SELECT count(*) FROM allocations a WHERE a.grant_id = g.id "
     "AND a.verification = 1) OR EXISTS (SELECT 1 FROM allocations a WHERE a.grant_id = g.id "
     "AND (a.verification = 1) <> (a.seq > g.max_allocations)) LIMIT 1"},
    {"allocation_of_its_grant", "allocations", 2,
     "SELECT a.id, CASE WHEN g.id IS NULL THEN 'its grant ' || a.grant_id || ' does not exist' "
     "ELSE 'not its grant''s decision, path or validity (' || g.id || ')' END "
     "FROM allocations a LEFT JOIN grants g ON g.id = a.grant_id WHERE g.id IS NULL OR "
     "a.decision_id IS NOT g.decision_id OR a.path_id IS NOT g.path_id OR "
     "a.created_at_ms < g.valid_from_ms OR a.created_at_ms >= g.valid_until_ms LIMIT 1"},
    {"reservation_of_a_grant", "reservations", 2,
     "SELECT r.id, 'its grant ' || r.grant_id || ' does not exist' FROM reservations r WHERE "
     "NOT EXISTS (SELECT 1 FROM grants g WHERE g.id = r.grant_id) LIMIT 1"},
    /* a reservation's state is mutable (not MACed, smac_tables.h): every
     * change of it has its event, as grant.c and grant_cli.c write them */
    {"reservation_state_recorded", "reservations", 2,
     "SELECT r.id, 'state ' || r.state || ' without its event' FROM reservations r WHERE "
     "r.state <> 'pending' AND NOT EXISTS (SELECT 1 FROM grant_events e WHERE e.grant_id = "
     "r.grant_id AND e.kind = CASE r.state WHEN 'posted' THEN 'reservations_posted' ELSE "
     "'reservations_voided' END) LIMIT 1"},
    {"event_of_a_grant", "grant_events", 2,
     "SELECT e.grant_id || '/' || e.seq, 'its grant does not exist' FROM grant_events e WHERE "
     "NOT EXISTS (SELECT 1 FROM grants g WHERE g.id = e.grant_id) LIMIT 1"},
    /* every time a writer recorded is at most the high-water mark (clock.h) */
    {"time_within_high_water", "clock_marks", 5,
     "SELECT t.tbl || ' ' || t.id, 'recorded at ' || t.at || ' ms, after the high-water mark ' "
     "|| m.at_ms || ' ms' FROM clock_marks m, ("
     "SELECT 'grants' AS tbl, id, created_at_ms AS at FROM grants "
     "UNION ALL SELECT 'grants', id, closed_at_ms FROM grants WHERE closed_at_ms IS NOT NULL "
     "UNION ALL SELECT 'grant_events', grant_id || '/' || seq, at_ms FROM grant_events "
     "UNION ALL SELECT 'allocations', id, created_at_ms FROM allocations "
     "UNION ALL SELECT 'reservations', id, resolved_at_ms FROM reservations "
     "WHERE resolved_at_ms IS NOT NULL) t WHERE m.name = 'high_water' AND t.at > m.at_ms "
     "LIMIT 1"},
};

static void col(sqlite3_stmt *st, int i, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

/* 0 holds, 1 broken (f filled), -1 error. */
int vst_found(struct vst_finding *f, const char *table, const char *row, const char *rule,
              const char *detail)
{
    snprintf(f->table, sizeof f->table, "%s", table ? table : "");
    snprintf(f->row, sizeof f->row, "%s", row ? row : "");
    snprintf(f->rule, sizeof f->rule, "%s", rule ? rule : "");
    snprintf(f->detail, sizeof f->detail, "%s", detail ? detail : "");
    return 1;
}

static int check_rule(sqlite3 *db, const struct rule *r, struct vst_finding *f)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, r->sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st), res = rc == SQLITE_DONE ? 0 : rc == SQLITE_ROW ? 1 : -1;
    if (res == 1) {
        snprintf(f->table, sizeof f->table, "%s", r->table);
        snprintf(f->rule, sizeof f->rule, "%s", r->name);
        col(st, 0, f->row, sizeof f->row);
        col(st, 1, f->detail, sizeof f->detail);
    }
    sqlite3_finalize(st);
    return res;
}

/* ---- the token bucket --------------------------------------------------- */

/* The bucket's content is a mutable column (not MACed, smac_tables.h), so it
 * is recomputed instead: from a full bucket at the grant's creation
 * (grant_create.c), every viewer allocation in slot order took one token at
 * its time, exactly as alloc.c took it (verification allocations take none).
 * Each must have found a token, and the stored bucket must be what the last
 * one left: a bucket refilled by hand, or an allocation inserted faster than
 * the rate, breaks it. */
struct bucket_replay {
    char id[160];
    int64_t rate, burst, stored_tokens, stored_at;
    struct tb_bucket b;
    int broken; /* 1: f filled */
};

static void bucket_start(struct bucket_replay *r, sqlite3_stmt *st, struct vst_finding *f)
{
    col(st, 0, r->id, sizeof r->id);
    r->rate = sqlite3_column_int64(st, 2);
    r->burst = sqlite3_column_int64(st, 3);
    r->stored_tokens = sqlite3_column_int64(st, 4);
    r->stored_at = sqlite3_column_int64(st, 5);
    r->broken = 0;
    if (r->rate <= 0 || r->burst < 1 || r->burst > TB_MAX_BURST) { /* tb_'s domain */
        snprintf(f->detail, sizeof f->detail, "rate %lld micro/s or burst %lld out of range",
                 (long long)r->rate, (long long)r->burst);
        r->broken = 1;
        return;
    }
    r->b = tb_full(r->burst, sqlite3_column_int64(st, 1));
}

static void bucket_take(struct bucket_replay *r, sqlite3_stmt *st, struct vst_finding *f)
{
    int64_t at = sqlite3_column_int64(st, 7), wait_ms = 0;
    if (r->broken || tb_take(&r->b, r->rate, r->burst, at, &wait_ms))
        return;
    snprintf(f->detail, sizeof f->detail,
             "allocation %lld at %lld ms found no token (%lld nano-tokens; the rate allows one "
             "%lld ms later)",
             (long long)sqlite3_column_int64(st, 6), (long long)at, (long long)r->b.tokens_nano,
             (long long)wait_ms);
    r->broken = 1;
}

static void bucket_end(struct bucket_replay *r, struct vst_finding *f)
{
    if (r->broken || (r->b.tokens_nano == r->stored_tokens && r->b.at_ms == r->stored_at))
        return;
    snprintf(f->detail, sizeof f->detail,
             "bucket %lld nano-tokens at %lld ms, but its allocations leave %lld at %lld ms",
             (long long)r->stored_tokens, (long long)r->stored_at, (long long)r->b.tokens_nano,
             (long long)r->b.at_ms);
    r->broken = 1;
}

static int bucket_found(const struct bucket_replay *r, struct vst_finding *f)
{
    snprintf(f->table, sizeof f->table, "grants");
    snprintf(f->rule, sizeof f->rule, "grant_token_bucket");
    snprintf(f->row, sizeof f->row, "%s", r->id);
    return 1;
}

/* 0 holds, 1 broken (f filled), -1 error. */
static int check_buckets(sqlite3 *db, struct vst_finding *f)
{
    static const char sql[] =
        "SELECT g.id, g.created_at_ms, g.max_rate_micro, g.burst, g.bucket_tokens_nano, "
        "g.bucket_at_ms, a.seq, a.created_at_ms FROM grants g LEFT JOIN allocations a ON "
        "a.grant_id = g.id AND a.seq <= g.max_allocations ORDER BY g.id, a.seq";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    struct bucket_replay r = {.id = ""};
    int rc, started = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *id = sqlite3_column_text(st, 0);
        if (!started || strcmp(r.id, (const char *)id)) {
            if (started && (bucket_end(&r, f), r.broken))
                break;
            bucket_start(&r, st, f);
            started = 1;
        }
        if (sqlite3_column_type(st, 6) != SQLITE_NULL) /* a grant without allocations */
            bucket_take(&r, st, f);
    }
    if (rc == SQLITE_DONE && started)
        bucket_end(&r, f);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return -1;
    return r.broken ? bucket_found(&r, f) : 0;
}

int vst_check(sqlite3 *db, struct vst_finding *f, size_t *checked)
{
    memset(f, 0, sizeof *f);
    *checked = 0;
    int version = dbfile_user_version(db);
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    int res = 0;
    for (size_t i = 0; res == 0 && i < sizeof rules / sizeof rules[0]; i++) {
        if (version < rules[i].since)
            continue; /* an older schema has not these tables */
        res = check_rule(db, &rules[i], f);
        *checked += res == 0;
    }
    if (res == 0 && version >= 2) { /* schema 2 has the grants */
        res = check_buckets(db, f);
        *checked += res == 0;
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return res;
}
