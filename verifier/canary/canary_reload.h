/* canary_reload.h - blocking playlist reload (RFC 8216bis 6.2.5.2) of a
 * Low-Latency HLS candidate (issue 20, stage 3).
 *
 * When the candidate's last playlist said EXT-X-SERVER-CONTROL:
 * CAN-BLOCK-RELOAD=YES and the reference (read first) lists a segment N
 * newer than the candidate's last look, the cycle asks for the candidate
 * with _HLS_msn=N: the server holds the request until segment N is
 * complete there, so the cycle reads the playlist the moment the CDN has
 * the segment the reference has, instead of a period later.  A server may hold such
 * a request (RFC 8216bis: up to three target durations); the canary gives
 * it half of what is left of the cycle's deadline.  A held request is not a
 * failure: when the canary's own limit ends it ("held") or the server
 * refuses it (a 4xx/5xx, "refused"), the playlist is read again the plain
 * way with the rest of the time, and the report says what happened
 * (canary.blocking_reload, docs/canary.md).
 */
#ifndef CANARY_RELOAD_H
#define CANARY_RELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "canary_fetch.h"
#include "fetch.h"

struct canary_reload {
    bool used;                   /* a blocking request was made this cycle */
    uint64_t msn;                /* _HLS_msn asked */
    int64_t held_ms;             /* how long the blocking request took */
    const char *outcome;         /* "answered", "held" (our limit ended it), "refused" (an error answer) */
    long http_status;            /* of the blocking request, 0: none */
};

/* url with _HLS_msn=msn added to its query (before any fragment); malloc'd. */
char *canary_reload_url(const char *url, uint64_t msn);

/* Reads the candidate playlist at url: with block, first the blocking way
 * (msn, as above), then the plain way if that gave no playlist; without,
 * the plain way only.  *r says what the blocking request did (r->used
 * false without block).  Never NULL except out of memory. */
struct canary_playlist *canary_reload_read(const char *url, bool block, uint64_t msn, const struct fetch_options *fo,
                                           int64_t deadline_ms, struct canary_reload *r);

/* {"_HLS_msn", "outcome", "held_ms", "http_status"}, or NULL when !r->used. */
json_t *canary_reload_json(const struct canary_reload *r);

#endif
