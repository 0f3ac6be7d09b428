/* canary_fetch.c - playlists and segments from a URL or a directory (see
 * canary_fetch.h). */
#include "canary_fetch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "hlskey.h"
#include "redact.h"
#include "uri.h"
#include "util.h"

static void set_failure(const char **failure, char *detail, size_t n, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void set_failure(const char **failure, char *detail, size_t n, const char *code, const char *fmt, ...)
{
    *failure = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, n, fmt, ap);
    va_end(ap);
}

struct fetch_options canary_fetch_options_until(const struct fetch_options *fo, int64_t deadline_ms)
{
    struct fetch_options o = *fo;
    int64_t left = deadline_ms - util_now_ms();
    if (left < 1)
        left = 1;
    if (o.total_timeout_ms <= 0 || o.total_timeout_ms > left)
        o.total_timeout_ms = (long)left;
    if (o.connect_timeout_ms <= 0 || o.connect_timeout_ms > o.total_timeout_ms)
        o.connect_timeout_ms = o.total_timeout_ms;
    return o;
}

struct fetch_options canary_segment_fetch_options(const struct hls_segment *h, const struct fetch_options *fo,
                                                  int64_t deadline_ms)
{
    struct fetch_options o = canary_fetch_options_until(fo, deadline_ms);
    o.range = h->has_byterange ? (struct fetch_range){h->byterange_offset, h->byterange_length}
                               : (struct fetch_range){0};
    return o;
}

/* A whole local file of at most max bytes; 0, or -1 with errno-ish text. */
static int read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *why, size_t n)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
        snprintf(why, n, "%s", !f ? strerror(errno) : "not a regular file of an accepted size");
        if (f)
            fclose(f);
        return -1;
    }
    *data = malloc((size_t)st.st_size + 1);
    *len = *data ? fread(*data, 1, (size_t)st.st_size + 1, f) : 0;
    bool ok = *data && !ferror(f) && *len == (size_t)st.st_size;
    fclose(f);
    if (!ok) {
        free(*data);
        *data = NULL;
        snprintf(why, n, "short read");
        return -1;
    }
    return 0;
}

/* ---- playlists ---- */

static void parse_into(struct canary_playlist *p, const uint8_t *data, size_t len)
{
    struct hls_error herr = {0};
    enum hls_status st = hls_parse(data, len, &p->pl, &herr);
    if (st == HLS_OK) {
        p->ok = true;
        return;
    }
    set_failure(&p->failure, p->detail, sizeof p->detail, "playlist_invalid", "line %lu: %s (%s)", herr.line,
                herr.message, hls_status_code(st));
}

static void read_http_playlist(struct canary_playlist *p, const char *url, const struct fetch_options *fo,
                               int64_t deadline_ms)
{
    struct fetch_options o = canary_fetch_options_until(fo, deadline_ms);
    o.range = (struct fetch_range){0};
    if (o.max_bytes == 0 || o.max_bytes > HLS_MAX_PLAYLIST_BYTES)
        o.max_bytes = HLS_MAX_PLAYLIST_BYTES;
    o.accept_encoding = true;    /* bounded by max_bytes after decoding */
    struct fetch_result res;
    fetch_get(&o, url, &res);
    p->fetch = fetch_result_to_json(&res, 0);
    p->http_status = res.http_status;
    p->started_at_ms = res.started_at_ms;
    p->ended_at_ms = res.ended_at_ms;
    if (res.error != FETCH_OK)
        set_failure(&p->failure, p->detail, sizeof p->detail, fetch_error_code(res.error), "%s: %s",
                    res.url ? res.url : "(url)", res.message);
    else if (!(p->base = strdup(res.raw_effective_url ? res.raw_effective_url : url)))
        set_failure(&p->failure, p->detail, sizeof p->detail, "internal_error", "out of memory");
    else
        parse_into(p, res.data, res.size);
    fetch_result_free(&res);
}

