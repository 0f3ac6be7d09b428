/* exactav-testd: the project's small HTTP server, on 127.0.0.1 only.
 *
 *   exactav-testd --root DIR [--port N] [--port-file FILE] [--bind 127.0.0.1]
 *                 [--tls-cert PEM --tls-key PEM] [--verbose]
 *
 * Serves the files under DIR (GET/HEAD, single byte ranges) and a few
 * special routes that let the tests provoke every fetch outcome:
 *   /redirect/N/<path>  N 302 hops (query kept), then <path>
 *   /signed/<path>      403 unless Policy, Signature and Key-Pair-Id are in the query
 *   /status/<code>      answers <code> (200..599) with a short body
 *   /short/<path>       declares the full Content-Length, sends half, closes
 *   /slow/<path>        1 KiB every 200 ms (at most SLOW_MAX_SECONDS)
 *   /chunked/<path>     the file without Content-Length (chunked encoding)
 *   /close/<path>       the file without Content-Length, not chunked: the body
 *                       ends when the connection closes (HTTP/1.0 style)
 *   /tokenheaders/<path> the file, with credentials in X-Cache, Via and
 *                       Set-Cookie (to test that none is recorded)
 *   /norange/<path>     ignores Range: always 200 with the full body
 *   /nocors/<path>      the file without Access-Control-Allow-Origin
 *   /credential/<path>  403 unless "X-Token: tok-1" and the cookie sess=ck-1
 *   /originfail/<path>  403 to a request with an Origin header (a CDN whose WAF
 *                       refuses cross-origin requests), else the file
 *   /gzip/<path>        <path>.gz with Content-Encoding: gzip when the request's
 *                       Accept-Encoding names gzip, else <path> as it is
 *   /location?to=URL    one 302 to URL (any scheme: lets tests check refusals)
 *   /_live/, /_control/ with --live PLAYLIST [--live-window N] [--ll-parts N]:
 *                       a live HLS stream sliding over PLAYLIST's segments,
 *                       Low-Latency HLS with N parts per segment (testd_live.h)
 * Every file response carries ETag, Age, Via, X-Cache and Server so that
 * header recording can be tested; it is also the README's "CDN C", and every
 * response carries Access-Control-Allow-Origin: * so that an hls.js page on
 * another origin can play the preflight's playback_url.
 * With --port 0 the kernel picks a free port; the port number is written to
 * --port-file (atomically, by rename) once the server listens, and the file
 * is removed at exit.  SIGTERM or SIGINT stops the server (exit 0).
 * With --tls-cert/--tls-key it speaks HTTPS only (HTTP/1.1; GnuTLS in MHD).
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "portfile.h"
#include "testd_live.h"

#define TESTD_NAME "exactav-testd"
#define MAX_REDIRECT_HOPS 100
#define SLOW_CHUNK 1024
#define SLOW_DELAY_NS (200L * 1000 * 1000)
#define SLOW_MAX_SECONDS 60
#define SHORT_BLOCK (64 * 1024)
#define MAX_CONNECTIONS 256
#define CONNECTION_TIMEOUT_S 30

#define TLS_FILE_MAX (1024 * 1024)

struct testd_config {
    char root[PATH_MAX]; /* realpath of --root */
    const char *port_file;
    const char *bind;
    const char *tls_cert_file;
    const char *tls_key_file;
    char *tls_cert; /* PEM contents, loaded before start */
    char *tls_key;
    unsigned port;
    int verbose;
    const char *live_playlist;   /* --live */
    unsigned live_window;        /* --live-window */
    unsigned ll_parts;           /* --ll-parts: LL-HLS with N parts per segment, 0 = off */
    struct testd_live *live;
};

/* One file being streamed by a callback route (/short, /slow). */
enum stream_kind { STREAM_SHORT, STREAM_SLOW, STREAM_CHUNKED, STREAM_CLOSE };

struct stream {
    int fd;
    uint64_t limit; /* bytes sent before the route ends the response */
    enum stream_kind kind;
    time_t started;
};

/* ---- files ----------------------------------------------------------------- */

/* Opens root/rel if it is a regular file inside root (no traversal, also not
 * through symlinks).  Returns the fd or -1. */
