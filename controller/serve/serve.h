/* serve.h - `stepctl serve`: the admission service on libmicrohttpd.
 *
 * Two layers:
 *   serve.c            the transport: the daemon (thread pool, suspend and
 *                      resume), request bodies (bounded), routing by method
 *                      and path pattern, responses, latency, the drain on
 *                      SIGTERM;
 *   serve_admission.c  the admission endpoints, one route table:
 *                      POST /v1/allocations, GET /v1/grants/{id}, GET
 *                      /healthz, GET /metrics;
 *   serve_delivery.c   the delivery endpoints of an allocation (dlv.h):
 *                      master.m3u8, steering, signed media playlists.
 *   serve_access.c     the access log (--access-log), one line per answer;
 *   serve_metrics.c    the counters and histograms of GET /metrics.
 * Another set of endpoints joins by adding its own route table to
 * srv_route_tables[] (serve.c) and its fields to struct srv; the transport
 * does not change.  HTTP contract: docs/serve.md.
 */
#ifndef SERVE_H
#define SERVE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <jansson.h>
#include <microhttpd.h>

#include "serve_metrics.h"
#include "serve_writer.h"

struct cauth; /* cauth.h */

struct store_key;

#define SRV_MAX_CORS 16 /* --cors-origin given at most this many times */

struct srv_config {
    const char *db_path;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char listen_text[128]; /* as given, for the logs */
    unsigned threads;      /* HTTP thread pool */
    size_t batch_max;      /* allocations per write transaction at most */
    const char *port_file; /* written once listening (the bound port) */
    unsigned drain_s;      /* longest wait for in-flight requests at SIGTERM */
    const char *cors_origins[SRV_MAX_CORS]; /* --cors-origin: the origins whose pages may read
                                 * answers ("*": any page, no credentials) */
    size_t n_cors;               /* 0: no CORS header at all (the default) */
    struct sockaddr_storage admin_addr; /* --admin-listen: operator endpoints there too */
    socklen_t admin_addr_len;    /* 0: no admin listener */
    char admin_listen_text[128];
    const char *admin_port_file; /* --admin-port-file: the admin listener's port */
    struct dlv_paths *paths;     /* --paths: the delivery configuration, or NULL */
    const char *evidence_path;   /* --evidence: read-only, for MISMATCH after a decision */
    const char *public_url;      /* --public-url: the service as players reach it, or NULL */
    const char *access_log;      /* --access-log: a file, "-" stderr, or NULL none */
    unsigned request_timeout_s;  /* --request-timeout: accept (or previous answer) to body complete */
    unsigned per_ip_limit;       /* --max-connections-per-ip: 0 none */
    struct cauth *client_auth;   /* --client-auth: tokens on POST /v1/allocations, or NULL */
    unsigned char admin_token_sha256[32]; /* --admin-token-file, hashed (serve_auth.h) */
    bool admin_token_set;        /* false: operator endpoints answer 401 to everyone */
    unsigned char verification_token_sha256[32]; /* --verification-token-file, hashed */
    bool verification_token_set; /* false: every "verification": true request is 401 */
    bool allow_anonymous;        /* --allow-anonymous: no client auth on a non-loopback address */
    const struct store_key *store_key; /* --store-key-file (smac.h), or NULL */
};

#define SRV_INFLIGHT_BUCKETS 4096

struct srv_request;
struct adm_request; /* serve_admission.c */
struct dlv;         /* dlv.h */
struct sacc;        /* serve_access.h */
struct sdl;         /* serve_deadline.h */

/* The service's state, shared by every thread. */
struct srv {
    const struct srv_config *cfg;
    struct MHD_Daemon *daemon;
    struct MHD_Daemon *admin_daemon; /* --admin-listen, or NULL */
    struct swr *writer;
    struct smet *metrics;
    struct dlv *dlv;    /* the delivery layer, NULL without --paths */
    struct sacc *access; /* --access-log, or NULL */
    struct sdl *deadline; /* the whole-request deadline of every connection */
    char base_url[256]; /* "http://127.0.0.1:8080": the start of every playback_url */
    pthread_mutex_t mu; /* guards everything below */
    bool draining;      /* SIGTERM seen: new allocations are refused (503) */
    size_t active;      /* requests begun and not completed */
    struct adm_request *inflight[SRV_INFLIGHT_BUCKETS]; /* allocation ids being written */
};

/* A route: method, path pattern (each "{}" matches one segment of
 * [A-Za-z0-9._:-]{1,128}, available as srv_param_at, at most
 * SRV_MAX_PARAMS) and the handler that
 * answers once the body (if any) has arrived. */
typedef enum MHD_Result (*srv_handler)(struct srv *s, struct srv_request *rq);

struct srv_route {
    const char *method, *pattern;
    srv_handler handle;
    const char *name; /* the latency histogram's route label */
    bool operator_only; /* needs the operator token (serve_auth.h), else 401 */
};

struct srv_route_table {
    const struct srv_route *routes;
    size_t n;
};

extern const struct srv_route_table srv_admission_table; /* serve_admission.c */
extern const struct srv_route_table srv_delivery_table;  /* serve_delivery.c */
extern const struct srv_route_table srv_reports_table;   /* serve_reports.c */

/* ---- for handlers ------------------------------------------------------ */

#define SRV_MAX_PARAMS 3
/* The first "{}" of the route / the i-th ("" beyond the route's). */
const char *srv_param(const struct srv_request *rq);
const char *srv_param_at(const struct srv_request *rq, size_t i);
/* The request body received (at most SRV_MAX_BODY bytes); *too_big when the
 * client sent more (nothing of it is kept). */
const char *srv_body(const struct srv_request *rq, size_t *len, bool *too_big);
#define SRV_MAX_BODY 4096

/* A query argument (percent-decoded) / a request header; NULL when absent. */
const char *srv_query_arg(const struct srv_request *rq, const char *name);
const char *srv_header(const struct srv_request *rq, const char *name);

/* Queues a response (every response goes through here: one place for
 * common headers: Cache-Control, CORS).  retry_after may be NULL. */
enum MHD_Result srv_respond(struct srv_request *rq, unsigned status, const char *content_type,
                            const char *body, size_t len, const char *retry_after);
/* The same with more headers: name, value, ..., NULL (e.g. several
 * Set-Cookie).  content_type NULL: none (an empty answer). */
enum MHD_Result srv_respond_headers(struct srv_request *rq, unsigned status,
                                    const char *content_type, const char *body, size_t len,
                                    const char *const *headers);
/* A JSON object (stolen) as the body. */
enum MHD_Result srv_respond_json(struct srv_request *rq, unsigned status, json_t *o);

/* Suspends the connection until srv_resume (from any thread); then
 * on_resume answers.  The handler returns MHD_YES right after this. */
void srv_defer(struct srv_request *rq, srv_handler on_resume);
void srv_resume(struct srv_request *rq);

/* Per-request state of a handler, freed with free_fn when the request ends. */
void srv_set_user(struct srv_request *rq, void *p, void (*free_fn)(void *));
void *srv_user(const struct srv_request *rq);

/* The route names of every table, in histogram order (at most max). */
size_t srv_route_names(const char **names, size_t max);

/* Seconds since the request's headers arrived. */
double srv_elapsed(const struct srv_request *rq);

/* ---- the service -------------------------------------------------------- */

/* Runs until a signal of *stop arrives (the caller blocked them in every
 * thread), then drains and stops.  Returns the exit code: 0 drained, 66 the
 * database or the address cannot be opened, 70 internal. */
int srv_run(const struct srv_config *cfg, const sigset_t *stop);

#endif
