/* exactav-cdnd: the tests' loopback "CDN" (docs/delivery.md), on 127.x only.
 *
 *   exactav-cdnd [--root DIR] [--live DIR] [--live-prefix /live] [--live-window N]
 *                [--live-epoch-ms MS] [--public-key ID=PUB.pem]... [--cors-origin O]
 *                [--fault PREFIX=404|hold|stall:K:MS]...
 *                [--log FILE] [--report FILE] [--port N] [--port-file F] [--bind 127.0.0.1]
 *
 * Like a CloudFront edge in front of a live channel:
 *   PREFIX/live.m3u8, PREFIX/<seq>.ts  the live window (cdn_live.h)
 *   anything else (GET/HEAD)          a file under --root
 *   OPTIONS                           a CORS preflight
 *   POST /report                      a JSON body appended as one line to --report
 *   GET /_cdn/answer?status=N         from now on answer N (0: serve normally)
 * Faults for one session each (the end-to-end player test, player_04): with
 * --fault PREFIX=KIND, PREFIX/<anything> is served as <anything> (so
 * /stall/ch1/r360/live.m3u8 is the live channel's playlist: a path of its own
 * in paths.json) except its segments (*.ts):
 *   404         every segment answers 404 (reason fault_404);
 *   hold        every segment is held: its headers and first KiB are sent at
 *               once, the rest never (until the client goes or cdnd stops);
 *   stall:K:MS  the K-th segment request under PREFIX (1-based) is held so,
 *               for MS ms, then completed (reason held_ms_MS); the others
 *               are served normally.
 * The headers go first on purpose: a player's time-to-first-byte timeout
 * (hls.js: 10 s) does not end the hold, the body's stall is what it sees.
 * With --public-key every GET/HEAD needs a valid CloudFront-style signature
 * (cdn_auth.h), else 403 with the reason.  Every answer carries CORS headers.
 * Each answer is logged to --log as one JSON line (signing values redacted).
 * The port is written to --port-file once listening; SIGTERM/SIGINT stop it.
 * Self-contained on purpose: exactav-testd (tests/http/) is edited by others.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "portfile.h"
#include "cdn_auth.h"
#include "cdn_live.h"

#define CDND "exactav-cdnd"
#define REPORT_MAX (256 * 1024)
#define PLAYLIST_CAP (64 * 1024)
#define QUERY_LOG_MAX 2048
#define FAULT_MAX 8
#define HELD_FIRST_BYTES 1024

enum fault_kind { FAULT_404, FAULT_HOLD, FAULT_STALL };

struct fault {
    char prefix[64];
    enum fault_kind kind;
    long k;            /* stall: the K-th segment request */
    int64_t ms;        /* stall: how long it is held */
    atomic_long count; /* segment requests seen under prefix */
    char reason[32];   /* stall: logged as held_ms_MS */
};

struct cdnd {
    char root[PATH_MAX]; /* realpath of --root, "" when none */
    const char *live_dir, *live_prefix, *cors_origin, *port_file, *bind;
    const char *log_path, *report_path;
    struct cdn_live live;
    bool has_live;
    unsigned window, port;
    int64_t epoch_ms;
    struct cdn_auth_keys keys;
    FILE *log, *report;
    pthread_mutex_t lock; /* log and report lines */
    atomic_int forced_status;
    struct fault faults[FAULT_MAX];
    size_t n_faults;
    atomic_bool stopping; /* held bodies give up */
};