static int open_inside(const struct testd_config *cfg, const char *rel, struct stat *st)
{
    char joined[PATH_MAX], real[PATH_MAX];
    while (*rel == '/')
        rel++;
    if (!*rel || strstr(rel, "..") ||
        snprintf(joined, sizeof joined, "%s/%s", cfg->root, rel) >= (int)sizeof joined)
        return -1;
    if (!realpath(joined, real))
        return -1;
    size_t rl = strlen(cfg->root);
    if (strncmp(real, cfg->root, rl) != 0 || real[rl] != '/')
        return -1;
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && strcmp(dot, ".ts") == 0)
        return "video/mp2t";
    if (dot && strcmp(dot, ".m3u8") == 0)
        return "application/vnd.apple.mpegurl";
    if (dot && strcmp(dot, ".json") == 0)
        return "application/json";
    return "application/octet-stream";
}

/* The headers a CDN edge would add; values are fixed so tests can compare. */
static void add_cdn_headers(struct MHD_Response *r, const char *path, const struct stat *st)
{
    char etag[64];
    snprintf(etag, sizeof etag, "\"%" PRIx64 "-%" PRIx64 "\"", (uint64_t)st->st_size,
             (uint64_t)st->st_mtime);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(path));
    MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
    MHD_add_response_header(r, MHD_HTTP_HEADER_AGE, "0");
    MHD_add_response_header(r, MHD_HTTP_HEADER_VIA, "1.1 " TESTD_NAME);
    MHD_add_response_header(r, "X-Cache", "Miss from " TESTD_NAME);
    MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
}

static enum MHD_Result queue_as(struct MHD_Connection *c, unsigned status, struct MHD_Response *r, bool cors)
{
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, TESTD_NAME "/1");
    /* a browser player on another origin (the README's playback_url) may read it */
    if (cors)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
    return queue_as(c, status, r, true);
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (r)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
    return queue(c, status, r);
}

/* ---- ranges ----------------------------------------------------------------- */

enum range_kind { RANGE_NONE = 0, RANGE_OK, RANGE_UNSATISFIABLE };

