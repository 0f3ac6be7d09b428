/* canary_probe.h - one availability probe of a path, at the three levels
 * of the client-side failover seed: TCP connect time, the response headers
 * of the newest segment (status, time to first byte), and its full download
 * (bytes, time).  The newest segment is the last one the media playlist
 * lists, so the playlist is read first.
 *
 * The status (docs/canary.md) is availability evidence, never content:
 *   PASS       the playlist and all three levels succeeded (2xx, whole body);
 *   VIOLATION  the path answered with an HTTP error status (>= 400) at any
 *              level: it is there and refuses;
 *   UNKNOWN    anything else: no connection, time-out, short body, TLS...
 * reason is "ok" or "<level>_<code>" for the first level that failed
 * (levels: playlist, tcp, headers, download; codes as in docs/fetch.md,
 * e.g. "playlist_http_error", "tcp_connect_error", "download_short_transfer").
 * When player origins are configured, a fourth level makes the checks a
 * browser at each origin makes (CORS) on the playlist and the segment: a
 * refusal is VIOLATION "cors_playlist_refused" / "cors_segment_refused",
 * the why in playlist_error / header_error.
 */
#ifndef CANARY_PROBE_H
#define CANARY_PROBE_H

#include <stdint.h>

#include "evidence.h"
#include "fetch.h"

struct canary_probe {
    struct evidence_probe row;   /* strings point into the fields below */
    char id[37];
    char *object, *segment;
    char reason[64];
    char playlist_error[320], tcp_error[320], header_error[320], download_error[320];
};

struct canary_probe_options {
    const char *const *origins;  /* player origins ("https://player.example"), or NULL */
    size_t n_origins;
};

/* Probes the media playlist at url (unredacted; it is redacted for the
 * row) with fo, every level bounded by deadline_ms.  The scope fields of
 * out->row (path_id, channel, rendition) are the caller's to set. */
void canary_probe_run(const char *url, const struct fetch_options *fo, const struct canary_probe_options *po,
                      int64_t deadline_ms, struct canary_probe *out);
void canary_probe_free(struct canary_probe *p);

#endif