/* Per request: the raw URI (query undecoded) and a POST body. */
struct req {
    char *raw_uri;
    char *body;
    size_t len;
    bool too_big, seen;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- answers ------------------------------------------------------------------- */

struct answer {
    unsigned status;
    const char *reason; /* logged */
    enum cdn_auth_via via;
    bool control;
};

static void log_answer(struct cdnd *d, struct MHD_Connection *c, const char *method,
                       const char *path, const struct req *rq, const struct answer *a)
{
    if (!d->log)
        return;
    const char *q = rq && rq->raw_uri ? strchr(rq->raw_uri, '?') : NULL;
    char query[QUERY_LOG_MAX];
    cdn_auth_redact_query(q ? q + 1 : NULL, query, sizeof query);
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    static const char *const via[] = {"none", "url", "cookie"};
    json_t *j = json_pack("{sI ss ss ss si ss ss ss* sb}", "t_ms", (json_int_t)now_ms(), "method",
                          method, "path", path, "query", query, "status", (int)a->status,
                          "reason", a->reason, "auth", via[a->via], "origin", origin, "control",
                          a->control);
    if (!j)
        return;
    pthread_mutex_lock(&d->lock);
    json_dumpf(j, d->log, JSON_COMPACT);
    fputc('\n', d->log);
    fflush(d->log);
    pthread_mutex_unlock(&d->lock);
    json_decref(j);
}

static void add_cors(const struct cdnd *d, struct MHD_Response *r)
{
    MHD_add_response_header(r, "Access-Control-Allow-Origin", d->cors_origin);
    if (strcmp(d->cors_origin, "*") != 0) {
        MHD_add_response_header(r, "Access-Control-Allow-Credentials", "true");
        MHD_add_response_header(r, "Vary", "Origin");
    }
}

static enum MHD_Result queue(struct cdnd *d, struct MHD_Connection *c, const char *method,
                             const char *path, const struct req *rq, const struct answer *a,
                             struct MHD_Response *r)
{
    if (!r)
        return MHD_NO;
    add_cors(d, r);
    MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, CDND "/1");
    log_answer(d, c, method, path, rq, a);
    enum MHD_Result ret = MHD_queue_response(c, a->status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result text(struct cdnd *d, struct MHD_Connection *c, const char *method,
                            const char *path, const struct req *rq, struct answer a,
                            const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    }
    return queue(d, c, method, path, rq, &a, r);
}

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    static const char *const types[][2] = {
        {".ts", "video/mp2t"},         {".m3u8", "application/vnd.apple.mpegurl"},
        {".json", "application/json"}, {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript"},
    };
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(dot, types[i][0]))
            return types[i][1];
    return "application/octet-stream";
}

/* A regular file, served whole. */
static enum MHD_Result file(struct cdnd *d, struct MHD_Connection *c, const char *method,
                            const char *path, const struct req *rq, struct answer a,
                            const char *fspath, const char *cache)
{
    int fd = open(fspath, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        a.status = MHD_HTTP_NOT_FOUND;
        a.reason = "not_found";
        return text(d, c, method, path, rq, a, "not found\n");
    }
    struct MHD_Response *r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(fspath));
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
    return queue(d, c, method, path, rq, &a, r);
}

/* A body held by a fault: the first bytes at once, the rest after
 * release_ms (INT64_MAX: never). */
struct held {
    int fd;
    int64_t release_ms;
    const atomic_bool *stopping;
};

static ssize_t held_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct held *h = cls;
    bool first = pos < HELD_FIRST_BYTES;
    while (!first && now_ms() < h->release_ms && !atomic_load(h->stopping)) {
        struct timespec step = {0, 50 * 1000000L};
        nanosleep(&step, NULL);
    }
    if (!first && now_ms() < h->release_ms) /* cdnd stops: the body is never completed */
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t want = first && max > HELD_FIRST_BYTES - pos ? HELD_FIRST_BYTES - (size_t)pos : max;
    ssize_t got = pread(h->fd, buf, want, (off_t)pos);
    return got <= 0 ? MHD_CONTENT_READER_END_WITH_ERROR : got;
}

/* MHD's free callback of a held body (and file_held's on failure). */
static void held_free(void *cls)
{
    if (!cls)
        return;
    close(((struct held *)cls)->fd);
    free(cls);
}