/* One "bytes=a-b", "bytes=a-" or "bytes=-n"; anything else is ignored (200). */
static enum range_kind parse_range(const char *h, uint64_t size, uint64_t *a, uint64_t *b)
{
    unsigned long long x = 0, y = 0;
    int n = 0;
    if (!h || strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
        return RANGE_NONE;
    h += 6;
    if (sscanf(h, "-%llu%n", &y, &n) == 1 && h[n] == '\0') {
        if (y == 0 || size == 0)
            return RANGE_UNSATISFIABLE;
        *a = y >= size ? 0 : size - y;
        *b = size - 1;
        return RANGE_OK;
    }
    if (sscanf(h, "%llu-%n", &x, &n) == 1 && h[n] == '\0')
        y = size ? size - 1 : 0;
    else if (!(sscanf(h, "%llu-%llu%n", &x, &y, &n) == 2 && h[n] == '\0' && x <= y))
        return RANGE_NONE;
    if (x >= size)
        return RANGE_UNSATISFIABLE;
    *a = x;
    *b = y >= size ? size - 1 : y;
    return RANGE_OK;
}

/* ---- routes ------------------------------------------------------------------- */

#define SERVE_RANGE 1           /* honour Range */
#define SERVE_NO_CORS 2         /* no Access-Control-Allow-Origin (a CDN that forgot it) */

static enum MHD_Result serve_file_as(struct MHD_Connection *c, const struct testd_config *cfg,
                                     const char *rel, int flags, const char *encoding)
{
    int honour_range = flags & SERVE_RANGE;
    struct stat st;
    int fd = open_inside(cfg, rel, &st);
    if (fd < 0)
        return queue_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
    uint64_t size = (uint64_t)st.st_size, a = 0, b = 0;
    const char *rh = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
    enum range_kind rk = honour_range ? parse_range(rh, size, &a, &b) : RANGE_NONE;
    if (rk == RANGE_UNSATISFIABLE) {
        close(fd);
        char cr[64];
        snprintf(cr, sizeof cr, "bytes */%" PRIu64, size);
        struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (r)
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
        return queue(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
    }
    uint64_t off = rk == RANGE_OK ? a : 0, len = rk == RANGE_OK ? b - a + 1 : size;
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, fd, off);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    add_cdn_headers(r, rel, &st);
    if (encoding)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
    if (rk == RANGE_OK) {
        char cr[96];
        snprintf(cr, sizeof cr, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, a, b, size);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
    }
    return queue_as(c, rk == RANGE_OK ? MHD_HTTP_PARTIAL_CONTENT : MHD_HTTP_OK, r, !(flags & SERVE_NO_CORS));
}

static enum MHD_Result serve_file(struct MHD_Connection *c, const struct testd_config *cfg,
                                  const char *rel, int honour_range)
{
    return serve_file_as(c, cfg, rel, honour_range, NULL);
}

/* /gzip/<path>: the gzip file beside <path> for a client that accepts it. */
static enum MHD_Result route_gzip(struct MHD_Connection *c, const struct testd_config *cfg, const char *rest)
{
    const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    char gz[PATH_MAX];
    if (!ae || !strstr(ae, "gzip") || snprintf(gz, sizeof gz, "%s.gz", rest) >= (int)sizeof gz)
        return serve_file(c, cfg, rest, 1);
    return serve_file_as(c, cfg, gz, 0, "gzip");
}

/* /redirect/N/<path>: 302 to /redirect/N-1/<path>, or to /<path> at N = 1. */
static enum MHD_Result route_redirect(struct MHD_Connection *c, const struct testd_config *cfg,
                                      const char *rest, const char *raw_uri)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(rest, &end, 10);
    if (errno || end == rest || *end != '/' || n < 0 || n > MAX_REDIRECT_HOPS)
        return queue_text(c, MHD_HTTP_BAD_REQUEST, "bad redirect count\n");
    if (n == 0)
        return serve_file(c, cfg, end + 1, 1);
    /* The next URL is built from the raw request so the query stays byte for byte. */
    const char *raw_path = strstr(raw_uri ? raw_uri : "", "/redirect/");
    const char *raw_rest = raw_path ? strchr(raw_path + strlen("/redirect/"), '/') : NULL;
    if (!raw_rest)
        return queue_text(c, MHD_HTTP_BAD_REQUEST, "bad redirect\n");
    char loc[8192];
    int w = n == 1 ? snprintf(loc, sizeof loc, "%s", raw_rest)
                   : snprintf(loc, sizeof loc, "/redirect/%ld%s", n - 1, raw_rest);
    if (w < 0 || w >= (int)sizeof loc)
        return queue_text(c, MHD_HTTP_URI_TOO_LONG, "too long\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (r)
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, loc);
    return queue(c, MHD_HTTP_FOUND, r);
}

/* /location?to=URL: a single 302 to whatever URL is given. */
static enum MHD_Result route_location(struct MHD_Connection *c)
{
    const char *to = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "to");
    if (!to || !*to || strlen(to) > 8000)
        return queue_text(c, MHD_HTTP_BAD_REQUEST, "missing to\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (r)
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, to);
    return queue(c, MHD_HTTP_FOUND, r);
}

static int has_arg(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    return v && *v;
}

static enum MHD_Result route_signed(struct MHD_Connection *c, const struct testd_config *cfg,
                                    const char *rest)
{
    if (!has_arg(c, "Policy") || !has_arg(c, "Signature") || !has_arg(c, "Key-Pair-Id"))
        return queue_text(c, MHD_HTTP_FORBIDDEN, "missing signature\n");
    return serve_file(c, cfg, rest, 1);
}

/* /credential/<path>: 403 unless the request carries the header
 * "X-Token: tok-1" and the cookie sess=ck-1 (a token-header or
 * signed-cookie CDN). */
static enum MHD_Result route_credential(struct MHD_Connection *c, const struct testd_config *cfg,
                                        const char *rest)
{
    const char *tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Token");
    const char *sess = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "sess");
    if (!tok || strcmp(tok, "tok-1") || !sess || strcmp(sess, "ck-1"))
        return queue_text(c, MHD_HTTP_FORBIDDEN, "missing credentials\n");
    return serve_file(c, cfg, rest, 1);
}

