/* canary_refcache.h - the reference side, read once and shared.
 *
 * Every path of a rendition is checked against the same reference
 * (targets with the same `reference` string).  A reference segment is read
 * once per media sequence number while it is kept, and handed to every
 * check that needs it; reads in progress are joined, not repeated.  The
 * reference playlist is shared for a short time (ttl) so that N paths
 * checked at the same moment read it once.  A failed read is shared only
 * with the checks that were waiting for it; the next lookup reads again.
 * Thread-safe (one mutex); the reads themselves run without the lock.
 */
#ifndef CANARY_REFCACHE_H
#define CANARY_REFCACHE_H

#include <stdint.h>

#include "canary_fetch.h"

struct canary_refcache;

/* fo: how to read (redaction names, limits); ttl_ms: how long a playlist
 * read is shared; keep_ms: how long an unused segment is kept. */
struct canary_refcache *canary_refcache_new(const struct fetch_options *fo, int64_t ttl_ms, int64_t keep_ms);
void canary_refcache_free(struct canary_refcache *rc);

/* The playlist at reference (a new reference to a shared read; release
 * it).  NULL only when out of memory. */
struct canary_playlist *canary_refcache_playlist(struct canary_refcache *rc, const char *reference,
                                                 int64_t deadline_ms);

/* Segment seq of reference, listed in pl (a read of that reference).  A
 * new reference; NULL only when out of memory. */
struct canary_segment *canary_refcache_segment(struct canary_refcache *rc, const char *reference,
                                               const struct canary_playlist *pl, uint64_t seq,
                                               int64_t deadline_ms);

/* Segment reads actually performed so far (the sharing is tested by it). */
uint64_t canary_refcache_segment_reads(struct canary_refcache *rc);

#endif