static void read_file_playlist(struct canary_playlist *p, const char *location)
{
    struct stat st;
    char path[4096];
    bool dir = stat(location, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(path, sizeof path, dir ? "%s/" CANARY_PLAYLIST_NAME : "%s", location);
    p->started_at_ms = util_now_ms();
    uint8_t *data = NULL;
    size_t len = 0;
    char why[128];
    if (read_file(path, HLS_MAX_PLAYLIST_BYTES, &data, &len, why, sizeof why) != 0)
        set_failure(&p->failure, p->detail, sizeof p->detail, "io_error", "%s: %s", path, why);
    else {
        char *slash = strrchr(path, '/');
        p->base = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
        if (p->base)
            parse_into(p, data, len);
    }
    free(data);
    p->ended_at_ms = util_now_ms();
}

struct canary_playlist *canary_playlist_read(const char *location, const struct fetch_options *fo,
                                             int64_t deadline_ms)
{
    struct canary_playlist *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    p->object = uri_is_http(location) ? redact_url_dup(location, &fo->redact)
                                      : strdup(location);
    if (uri_is_http(location))
        read_http_playlist(p, location, fo, deadline_ms);
    else
        read_file_playlist(p, location);
    if (p->ok && p->pl.segment_count == 0) {
        p->ok = false;
        set_failure(&p->failure, p->detail, sizeof p->detail, "playlist_empty", "the playlist lists no segment");
    }
    return p;
}

bool canary_playlist_range(const struct canary_playlist *p, uint64_t *first, uint64_t *last)
{
    if (!p || !p->ok || p->pl.segment_count == 0)
        return false;
    *first = p->pl.segments[0].media_sequence;
    *last = p->pl.segments[p->pl.segment_count - 1].media_sequence;
    return true;
}

static const struct hls_segment *find_segment(const struct canary_playlist *p, uint64_t seq)
{
    uint64_t first, last;
    if (!canary_playlist_range(p, &first, &last) || seq < first || seq > last)
        return NULL;
    return &p->pl.segments[seq - first];
}

/* A local reference names its segments by relative paths below its own
 * directory (no "..", no absolute path); http(s) URIs are fetched. */
static char *local_segment_path(const char *dir, const char *uri)
{
    size_t n = strcspn(uri, "?#");
    if (n == 0 || uri[0] == '/' || strstr(uri, "..") || strchr(uri, ':'))
        return NULL;
    size_t len = strlen(dir) + n + 2;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s/%.*s", dir, (int)n, uri);
    return out;
}

/* A URI of the playlist (a segment's, a key's) as a URL or a local path. */
static char *resolve_location(const struct canary_playlist *p, const char *uri)
{
    if (uri_is_http(uri))
        return strdup(uri);
    if (!uri_is_http(p->base))
        return local_segment_path(p->base, uri);
    char *url = NULL;
    return uri_resolve_alloc(p->base, uri, &url) == URI_OK ? url : NULL;
}

char *canary_playlist_segment_location(const struct canary_playlist *p, uint64_t seq)
{
    const struct hls_segment *s = find_segment(p, seq);
    return s ? resolve_location(p, s->uri) : NULL;
}

/* The file name: the last path segment, without query or fragment. */
static char *file_name(const char *uri)
{
    size_t n = strcspn(uri, "?#");
    const char *start = uri;
    for (size_t i = 0; i < n; i++)
        if (uri[i] == '/')
            start = uri + i + 1;
    return strndup(start, n - (size_t)(start - uri));
}

static void read_http_segment(struct canary_segment *s, const char *url, const struct hls_segment *h,
                              const struct fetch_options *fo, int64_t deadline_ms)
{
    struct fetch_options o = canary_segment_fetch_options(h, fo, deadline_ms);
    struct fetch_result res;
    fetch_get(&o, url, &res);
    s->fetch = fetch_result_to_json(&res, 0);
    s->object = strdup(res.url ? res.url : REDACT_PLACEHOLDER_URL);
    s->started_at_ms = res.started_at_ms;
    s->ended_at_ms = res.ended_at_ms;
    if (res.error != FETCH_OK) {
        set_failure(&s->failure, s->detail, sizeof s->detail, fetch_error_code(res.error), "%s: %s",
                    res.url ? res.url : "(url)", res.message);
    } else {
        s->data = res.data;
        s->len = res.size;
        res.data = NULL;
        s->ok = true;
    }
    fetch_result_free(&res);
}

static void read_file_segment(struct canary_segment *s, const char *path, const struct hls_segment *h,
                              const struct fetch_options *fo)
{
    s->object = strdup(path);
    s->started_at_ms = util_now_ms();
    char why[128];
    size_t max = fo->max_bytes ? fo->max_bytes : FETCH_DEFAULT_MAX_BYTES;
    if (h->has_byterange)
        set_failure(&s->failure, s->detail, sizeof s->detail, "io_error", "%s: byte ranges of local files are not supported", path);
    else if (read_file(path, max, &s->data, &s->len, why, sizeof why) != 0)
        set_failure(&s->failure, s->detail, sizeof s->detail, "io_error", "%s: %s", path, why);
    else
        s->ok = true;
    s->ended_at_ms = util_now_ms();
}

/* The init segment of h (its EXT-X-MAP), whole or its byte range, into
 * *init (malloc'd); NULL, or the stable reason with why filled. */
static const char *read_init(const struct canary_playlist *p, const struct hls_segment *h,
                             const struct fetch_options *fo, int64_t deadline_ms, uint8_t **init, size_t *len,
                             char *why, size_t n)
{
    char *loc = resolve_location(p, h->map_uri);
    const char *reason = NULL;
    if (!loc) {
        snprintf(why, n, "the EXT-X-MAP URI cannot be resolved");
        return "bad_segment_uri";
    }
    if (uri_is_http(loc)) {
        struct fetch_options o = canary_fetch_options_until(fo, deadline_ms);
        o.range = h->map_has_byterange ? (struct fetch_range){h->map_byterange_offset, h->map_byterange_length}
                                       : (struct fetch_range){0};
        struct fetch_result res;
        fetch_get(&o, loc, &res);
        if (res.error == FETCH_OK) {
            *init = res.data;
            *len = res.size;
            res.data = NULL;
        } else {
            reason = fetch_error_code(res.error);
            snprintf(why, n, "init segment %s: %s", res.url ? res.url : "(url)", res.message);
        }
        fetch_result_free(&res);
    } else if (h->map_has_byterange) {
        reason = "io_error";
        snprintf(why, n, "%s: byte ranges of local files are not supported", loc);
    } else {
        char e[128];
        size_t max = fo->max_bytes ? fo->max_bytes : FETCH_DEFAULT_MAX_BYTES;
        if (read_file(loc, max, init, len, e, sizeof e) != 0) {
            reason = "io_error";
            snprintf(why, n, "init segment %s: %s", loc, e);
        }
    }
    free(loc);
    return reason;
}

/* An fMP4 reference segment: its bytes become the init segment, then the
 * segment, the one stream FFmpeg's HLS demuxer reads and `exactav verify`
 * takes as a reference file (docs/exact-av-v1.md, fMP4).  A MAP together
 * with AES-128 is outside the profile here as for a candidate (whether the
 * init segment is encrypted depends on the tags' order). */
static void prepend_init(struct canary_segment *s, const struct canary_playlist *p, const struct hls_segment *h,
                         const struct fetch_options *fo, int64_t deadline_ms)
{
    uint8_t *init = NULL, *both = NULL;
    size_t len = 0;
    char why[320] = "";
    const char *reason = NULL;
    if (h->key.method != HLS_KEY_NONE) {
        reason = "playlist_outside_profile";
        snprintf(why, sizeof why, "EXT-X-MAP together with EXT-X-KEY is not read");
    } else {
        reason = read_init(p, h, fo, deadline_ms, &init, &len, why, sizeof why);
    }
    if (!reason && !(both = malloc(len + s->len + 1))) {
        reason = "internal_error";
        snprintf(why, sizeof why, "out of memory");
    }
    if (reason) {
        s->ok = false;
        set_failure(&s->failure, s->detail, sizeof s->detail, reason, "media sequence %llu: %s",
                    (unsigned long long)h->media_sequence, why);
    } else {
        if (len) /* memcpy's arguments must be valid pointers even for 0 bytes */
            memcpy(both, init, len);
        if (s->len)
            memcpy(both + len, s->data, s->len);
        free(s->data);
        s->data = both;
        s->len += len;
    }
    free(init);
}

/* An AES-128 segment of the reference, decrypted in place with its key
 * (fetched or read each time: the segment itself is cached, canary_refcache.h).
 * The key's location is never recorded. */
static void decrypt_segment(struct canary_segment *s, const struct canary_playlist *p, const struct hls_segment *h,
                            const struct fetch_options *fo, int64_t deadline_ms)
{
    uint8_t key[HLSKEY_LEN], iv[16];
    char why[160];
    char *loc = resolve_location(p, h->key.uri);
    const char *reason = "key_unavailable";
    int64_t started, ended;
    struct fetch_options o = canary_segment_fetch_options(h, fo, deadline_ms);
    if (!loc)
        snprintf(why, sizeof why, "the key URI cannot be resolved");
    else if (uri_is_http(loc))
        reason = hlskey_fetch(&o, loc, 0, key, NULL, &started, &ended, why, sizeof why);
    else
        reason = hlskey_read_file(loc, key, why, sizeof why);
    free(loc);
    if (!reason) {
        hlskey_iv(h, iv);
        reason = hlskey_decrypt(s->data, &s->len, key, iv, why, sizeof why);
    }
    OPENSSL_cleanse(key, sizeof key);
    if (reason) {
        s->ok = false;
        set_failure(&s->failure, s->detail, sizeof s->detail, reason, "media sequence %llu: %s",
                    (unsigned long long)h->media_sequence, why);
    }
}

struct canary_segment *canary_segment_read(const struct canary_playlist *p, uint64_t seq,
                                           const struct fetch_options *fo, int64_t deadline_ms)
{
    struct canary_segment *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->memo_mu, NULL);
    s->media_sequence = seq;
    const struct hls_segment *h = find_segment(p, seq);
    char *loc = h ? canary_playlist_segment_location(p, seq) : NULL;
    s->name = h ? file_name(h->uri) : NULL;
    if (!h)
        set_failure(&s->failure, s->detail, sizeof s->detail, "segment_not_in_playlist",
                    "media sequence %llu is not in the playlist", (unsigned long long)seq);
    else if (!loc)
        set_failure(&s->failure, s->detail, sizeof s->detail, "bad_segment_uri",
                    "media sequence %llu: the URI cannot be resolved", (unsigned long long)seq);
    else if (uri_is_http(loc))
        read_http_segment(s, loc, h, fo, deadline_ms);
    else
        read_file_segment(s, loc, h, fo);
    free(loc);
    if (s->ok && h->map_uri)
        prepend_init(s, p, h, fo, deadline_ms);
    else if (s->ok && h->key.method == HLS_KEY_AES_128)
        decrypt_segment(s, p, h, fo, deadline_ms);
    if (s->ok)
        util_sha256_hex(s->data, s->len, s->sha256);
    return s;
}

struct canary_playlist *canary_playlist_ref(struct canary_playlist *p)
{
    if (p)
        atomic_fetch_add(&p->refs, 1);
    return p;
}

void canary_playlist_release(struct canary_playlist *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    hls_playlist_free(&p->pl);
    free(p->base);
    free(p->object);
    json_decref(p->fetch);
    free(p);
}

struct canary_segment *canary_segment_ref(struct canary_segment *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

void canary_segment_release(struct canary_segment *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    free(s->data);
    free(s->object);
    free(s->name);
    json_decref(s->fetch);
    pthread_mutex_destroy(&s->memo_mu);
    free(s);
}
