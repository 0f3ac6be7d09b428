/* serve_metrics.h - what `stepctl serve` counts, in Prometheus text format.
 *
 *   stepctl_allocations_total{result, error}   allocation requests by result
 *   stepctl_grant_remaining{grant_id, path_id} quota left per unexpired active grant
 *   stepctl_request_duration_seconds{route}    request latency histogram
 *   stepctl_requests_total{route, status}      answers by route and HTTP status
 *   stepctl_build_info{version, commit, sqlite, libmicrohttpd}  1
 *   stepctl_batches_total, stepctl_batched_allocations_total   group commits
 *   stepctl_connections_cut_total               connections past the request deadline
 * Names and labels: docs/serve.md.  Thread-safe (one mutex).
 */
#ifndef SERVE_METRICS_H
#define SERVE_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* Results of POST /v1/allocations, beyond alloc.h's. */
enum smet_result {
    SMET_CREATED = 0,
    SMET_REPLAYED,
    SMET_CONFLICT,
    SMET_REFUSED,
    SMET_RATE_LIMITED,
    SMET_IN_FLIGHT,
    SMET_BAD_REQUEST,
    SMET_UNAVAILABLE, /* store failure or draining */
    SMET_N
};

#define SMET_MAX_ROUTES 16
/* Route labels beyond the tables' (stepctl_requests_total only): a CORS
 * preflight (OPTIONS, any path), and a path no route has (404, 405). */
#define SMET_ROUTE_PREFLIGHT SMET_MAX_ROUTES
#define SMET_ROUTE_UNMATCHED (SMET_MAX_ROUTES + 1)
#define SMET_ROUTE_LABELS (SMET_MAX_ROUTES + 2)
/* Distinct statuses counted per route; more are counted as status "other". */
#define SMET_STATUS_SLOTS 12

struct smet;

struct smet *smet_new(void);
void smet_free(struct smet *m);

/* One allocation request's result (error: the 403 code, or NULL). */
void smet_result(struct smet *m, enum smet_result r, const char *error);
/* One request's latency on route index route. */
void smet_latency(struct smet *m, size_t route, double seconds);
/* One answer: route index (or SMET_ROUTE_PREFLIGHT / _UNMATCHED), status. */
void smet_request(struct smet *m, size_t route, unsigned status);

/* Counts kept by other parts of the service, rendered with the rest. */
struct smet_extra {
    unsigned long long batches, jobs; /* the writer's group commits (swr_stats) */
    unsigned long long cut;           /* connections shut down by the deadline (sdl_cut_total) */
};

/* The whole text: counters, the remaining quota of every active grant read
 * from db (read-only), the histograms with the route names given. */
char *smet_render(struct smet *m, sqlite3 *db, int64_t now_ms, const char *const *routes,
                  size_t n_routes, const struct smet_extra *extra);

#endif
