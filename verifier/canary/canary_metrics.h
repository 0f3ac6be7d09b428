/* canary_metrics.h - the canary's Prometheus metrics and health endpoint.
 *
 * Per target (labels path_id, channel, rendition):
 *   exactav_canary_checks_total{...,verdict}          counter
 *   exactav_canary_check_duration_seconds{...}        histogram (buckets below)
 *   exactav_canary_lag_segments{...}                  gauge: newest media sequence in both
 *                                                     playlists minus the newest one on record
 *   exactav_canary_last_match_timestamp_seconds{...}  gauge: observation time of the last MATCH
 *   exactav_canary_skipped_segments_total{...}        counter: due segments given up
 *   exactav_canary_probes_total{...,status}           counter
 *   exactav_canary_probe_duration_seconds{...}        histogram (same buckets)
 *   exactav_canary_last_verdict{...,verdict}          gauge: 1 for the newest stored verdict
 *   exactav_canary_last_verdict_timestamp_seconds{...} gauge: its observation time
 *   exactav_canary_unknown_streak{...}                gauge: UNKNOWN checks in a row
 * and exactav_build_info{version,commit,ffmpeg} 1,
 *   exactav_canary_targets (gauge), exactav_canary_up (1 while scheduling),
 *   exactav_canary_checks_by_compare_total{compare}   counter: "full" or "decoder-input"
 *   exactav_canary_reference_decodes_total            counter: reference segments decoded
 *                                                     for the fast path (once each)
 * Served by libmicrohttpd (one internal thread): GET /metrics (text format
 * 0.0.4) and GET /healthz (200 "ok" while scheduling, 503 "stopping").
 */
#ifndef CANARY_METRICS_H
#define CANARY_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "canary_config.h"

struct canary_metrics;

struct canary_metrics *canary_metrics_new(void);
void canary_metrics_free(struct canary_metrics *m);

/* The targets this worker checks (after --shard); series of other keys
 * stay (counters never go back) but are no longer counted as targets. */
void canary_metrics_set_targets(struct canary_metrics *m, size_t n);
void canary_metrics_set_up(struct canary_metrics *m, bool up);

/* verdict: "MATCH", "MISMATCH" or "UNKNOWN". */
void canary_metrics_check(struct canary_metrics *m, const struct canary_target *t, const char *verdict,
                          int64_t duration_ms, int64_t observed_at_ms);
void canary_metrics_lag(struct canary_metrics *m, const struct canary_target *t, int64_t lag_segments);
void canary_metrics_skipped(struct canary_metrics *m, const struct canary_target *t, uint64_t n);
void canary_metrics_probe(struct canary_metrics *m, const struct canary_target *t, const char *status,
                          int64_t duration_ms);

/* A check's compare ("full" or "decoder-input"), and a reference segment
 * whose clean decode became known (decoded once for all its paths). */
void canary_metrics_compare(struct canary_metrics *m, const char *compare);
void canary_metrics_reference_decoded(struct canary_metrics *m);

/* The exposition text (malloc'd). */
char *canary_metrics_render(struct canary_metrics *m);

/* Starts serving on listen ("ADDR:PORT", "[V6]:PORT"; port 0 picks one).
 * 0 with the bound "ADDR:PORT" in bound, or -1 with err set. */
int canary_metrics_serve(struct canary_metrics *m, const char *listen, char *bound, size_t boundlen, char *err,
                         size_t errlen);

/* Parses listen into a socket address; 0 on success. */
int canary_metrics_parse_listen(const char *listen, void *sockaddr_storage, size_t *len);

#endif
