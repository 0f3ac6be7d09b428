/* testd_live.c - the live simulation of exactav-testd (see testd_live.h). */
#include "testd_live.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME_MAX_LEN 32
#define LINE_MAX_LEN 1024
#define PLAYLIST_MAX_BYTES (256 * 1024)

struct source_segment {
    char file[PATH_MAX];         /* absolute path of the segment file */
    char extinf[32];             /* the duration as written */
    int64_t duration_ms;
};

/* What each path has been told to do. */
struct live_path {
    char name[NAME_MAX_LEN + 1];
    int64_t outage_from_ms, outage_until_ms;
    unsigned outage_status;
    bool tampered;
    int64_t tamper_seq;
    char tamper_file[PATH_MAX];
    int64_t freeze_from_ms, freeze_until_ms, freeze_edge;
    int64_t behind;
    uint64_t playlist_requests, segment_requests;   /* answered 200 */
};

struct testd_live {
    char root[PATH_MAX];
    struct source_segment *src;
    size_t n;
    int64_t cycle_ms;            /* sum of the source durations */
    int64_t target_duration;
    unsigned window;
    int64_t start_ms;            /* when segment window-1 was published */
    pthread_mutex_t mu;
    struct live_path paths[TESTD_LIVE_MAX_PATHS];
    size_t npaths;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the source playlist ---------------------------------------------------- */

static bool plain_name(const char *s)
{
    if (!*s || strlen(s) >= NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (; *s; s++)
        if (*s == '/' || *s == '?' || *s == '#' || (unsigned char)*s <= 0x20)
            return false;
    return true;
}

/* "2.000000" -> 2000 (ms, rounded down). */
static int64_t parse_duration_ms(const char *s)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || d <= 0 || d > 3600)
        return -1;
    return (int64_t)(d * 1000.0 + 0.5);
}

static int add_segment(struct testd_live *l, const char *dir, const char *uri, const char *extinf)
{
    if (l->n == TESTD_LIVE_MAX_SEGMENTS || !plain_name(uri))
        return -1;
    struct source_segment *s = &l->src[l->n];
    int64_t ms = parse_duration_ms(extinf);
    struct stat st;
    if (ms <= 0 || snprintf(s->file, sizeof s->file, "%s/%s", dir, uri) >= (int)sizeof s->file ||
        stat(s->file, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    snprintf(s->extinf, sizeof s->extinf, "%.*s", (int)strcspn(extinf, ","), extinf);
    s->duration_ms = ms;
    l->cycle_ms += ms;
    l->n++;
    return 0;
}

static int read_source(struct testd_live *l, const char *playlist, char *err, size_t errlen)
{
    char real[PATH_MAX];
    FILE *f = realpath(playlist, real) ? fopen(real, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "--live %s: %s", playlist, strerror(errno));
        return -1;
    }
    char *slash = strrchr(real, '/');
    *slash = '\0'; /* real is now the playlist's directory */
    char line[LINE_MAX_LEN + 2], extinf[LINE_MAX_LEN + 2] = "";
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncmp(line, "#EXTINF:", 8))
            snprintf(extinf, sizeof extinf, "%s", line + 8);
        else if (!strncmp(line, "#EXT-X-TARGETDURATION:", 22))
            l->target_duration = strtoll(line + 22, NULL, 10);
        else if (line[0] && line[0] != '#') {
            rc = extinf[0] ? add_segment(l, real, line, extinf) : -1;
            extinf[0] = '\0';
        }
    }
    fclose(f);
    if (rc != 0 || l->n == 0 || l->target_duration <= 0) {
        snprintf(err, errlen, "--live %s: not a media playlist of plain segment files next to it", playlist);
        return -1;
    }
    return 0;
}

