/* serve.c - the HTTP transport of `stepctl serve` (see serve.h).
 *
 * libmicrohttpd runs a pool of threads with epoll (or whatever MHD_USE_AUTO
 * picks) and suspend/resume: a handler that must wait for the group commit
 * suspends its connection, the writer resumes it after the COMMIT, and the
 * same handler chain answers.  Bodies are bounded (SRV_MAX_BODY): a larger
 * one is drained without being kept and answered 400.  At SIGTERM the
 * listening socket closes, new allocations get 503, requests already in
 * flight finish, then the daemon and the writer stop.
 */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "cliutil.h"
#include "dlv.h"
#include "evidence_text.h"
#include "serve_access.h"
#include "serve_auth.h"
#include "serve_deadline.h"

/* Every table of routes the service answers; another set of endpoints adds
 * its table here. */
static const struct srv_route_table *const srv_route_tables[] = {
    &srv_admission_table, &srv_delivery_table, &srv_reports_table};
#define N_TABLES (sizeof srv_route_tables / sizeof srv_route_tables[0])

struct srv_request {
    struct srv *srv;
    struct MHD_Connection *conn;
    const struct srv_route *route; /* NULL: no route matched */
    size_t route_index;            /* for the latency histogram */
    const char *method;            /* libmicrohttpd's, valid until the request ends */
    char allow[64];                /* methods of the routes with this path (405 vs 404) */
    char param[SRV_MAX_PARAMS][AREQ_ID_MAX + 1];
    struct timespec t0;
    char body[SRV_MAX_BODY + 1];
    size_t len;
    bool too_big, answered;
    srv_handler on_resume; /* set while deferred */
    void *user;
    void (*user_free)(void *);
};

/* ---- routing ------------------------------------------------------------ */

static bool param_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == ':' || c == '-';
}

/* Does url match pattern?  Each "{}" takes one segment into the next param. */
static bool match(const char *pattern, const char *url, char param[][AREQ_ID_MAX + 1])
{
    size_t k = 0;
    while (*pattern && *url) {
        if (pattern[0] == '{' && pattern[1] == '}') {
            size_t n = 0;
            while (url[n] && url[n] != '/' && param_char(url[n]))
                n++;
            if (n == 0 || n > AREQ_ID_MAX || k == SRV_MAX_PARAMS || (url[n] && url[n] != '/'))
                return false;
            if ((n == 1 && url[0] == '.') || (n == 2 && url[0] == '.' && url[1] == '.'))
                return false; /* a dot-segment names no allocation, path or rendition */
            memcpy(param[k], url, n);
            param[k++][n] = '\0';
            url += n;
            pattern += 2;
        } else if (*pattern++ != *url++) {
            return false;
        }
    }
    return !*pattern && !*url;
}

/* Adds method to the Allow list of rq (once). */
static void allow(struct srv_request *rq, const char *method)
{
    size_t used = strlen(rq->allow);
    if (!strstr(rq->allow, method) && used + strlen(method) + 3 < sizeof rq->allow)
        snprintf(rq->allow + used, sizeof rq->allow - used, "%s%s", used ? ", " : "", method);
}

/* HEAD is answered by the GET route: the same status and headers, and
 * libmicrohttpd sends no body (RFC 9110 9.3.2). */
static bool method_matches(const char *route_method, const char *method)
{
    return !strcmp(route_method, method) ||
           (!strcmp(method, MHD_HTTP_METHOD_HEAD) && !strcmp(route_method, MHD_HTTP_METHOD_GET));
}

static bool admin_route(const struct srv_route *r);

/* admin: the request came to the --admin-listen address. */
static void route(struct srv_request *rq, const char *method, const char *url, bool admin)
{
    size_t index = 0;
    for (size_t t = 0; t < N_TABLES; t++)
        for (size_t i = 0; i < srv_route_tables[t]->n; i++, index++) {
            const struct srv_route *r = &srv_route_tables[t]->routes[i];
            if ((admin && !admin_route(r)) || !match(r->pattern, url, rq->param))
                continue;
            allow(rq, r->method);
            if (!strcmp(r->method, MHD_HTTP_METHOD_GET))
                allow(rq, MHD_HTTP_METHOD_HEAD);
            if (method_matches(r->method, method)) {
                rq->route = r;
                rq->route_index = index;
                return;
            }
        }
}