static enum MHD_Result file_held(struct cdnd *d, struct MHD_Connection *c, const char *method,
                                 const char *path, const struct req *rq, struct answer a,
                                 const char *fspath, int64_t release_ms)
{
    struct held *h = malloc(sizeof *h);
    struct stat st;
    int fd = open(fspath, O_RDONLY | O_CLOEXEC);
    if (!h || fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size <= HELD_FIRST_BYTES) {
        free(h);
        if (fd >= 0)
            close(fd);
        return MHD_NO;
    }
    *h = (struct held){fd, release_ms, &d->stopping};
    struct MHD_Response *r =
        MHD_create_response_from_callback((uint64_t)st.st_size, 64 * 1024, held_read, h, held_free);
    if (!r) {
        held_free(h);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(fspath));
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    return queue(d, c, method, path, rq, &a, r);
}

/* ---- routes ---------------------------------------------------------------------- */

/* root/rel when it resolves to a regular file inside root. */
static bool inside_root(const struct cdnd *d, const char *rel, char *out)
{
    char joined[PATH_MAX];
    while (*rel == '/')
        rel++;
    if (!d->root[0] || !*rel || strstr(rel, "..") ||
        snprintf(joined, sizeof joined, "%s/%s", d->root, rel) >= (int)sizeof joined ||
        !realpath(joined, out))
        return false;
    size_t rl = strlen(d->root);
    return !strncmp(out, d->root, rl) && out[rl] == '/';
}

/* A live segment under a --fault prefix. */
static enum MHD_Result segment_fault(struct cdnd *d, struct MHD_Connection *c, const char *method,
                                     const char *path, const struct req *rq, struct answer a,
                                     const char *fspath, struct fault *fault)
{
    long nth = atomic_fetch_add(&fault->count, 1) + 1;
    if (fault->kind == FAULT_404) {
        a.status = MHD_HTTP_NOT_FOUND;
        a.reason = "fault_404";
        return text(d, c, method, path, rq, a, "not found (fault)\n");
    }
    if (fault->kind == FAULT_HOLD) {
        a.reason = "held";
        return file_held(d, c, method, path, rq, a, fspath, INT64_MAX);
    }
    if (nth != fault->k)
        return file(d, c, method, path, rq, a, fspath, "max-age=60");
    a.reason = fault->reason;
    return file_held(d, c, method, path, rq, a, fspath, now_ms() + fault->ms);
}

static enum MHD_Result route_live(struct cdnd *d, struct MHD_Connection *c, const char *method,
                                  const char *path, const struct req *rq, struct answer a,
                                  const char *rest, struct fault *fault)
{
    int64_t now = now_ms();
    if (!strcmp(rest, "live.m3u8")) {
        char *pl = malloc(PLAYLIST_CAP);
        size_t n = pl ? cdn_live_playlist(&d->live, now, pl, PLAYLIST_CAP) : 0;
        if (!n) {
            free(pl);
            a.status = MHD_HTTP_NOT_FOUND;
            a.reason = "live_not_started";
            return text(d, c, method, path, rq, a, "live window not started\n");
        }
        struct MHD_Response *r = MHD_create_response_from_buffer(n, pl, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(pl);
            return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/vnd.apple.mpegurl");
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        return queue(d, c, method, path, rq, &a, r);
    }
    char *end = NULL;
    errno = 0;
    long long seq = strtoll(rest, &end, 10);
    const char *f = (end != rest && !errno && !strcmp(end, ".ts"))
                        ? cdn_live_segment(&d->live, seq, now)
                        : NULL;
    if (!f) {
        a.status = MHD_HTTP_NOT_FOUND;
        a.reason = "not_in_window";
        return text(d, c, method, path, rq, a, "not in the live window\n");
    }
    return fault ? segment_fault(d, c, method, path, rq, a, f, fault)
                 : file(d, c, method, path, rq, a, f, "max-age=60");
}

static enum MHD_Result route_control(struct cdnd *d, struct MHD_Connection *c, const char *method,
                                     const char *path, const struct req *rq)
{
    struct answer a = {MHD_HTTP_OK, "control", CDN_VIA_NONE, true};
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "status");
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : -1;
    if (strcmp(path, "/_cdn/answer") || !s || *end || (v != 0 && (v < 200 || v > 599))) {
        a.status = MHD_HTTP_BAD_REQUEST;
        return text(d, c, method, path, rq, a, "GET /_cdn/answer?status=0|200..599\n");
    }
    atomic_store(&d->forced_status, (int)v);
    return text(d, c, method, path, rq, a, "ok\n");
}

