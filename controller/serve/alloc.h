/* alloc.h - one allocation request decided against control.db.
 *
 * The admission service's rule, run for every POST /v1/allocations inside
 * the caller's write transaction (the service batches many requests into
 * one transaction and answers only after it committed):
 *   0. under --client-auth, an id of another subject: 422 (struct alc_client);
 *   1. idempotency: a known allocation_id with the same canonical request
 *      is answered 200 with the stored body, byte for byte (no new
 *      allocation, no new reservation, no later expiry); with another
 *      request 422;
 *   2. the cohort's newest grant must be active (not revoked or closed, not
 *      expired, quota left), under the current policy version, and its token
 *      bucket must hold a token; otherwise 403 with the error code, or 429
 *      with Retry-After for the rate; with no grant, the pre-declared
 *      refusal of a newer no_eligible_path decision of the cohort, if any;
 *   3. otherwise the allocation row, the grant's count and bucket are
 *      written and the 201 body is stored with the allocation.
 * Bodies and codes: docs/serve.md.
 */
#ifndef ALLOC_H
#define ALLOC_H

#include <stdint.h>

#include <sqlite3.h>

#include "areq.h"
#include "dlv_paths.h"
#include "stmtcache.h"

/* FAILED is the zero value: no answer is ever read as an allocation. */
enum alc_result {
    ALC_FAILED = 0,
    ALC_CREATED,      /* 201 */
    ALC_REPLAYED,     /* 200, the stored body */
    ALC_CONFLICT,     /* 422: the id was used for another request */
    ALC_REFUSED,      /* 403 */
    ALC_RATE_LIMITED, /* 429 */
};

struct alc_reply {
    enum alc_result result;
    int http_status;
    char *body;            /* JSON text, malloc'd */
    int64_t retry_after_s; /* 429 only */
    char error[32];        /* the 403 error code (or client-auth's 422 / 429), "" otherwise */
};

/* What the 201 body needs of the delivery layer: the service's base URL
 * and the paths it delivers.  An allocation of a path in paths gets
 * "playback_url": "<base>/v1/allocations/<id>/master.m3u8". */
struct alc_delivery {
    const char *base_url;
    const struct dlv_paths *paths;
};

/* Under --client-auth (cauth.h): the token's subject and the cap of its
 * allocations within their commitment.  Idempotency is then keyed by
 * (subject, allocation_id): an id of another subject (or of none) is
 * refused 422 allocation_id_taken, nothing of its answer shown; a subject
 * at its cap gets 429 subject_quota_exceeded (a retry of its own request
 * is still answered 200: the retry comes first). */
struct alc_client {
    const char *subject;
    int64_t cap;
};

/* Decides one request at now_ms (cache: the caller's prepared statements,
 * may be NULL; delivery: NULL for no delivery fields; client: NULL
 * without --client-auth).  0 with *out filled
 * (free with alc_reply_free), or -1 on an SQLite or memory failure (nothing
 * of this request must then be committed: the caller rolls back its
 * savepoint). */
int alc_process(sqlite3 *db, struct stmtcache *cache, const struct areq *req, int64_t now_ms,
                const struct alc_delivery *delivery, const struct alc_client *client,
                struct alc_reply *out);
void alc_reply_free(struct alc_reply *r);

const char *alc_result_name(enum alc_result r);

#endif