/* The route names in histogram order. */
static size_t route_names(const char **names, size_t max)
{
    size_t n = 0;
    for (size_t t = 0; t < N_TABLES; t++)
        for (size_t i = 0; i < srv_route_tables[t]->n && n < max; i++)
            names[n++] = srv_route_tables[t]->routes[i].name;
    return n;
}

/* ---- for handlers -------------------------------------------------------- */

const char *srv_param(const struct srv_request *rq)
{
    return rq->param[0];
}

const char *srv_param_at(const struct srv_request *rq, size_t i)
{
    return i < SRV_MAX_PARAMS ? rq->param[i] : "";
}

const char *srv_body(const struct srv_request *rq, size_t *len, bool *too_big)
{
    *len = rq->len;
    *too_big = rq->too_big;
    return rq->body;
}

const char *srv_query_arg(const struct srv_request *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *srv_header(const struct srv_request *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

double srv_elapsed(const struct srv_request *rq)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - rq->t0.tv_sec) + (double)(t.tv_nsec - rq->t0.tv_nsec) / 1e9;
}

/* CORS (docs/security.md#cors): only a page of a --cors-origin may read an
 * answer.  Without the option no CORS header is sent at all: a browser
 * keeps every answer from every other origin's page. */
static void cors(struct MHD_Response *resp, const struct srv_request *rq)
{
    const struct srv_config *c = rq->srv->cfg;
    if (!c->n_cors)
        return;
    const char *origin = srv_header(rq, "Origin");
    const char *allow = sauth_cors_allow(c, origin);
    bool star = allow && !strcmp(allow, "*");
    if (!star) /* the answer's headers depend on Origin: no cache may mix them */
        MHD_add_response_header(resp, "Vary", "Origin");
    if (!allow)
        return;
    /* the origin as the browser sent it: it equals a configured one */
    MHD_add_response_header(resp, "Access-Control-Allow-Origin", star ? "*" : origin);
    MHD_add_response_header(resp, "Access-Control-Expose-Headers", "Retry-After");
    if (!star) /* one named origin: it may send credentials (the CDN's cookies) */
        MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
}

/* A browser's preflight (OPTIONS) before a request a page may not send
 * unasked (POST application/json, an Authorization header): 204, and what
 * may be sent only for an allowed origin. */
static enum MHD_Result answer_preflight(struct srv_request *rq)
{
    static const char *const allowed[] = {
        "Access-Control-Allow-Methods", "GET, POST, OPTIONS", "Access-Control-Allow-Headers",
        "Authorization, Content-Type", "Access-Control-Max-Age", "600", NULL};
    bool ok = sauth_cors_allow(rq->srv->cfg, srv_header(rq, "Origin")) != NULL;
    return srv_respond_headers(rq, MHD_HTTP_NO_CONTENT, NULL, "", 0, ok ? allowed : NULL);
}

/* The peer's numeric address, "-" when unknown. */
static void client_text(struct MHD_Connection *conn, char *out, size_t cap)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    snprintf(out, cap, "-");
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)cap);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)cap);
}

/* One answer into the metrics and the access log. */
static void account(struct srv_request *rq, unsigned status, size_t len)
{
    struct srv *s = rq->srv;
    double took = srv_elapsed(rq);
    bool preflight = !rq->route && !strcmp(rq->method, MHD_HTTP_METHOD_OPTIONS);
    size_t label = rq->route      ? rq->route_index
                   : preflight ? SMET_ROUTE_PREFLIGHT
                               : SMET_ROUTE_UNMATCHED;
    smet_latency(s->metrics, rq->route ? rq->route_index : SMET_MAX_ROUTES, took);
    smet_request(s->metrics, label, status);
    if (!s->access)
        return;
    char client[INET6_ADDRSTRLEN];
    client_text(rq->conn, client, sizeof client);
    struct sacc_entry e = {.time_ms = cli_now_ms(),
                           .method = rq->method,
                           .route = rq->route ? rq->route->name
                                    : preflight ? "preflight"
                                                : "unmatched",
                           .status = status,
                           .bytes = len,
                           .duration_s = took,
                           .client = client};
    sacc_write(s->access, &e);
}

enum MHD_Result srv_respond(struct srv_request *rq, unsigned status, const char *content_type,
                            const char *body, size_t len, const char *retry_after)
{
    const char *headers[3] = {retry_after ? MHD_HTTP_HEADER_RETRY_AFTER : NULL, retry_after,
                              NULL};
    return srv_respond_headers(rq, status, content_type, body, len, headers);
}