static enum MHD_Result route_status(struct MHD_Connection *c, const char *rest)
{
    char *end = NULL;
    long code = strtol(rest, &end, 10);
    if (end == rest || *end != '\0' || code < 200 || code > 599)
        return queue_text(c, MHD_HTTP_BAD_REQUEST, "bad status\n");
    char body[64];
    snprintf(body, sizeof body, "status %ld\n", code);
    return queue_text(c, (unsigned)code, body);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *s = cls;
    if (pos >= s->limit && (s->kind == STREAM_CHUNKED || s->kind == STREAM_CLOSE))
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (pos >= s->limit)
        return MHD_CONTENT_READER_END_WITH_ERROR; /* closes the connection early */
    if (s->kind == STREAM_SLOW) {
        if (time(NULL) - s->started > SLOW_MAX_SECONDS)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        struct timespec d = {0, SLOW_DELAY_NS};
        nanosleep(&d, NULL);
        if (max > SLOW_CHUNK)
            max = SLOW_CHUNK;
    }
    if (max > s->limit - pos)
        max = (size_t)(s->limit - pos);
    ssize_t n = pread(s->fd, buf, max, (off_t)pos);
    return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
    struct stream *s = cls;
    close(s->fd);
    free(s);
}

/* /short/, /slow/, /chunked/ and /close/: a callback response; the first two
 * declare the full size, /chunked/ declares none (chunked transfer encoding),
 * /close/ declares none and is not chunked: MHD's HTTP/1.0-only mode ends
 * the body by closing the connection. */
static enum MHD_Result route_stream(struct MHD_Connection *c, const struct testd_config *cfg,
                                    const char *rest, enum stream_kind kind)
{
    struct stat st;
    int fd = open_inside(cfg, rest, &st);
    if (fd < 0)
        return queue_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
    struct stream *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return MHD_NO;
    }
    uint64_t size = (uint64_t)st.st_size;
    *s = (struct stream){fd, kind == STREAM_SHORT ? size / 2 : size, kind, time(NULL)};
    bool unknown = kind == STREAM_CHUNKED || kind == STREAM_CLOSE;
    struct MHD_Response *r = MHD_create_response_from_callback(
        unknown ? MHD_SIZE_UNKNOWN : size,
        kind == STREAM_SLOW ? SLOW_CHUNK : SHORT_BLOCK, stream_read, s, stream_free);
    if (!r) {
        stream_free(s);
        return MHD_NO;
    }
    add_cdn_headers(r, rest, &st);
    if (kind == STREAM_CLOSE &&
        MHD_set_response_options(r, MHD_RF_HTTP_VERSION_1_0_ONLY, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    return queue(c, MHD_HTTP_OK, r);
}

/* /tokenheaders/<path>: the file, with header values that carry credentials. */
static enum MHD_Result route_token_headers(struct MHD_Connection *c, const struct testd_config *cfg,
                                           const char *rest)
{
    struct stat st;
    int fd = open_inside(cfg, rest, &st);
    if (fd < 0)
        return queue_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
    struct MHD_Response *r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    add_cdn_headers(r, rest, &st);
    MHD_del_response_header(r, "X-Cache", "Miss from " TESTD_NAME);
    MHD_del_response_header(r, MHD_HTTP_HEADER_VIA, "1.1 " TESTD_NAME);
    MHD_add_response_header(r, "X-Cache", "Hit; token=SECRETX, edge=e1");
    MHD_add_response_header(r, MHD_HTTP_HEADER_VIA, "1.1 http://u:SECRETP@edge.example/x?sig=SECRETS");
    MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, "session=SECRETC; HttpOnly");
    return queue(c, MHD_HTTP_OK, r);
}

static const char *after(const char *url, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(url, prefix, n) == 0 ? url + n : NULL;
}

