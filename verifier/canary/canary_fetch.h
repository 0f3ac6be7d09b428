/* canary_fetch.h - reading a live media playlist and one of its segments,
 * from an http(s) URL or from a directory on disk (the reference provider's
 * copy), with bounded time and size.
 *
 * The results are plain, immutable once read, and reference-counted, so
 * that one read can be shared by several threads (canary_refcache.h).  Any
 * failure is kept as a stable reason code plus a detail, never as a crash;
 * everything printable is redacted.
 */
#ifndef CANARY_FETCH_H
#define CANARY_FETCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "fetch.h"
#include "hls.h"
#include "verify.h"

/* The playlist name looked for when a location is a directory. */
#define CANARY_PLAYLIST_NAME "playlist.m3u8"

struct canary_playlist {
    atomic_int refs;
    bool ok;
    const char *failure;         /* stable code when !ok: a fetch code, "playlist_invalid", "io_error" */
    char detail[320];
    long http_status;            /* 0: no HTTP response (or a file) */
    struct hls_playlist pl;      /* a media playlist when ok */
    char *base;                  /* unredacted URL after redirects, or the directory: never print it */
    char *object;                /* what was read, redacted */
    json_t *fetch;               /* the fetch record (HTTP only), or NULL */
    int64_t started_at_ms, ended_at_ms;
};

struct canary_segment {
    atomic_int refs;
    bool ok;
    const char *failure;
    char detail[320];
    uint64_t media_sequence;
    uint8_t *data;
    size_t len;
    char sha256[65];
    char *object;                /* redacted URL or path */
    char *name;                  /* the last path segment of the URI (the file name) */
    json_t *fetch;               /* HTTP only */
    int64_t started_at_ms, ended_at_ms;
    /* the reference's clean decode, shared by every path checked against
     * this segment (verify.h); its users take turns until it is known */
    pthread_mutex_t memo_mu;
    struct verify_refmemo memo;
};

/* Reads location (http(s) URL, playlist file, or directory holding
 * CANARY_PLAYLIST_NAME) with fo, the time limited to deadline_ms.  Never
 * NULL except out of memory; check ->ok. */
struct canary_playlist *canary_playlist_read(const char *location, const struct fetch_options *fo,
                                             int64_t deadline_ms);

/* The range of media sequence numbers of an ok playlist. */
bool canary_playlist_range(const struct canary_playlist *p, uint64_t *first, uint64_t *last);

/* The unredacted location of segment seq (URL, or a file path), or NULL
 * when it is not listed or cannot be resolved.  malloc'd. */
char *canary_playlist_segment_location(const struct canary_playlist *p, uint64_t seq);

/* Reads segment seq of an ok playlist.  Never NULL except out of memory. */
struct canary_segment *canary_segment_read(const struct canary_playlist *p, uint64_t seq,
                                           const struct fetch_options *fo, int64_t deadline_ms);

/* Reference counting: a new read has one reference. */
struct canary_playlist *canary_playlist_ref(struct canary_playlist *p);
void canary_playlist_release(struct canary_playlist *p);
struct canary_segment *canary_segment_ref(struct canary_segment *s);
void canary_segment_release(struct canary_segment *s);

/* fo with its total (and connect) time-out cut to what is left until
 * deadline_ms (at least 1 ms). */
struct fetch_options canary_fetch_options_until(const struct fetch_options *fo, int64_t deadline_ms);
/* The same, asking for the segment's byte range when it has one. */
struct fetch_options canary_segment_fetch_options(const struct hls_segment *h, const struct fetch_options *fo,
                                                  int64_t deadline_ms);

#endif
