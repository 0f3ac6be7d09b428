/* grant.h - grants: the separate, bounded authorization of one step.
 *
 * A grant names the cohort, the path, the program, policy and intent
 * versions, its validity [valid_from, valid_until), the URL validity and
 * the expected play duration (three separate quantities), the count and
 * rate caps (a token bucket), the reservation placed in the ledger and the
 * stop conditions.  Issuance under a grant ends at revocation, at `next`,
 * at expiry or when the quota is exhausted; the first to see it records the
 * event.  Schema: migrate_v2.sql; rules: docs/controller.md.
 */
#ifndef GRANT_H
#define GRANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "record.h"
#include "situation.h"
#include "stmtcache.h"

#define GRT_FALLBACKS_LEN (SIT_MAX_CANDIDATES * (SIT_STR + 3) + 3)

/* What a grant allows now.  The zero value allows nothing. */
enum grt_state {
    GRT_STATE_UNKNOWN = 0,
    GRT_ACTIVE,
    GRT_REVOKED,   /* status revoked: `stepctl revoke` */
    GRT_CLOSED,    /* status closed: `stepctl next` */
    GRT_EXPIRED,   /* now >= valid_until_ms */
    GRT_EXHAUSTED, /* allocated == max_allocations */
};

struct grt_grant {
    char id[REC_ID_LEN], decision_id[REC_ID_LEN];
    int64_t created_at_ms;
    char actor[SIT_STR];
    char policy_id[SIT_STR], policy_version[SIT_STR], intent_version[SIT_STR];
    struct sit_cohort cohort;
    char program_version[SIT_STR], path_id[SIT_STR];
    char fallbacks[GRT_FALLBACKS_LEN]; /* JSON array text */
    int64_t valid_from_ms, valid_until_ms, url_ttl_s, expected_play_s, commitment_until_ms;
    int64_t max_allocations, max_rate_micro, burst, allocated;
    bool has_first_allocation;
    int64_t first_allocation_ms;
    int64_t bucket_tokens_nano, bucket_at_ms;
    char status[16]; /* active | revoked | closed */
    int64_t closed_at_ms;
    char close_status[16], close_reason[512];
    char stop_conditions[1024]; /* JSON */
    /* schema 8: the verification quota and its use (issue 17), read by
     * grt_load (and grt_load_verification); 0 on an older file */
    int64_t verification_max, verification_allocated;
};

/* 0 found, 1 no such grant, -1 SQLite error. */
int grt_load(sqlite3 *db, const char *id, struct grt_grant *g);
/* The newest grant of a cohort. 0, 1 none, -1.  cache may be NULL
 * (stmtcache.h). */
int grt_load_cohort(sqlite3 *db, struct stmtcache *cache, const struct sit_cohort *c,
                    struct grt_grant *g);
/* The verification quota of a loaded grant (schema 8), which
 * grt_load_cohort leaves 0: 0, or -1 (a file older than schema 8 has
 * none: 0 both). */
int grt_load_verification(sqlite3 *db, struct stmtcache *cache, struct grt_grant *g);

enum grt_state grt_state(const struct grt_grant *g, int64_t now_ms);
const char *grt_state_name(enum grt_state s);

int grt_insert(sqlite3 *db, const struct grt_grant *g);

/* Records an event once per (grant, kind): 1 recorded, 0 already there, -1. */
int grt_event(sqlite3 *db, const char *grant_id, int64_t at_ms, const char *kind,
              const char *reason, const char *actor);

/* Ends issuance: status revoked (kind "revoked", close_status NULL) or
 * closed (kind "closed_by_next", close_status PASS / VIOLATION / UNKNOWN)
 * with the reason, then grt_settle.  Under the
 * caller's write transaction.  0, 1 already closed, -1. */
int grt_close(sqlite3 *db, struct grt_grant *g, const char *kind, const char *close_status,
              const char *reason, int64_t now_ms, const char *actor);

/* When issuance has ended (any reason): records expired / quota_exhausted
 * once, and posts the pending reservations when allocations were issued
 * (their URLs and plays are commitments now).  Nothing to do while active.
 * Under the caller's write transaction.  0 or -1. */
int grt_settle(sqlite3 *db, const struct grt_grant *g, int64_t now_ms, const char *actor);

/* Has the end of g's validity been confirmed by the service (clock.h)?  A
 * recorded `expired` event, or the service's heartbeat at or past
 * valid_until_ms.  1 yes (*heartbeat_ms: the heartbeat, 0 when none), 0 no,
 * -1 an SQLite error.  Why: another process's clock running ahead must not
 * end, for the ledger, a grant the service still honours. */
int grt_expiry_confirmed(sqlite3 *db, const struct grt_grant *g, int64_t *heartbeat_ms);

/* Is (version, intent) still the policy's current one, i.e. that of the
 * newest recorded decision under policy_id?  1 yes, 0 changed, -1 error. */
int grt_policy_current(sqlite3 *db, struct stmtcache *cache, const char *policy_id,
                       const char *version, const char *intent);

/* `stepctl grant`: options left 0 take the decision's step (or the policy's
 * default); none may go above them. */
struct grt_options {
    const char *decision_id, *actor;
    int64_t max_allocations, max_rate_micro, burst, valid_for_s, url_ttl_s;
    int64_t verification_allocations; /* --verification-allocations, default 0 */
};

/* FAILED is the zero value: no grant unless everything succeeded. */
enum grt_outcome { GRT_FAILED = 0, GRT_CREATED, GRT_REFUSED, GRT_NOT_FOUND };

/* Creates a grant from a recorded step_proposed decision and places its
 * reservation, in one write transaction (BEGIN IMMEDIATE).  REFUSED and
 * NOT_FOUND leave nothing written and say why ("reason_code: sentence"). */
enum grt_outcome grt_create(sqlite3 *db, const struct grt_options *o, int64_t now_ms,
                            struct grt_grant *out, char *why, size_t whylen);

/* The grant as JSON (state at now_ms, rate state included). */
json_t *grt_json(const struct grt_grant *g, int64_t now_ms);
/* Its events, oldest first (NULL on error). */
json_t *grt_events_json(sqlite3 *db, const char *grant_id);

#endif