struct testd_live *testd_live_new(const char *playlist, const char *root, unsigned window,
                                  char *err, size_t errlen)
{
    struct testd_live *l = calloc(1, sizeof *l);
    if (l)
        l->src = calloc(TESTD_LIVE_MAX_SEGMENTS, sizeof *l->src);
    if (!l || !l->src) {
        free(l);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(l->root, sizeof l->root, "%s", root);
    l->window = window ? window : 3;
    if (read_source(l, playlist, err, errlen) != 0) {
        testd_live_free(l);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    l->start_ms = now_ms();
    return l;
}

void testd_live_free(struct testd_live *l)
{
    if (!l)
        return;
    free(l->src);
    free(l);
}

/* ---- the timeline ---------------------------------------------------------------- */

/* Sum of the durations of live segments 0..k-1. */
static int64_t cum_ms(const struct testd_live *l, int64_t k)
{
    int64_t t = (k / (int64_t)l->n) * l->cycle_ms;
    for (int64_t i = 0; i < k % (int64_t)l->n; i++)
        t += l->src[i].duration_ms;
    return t;
}

static int64_t publish_ms(const struct testd_live *l, int64_t k)
{
    return l->start_ms + cum_ms(l, k) - cum_ms(l, (int64_t)l->window - 1);
}

/* The newest published segment at time t. */
static int64_t live_edge(const struct testd_live *l, int64_t t)
{
    int64_t k = (int64_t)l->window - 1;
    while (publish_ms(l, k + 1) <= t)
        k++;
    return k;
}

/* The newest segment path p lists at time t (never below window - 1). */
static int64_t path_edge(const struct testd_live *l, const struct live_path *p, int64_t t)
{
    int64_t e = live_edge(l, t) - p->behind;
    if (t >= p->freeze_from_ms && t < p->freeze_until_ms && e > p->freeze_edge)
        e = p->freeze_edge;
    return e < (int64_t)l->window - 1 ? (int64_t)l->window - 1 : e;
}

/* ---- responses ----------------------------------------------------------------------- */

static struct MHD_Response *text(const char *body, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    }
    return r;
}

static struct MHD_Response *fail(unsigned *status, unsigned code, const char *why)
{
    *status = code;
    return text(why, "text/plain");
}

static struct MHD_Response *playlist(const struct testd_live *l, const struct live_path *p,
                                     int64_t t, unsigned *status)
{
    int64_t last = path_edge(l, p, t), first = last - (int64_t)l->window + 1;
    size_t cap = 512 + (size_t)l->window * 96, used = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    used += (size_t)snprintf(b + used, cap - used,
                             "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:%" PRId64 "\n"
                             "#EXT-X-MEDIA-SEQUENCE:%" PRId64 "\n#EXT-X-DISCONTINUITY-SEQUENCE:%" PRId64 "\n",
                             l->target_duration, first, first / (int64_t)l->n);
    for (int64_t k = first; k <= last && used < cap; k++) {
        const struct source_segment *s = &l->src[k % (int64_t)l->n];
        if (k > first && k % (int64_t)l->n == 0)
            used += (size_t)snprintf(b + used, cap - used, "#EXT-X-DISCONTINUITY\n");
        if (used < cap)
            used += (size_t)snprintf(b + used, cap - used, "#EXTINF:%s,\nseg-%" PRId64 ".ts\n", s->extinf, k);
    }
    struct MHD_Response *r = used < cap ? text(b, "application/vnd.apple.mpegurl") : NULL;
    free(b);
    *status = MHD_HTTP_OK;
    return r;
}

static struct MHD_Response *segment(const struct testd_live *l, const struct live_path *p,
                                    const char *name, int64_t t, unsigned *status)
{
    char *end = NULL;
    errno = 0;
    long long k = strncmp(name, "seg-", 4) ? -1 : strtoll(name + 4, &end, 10);
    if (k < 0 || errno || !end || strcmp(end, ".ts") || k > live_edge(l, t))
        return fail(status, MHD_HTTP_NOT_FOUND, "no such segment\n");
    const char *file = p->tampered && p->tamper_seq == k ? p->tamper_file : l->src[k % (long long)l->n].file;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return fail(status, MHD_HTTP_NOT_FOUND, "segment file missing\n");
    }
    struct MHD_Response *r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
    if (!r) {
        close(fd);
        return NULL;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "video/mp2t");
    *status = MHD_HTTP_OK;
    return r;
}

/* ---- paths and commands ------------------------------------------------------------------ */

