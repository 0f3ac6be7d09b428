/* cdn_live.h - a live HLS window that slides with the wall clock over the
 * segments of one recorded media playlist (the loopback CDN's live channel).
 *
 * Media sequence s is segment (s mod n) of the recording; it starts at
 * epoch + (s / n) * cycle + (start of that segment inside the recording)
 * and is available once it has ended.  Every time the recording starts over
 * the window carries #EXT-X-DISCONTINUITY (timestamps jump back), so the
 * discontinuity sequence of s is s / n.  Everything is a function of the
 * clock: instances given the same epoch serve the same channel.
 */
#ifndef CDN_LIVE_H
#define CDN_LIVE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CDN_LIVE_MAX_SEGMENTS 64

struct cdn_live {
    size_t n;
    char file[CDN_LIVE_MAX_SEGMENTS][PATH_MAX];
    int64_t dur_ms[CDN_LIVE_MAX_SEGMENTS];
    int64_t start_ms[CDN_LIVE_MAX_SEGMENTS + 1]; /* start inside the recording; [n] = cycle */
    int64_t target_s;                            /* EXT-X-TARGETDURATION */
    int64_t epoch_ms;                            /* wall time at which sequence 0 starts */
    unsigned window;                             /* segments listed */
};

/* Reads DIR/playlist.m3u8 (EXTINF + segment file names inside DIR). 0 or -1
 * with err. */
int cdn_live_load(struct cdn_live *l, const char *dir, unsigned window, int64_t epoch_ms,
                  char *err, size_t errsz);

/* The newest available media sequence at now_ms, -1 before the first. */
int64_t cdn_live_last(const struct cdn_live *l, int64_t now_ms);

/* The media playlist at now_ms into out; its length, 0 when nothing is
 * available yet or cap is too small. */
size_t cdn_live_playlist(const struct cdn_live *l, int64_t now_ms, char *out, size_t cap);

/* The file of media sequence seq when it is served at now_ms (from a window
 * behind the current one up to the newest), else NULL. */
const char *cdn_live_segment(const struct cdn_live *l, int64_t seq, int64_t now_ms);

#endif
