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
    uint64_t playlist_requests, segment_requests, part_requests;   /* answered 200 */
    bool part_tampered;          /* LL-HLS: one part replaced by a file */
    int64_t part_tamper_seq, part_tamper_index;
    char part_tamper_file[PATH_MAX];
    bool part_delayed;           /* LL-HLS: one part published late */
    int64_t part_delay_seq, part_delay_index, part_delay_ms;
};

struct testd_live {
    char root[PATH_MAX];
    struct source_segment *src;
    size_t n;
    int64_t cycle_ms;            /* sum of the source durations */
    int64_t target_duration;
    unsigned window;
    int64_t start_ms;            /* when segment window-1 was published */
    unsigned ll_parts;           /* parts per segment, 0: plain HLS */
    bool fmp4;                   /* the source has an EXT-X-MAP: fMP4 segments */
    char init_file[PATH_MAX];    /* its init segment */
    int64_t part_target_ms;      /* the longest part */
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

/* EXT-X-MAP:URI="init.mp4": one init segment, a plain file beside the
 * playlist (no BYTERANGE), for every segment. */
static int add_map(struct testd_live *l, const char *dir, const char *attrs)
{
    const char *q = strncmp(attrs, "URI=\"", 5) ? NULL : attrs + 5;
    size_t n = q ? strcspn(q, "\"") : 0;
    char uri[NAME_MAX + 1];
    struct stat st;
    if (l->fmp4 || !q || q[n] != '"' || q[n + 1] || n == 0 || n >= sizeof uri)
        return -1;
    snprintf(uri, sizeof uri, "%.*s", (int)n, q);
    if (!plain_name(uri) || snprintf(l->init_file, sizeof l->init_file, "%s/%s", dir, uri) >= (int)sizeof l->init_file ||
        stat(l->init_file, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    l->fmp4 = true;
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
        else if (!strncmp(line, "#EXT-X-MAP:", 11))
            rc = add_map(l, real, line + 11);
        else if (line[0] && line[0] != '#') {
            rc = extinf[0] ? add_segment(l, real, line, extinf) : -1;
            extinf[0] = '\0';
        }
    }
    fclose(f);
    if (rc != 0 || l->n == 0 || l->target_duration <= 0) {
        snprintf(err, errlen, "--live %s: not a media playlist of plain segment files next to it"
                 " (and at most one EXT-X-MAP:URI=\"FILE\" beside it)", playlist);
        return -1;
    }
    return 0;
}

static int64_t part_end_ms(const struct source_segment *s, unsigned parts, int64_t j);
static int fragment_offsets(const char *file, uint64_t *off, int max);

struct testd_live *testd_live_new(const char *playlist, const char *root, unsigned window,
                                  unsigned ll_parts, char *err, size_t errlen)
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
    l->ll_parts = ll_parts;
    for (size_t i = 0; i < l->n && ll_parts && l->fmp4; i++) {
        uint64_t off[TESTD_LIVE_MAX_PARTS];
        if (fragment_offsets(l->src[i].file, off, TESTD_LIVE_MAX_PARTS) < (int)ll_parts) {
            snprintf(err, errlen, "--ll-parts %u: %s is not an fMP4 segment of at least %u fragments", ll_parts,
                     l->src[i].file, ll_parts);
            testd_live_free(l);
            return NULL;
        }
    }
    for (size_t i = 0; i < l->n && ll_parts; i++)
        for (int64_t j = 0; j < ll_parts; j++) {
            int64_t d = part_end_ms(&l->src[i], ll_parts, j) - (j ? part_end_ms(&l->src[i], ll_parts, j - 1) : 0);
            if (d > l->part_target_ms)
                l->part_target_ms = d;
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

/* The name suffix of segments and parts: the container's. */
static const char *suffix(const struct testd_live *l)
{
    return l->fmp4 ? ".m4s" : ".ts";
}

/* fMP4: the offsets of the top-level moof boxes of a segment file (each a
 * fragment: moof + mdat), at most max; the count, or -1 when the file is
 * not a sequence of boxes. */
static int fragment_offsets(const char *file, uint64_t *off, int max)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC), n = 0;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint64_t at = 0, size = (uint64_t)st.st_size;
    while (at + 8 <= size) {
        uint8_t h[16];
        if (pread(fd, h, 8, (off_t)at) != 8)
            break;
        uint64_t len = (uint64_t)h[0] << 24 | (uint64_t)h[1] << 16 | (uint64_t)h[2] << 8 | h[3];
        if (len == 1 && pread(fd, h + 8, 8, (off_t)at + 8) == 8)
            for (int i = 8; i < 16; i++)
                len = (i == 8 ? 0 : len << 8) | h[i];
        if (len < 8 || len > size - at)
            break;
        if (!memcmp(h + 4, "moof", 4) && n < max)
            off[n++] = at;
        at += len;
    }
    close(fd);
    return at == size ? n : -1;
}

/* ---- LL-HLS parts ---------------------------------------------------------------- */

/* End of part j within its segment, ms from the segment's start. */
static int64_t part_end_ms(const struct source_segment *s, unsigned parts, int64_t j)
{
    return s->duration_ms * (j + 1) / (int64_t)parts;
}

/* When part j of segment k is published on path p (p may be NULL: on
 * schedule); the last part comes with its segment. */
static int64_t part_publish_ms(const struct testd_live *l, const struct live_path *p, int64_t k, int64_t j)
{
    const struct source_segment *s = &l->src[k % (int64_t)l->n];
    int64_t t = publish_ms(l, k) - s->duration_ms + part_end_ms(s, l->ll_parts, j);
    if (p && p->part_delayed && p->part_delay_seq == k && p->part_delay_index == j)
        t += p->part_delay_ms;
    return t;
}

static void ms_text(char *out, size_t n, int64_t ms)
{
    snprintf(out, n, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
}

/* The parts of the open segment k published at t on p, in order (a
 * delayed part holds back the parts after it). */
static int64_t parts_listed(const struct testd_live *l, const struct live_path *p, int64_t k, int64_t t)
{
    int64_t m = 0;
    while (m < (int64_t)l->ll_parts && part_publish_ms(l, p, k, m) <= t)
        m++;
    return m;
}

static size_t put_parts(const struct testd_live *l, int64_t k, int64_t m, char *b, size_t used, size_t cap)
{
    const struct source_segment *s = &l->src[k % (int64_t)l->n];
    for (int64_t j = 0; j < m && used < cap; j++) {
        char d[32];
        ms_text(d, sizeof d, part_end_ms(s, l->ll_parts, j) - (j ? part_end_ms(s, l->ll_parts, j - 1) : 0));
        used += (size_t)snprintf(b + used, cap - used, "#EXT-X-PART:DURATION=%s,URI=\"part-%" PRId64 ".%" PRId64 "%s\"%s\n",
                                 d, k, j, suffix(l), j == 0 ? ",INDEPENDENT=YES" : "");
    }
    return used;
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

/* LL-HLS: the playlist-level tags. */
static size_t put_ll_head(const struct testd_live *l, char *b, size_t used, size_t cap)
{
    char pt[32], hold[32];
    ms_text(pt, sizeof pt, l->part_target_ms);
    ms_text(hold, sizeof hold, 3 * l->part_target_ms);
    return used + (size_t)snprintf(b + used, cap - used,
                                   "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=%s\n"
                                   "#EXT-X-PART-INF:PART-TARGET=%s\n", hold, pt);
}

/* LL-HLS: the open segment after last (only at the live edge) and the hint
 * of the next part. */
static size_t put_ll_tail(const struct testd_live *l, const struct live_path *p, int64_t last, int64_t t, char *b,
                          size_t used, size_t cap)
{
    int64_t k = last + 1, m = 0;
    if (last == live_edge(l, t)) {
        m = parts_listed(l, p, k, t);
        if (m > 0 && k % (int64_t)l->n == 0 && used < cap)
            used += (size_t)snprintf(b + used, cap - used, "#EXT-X-DISCONTINUITY\n");
        if (used < cap)
            used = put_parts(l, k, m, b, used, cap);
    }
    if (used < cap)
        used += (size_t)snprintf(b + used, cap - used, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-%" PRId64 ".%" PRId64
                                 "%s\"\n", k, m, suffix(l));
    return used;
}

static struct MHD_Response *playlist(const struct testd_live *l, const struct live_path *p,
                                     int64_t t, unsigned *status)
{
    int64_t last = path_edge(l, p, t), first = last - (int64_t)l->window + 1;
    size_t cap = 512 + (size_t)l->window * 96 + (size_t)l->ll_parts * 3 * 96, used = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    used += (size_t)snprintf(b + used, cap - used,
                             "#EXTM3U\n#EXT-X-VERSION:%d\n#EXT-X-TARGETDURATION:%" PRId64 "\n",
                             l->fmp4 ? 7 : l->ll_parts ? 6 : 3, l->target_duration);
    if (l->ll_parts)
        used = put_ll_head(l, b, used, cap);
    used += (size_t)snprintf(b + used, cap - used,
                             "#EXT-X-MEDIA-SEQUENCE:%" PRId64 "\n#EXT-X-DISCONTINUITY-SEQUENCE:%" PRId64 "\n",
                             first, first / (int64_t)l->n);
    if (l->fmp4) /* one init segment for every segment, across the wraps too */
        used += (size_t)snprintf(b + used, cap - used, "#EXT-X-MAP:URI=\"init.mp4\"\n");
    for (int64_t k = first; k <= last && used < cap; k++) {
        const struct source_segment *s = &l->src[k % (int64_t)l->n];
        if (k > first && k % (int64_t)l->n == 0)
            used += (size_t)snprintf(b + used, cap - used, "#EXT-X-DISCONTINUITY\n");
        if (l->ll_parts && k >= last - 1 && used < cap)
            used = put_parts(l, k, l->ll_parts, b, used, cap);
        if (used < cap)
            used += (size_t)snprintf(b + used, cap - used, "#EXTINF:%s,\nseg-%" PRId64 "%s\n", s->extinf, k, suffix(l));
    }
    if (l->ll_parts && used < cap)
        used = put_ll_tail(l, p, last, t, b, used, cap);
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
    bool init = l->fmp4 && !strcmp(name, "init.mp4");
    if (!init && (k < 0 || errno || !end || strcmp(end, suffix(l)) || k > live_edge(l, t)))
        return fail(status, MHD_HTTP_NOT_FOUND, "no such segment\n");
    const char *file = init                                ? l->init_file
                       : p->tampered && p->tamper_seq == k ? p->tamper_file
                                                           : l->src[k % (long long)l->n].file;
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
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, l->fmp4 ? "video/mp4" : "video/mp2t");
    *status = MHD_HTTP_OK;
    return r;
}

/* Part j of segment file f: bytes [from, to), cut at TS packet boundaries,
 * or for fMP4 at fragment (moof) boundaries, fragment i going to part
 * i * n / F of F (part 0 also holds what comes before the first moof, e.g.
 * styp); the last part ends at the file's end.  0, or -1. */
static int part_bytes(const struct testd_live *l, const char *f, uint64_t size, int64_t j, uint64_t *from,
                      uint64_t *to)
{
    uint64_t n = l->ll_parts;
    if (!l->fmp4) {
        uint64_t packets = size / 188;
        *from = packets * (uint64_t)j / n * 188;
        *to = (uint64_t)j + 1 == n ? size : packets * ((uint64_t)j + 1) / n * 188;
        return 0;
    }
    uint64_t off[TESTD_LIVE_MAX_PARTS * 64];
    int frags = fragment_offsets(f, off, (int)(sizeof off / sizeof off[0]));
    if (frags < (int)n)
        return -1;
    uint64_t a = (uint64_t)frags * (uint64_t)j / n, b = (uint64_t)frags * ((uint64_t)j + 1) / n;
    *from = j == 0 ? 0 : off[a];
    *to = (uint64_t)j + 1 == n ? size : off[b];
    return 0;
}

/* /_live/P/part-K.J.ts (LL-HLS). */
static struct MHD_Response *part(const struct testd_live *l, const struct live_path *p, const char *name, int64_t t,
                                 unsigned *status)
{
    char *end = NULL, *end2 = NULL;
    errno = 0;
    long long k = strncmp(name, "part-", 5) ? -1 : strtoll(name + 5, &end, 10);
    long long j = k >= 0 && !errno && end && *end == '.' ? strtoll(end + 1, &end2, 10) : -1;
    if (!l->ll_parts || k < 0 || j < 0 || j >= (long long)l->ll_parts || errno || !end2 || strcmp(end2, suffix(l)) ||
        part_publish_ms(l, p, k, j) > t)
        return fail(status, MHD_HTTP_NOT_FOUND, "no such part\n");
    bool tampered = p->part_tampered && p->part_tamper_seq == k && p->part_tamper_index == j;
    const char *file = tampered ? p->part_tamper_file : l->src[k % (long long)l->n].file;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return fail(status, MHD_HTTP_NOT_FOUND, "part file missing\n");
    }
    uint64_t from = 0, to = (uint64_t)st.st_size;
    if (!tampered && part_bytes(l, file, (uint64_t)st.st_size, j, &from, &to) != 0) {
        close(fd);
        return fail(status, MHD_HTTP_NOT_FOUND, "part file has fewer fragments than parts\n");
    }
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(to - from, fd, from);
    if (!r) {
        close(fd);
        return NULL;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, l->fmp4 ? "video/mp4" : "video/mp2t");
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
    int64_t j = 0;
    bool has_part = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "part") != NULL;
    if (has_part && (!l->ll_parts || !arg_int(c, "part", 0, (int64_t)l->ll_parts - 1, &j)))
        return fail(status, MHD_HTTP_BAD_REQUEST, "part=0..N-1 wanted, with --ll-parts N\n");
    if (!strcmp(cmd, "tamper") && arg_int(c, "seq", 0, INT64_MAX / 2, &v)) {
        char *file = has_part ? p->part_tamper_file : p->tamper_file;
        if (tamper_file(l, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "file"), file))
            return fail(status, MHD_HTTP_BAD_REQUEST, "file=REL wanted: a file under --root\n");
        if (has_part) {
            p->part_tampered = true;
            p->part_tamper_seq = v;
            p->part_tamper_index = j;
        } else {
            p->tampered = true;
            p->tamper_seq = v;
        }
        return applied(status, p, t, t);
    }
    int64_t ms = 0;
    if (!strcmp(cmd, "delay") && has_part && arg_int(c, "seq", 0, INT64_MAX / 4, &v) &&
        arg_int(c, "ms", 1, 3600000, &ms)) {
        p->part_delayed = true;
        p->part_delay_seq = v;
        p->part_delay_index = j;
        p->part_delay_ms = ms;
        return applied(status, p, t, part_publish_ms(l, p, v, j));
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
    int64_t j = 0;
    if (arg_int(c, "seq", 0, INT64_MAX / 4, &k) && l->ll_parts && arg_int(c, "part", 0, (int64_t)l->ll_parts - 1, &j))
        snprintf(extra, sizeof extra, ", \"publish_ms\": %" PRId64 ", \"part_publish_ms\": %" PRId64, publish_ms(l, k),
                 part_publish_ms(l, NULL, k, j));
    else if (arg_int(c, "seq", 0, INT64_MAX / 4, &k))
        snprintf(extra, sizeof extra, ", \"publish_ms\": %" PRId64, publish_ms(l, k));
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
    const struct live_path *p = name ? find_path(l, name, strlen(name)) : NULL;
    if (p)
        snprintf(counts, sizeof counts, ", \"playlist_requests\": %" PRIu64 ", \"segment_requests\": %" PRIu64 "%s",
                 p->playlist_requests, p->segment_requests, l->ll_parts ? ", \"part_requests\": " : "");
    if (p && l->ll_parts)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%" PRIu64, p->part_requests);
    snprintf(body, sizeof body,
             "{\"start_ms\": %" PRId64 ", \"window\": %u, \"source_segments\": %zu, \"edge\": %" PRId64
             ", \"now_ms\": %" PRId64 "%s%s}\n",
             l->start_ms, l->window, l->n, live_edge(l, t), t, extra, counts);
    *status = MHD_HTTP_OK;
    return text(body, "application/json");
}