static bool valid_name(const char *s, size_t n)
{
    if (n == 0 || n > NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z')))
            return false;
    return true;
}

/* The state of path name[0..n), created on first use; NULL when the name is
 * invalid or the table is full.  Called with l->mu held. */
static struct live_path *find_path(struct testd_live *l, const char *name, size_t n)
{
    if (!valid_name(name, n))
        return NULL;
    for (size_t i = 0; i < l->npaths; i++)
        if (strlen(l->paths[i].name) == n && !memcmp(l->paths[i].name, name, n))
            return &l->paths[i];
    if (l->npaths == TESTD_LIVE_MAX_PATHS)
        return NULL;
    struct live_path *p = &l->paths[l->npaths++];
    memset(p, 0, sizeof *p);
    memcpy(p->name, name, n);
    return p;
}

static bool arg_int(struct MHD_Connection *c, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
    char *end = NULL;
    errno = 0;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || errno || end == v || *end || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

static struct MHD_Response *applied(unsigned *status, const struct live_path *p, int64_t from, int64_t until)
{
    char body[256];
    snprintf(body, sizeof body, "{\"path\": \"%s\", \"start_ms\": %" PRId64 ", \"end_ms\": %" PRId64 "}\n",
             p->name, from, until);
    *status = MHD_HTTP_OK;
    return text(body, "application/json");
}

/* A tamper file must be a regular file inside --root. */
static int tamper_file(const struct testd_live *l, const char *rel, char *out)
{
    char joined[PATH_MAX];
    size_t rl = strlen(l->root);
    if (!rel || strstr(rel, "..") || snprintf(joined, sizeof joined, "%s/%s", l->root, rel) >= (int)sizeof joined ||
        !realpath(joined, out) || strncmp(out, l->root, rl) || out[rl] != '/')
        return -1;
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
}

static struct MHD_Response *command(struct testd_live *l, struct MHD_Connection *c, const char *cmd,
                                    int64_t t, unsigned *status)
{
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
    struct live_path *p = name ? find_path(l, name, strlen(name)) : NULL;
    int64_t v = 0, code = 503;
    if (!p)
        return fail(status, MHD_HTTP_BAD_REQUEST, "path=NAME wanted ([A-Za-z0-9_-], at most 32)\n");
    if (!strcmp(cmd, "outage") && arg_int(c, "ms", 1, 3600000, &v)) {
        const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "status");
        if (s && !arg_int(c, "status", 400, 599, &code))
            return fail(status, MHD_HTTP_BAD_REQUEST, "status=400..599\n");
        p->outage_from_ms = t;
        p->outage_until_ms = t + v;
        p->outage_status = (unsigned)code;
        return applied(status, p, t, t + v);
    }
    if (!strcmp(cmd, "tamper") && arg_int(c, "seq", 0, INT64_MAX / 2, &v)) {
        if (tamper_file(l, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "file"), p->tamper_file))
            return fail(status, MHD_HTTP_BAD_REQUEST, "file=REL wanted: a file under --root\n");
        p->tampered = true;
        p->tamper_seq = v;
        return applied(status, p, t, t);
    }
    if (!strcmp(cmd, "freeze") && arg_int(c, "ms", 1, 3600000, &v)) {
        p->freeze_edge = path_edge(l, p, t);
        p->freeze_from_ms = t;
        p->freeze_until_ms = t + v;
        return applied(status, p, t, t + v);
    }
    if (!strcmp(cmd, "behind") && arg_int(c, "segments", 0, 1000, &v)) {
        p->behind = v;
        return applied(status, p, t, t);
    }
    return fail(status, MHD_HTTP_BAD_REQUEST, "unknown command or bad value (see testd_live.h)\n");
}

static struct MHD_Response *status_answer(struct testd_live *l, struct MHD_Connection *c, int64_t t,
                                          unsigned *status)
{
    char body[512], extra[96] = "", counts[160] = "";
    int64_t k = 0;
    if (arg_int(c, "seq", 0, INT64_MAX / 4, &k))
        snprintf(extra, sizeof extra, ", \"publish_ms\": %" PRId64, publish_ms(l, k));
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
    const struct live_path *p = name ? find_path(l, name, strlen(name)) : NULL;
    if (p)
        snprintf(counts, sizeof counts, ", \"playlist_requests\": %" PRIu64 ", \"segment_requests\": %" PRIu64,
                 p->playlist_requests, p->segment_requests);
    snprintf(body, sizeof body,
             "{\"start_ms\": %" PRId64 ", \"window\": %u, \"source_segments\": %zu, \"edge\": %" PRId64
             ", \"now_ms\": %" PRId64 "%s%s}\n",
             l->start_ms, l->window, l->n, live_edge(l, t), t, extra, counts);
    *status = MHD_HTTP_OK;
    return text(body, "application/json");
}

bool testd_live_handles(const char *url)
{
    return !strncmp(url, "/_live/", 7) || !strncmp(url, "/_control/", 10);
}

struct MHD_Response *testd_live_respond(struct testd_live *l, struct MHD_Connection *c,
                                        const char *url, unsigned *status)
{
    int64_t t = now_ms();
    struct MHD_Response *r = NULL;
    pthread_mutex_lock(&l->mu);
    if (!strncmp(url, "/_control/", 10)) {
        r = !strcmp(url + 10, "status") ? status_answer(l, c, t, status) : command(l, c, url + 10, t, status);
    } else {
        const char *name = url + 7, *slash = strchr(name, '/');
        struct live_path *p = slash ? find_path(l, name, (size_t)(slash - name)) : NULL;
        if (!p)
            r = fail(status, MHD_HTTP_NOT_FOUND, "no such live path\n");
        else if (t >= p->outage_from_ms && t < p->outage_until_ms)
            r = fail(status, p->outage_status, "outage\n");
        else if (!strcmp(slash + 1, "playlist.m3u8"))
            r = playlist(l, p, t, status);
        else
            r = segment(l, p, slash + 1, t, status);
        if (p && r && *status == MHD_HTTP_OK)
            ++*(strcmp(slash + 1, "playlist.m3u8") ? &p->segment_requests : &p->playlist_requests);
    }
    pthread_mutex_unlock(&l->mu);
    return r;
}