enum MHD_Result srv_respond_headers(struct srv_request *rq, unsigned status,
                                    const char *content_type, const char *body, size_t len,
                                    const char *const *headers)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    cors(resp, rq);
    for (size_t i = 0; headers && headers[i]; i += 2)
        MHD_add_response_header(resp, headers[i], headers[i + 1]);
    pthread_mutex_lock(&rq->srv->mu);
    bool draining = rq->srv->draining;
    pthread_mutex_unlock(&rq->srv->mu);
    if (draining) /* keep-alive clients go elsewhere: the listening socket is closed */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rq->allow);
    enum MHD_Result r = MHD_queue_response(rq->conn, status, resp);
    MHD_destroy_response(resp);
    rq->answered = true;
    account(rq, status, len);
    return r;
}

enum MHD_Result srv_respond_json(struct srv_request *rq, unsigned status, json_t *o)
{
    char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!t)
        return MHD_NO;
    enum MHD_Result r = srv_respond(rq, status, "application/json", t, strlen(t), NULL);
    free(t);
    return r;
}

void srv_defer(struct srv_request *rq, srv_handler on_resume)
{
    rq->on_resume = on_resume;
    /* Suspended before the job is handed over, so the resume can never
     * come first. */
    MHD_suspend_connection(rq->conn);
}

void srv_resume(struct srv_request *rq)
{
    MHD_resume_connection(rq->conn);
}

void srv_set_user(struct srv_request *rq, void *p, void (*free_fn)(void *))
{
    rq->user = p;
    rq->user_free = free_fn;
}

void *srv_user(const struct srv_request *rq)
{
    return rq->user;
}

/* ---- the request life cycle --------------------------------------------- */

static enum MHD_Result error_json(struct srv_request *rq, unsigned status, const char *code,
                                  const char *detail)
{
    return srv_respond_json(rq, status, json_pack("{s:s,s:s}", "error", code, "detail", detail));
}

/* Did conn arrive on the --admin-listen address? */
static bool on_admin_listener(const struct srv *s, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        s->admin_daemon ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON) : NULL;
    return ci && ci->daemon == s->admin_daemon;
}

/* The admin listener answers the operators' endpoints and /healthz only:
 * a viewer's route there is 404, so the address can be kept off the
 * internet without moving anything a player needs onto it. */
static bool admin_route(const struct srv_route *r)
{
    return r->operator_only || !strcmp(r->name, "healthz");
}

static struct srv_request *begin(struct srv *s, struct MHD_Connection *conn, const char *method,
                                 const char *url)
{
    struct srv_request *rq = calloc(1, sizeof *rq);
    if (!rq)
        return NULL;
    rq->srv = s;
    rq->conn = conn;
    rq->method = method;
    clock_gettime(CLOCK_MONOTONIC, &rq->t0);
    route(rq, method, url, on_admin_listener(s, conn));
    pthread_mutex_lock(&s->mu);
    s->active++;
    pthread_mutex_unlock(&s->mu);
    return rq;
}

/* A declared body larger than the limit is refused before it is read. */
static bool declared_too_big(struct MHD_Connection *conn)
{
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (!cl)
        return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(cl, &end, 10);
    return errno || *end || n > SRV_MAX_BODY;
}

/* How a request's body is framed, counted over every header line (a
 * repeated header is kept line by line). */
struct framing {
    unsigned content_length, transfer_encoding;
    bool bad_length; /* a Content-Length that is not 1*DIGIT */
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    struct framing *f = cls;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        f->content_length++;
        f->bad_length |= !value || !value[0] || strspn(value, "0123456789") != strlen(value);
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->transfer_encoding++;
    }
    return MHD_YES;
}

/* RFC 9112 6.3: a message with Transfer-Encoding and Content-Length, or
 * with more than one Content-Length, cannot be framed unambiguously.
 * libmicrohttpd 0.9.75 frames it by the first Content-Length, and the rest
 * of the body ran as a second request (it stored an allocation): such a
 * request is answered 400 and its connection closed, before any of its
 * body is read. */
static bool ambiguous_framing(struct MHD_Connection *conn)
{
    struct framing f = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &f);
    return f.content_length > 1 || (f.content_length && f.transfer_encoding) ||
           f.transfer_encoding > 1 || f.bad_length;
}