/* ---- blocking playlist reload (RFC 8216bis 6.2.5.2) ---------------------------------------- */

/* True when path name's playlist at t holds segment msn, or part j of it. */
static bool reload_ready(struct testd_live *l, const char *name, size_t n, int64_t msn, int64_t j, int64_t t)
{
    pthread_mutex_lock(&l->mu);
    struct live_path *p = find_path(l, name, n);
    int64_t last = p ? path_edge(l, p, t) : INT64_MAX;
    bool ready = !p || last >= msn ||
                 (j >= 0 && j < (int64_t)l->ll_parts && msn == last + 1 && last == live_edge(l, t) &&
                  parts_listed(l, p, msn, t) > j);
    pthread_mutex_unlock(&l->mu);
    return ready;
}

/* Holds a playlist request with _HLS_msn until it can be answered: NULL
 * then (answer as usual), else the 400 or 503 to send. */
static struct MHD_Response *hold_reload(struct testd_live *l, struct MHD_Connection *c, const char *url,
                                        unsigned *status)
{
    const char *name = url + 7, *slash = strchr(name, '/');
    bool has_msn = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "_HLS_msn") != NULL;
    bool has_part = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "_HLS_part") != NULL;
    if (!l->ll_parts || !slash || strcmp(slash + 1, "playlist.m3u8") || (!has_msn && !has_part))
        return NULL;
    int64_t msn = 0, j = -1, t = now_ms();
    if (!has_msn || !arg_int(c, "_HLS_msn", 0, INT64_MAX / 4, &msn) ||
        (has_part && !arg_int(c, "_HLS_part", 0, INT64_MAX / 4, &j)))
        return fail(status, MHD_HTTP_BAD_REQUEST, "_HLS_msn=M[&_HLS_part=J] wanted\n");
    pthread_mutex_lock(&l->mu);
    bool too_far = msn > live_edge(l, t) + 2;
    pthread_mutex_unlock(&l->mu);
    if (too_far)
        return fail(status, MHD_HTTP_BAD_REQUEST, "_HLS_msn beyond the last segment + 2\n");
    int64_t deadline = t + 3 * l->target_duration * 1000;
    while (!reload_ready(l, name, (size_t)(slash - name), msn, j, t)) {
        if (t >= deadline)
            return fail(status, MHD_HTTP_SERVICE_UNAVAILABLE, "blocking reload: not published within 3 target durations\n");
        usleep(10000);
        t = now_ms();
    }
    return NULL;
}

bool testd_live_handles(const char *url)
{
    return !strncmp(url, "/_live/", 7) || !strncmp(url, "/_control/", 10);
}

struct MHD_Response *testd_live_respond(struct testd_live *l, struct MHD_Connection *c,
                                        const char *url, unsigned *status)
{
    struct MHD_Response *r = strncmp(url, "/_live/", 7) ? NULL : hold_reload(l, c, url, status);
    if (r)
        return r;
    int64_t t = now_ms();
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
        else if (!strncmp(slash + 1, "part-", 5))
            r = part(l, p, slash + 1, t, status);
        else
            r = segment(l, p, slash + 1, t, status);
        if (p && r && *status == MHD_HTTP_OK)
            ++*(!strcmp(slash + 1, "playlist.m3u8") ? &p->playlist_requests
                : !strncmp(slash + 1, "part-", 5)   ? &p->part_requests
                                                    : &p->segment_requests);
    }
    pthread_mutex_unlock(&l->mu);
    return r;
}