static enum MHD_Result route_report(struct cdnd *d, struct MHD_Connection *c, const char *method,
                                    const char *path, const struct req *rq)
{
    struct answer a = {MHD_HTTP_NO_CONTENT, "report", CDN_VIA_NONE, false};
    json_t *j = rq->too_big || !d->report ? NULL : json_loadb(rq->body ? rq->body : "", rq->len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        a.status = MHD_HTTP_BAD_REQUEST;
        a.reason = "report_invalid";
        return text(d, c, method, path, rq, a, "a JSON object of at most 256 KiB expected\n");
    }
    pthread_mutex_lock(&d->lock);
    json_dumpf(j, d->report, JSON_COMPACT);
    fputc('\n', d->report);
    fflush(d->report);
    pthread_mutex_unlock(&d->lock);
    json_decref(j);
    return text(d, c, method, path, rq, a, "");
}

static const char *cookie_of(void *ctx, const char *name)
{
    return MHD_lookup_connection_value(ctx, MHD_COOKIE_KIND, name);
}

/* The fault whose prefix path is under (and the path without it), or NULL. */
static struct fault *fault_of(struct cdnd *d, const char *path, const char **rest)
{
    for (size_t i = 0; i < d->n_faults; i++) {
        size_t n = strlen(d->faults[i].prefix);
        if (!strncmp(path, d->faults[i].prefix, n) && path[n] == '/') {
            *rest = path + n;
            return &d->faults[i];
        }
    }
    return NULL;
}

static enum MHD_Result route_get(struct cdnd *d, struct MHD_Connection *c, const char *method,
                                 const char *path, const struct req *rq)
{
    struct answer a = {MHD_HTTP_OK, "ok", CDN_VIA_NONE, false};
    int forced = atomic_load(&d->forced_status);
    if (forced) {
        a.status = (unsigned)forced;
        a.reason = "forced";
        return text(d, c, method, path, rq, a, "answer forced by /_cdn/answer\n");
    }
    if (d->keys.n) {
        const char *q = strchr(rq->raw_uri, '?');
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        struct cdn_request r = {MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
                                path,
                                q ? q + 1 : NULL,
                                ci ? ci->client_addr : NULL,
                                now_ms() / 1000,
                                cookie_of,
                                c};
        struct cdn_auth_outcome o = cdn_auth_check(&d->keys, &r);
        a.via = o.via;
        if (o.result != CDN_AUTH_ALLOWED) {
            char body[64];
            snprintf(body, sizeof body, "%s\n", o.reason);
            a.status = MHD_HTTP_FORBIDDEN;
            a.reason = o.reason;
            return text(d, c, method, path, rq, a, body);
        }
    }
    const char *served = path; /* what is served: the path without a fault prefix */
    struct fault *fault = fault_of(d, path, &served);
    size_t pl = d->has_live ? strlen(d->live_prefix) : 0;
    if (pl && !strncmp(served, d->live_prefix, pl) && served[pl] == '/')
        return route_live(d, c, method, path, rq, a, served + pl + 1, fault);
    char fs[PATH_MAX];
    if (!inside_root(d, served, fs)) {
        a.status = MHD_HTTP_NOT_FOUND;
        a.reason = "not_found";
        return text(d, c, method, path, rq, a, "not found\n");
    }
    return file(d, c, method, path, rq, a, fs, "no-cache");
}