static enum MHD_Result refuse_framing(struct srv_request *rq)
{
    static const char *const close_it[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
    static const char body[] =
        "{\"error\":\"bad_request\",\"detail\":\"the message framing is ambiguous: "
        "Content-Length twice, not a number, or with Transfer-Encoding (RFC 9112 6.3)\"}";
    rq->too_big = true; /* whatever body follows is drained, never kept */
    return srv_respond_headers(rq, MHD_HTTP_BAD_REQUEST, "application/json", body,
                               sizeof body - 1, close_it);
}

/* The deadline entry of a connection (on_connection), or NULL. */
static struct sdl_conn *conn_deadline(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Every accepted connection gets a deadline (serve_deadline.h).
 * libmicrohttpd notifies CLOSED before it closes the socket, so the
 * watcher never shuts down a descriptor number already reused. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct srv *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? sdl_open(s->deadline, ci->connect_fd) : NULL;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        sdl_close(s->deadline, *socket_context);
        *socket_context = NULL;
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    struct srv *s = cls;
    struct srv_request *rq = *con_cls;
    if (!rq) {
        if (!(rq = begin(s, conn, method, url)))
            return MHD_NO;
        *con_cls = rq;
        if (ambiguous_framing(conn))
            return refuse_framing(rq);
        /* A body declared too large is answered before it is read: by the
         * route's handler (it sees too_big), else 404 / 405 below. */
        if (!declared_too_big(conn))
            return MHD_YES;
        rq->too_big = true;
    }
    if (*upload_data_size) {
        if (!rq->too_big && rq->len + *upload_data_size <= SRV_MAX_BODY) {
            memcpy(rq->body + rq->len, upload_data, *upload_data_size);
            rq->len += *upload_data_size;
        } else {
            rq->too_big = true; /* drained, never kept */
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!rq->too_big) /* the whole request is here: the service works now, not the client */
        sdl_disarm(s->deadline, conn_deadline(conn));
    if (rq->answered)
        return MHD_YES;
    rq->body[rq->len] = '\0';
    if (rq->on_resume) {
        srv_handler h = rq->on_resume;
        rq->on_resume = NULL;
        return h(s, rq);
    }
    if (!strcmp(method, MHD_HTTP_METHOD_OPTIONS))
        return answer_preflight(rq);
    if (!rq->route)
        return rq->allow[0]
                   ? error_json(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
                                "this path does not take this method")
                   : error_json(rq, MHD_HTTP_NOT_FOUND, "not_found", "no such endpoint");
    if (rq->route->operator_only && !sauth_operator_ok(s->cfg, srv_header(rq, "Authorization"))) {
        /* the same answer for no token, a wrong one, and none configured */
        static const char *const challenge[] = {"WWW-Authenticate", "Bearer", NULL};
        static const char body[] = "{\"error\":\"unauthorized\",\"detail\":\"an operator "
                                   "endpoint: Authorization: Bearer and the --admin-token-file "
                                   "token\"}";
        return srv_respond_headers(rq, MHD_HTTP_UNAUTHORIZED, "application/json", body,
                                   sizeof body - 1, challenge);
    }
    return rq->route->handle(s, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct srv *s = cls;
    struct srv_request *rq = *con_cls;
    sdl_arm(s->deadline, conn_deadline(conn)); /* the next request's time starts */
    if (!rq)
        return;
    if (rq->user_free)
        rq->user_free(rq->user);
    free(rq);
    *con_cls = NULL;
    pthread_mutex_lock(&s->mu);
    s->active--;
    pthread_mutex_unlock(&s->mu);
}

/* ---- start, wait, drain --------------------------------------------------- */

static int write_port_file(const char *path, unsigned port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

/* The listening socket, made here rather than by libmicrohttpd so that the
 * port (when 0 was asked) is known before the first allocation: every
 * playback_url carries it.  The fd, or -1. */
static int listen_on(const struct sockaddr_storage *addr, socklen_t addr_len, unsigned *port)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;
    struct sockaddr_storage got;
    socklen_t len = sizeof got;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, (const struct sockaddr *)addr, addr_len) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&got, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                            : ((struct sockaddr_in *)&got)->sin_port);
    return fd;
}

/* --public-url, else http://ADDR:PORT (a wildcard address as loopback). */
static void base_url(const struct srv_config *c, unsigned port, char *out, size_t cap)
{
    if (c->public_url) {
        snprintf(out, cap, "%s", c->public_url);
        size_t n = strlen(out);
        if (n && out[n - 1] == '/')
            out[n - 1] = '\0';
        return;
    }
    char host[INET6_ADDRSTRLEN] = "127.0.0.1";
    if (c->addr.ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)&c->addr)->sin6_addr;
        if (!IN6_IS_ADDR_UNSPECIFIED(a))
            inet_ntop(AF_INET6, a, host, sizeof host);
        else
            snprintf(host, sizeof host, "::1");
        snprintf(out, cap, "http://[%s]:%u", host, port);
        return;
    }
    const struct in_addr *a = &((const struct sockaddr_in *)&c->addr)->sin_addr;
    if (a->s_addr != htonl(INADDR_ANY))
        inet_ntop(AF_INET, a, host, sizeof host);
    snprintf(out, cap, "http://%s:%u", host, port);
}

