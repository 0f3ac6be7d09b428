/* dlv.h - delivering an allocation to a player (`stepctl serve --paths`).
 *
 * What an allocation stored decides everything here: its path, its
 * fallback paths (the other paths eligible in the same decision, in the
 * decision's preference order), its decision, its URL validity and its
 * commitment end.  Allocation rows are immutable (control.db refuses an
 * UPDATE), so they are cached for the life of the process.  The rule of a
 * grant or a newer decision never changes the list of an existing
 * allocation; only content evidence can shorten it:
 *
 *   PATHWAY-PRIORITY = the allocated path (unless it has such a MISMATCH
 *   and the decision's policy.active_sessions.on_content_violation is
 *   steer_away, the default), then each fallback path that the
 *   service delivers (paths.json) and that has NO valid Exact-AV MISMATCH
 *   (the step's scope: channel, rendition, program version, DecodeProfile
 *   of the decision) observed after the decision's time.  A path once
 *   dropped is never listed again for that decision (no automatic
 *   fallback: it must pass `decide` again).  evidence.db is read read-only,
 *   at most once per second per (decision, path).
 *
 * Three endpoints, each a plain function from (allocation, time) to an
 * answer; the HTTP layer is serve_delivery.c:
 *   master.m3u8   one variant set per listed pathway, with
 *                 #EXT-X-CONTENT-STEERING; answered until expires_at_ms
 *                 (the URL validity of playback_url); cookies of the
 *                 cloudfront-cookies paths come with it;
 *   steering      {"VERSION":1,"TTL":...,"PATHWAY-PRIORITY":[...]},
 *                 until commitment_until_ms (expires_at + expected play);
 *   media         a cloudfront-url path's live media playlist, fetched
 *                 (shared cache of playlist_cache_ms) and every URI made
 *                 absolute and signed for the allocation (one wildcard
 *                 policy over the rendition's directory, url_ttl_s; the
 *                 signed query is kept per allocation until half of its
 *                 validity is used), until commitment_until_ms.
 * Thread-safe; contract: docs/delivery.md.
 */
#ifndef DLV_H
#define DLV_H

#include <stddef.h>
#include <stdint.h>

#include "dlv_paths.h"

#define DLV_PLAYLIST_MAX (512 * 1024) /* a live media playlist larger than this is refused */
#define DLV_FETCH_TIMEOUT_MS 5000
/* A media playlist is answered from a template at most this long past
 * playlist_cache_ms after its fetch completed; a request with none that
 * young waits at most DLV_WAIT_MS for the fetch in flight (dlv_media.c). */
#define DLV_STALE_MS 4000
#define DLV_WAIT_MS 250

struct dlv;

/* The layer over a parsed, key-loaded configuration (kept by the caller),
 * control.db (read-only connections) and evidence.db (NULL: fallback
 * lists are never pruned).  url_path: the path of --public-url ("" or
 * "/svc"), put before every root-relative URI of a multivariant playlist,
 * since players reach the service below it.  NULL when memory runs out
 * or url_path is longer than 255 bytes. */
struct dlv *dlv_new(const struct dlv_paths *paths, const char *db_path,
                    const char *evidence_path, const char *url_path);
void dlv_free(struct dlv *d);

/* An answer: status, content type and body (malloc'd); for errors a JSON
 * object {"error", "detail"}.  cookies: Set-Cookie values (malloc'd). */
#define DLV_MAX_COOKIES (4 * DLV_MAX_PATHS)
struct dlv_answer {
    int status;
    const char *content_type;
    const char *retry_after;   /* Retry-After seconds (static), NULL for none */
    char *body;
    size_t len;
    char *cookies[DLV_MAX_COOKIES];
    size_t n_cookies;
};
void dlv_answer_free(struct dlv_answer *a);

/* Each returns 0 with *out filled (any status), or -1 when memory ran out. */
int dlv_master(struct dlv *d, const char *alloc_id, int64_t now_ms, struct dlv_answer *out);
int dlv_steering(struct dlv *d, const char *alloc_id, int64_t now_ms, struct dlv_answer *out);
int dlv_media(struct dlv *d, const char *alloc_id, const char *pathway, const char *rendition,
              int64_t now_ms, struct dlv_answer *out);

#endif
