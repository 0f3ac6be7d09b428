/* ledger.h - the commitments ledger: the one owner of shared headroom.
 *
 * A reservation holds an amount of one resource (origin, shield, or the CDN
 * of one path), one metric (rps, bytes_per_s) over a window [start, end).
 * States: pending -> posted | voided, resolved at most once (migrate_v2.sql
 * enforces it with a trigger).  Pending and posted amounts count against
 * headroom in every window they overlap; voided ones do not.  Nothing is
 * released by time or by closing issuance: voiding needs an explicit,
 * recorded reason (`stepctl release`).  Every writer holds the database's
 * write lock (BEGIN IMMEDIATE) while it checks and reserves, so two
 * processes can never hand out the same headroom twice.  Rules:
 * docs/controller.md, "The commitments ledger".
 */
#ifndef LEDGER_H
#define LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "situation.h"

/* Sums saturate here (1e18 micro-units: every limit is below it). */
#define LDG_MAX_MICRO 1000000000000000000LL

/* '' for the shared origin and shield; the path id for a CDN. */
const char *ldg_scope(enum sit_resource r, const char *path_id);

/* Pending + posted amounts of (resource, scope, metric) overlapping
 * [from, to), saturated at LDG_MAX_MICRO.  0 or -1 (SQLite error). */
int ldg_committed(sqlite3 *db, enum sit_resource r, const char *scope, enum sit_metric m,
                  int64_t from, int64_t to, int64_t *sum);

/* One commitments_upper that `decide` took from the ledger. */
struct ldg_fill {
    char path_id[SIT_STR];
    size_t window, item;
    enum sit_resource resource;
    enum sit_metric metric;
    int64_t start_ms, end_ms, micro;
};

struct ldg_fills {
    struct ldg_fill *v;
    size_t n;
};

/* For every item of s without commitments_upper: reads the ledger, sets the
 * value and marks it commitments_from_ledger; the values go to *out.  0, -1. */
int ldg_fill(sqlite3 *db, struct sit_situation *s, struct ldg_fills *out);
/* Applies recorded fills to a re-parsed situation (replay).  0, or -1 with
 * err saying which fill no longer matches the situation. */
int ldg_apply(struct sit_situation *s, const struct ldg_fills *f, char *err, size_t errlen);
int ldg_store_fills(sqlite3 *db, const char *decision_id, const struct ldg_fills *f);
int ldg_load_fills(sqlite3 *db, const char *decision_id, struct ldg_fills *out);
void ldg_fills_free(struct ldg_fills *f);

/* A grant's reservation: for each (resource, metric) of candidate c's
 * forecast windows overlapping [horizon_from, horizon_to), the largest
 * step_upper, reserved over [start_ms, end_ms). */
struct ldg_request {
    const char *grant_id;
    const struct sit_candidate *c;
    int64_t horizon_from, horizon_to, start_ms, end_ms, now_ms;
};

/* Checks, under the caller's write transaction, every window and item:
 * background + max(given commitments, ledger) + step + margin <= limit, and
 * places the reservations.  0 placed, 1 does not fit (why names window and
 * item), -1 SQLite error. */
int ldg_reserve(sqlite3 *db, const struct ldg_request *rq, char *why, size_t whylen);

/* pending -> posted (post) or voided, for every pending reservation of the
 * grant, with the reason recorded.  *changed: rows resolved.  0 or -1. */
int ldg_resolve(sqlite3 *db, const char *grant_id, bool post, int64_t now_ms,
                const char *reason, int *changed);

/* The reservations of one grant as a JSON array (NULL on error). */
json_t *ldg_grant_json(sqlite3 *db, const char *grant_id);

#endif
