/* testd_live.h - the live part of exactav-testd: a sliding HLS live window
 * over the segments of a real playlist, with outages, tampering, frozen and
 * late playlists on command (docs/canary.md, "The live simulation").
 *
 * Live segment k (media sequence number k = 0, 1, 2, ...) is source segment
 * k mod N; the stream loops over the source with EXT-X-DISCONTINUITY at each
 * wrap, so it never ends.  Segment k is published at
 *     start_ms + cum(k) - cum(window - 1)
 * where cum(k) is the sum of the EXTINF durations of live segments 0..k-1:
 * `window` segments are there at start.  Routes, for any path name P
 * ([A-Za-z0-9_-], at most 32 bytes, at most TESTD_LIVE_MAX_PATHS names):
 *   /_live/P/playlist.m3u8   the media playlist of path P now
 *   /_live/P/seg-K.ts        live segment K once published (404 before)
 *   /_control/outage?path=P&ms=M[&status=S]   P answers S (default 503) to
 *                            everything for M ms from now
 *   /_control/tamper?path=P&seq=K&file=F      segment K of P is the file F
 *                            (relative to --root) instead of the source
 *   /_control/freeze?path=P&ms=M              P's playlist stops advancing
 *                            for M ms from now (a stalled packager)
 *   /_control/behind?path=P&segments=N        P's playlist is N segments
 *                            behind the live edge from now on (N may be 0)
 *   /_control/status[?seq=K][&path=P]  {"start_ms", "window",
 *                            "source_segments", "edge", "now_ms"[, "publish_ms"
 *                            of K][, P's "playlist_requests", "segment_requests"
 *                            answered 200]}
 * With ll_parts N > 0 (--ll-parts, Low-Latency HLS, RFC 8216bis) segment K
 * is also N parts, separate resources: part J (0..N-1) is the J-th of N
 * slices of the segment file cut at 188-byte TS packet boundaries (their
 * concatenation is the segment byte for byte), lasting EXTINF/N (in ms,
 * the last part takes the remainder), published at
 *     publish(K-1) + (J+1) * duration(K) / N
 * (the last part with the segment).  The playlist adds EXT-X-PART-INF,
 * EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3 part targets,
 * the parts of its last two segments, the published parts of the open
 * segment, and an EXT-X-PRELOAD-HINT of the next part.  Part 0 is
 * INDEPENDENT=YES.  More routes:
 *   /_live/P/part-K.J.ts     part J of segment K once published (404 before)
 *   /_live/P/playlist.m3u8?_HLS_msn=M[&_HLS_part=J]   blocking reload: held
 *                            until the playlist holds segment M (or part J of
 *                            it), at most 3 target durations, then 503; 400
 *                            when M is beyond the edge + 2 or _HLS_part comes
 *                            without _HLS_msn.  J >= N waits for segment M
 *   /_control/tamper?path=P&seq=K&part=J&file=F  part J of segment K is F
 *   /_control/delay?path=P&seq=K&part=J&ms=M     part J of segment K (and the
 *                            parts after it in the open segment's listing)
 *                            is published M ms late; once segment K is
 *                            complete the playlist lists it, the part itself
 *                            still answers 404 until its time
 *   /_control/status?seq=K&part=J  adds "part_publish_ms"
 * An fMP4 source (one EXT-X-MAP:URI="FILE" in PLAYLIST) is served with
 * #EXT-X-MAP:URI="init.mp4" (/_live/P/init.mp4), segments seg-K.m4s and
 * parts part-K.J.m4s; part J is the run of whole fragments (top-level moof
 * + mdat) i with i * N / F == J of the segment's F (part 0 also holds what
 * precedes the first moof), and every source segment must have >= N. 
 * Every control answer is one JSON object with the times it applied
 * (start_ms, end_ms), so a test can compare observation times with them. */
#ifndef TESTD_LIVE_H
#define TESTD_LIVE_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#define TESTD_LIVE_MAX_PATHS 256
#define TESTD_LIVE_MAX_SEGMENTS 1000
#define TESTD_LIVE_MAX_PARTS 16

struct testd_live;

/* Reads the source media playlist (segment URIs must be plain file names
 * next to it).  root: the server's --root, for tamper files.  ll_parts: 0
 * for plain HLS, else the parts per segment (1..TESTD_LIVE_MAX_PARTS).
 * NULL with a message in err on failure. */
struct testd_live *testd_live_new(const char *playlist, const char *root, unsigned window,
                                  unsigned ll_parts, char *err, size_t errlen);
void testd_live_free(struct testd_live *live);

/* True when url is one of the routes above. */
bool testd_live_handles(const char *url);

/* The response for url (a route testd_live_handles accepted) and its
 * status; NULL only when out of memory.  A blocking playlist reload holds
 * the calling thread (MHD runs a thread per connection). */
struct MHD_Response *testd_live_respond(struct testd_live *live, struct MHD_Connection *c,
                                        const char *url, unsigned *status);

#endif