/* The path of a base URL ("https://h/svc" -> "/svc", "http://h:1" -> ""):
 * a reverse proxy serving the service below it strips it, and the
 * root-relative URIs of a multivariant playlist must carry it. */
static const char *url_path(const char *base)
{
    const char *sep = strstr(base, "://");
    const char *path = sep ? strchr(sep + 3, '/') : NULL;
    return path ? path : "";
}

/* A daemon on the listening socket fd (of address family family). */
static struct MHD_Daemon *start_daemon(struct srv *s, const struct srv_config *c, int fd,
                                       int family, unsigned threads)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    if (family == AF_INET6)
        flags |= MHD_USE_IPv6;
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET,
                            (MHD_socket)fd, MHD_OPTION_THREAD_POOL_SIZE,
                            threads, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)1000,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
}

/* --admin-listen: a second daemon on its own address, with the operators'
 * endpoints and /healthz only (admin_route).  0, or 66 after saying why. */
static int start_admin(struct srv *s, const struct srv_config *c)
{
    if (!c->admin_addr_len)
        return CLI_OK;
    char shown[2048];
    unsigned port = 0;
    int fd = listen_on(&c->admin_addr, c->admin_addr_len, &port);
    if (fd >= 0 && !(s->admin_daemon = start_daemon(s, c, fd, c->admin_addr.ss_family, 1)))
        close(fd);
    evidence_text_escape(c->admin_listen_text, false, shown, sizeof shown);
    if (!s->admin_daemon) {
        fprintf(stderr, "stepctl serve: cannot listen on --admin-listen %s\n", shown);
        return CLI_NOINPUT;
    }
    if (c->admin_port_file && write_port_file(c->admin_port_file, port) != 0) {
        fprintf(stderr, "stepctl serve: cannot write the --admin-port-file\n");
        return CLI_NOINPUT;
    }
    fprintf(stderr, "stepctl serve: operator endpoints and /healthz also on %s (port %u)\n", shown,
            port);
    return CLI_OK;
}

/* Stops the admin daemon (its requests are short: no drain). */
static void stop_admin(struct srv *s)
{
    if (s->admin_daemon)
        MHD_stop_daemon(s->admin_daemon);
    s->admin_daemon = NULL;
}

/* Waits until no request is in flight: every job handed to the writer is
 * always finished (its connection must be resumed before the daemon stops);
 * the other requests get at most drain_s seconds. */
static void drain(struct srv *s)
{
    struct timespec ten_ms = {0, 10000000};
    for (unsigned i = 0;; i++) {
        pthread_mutex_lock(&s->mu);
        size_t active = s->active;
        pthread_mutex_unlock(&s->mu);
        size_t pending = swr_pending(s->writer);
        if (pending == 0 && (active == 0 || i >= s->cfg->drain_s * 100u)) {
            if (active)
                fprintf(stderr, "stepctl serve: drain time-out (%u s): closing %zu requests\n",
                        s->cfg->drain_s, active);
            return;
        }
        nanosleep(&ten_ms, NULL);
    }
}