static enum MHD_Result route(struct MHD_Connection *c, const struct testd_config *cfg,
                             const char *url, const char *raw_uri)
{
    const char *rest;
    if (cfg->live && testd_live_handles(url)) {
        unsigned status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        struct MHD_Response *r = testd_live_respond(cfg->live, c, url, &status);
        return queue(c, status, r);
    }
    if ((rest = after(url, "/redirect/")))
        return route_redirect(c, cfg, rest, raw_uri);
    if ((rest = after(url, "/signed/")))
        return route_signed(c, cfg, rest);
    if ((rest = after(url, "/status/")))
        return route_status(c, rest);
    if ((rest = after(url, "/short/")))
        return route_stream(c, cfg, rest, STREAM_SHORT);
    if ((rest = after(url, "/slow/")))
        return route_stream(c, cfg, rest, STREAM_SLOW);
    if ((rest = after(url, "/chunked/")))
        return route_stream(c, cfg, rest, STREAM_CHUNKED);
    if ((rest = after(url, "/close/")))
        return route_stream(c, cfg, rest, STREAM_CLOSE);
    if ((rest = after(url, "/tokenheaders/")))
        return route_token_headers(c, cfg, rest);
    if ((rest = after(url, "/norange/")))
        return serve_file(c, cfg, rest, 0);
    if ((rest = after(url, "/nocors/")))
        return serve_file_as(c, cfg, rest, SERVE_RANGE | SERVE_NO_CORS, NULL);
    if ((rest = after(url, "/credential/")))
        return route_credential(c, cfg, rest);
    if ((rest = after(url, "/originfail/")))
        return MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin")
                   ? queue_text(c, MHD_HTTP_FORBIDDEN, "cross-origin requests refused\n")
                   : serve_file(c, cfg, rest, 1);
    if ((rest = after(url, "/gzip/")))
        return route_gzip(c, cfg, rest);
    if (strcmp(url, "/location") == 0)
        return route_location(c);
    return serve_file(c, cfg, url, 1);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    const struct testd_config *cfg = cls;
    (void)version;
    (void)upload_data;
    if (*upload_data_size) { /* a request body is never used: drop it */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return queue_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
    if (cfg->verbose)
        fprintf(stderr, TESTD_NAME ": %s %s\n", method, url);
    return route(c, cfg, url, *req_cls);
}

/* The raw request URI (query included, not decoded) becomes the request's
 * context, so routes can forward the query byte for byte. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    return strdup(uri ? uri : "");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    free(*req_cls);
    *req_cls = NULL;
}

/* ---- start-up --------------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out, "usage: " TESTD_NAME " --root DIR [--port N] [--port-file FILE]"
                 " [--bind 127.0.0.1] [--tls-cert PEM --tls-key PEM] [--verbose]"
                 " [--live PLAYLIST [--live-window N] [--ll-parts N]]\n"
                 "The project's test HTTP server on 127.0.0.1 (docs/fetch.md lists its routes).\n"
                 "--live serves a live HLS stream sliding over PLAYLIST's segments at /_live/\n"
                 "(window: --live-window N segments, 1-100), controlled through /_control/.\n"
                 "--ll-parts N (1-16) makes it Low-Latency HLS: each segment also published as N\n"
                 "parts (/_live/P/part-K.J.ts), EXT-X-PART-INF, SERVER-CONTROL CAN-BLOCK-RELOAD=YES,\n"
                 "a PRELOAD-HINT, and blocking playlist reload (_HLS_msn, _HLS_part).\n"
                 "Exit: 0 stopped by SIGTERM/SIGINT or --help, 1 cannot listen, 2 usage.\n");
}

/* Returns 0 if the options are usable, 1 for --help. */
static int parse_args(int argc, char **argv, struct testd_config *cfg)
{
    static const struct option longopts[] = {{"root", required_argument, NULL, 'r'},
                                             {"port", required_argument, NULL, 'p'},
                                             {"port-file", required_argument, NULL, 'f'},
                                             {"bind", required_argument, NULL, 'b'},
                                             {"tls-cert", required_argument, NULL, 'c'},
                                             {"tls-key", required_argument, NULL, 'k'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"live", required_argument, NULL, 'L'},
                                             {"live-window", required_argument, NULL, 'W'},
                                             {"ll-parts", required_argument, NULL, 'P'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *root = NULL;
    int ch;
    cfg->bind = "127.0.0.1";
    while ((ch = getopt_long(argc, argv, "r:p:f:b:vh", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (ch) {
        case 'r': root = optarg; break;
        case 'p':
            cfg->port = (unsigned)strtoul(optarg, &end, 10);
            if (!*optarg || *end || cfg->port > 65535)
                return -1;
            break;
        case 'f': cfg->port_file = optarg; break;
        case 'b': cfg->bind = optarg; break;
        case 'c': cfg->tls_cert_file = optarg; break;
        case 'k': cfg->tls_key_file = optarg; break;
        case 'v': cfg->verbose = 1; break;
        case 'h': return 1;
        case 'L': cfg->live_playlist = optarg; break;
        case 'W':
            cfg->live_window = (unsigned)strtoul(optarg, &end, 10);
            if (!*optarg || *end || cfg->live_window < 1 || cfg->live_window > 100)
                return -1;
            break;
        case 'P':
            cfg->ll_parts = (unsigned)strtoul(optarg, &end, 10);
            if (!*optarg || *end || cfg->ll_parts < 1 || cfg->ll_parts > TESTD_LIVE_MAX_PARTS)
                return -1;
            break;
        default: return -1;
        }
    }
    if (!cfg->tls_cert_file != !cfg->tls_key_file)
        return -1; /* both or neither */
    if (!root || optind != argc || !realpath(root, cfg->root)) {
        if (root)
            fprintf(stderr, TESTD_NAME ": --root %s: %s\n", root, strerror(errno));
        return -1;
    }
    return 0;
}

/* Loopback only: the server is a test fixture and never faces a network. */
static int make_addr(const char *bind, unsigned port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, bind, &sa->sin_addr) != 1 || (ntohl(sa->sin_addr.s_addr) >> 24) != 127) {
        fprintf(stderr, TESTD_NAME ": --bind must be an IPv4 loopback address (127.x.x.x)\n");
        return -1;
    }
    return 0;
}


/* Reads a whole (small) PEM file into a NUL-terminated string. */
static char *read_small_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, TLS_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, TLS_FILE_MAX + 1, f) : 0;
    fclose(f);
    if (buf && (n == 0 || n > TLS_FILE_MAX)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int load_tls(struct testd_config *cfg)
{
    if (!cfg->tls_cert_file)
        return 0;
    cfg->tls_cert = read_small_file(cfg->tls_cert_file);
    cfg->tls_key = read_small_file(cfg->tls_key_file);
    if (cfg->tls_cert && cfg->tls_key)
        return 0;
    free(cfg->tls_cert);
    free(cfg->tls_key);
    cfg->tls_cert = cfg->tls_key = NULL;
    fprintf(stderr, TESTD_NAME ": cannot read --tls-cert/--tls-key\n");
    return -1;
}

static struct MHD_Daemon *start(struct testd_config *cfg, struct sockaddr_in *sa)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO;
    if (cfg->verbose)
        flags |= MHD_USE_ERROR_LOG;
    if (cfg->tls_cert)
        return MHD_start_daemon(
            flags | MHD_USE_TLS, (uint16_t)cfg->port, NULL, NULL, on_request, cfg,
            MHD_OPTION_HTTPS_MEM_CERT, cfg->tls_cert, MHD_OPTION_HTTPS_MEM_KEY, cfg->tls_key,
            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)sa, MHD_OPTION_CONNECTION_LIMIT,
            (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    return MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, cfg, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_URI_LOG_CALLBACK,
        on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
}

int main(int argc, char **argv)
{
    struct testd_config cfg;
    struct sockaddr_in sa;
    memset(&cfg, 0, sizeof cfg);
    int prc = parse_args(argc, argv, &cfg);
    if (prc == 1) {
        usage(stdout);
        return 0;
    }
    if (prc != 0 || make_addr(cfg.bind, cfg.port, &sa) != 0) {
        usage(stderr);
        return 2;
    }
    if (load_tls(&cfg) != 0)
        return 2;
    if (cfg.live_playlist) {
        char err[512];
        if (!(cfg.live = testd_live_new(cfg.live_playlist, cfg.root, cfg.live_window, cfg.ll_parts, err,
                                       sizeof err))) {
            fprintf(stderr, TESTD_NAME ": %s\n", err);
            return 2;
        }
    }
    /* Block the stop signals before any MHD thread exists, then wait for them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d = start(&cfg, &sa);
    if (!d) {
        fprintf(stderr, TESTD_NAME ": cannot listen on %s:%u\n", cfg.bind, cfg.port);
        free(cfg.tls_cert);
        free(cfg.tls_key);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : 0;
    if (port == 0 || (cfg.port_file && portfile_write(cfg.port_file, port) != 0)) {
        fprintf(stderr, TESTD_NAME ": cannot publish the port\n");
        MHD_stop_daemon(d);
        return 1;
    }
    fprintf(stderr, TESTD_NAME ": serving %s on %s://%s:%u/\n", cfg.root,
            cfg.tls_cert ? "https" : "http", cfg.bind, port);
    int sig = 0;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    if (cfg.port_file)
        unlink(cfg.port_file);
    free(cfg.tls_cert);
    free(cfg.tls_key);
    testd_live_free(cfg.live);
    return 0;
}
