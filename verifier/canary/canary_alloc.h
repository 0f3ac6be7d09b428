/* canary_alloc.h - allocation targets (issue 17, docs/canary.md
 * "Allocation targets"): the canary takes a verification session from the
 * admission service and checks what that session delivers.
 *
 * Every every_s (or when the allocation's playback URL expires, or the
 * service answers 410 for its media playlist) a new allocation is taken:
 *   1. POST <service>/v1/allocations {"allocation_id": "canary-<128 random
 *      bits hex>", "cohort": {...}, "verification": true} with the bearer
 *      token (libcurl, at most CANARY_ALLOC_MAX_BODY bytes, the cycle's
 *      deadline);
 *   2. GET its playback_url (the master playlist), its
 *      EXT-X-CONTENT-STEERING SERVER-URI (resolved against the master) and
 *      the steering manifest; the pathway is, as hls.js picks it, the first
 *      of PATHWAY-PRIORITY that the master lists (no steering: the master's
 *      first pathway);
 *   3. the variant of that pathway whose STABLE-VARIANT-ID (or, without one,
 *      whose URI's last segment "<rendition>.m3u8") is the target's
 *      rendition: its URI, resolved against the master, is the candidate
 *      media playlist of the target's checks until the next allocation.
 * A failure is a reason and a detail (never a secret: the token is never
 * logged; URLs are redacted by the caller's policy). */
#ifndef CANARY_ALLOC_H
#define CANARY_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "canary_config.h"
#include "fetch.h"

#define CANARY_ALLOC_MAX_BODY ((size_t)64 * 1024) /* any answer of the service, the master, the steering */
#define CANARY_ALLOC_TOKEN_MIN 16
#define CANARY_ALLOC_TOKEN_MAX 4096
#define CANARY_ALLOC_ID_LEN 39 /* "canary-" + 32 hex digits */
#define CANARY_ALLOC_COOKIE_MAX 8192 /* the Cookie header a session sends its CDN */

/* The allocation a target follows (zero value: none yet). */
struct canary_alloc_session {
    bool have;
    char allocation_id[CANARY_ALLOC_ID_LEN + 1];
    char pathway[CANARY_MAX_NAME + 1];  /* the chosen pathway (the 201's path_id until one is chosen) */
    char url[CANARY_MAX_LOCATION + 1];  /* the media playlist of the target's rendition on that pathway */
    int64_t taken_at_ms;                /* wall clock */
    int64_t expires_at_ms;              /* the 201's expires_at_ms, 0 when absent */
    /* The master playlist's URL (the session's capability: never stored,
     * logged or printed) and when the steering manifest is read again (its
     * TTL after the last read; 0: the master names no steering). */
    char playback[CANARY_MAX_LOCATION + 1];
    int64_t steer_at_ms;
    long last_status;                   /* the HTTP status of the last master or steering read (0: none answered) */
    /* The Cookie header the session's master playlist set for its media
     * playlist (canary_cookies.h: a cloudfront-cookies path signs the CDN's
     * requests so), "" when none.  A credential: never stored, logged or
     * printed; wiped when the session is replaced. */
    char cookie[CANARY_ALLOC_COOKIE_MAX + 1];
};

enum canary_alloc_status {
    CANARY_ALLOC_FAILED = 0,      /* UNKNOWN allocation_failed */
    CANARY_ALLOC_OK,
    CANARY_ALLOC_NOT_DELIVERED,   /* UNKNOWN allocation_rendition_not_delivered */
};

/* Reads a token file: one line of CANARY_ALLOC_TOKEN_MIN..MAX bytes (a
 * final newline dropped), a regular file not accessible by group or others,
 * as stepctl serve reads its token files.  0 (*token malloc'd, a secret);
 * 66 when it cannot be read or is not a regular file; 65 for its mode or
 * content (why says which, never the content). */
int canary_alloc_read_token(const char *path, char **token, char *why, size_t whylen);

void canary_alloc_spec_free(struct canary_alloc_spec *s);

/* Is a new allocation due at now_ms? */
bool canary_alloc_due(const struct canary_alloc_spec *spec, const struct canary_alloc_session *s, int64_t now_ms);

/* Takes a new allocation for t (an allocation target) and finds its
 * candidate; every request within deadline_ms, through fo (its limits and
 * redaction; the body bound is CANARY_ALLOC_MAX_BODY).  The session is
 * filled as far as it got (allocation_id once the service allocated it,
 * pathway once known); have only on CANARY_ALLOC_OK.  detail: why, else "". */
enum canary_alloc_status canary_alloc_take(const struct canary_target *t, const struct fetch_options *fo,
                                           int64_t deadline_ms, struct canary_alloc_session *s, char *detail,
                                           size_t detaillen);

/* As a player reloads the steering manifest at its TTL: when s's TTL has
 * passed, the master and the steering manifest are read again and the
 * pathway picked as at the allocation.  0 the same pathway (or the read
 * failed: a player keeps playing, and so does the check, again after
 * CANARY_ALLOC_STEER_RETRY_S), 1 another pathway (s->pathway and s->url
 * changed; detail says from which), -1 the session ended (410): take a new
 * allocation. */
#define CANARY_ALLOC_STEER_RETRY_S 10
int canary_alloc_steer(const struct canary_target *t, const struct fetch_options *fo, int64_t deadline_ms,
                       struct canary_alloc_session *s, char *detail, size_t detaillen);

/* The reason code of a status ("allocation_failed", ...). */
const char *canary_alloc_reason(enum canary_alloc_status st);

/* Pure parts, for the tests: the pathway an HLS player takes from master
 * (the first of priority, a JSON array text or NULL, that master lists; else
 * master's first) into pathway; and that pathway's variant of rendition:
 * its URI (as written) into uri.  0; -1 with why when master lists no
 * pathway; 1 when the pathway has no such variant. */
int canary_alloc_pick(const char *master, const char *priority_json, const char *rendition, char *pathway,
                      size_t pathwaylen, char *uri, size_t urilen, char *why, size_t whylen);

/* The SERVER-URI of master's EXT-X-CONTENT-STEERING (as written) into out;
 * false when it has none. */
bool canary_alloc_steering_uri(const char *master, char *out, size_t outlen);

#endif