int srv_run(const struct srv_config *cfg, const sigset_t *stop)
{
    struct srv *s = calloc(1, sizeof *s);
    char err[1024], shown[2][2048]; /* messages name files: printed escaped */
    if (!s)
        return CLI_SOFTWARE;
    s->cfg = cfg;
    pthread_mutex_init(&s->mu, NULL);
    unsigned port = 0;
    int fd = listen_on(&cfg->addr, cfg->addr_len, &port);
    if (fd < 0) {
        fprintf(stderr, "stepctl serve: cannot listen on %s\n",
                evidence_text_escape(cfg->listen_text, false, shown[0], sizeof shown[0]));
        free(s);
        return CLI_NOINPUT;
    }
    base_url(cfg, port, s->base_url, sizeof s->base_url);
    struct alc_delivery delivery = {s->base_url, cfg->paths};
    if (cfg->access_log && !(s->access = sacc_open(cfg->access_log, err, sizeof err))) {
        fprintf(stderr, "stepctl serve: %s\n", evidence_text_escape(err, false, shown[0], sizeof shown[0]));
        close(fd);
        free(s);
        return CLI_NOINPUT;
    }
    s->metrics = smet_new();
    s->dlv = cfg->paths && s->metrics
                 ? dlv_new(cfg->paths, cfg->db_path, cfg->evidence_path, url_path(s->base_url))
                 : NULL;
    s->writer = s->metrics && (s->dlv || !cfg->paths)
                    ? swr_start(cfg->db_path, cfg->store_key, cfg->batch_max, cfg->paths ? &delivery : NULL, err,
                                sizeof err)
                    : NULL;
    if (!s->writer) {
        fprintf(stderr, "stepctl serve: %s\n",
                s->metrics && (s->dlv || !cfg->paths)
                    ? evidence_text_escape(err, false, shown[0], sizeof shown[0])
                    : "out of memory");
        dlv_free(s->dlv);
        smet_free(s->metrics);
        sacc_close(s->access);
        close(fd);
        free(s);
        return CLI_NOINPUT;
    }
    s->deadline = sdl_start(cfg->request_timeout_s * 1000u);
    s->daemon = s->deadline ? start_daemon(s, cfg, fd, cfg->addr.ss_family, cfg->threads) : NULL;
    int rc = CLI_OK;
    if (!s->daemon) {
        fprintf(stderr, "stepctl serve: cannot listen on %s\n",
                evidence_text_escape(cfg->listen_text, false, shown[0], sizeof shown[0]));
        close(fd);
        rc = CLI_NOINPUT;
    } else if ((rc = start_admin(s, cfg)) != CLI_OK) {
        /* said why */
    } else if (cfg->port_file && write_port_file(cfg->port_file, port) != 0) {
        fprintf(stderr, "stepctl serve: cannot write %s\n",
                evidence_text_escape(cfg->port_file, false, shown[0], sizeof shown[0]));
        rc = CLI_NOINPUT;
    } else {
        fprintf(stderr, "stepctl serve: listening on %s (port %u), %u threads, control.db %s\n",
                evidence_text_escape(cfg->listen_text, false, shown[0], sizeof shown[0]), port,
                cfg->threads, evidence_text_escape(cfg->db_path, false, shown[1], sizeof shown[1]));
        if (cfg->paths)
            fprintf(stderr, "stepctl serve: delivery of %zu paths, playback URLs under %s\n",
                    cfg->paths->n,
                    evidence_text_escape(s->base_url, false, shown[0], sizeof shown[0]));
        int sig = 0;
        /* SIGHUP (in *stop with --access-log): logrotate moved the file */
        while (sigwait(stop, &sig) == 0 && sig == SIGHUP)
            if (sacc_reopen(s->access) != 0)
                fprintf(stderr, "stepctl serve: cannot reopen the access log: %s\n",
                        evidence_text_errno(errno, err, sizeof err));
        fprintf(stderr, "stepctl serve: signal %d: draining\n", sig);
        pthread_mutex_lock(&s->mu);
        s->draining = true;
        pthread_mutex_unlock(&s->mu);
        MHD_socket ls = MHD_quiesce_daemon(s->daemon);
        drain(s);
        stop_admin(s); /* /healthz there said 503 during the drain */
        MHD_stop_daemon(s->daemon);
        s->daemon = NULL;
        if (ls != MHD_INVALID_SOCKET)
            close(ls);
    }
    stop_admin(s);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    sdl_stop(s->deadline); /* after the daemon: every connection is closed */
    swr_stop(s->writer); /* every submitted job finishes first */
    dlv_free(s->dlv);
    smet_free(s->metrics);
    sacc_close(s->access);
    pthread_mutex_destroy(&s->mu);
    free(s);
    if (rc == CLI_OK)
        fprintf(stderr, "stepctl serve: stopped\n");
    return rc;
}

size_t srv_route_names(const char **names, size_t max)
{
    return route_names(names, max);
}