static enum MHD_Result route_options(struct cdnd *d, struct MHD_Connection *c, const char *path,
                                     const struct req *rq)
{
    struct answer a = {MHD_HTTP_NO_CONTENT, "preflight", CDN_VIA_NONE, false};
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Headers");
    MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS");
    MHD_add_response_header(r, "Access-Control-Allow-Headers", h ? h : "Range, Content-Type");
    MHD_add_response_header(r, "Access-Control-Max-Age", "600");
    return queue(d, c, "OPTIONS", path, rq, &a, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct cdnd *d = cls;
    struct req *rq = *req_cls;
    (void)version;
    if (!rq)
        return MHD_NO;
    if (!rq->seen) { /* headers only: wait for a body, if any */
        rq->seen = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->too_big && rq->len + *upload_size <= REPORT_MAX) {
            char *b = realloc(rq->body, rq->len + *upload_size + 1);
            if (!b)
                return MHD_NO;
            memcpy(b + rq->len, upload, *upload_size);
            rq->body = b;
            rq->len += *upload_size;
        } else {
            rq->too_big = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (!strcmp(method, "OPTIONS"))
        return route_options(d, c, url, rq);
    if (!strcmp(method, "POST") && !strcmp(url, "/report"))
        return route_report(d, c, method, url, rq);
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return text(d, c, method, url, rq,
                    (struct answer){MHD_HTTP_METHOD_NOT_ALLOWED, "method", CDN_VIA_NONE, false},
                    "GET, HEAD, OPTIONS, POST /report\n");
    if (!strncmp(url, "/_cdn/", 6))
        return route_control(d, c, method, url, rq);
    return route_get(d, c, method, url, rq);
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    struct req *rq = calloc(1, sizeof *rq);
    if (rq)
        rq->raw_uri = strdup(uri ? uri : "");
    if (rq && !rq->raw_uri) {
        free(rq);
        rq = NULL;
    }
    return rq;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct req *rq = *req_cls;
    if (rq) {
        free(rq->raw_uri);
        free(rq->body);
        free(rq);
    }
    *req_cls = NULL;
}

/* ---- start-up ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: " CDND " [--root DIR] [--live DIR] [--live-prefix /live] [--live-window N]\n"
            "       [--live-epoch-ms MS] [--public-key ID=PUB.pem]... [--cors-origin ORIGIN]\n"
            "       [--fault PREFIX=404|hold|stall:K:MS]...\n"
            "       [--log FILE] [--report FILE] [--port N] [--port-file FILE] [--bind 127.0.0.1]\n");
}

/* PREFIX=404|hold|stall:K:MS (PREFIX: /name, no further slash). 0 or -1. */
static int parse_fault(struct cdnd *d, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (d->n_faults == FAULT_MAX || !eq || arg[0] != '/' || eq - arg < 2 ||
        (size_t)(eq - arg) >= sizeof d->faults[0].prefix || memchr(arg + 1, '/', (size_t)(eq - arg - 1)))
        return -1;
    struct fault *f = &d->faults[d->n_faults];
    memcpy(f->prefix, arg, (size_t)(eq - arg));
    f->prefix[eq - arg] = '\0';
    const char *kind = eq + 1;
    char tail;
    if (!strcmp(kind, "404"))
        f->kind = FAULT_404;
    else if (!strcmp(kind, "hold"))
        f->kind = FAULT_HOLD;
    else if (sscanf(kind, "stall:%ld:%" SCNd64 "%c", &f->k, &f->ms, &tail) == 2 && f->k > 0 &&
             f->ms > 0 && f->ms <= 600000) {
        f->kind = FAULT_STALL;
        snprintf(f->reason, sizeof f->reason, "held_ms_%" PRId64, f->ms);
    } else {
        return -1;
    }
    d->n_faults++;
    return 0;
}

static int parse_args(int argc, char **argv, struct cdnd *d)
{
    static const struct option longopts[] = {
        {"root", required_argument, NULL, 'r'},        {"live", required_argument, NULL, 'L'},
        {"live-prefix", required_argument, NULL, 'P'}, {"live-window", required_argument, NULL, 'W'},
        {"live-epoch-ms", required_argument, NULL, 'E'}, {"public-key", required_argument, NULL, 'k'},
        {"cors-origin", required_argument, NULL, 'o'}, {"log", required_argument, NULL, 'l'},
        {"report", required_argument, NULL, 'R'},      {"port", required_argument, NULL, 'p'},
        {"port-file", required_argument, NULL, 'f'},   {"bind", required_argument, NULL, 'b'},
        {"fault", required_argument, NULL, 'F'},       {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *root = NULL;
    char err[512];
    int ch;
    d->bind = "127.0.0.1";
    d->cors_origin = "*";
    d->live_prefix = "/live";
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (ch) {
        case 'r': root = optarg; break;
        case 'L': d->live_dir = optarg; break;
        case 'P': d->live_prefix = optarg; break;
        case 'W': d->window = (unsigned)strtoul(optarg, &end, 10); break;
        case 'E': d->epoch_ms = strtoll(optarg, &end, 10); break;
        case 'k':
            if (cdn_auth_add_key(&d->keys, optarg, err, sizeof err) != 0) {
                fprintf(stderr, CDND ": %s\n", err);
                return -1;
            }
            break;
        case 'F':
            if (parse_fault(d, optarg) != 0) {
                fprintf(stderr, CDND ": --fault %s: PREFIX=404|hold|stall:K:MS expected\n", optarg);
                return -1;
            }
            break;
        case 'o': d->cors_origin = optarg; break;
        case 'l': d->log_path = optarg; break;
        case 'R': d->report_path = optarg; break;
        case 'p': d->port = (unsigned)strtoul(optarg, &end, 10); break;
        case 'f': d->port_file = optarg; break;
        case 'b': d->bind = optarg; break;
        default: return -1;
        }
        if (end && *end)
            return -1;
    }
    if (optind != argc || d->port > 65535 || d->live_prefix[0] != '/' || d->window > 1000 ||
        (root && !realpath(root, d->root)))
        return -1;
    return 0;
}

static int open_outputs(struct cdnd *d)
{
    char err[512];
    if (d->live_dir) {
        if (!d->epoch_ms) /* a full window at start */
            d->epoch_ms = now_ms() - (int64_t)(d->window ? d->window : 6) * 2000;
        if (cdn_live_load(&d->live, d->live_dir, d->window, d->epoch_ms, err, sizeof err) != 0) {
            fprintf(stderr, CDND ": --live %s\n", err);
            return -1;
        }
        d->has_live = true;
    }
    if (d->log_path && !(d->log = fopen(d->log_path, "a"))) {
        fprintf(stderr, CDND ": --log %s: %s\n", d->log_path, strerror(errno));
        return -1;
    }
    if (d->report_path && !(d->report = fopen(d->report_path, "a"))) {
        fprintf(stderr, CDND ": --report %s: %s\n", d->report_path, strerror(errno));
        return -1;
    }
    return 0;
}


int main(int argc, char **argv)
{
    static struct cdnd d; /* large (live window table): not on the stack */
    pthread_mutex_init(&d.lock, NULL);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (parse_args(argc, argv, &d) != 0 || inet_pton(AF_INET, d.bind, &sa.sin_addr) != 1 ||
        (ntohl(sa.sin_addr.s_addr) >> 24) != 127) {
        usage();
        return 2;
    }
    if (open_outputs(&d) != 0)
        return 2;
    sa.sin_port = htons((uint16_t)d.port);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *m = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO, 0, NULL,
        NULL, on_request, &d, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        NULL, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = m ? MHD_get_daemon_info(m, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    unsigned port = info ? info->port : 0;
    if (!port || (d.port_file && portfile_write(d.port_file, port) != 0)) {
        fprintf(stderr, CDND ": cannot listen on %s:%u or publish the port\n", d.bind, d.port);
        if (m)
            MHD_stop_daemon(m);
        return 1;
    }
    fprintf(stderr, CDND ": http://%s:%u/%s%s\n", d.bind, port, d.has_live ? " live at " : "",
            d.has_live ? d.live_prefix : "");
    int sig = 0;
    sigwait(&stop, &sig);
    atomic_store(&d.stopping, true); /* held bodies end, so their threads can be joined */
    MHD_stop_daemon(m);
    if (d.port_file)
        unlink(d.port_file);
    if (d.log)
        fclose(d.log);
    if (d.report)
        fclose(d.report);
    cdn_auth_free(&d.keys);
    return 0;
}
