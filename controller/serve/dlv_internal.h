/* dlv_internal.h - what the files of the delivery layer share (dlv.h is
 * the interface):
 *   dlv_cache.c   a bounded, thread-safe, direct-mapped cache of byte
 *                 strings by key (a colliding key replaces the older entry);
 *   dlv_alloc.c   an allocation as stored, and its pathway list (the rule of
 *                 dlv.h);
 *   dlv.c         the layer, master.m3u8, steering, answers, signing;
 *   dlv_media.c   fetched live media playlists and their signed rewrite.
 */
#ifndef DLV_INTERNAL_H
#define DLV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include <sqlite3.h>

#include "dlv.h"
#include "situation.h"

/* ---- dlv_cache.c ----------------------------------------------------------- */

struct dcache;
struct dcache *dcache_new(size_t slots);
void dcache_free(struct dcache *c);
/* A copy of the value stored under key (malloc'd, NUL-terminated), or NULL. */
char *dcache_get(struct dcache *c, const char *key, size_t *len);
/* Stores len bytes under key.  0, or -1 when memory runs out (nothing kept). */
int dcache_put(struct dcache *c, const char *key, const void *val, size_t len);

/* ---- dlv_alloc.c ----------------------------------------------------------- */

/* An allocation as the delivery needs it. */
struct dlv_alloc {
    char path_id[SIT_STR];
    char fallbacks[DLV_MAX_PATHS][SIT_STR]; /* eligible in the same decision, in order */
    size_t n_fallbacks;
    int64_t created_at_ms, expires_at_ms, commitment_until_ms;
    char decision_id[SIT_STR];
    int64_t decision_time_ms;
    char channel[SIT_STR], rendition[SIT_STR], program_version[SIT_STR], profile_id[SIT_STR];
    /* the decision's policy.active_sessions.on_content_violation is "keep":
     * the allocated path stays listed after its MISMATCH (default:
     * steer_away, it is dropped like a fallback) */
    bool keep_on_violation;
};

/* The pathways now: the allocated one first, then every fallback still
 * listed (dlv.h).  paths[i] point into a. */
struct dlv_pathways {
    const char *id[DLV_MAX_PATHS + 1];
    size_t n;
};

/* ---- the layer --------------------------------------------------------------- */

struct dlv_upstream; /* dlv_media.c: one per (path, rendition) */

struct dlv {
    const struct dlv_paths *paths;
    const char *db_path, *evidence_path;
    char url_path[256]; /* --public-url's path, "" for none (dlv_new) */
    pthread_mutex_t mu; /* the reader pool */
    sqlite3 *readers[8];
    size_t n_readers;
    struct dcache *allocs;   /* allocation id -> struct dlv_alloc (immutable rows) */
    struct dcache *sessions; /* session id -> allocation id (immutable rows) */
    struct dcache *dropped;  /* "decision/path" -> "checked_at_ms dropped" */
    struct dcache *signed_q; /* "alloc/path/rendition" -> "date_less_than query" */
    struct dlv_upstream *up; /* [DLV_MAX_PATHS * DLV_MAX_RENDITIONS] */
    pthread_mutex_t fetch_mu; /* the fetcher threads (dlv_media.c) */
    pthread_cond_t fetch_cv;
    int fetchers;            /* in flight */
    bool stopping;           /* dlv_free: no new fetcher starts */
};

/* dlv_media.c: a fetch of every cloudfront-url rendition (at start), and
 * the wait for the fetchers in flight (before the layer is freed). */
void dlv_upstream_prefetch(struct dlv *d);
void dlv_upstream_stop(struct dlv *d);

/* 0 found, 1 no such allocation, -1 the store cannot be read. */
int dlv_alloc_load(struct dlv *d, const char *id, struct dlv_alloc *a);
/* The allocation of session sid (the capability every delivery URL
 * carries, never the client-chosen allocation id) into alloc_id[cap]:
 * 0 found, 1 no such session, -1 the store cannot be read. */
int dlv_session_allocation(struct dlv *d, const char *sid, char *alloc_id, size_t cap);
/* dlv_removals.c: paths removed by a MISMATCH, kept in control.db.  find:
 * 1 recorded, 0 not (also when the table does not exist yet), -1 error;
 * record: 0, or -1 (logged) when control.db cannot be written. */
int dlv_removal_find(sqlite3 *ro, const char *decision_id, const char *path_id);
int dlv_removal_record(const char *db_path, const char *decision_id, const char *path_id,
                       const char *evidence_id, int64_t observed_at_ms, int64_t now_ms);

/* Is this rendition (a paths.json rendition name) of path out of the
 * master playlists of a's decision: a valid Exact-AV MISMATCH of that
 * rendition (path, channel, rendition, program version, DecodeProfile)
 * observed after the decision's time?  Read like the pathway drops (at most
 * once per second, and true for good); never without --evidence. */
bool dlv_rendition_dropped(struct dlv *d, const struct dlv_alloc *a, const char *path,
                           const char *rendition, int64_t now_ms);

/* The pathway list of a at now_ms (reads evidence.db when due). */
void dlv_pathways(struct dlv *d, const struct dlv_alloc *a, int64_t now_ms,
                  struct dlv_pathways *out);

/* What every endpoint does first: the allocation of session sid into a
 * (404 no_such_session when there is none, 404 not_delivered when its path is not in paths.json), still
 * served at now_ms (master: before expires_at_ms; the others: before
 * commitment_until_ms; else 410), and its pathway list.  0 go on, 1
 * answered (the error in out), -1 memory. */
int dlv_begin(struct dlv *d, const char *sid, int64_t now_ms, bool master, struct dlv_alloc *a,
              struct dlv_pathways *pw, struct dlv_answer *out);

/* An error answer {"error": code, "detail": detail}.  0 or -1. */
int dlv_error(struct dlv_answer *out, int status, const char *code, const char *detail);

/* The signing query "Policy=..&Signature=..&Key-Pair-Id=.." for resource
 * under key (cache key), valid until at most cap_s: kept until half of
 * the path's url_ttl_s is used.  Into q[cap]; false on failure (err). */
bool dlv_signed_query(struct dlv *d, const struct dlv_path *p, const char *cache_key,
                      const char *resource, int64_t now_ms, int64_t cap_s, char *q, size_t cap,
                      char *err, size_t errlen);
#define DLV_QUERY_MAX (CFSIGN_POLICY_B64_MAX + CFSIGN_SIG_B64_MAX + CFSIGN_KEY_PAIR_ID_MAX + 96)

/* dlv_media.c */
struct dlv_upstream *dlv_upstream_new(size_t n);
void dlv_upstream_free(struct dlv_upstream *u, size_t n);

#endif
