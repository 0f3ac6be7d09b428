/* candidate.c - the candidate's bytes: file, segment URL or HLS playlist. */
#include "candidate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "hls.h"
#include "hlskey.h"
#include "redact.h"
#include "uri.h"
#include "util.h"

static void set_failure(struct candidate *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_failure(struct candidate *c, const char *code, const char *fmt, ...)
{
    if (c->failure)
        return;
    c->failure = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->failure_detail, sizeof c->failure_detail, fmt, ap);
    va_end(ap);
}

static void note_times(struct candidate *c, int64_t started, int64_t ended)
{
    if (!c->observed_at_ms || (started && started < c->observed_at_ms))
        c->observed_at_ms = started;
    if (ended > c->observed_end_ms)
        c->observed_end_ms = ended;
}

/* Keeps a fetch result (it may hold segment bytes) and records it. */
static struct fetch_result *keep(struct candidate *c, struct fetch_result *res)
{
    struct fetch_result *n = realloc(c->bodies, (c->nbodies + 1) * sizeof *n);
    if (!n) {
        fetch_result_free(res);
        return NULL;
    }
    c->bodies = n;
    c->bodies[c->nbodies] = *res;
    json_array_append_new(c->fetches, fetch_result_to_json(res, (int)json_array_size(c->fetches)));
    note_times(c, res->started_at_ms, res->ended_at_ms);
    return &c->bodies[c->nbodies++];
}

/* Adds the host of a redirect target (redacted URL) to the report's list,
 * unless it is the requested URL's host or already listed. */
static void note_host(struct candidate *c, const char *url, const char *requested)
{
    struct uri_parts u, r;
    if (!url || uri_parse(url, &u) != URI_OK || !u.host.defined || !u.host.len)
        return;
    if (requested && uri_parse(requested, &r) == URI_OK && r.host.defined && r.host.len == u.host.len &&
        !strncasecmp(r.host.ptr, u.host.ptr, u.host.len))
        return;
    size_t i;
    json_t *v;
    json_array_foreach(c->redirect_hosts, i, v)
        if (json_string_length(v) == u.host.len && !strncasecmp(json_string_value(v), u.host.ptr, u.host.len))
            return;
    if (json_array_size(c->redirect_hosts) < CANDIDATE_MAX_REDIRECT_HOSTS)
        json_array_append_new(c->redirect_hosts, json_stringn(u.host.ptr, u.host.len));
}

enum narrowed {
    NARROW_NOTHING_LEFT = 0, /* the failure is set: no request */
    NARROW_OK,               /* the request may go, with its own limits */
    NARROW_BY_TOTAL,         /* its size limit is what is left of the candidate total */
};

/* The limits of the next request: the per-object options, narrowed to
 * what is left of the candidate total (segments only) and of the deadline. */
static enum narrowed narrow(struct candidate *c, const struct candidate_options *opt, struct fetch_options *fo,
                            bool segment)
{
    int64_t now = util_now_ms();
    if (opt->deadline_ms && now >= opt->deadline_ms) {
        set_failure(c, "deadline_exceeded", "the deadline (--deadline) passed before the next request");
        return NARROW_NOTHING_LEFT;
    }
    if (opt->deadline_ms) {
        long per_object = fo->total_timeout_ms > 0 ? fo->total_timeout_ms : FETCH_DEFAULT_TOTAL_TIMEOUT_MS;
        if (opt->deadline_ms - now < per_object)
            fo->total_timeout_ms = (long)(opt->deadline_ms - now);
    }
    if (!segment)
        return NARROW_OK;
    uint64_t total = opt->max_total_bytes && opt->max_total_bytes < CANDIDATE_MAX_TOTAL_BYTES
                         ? opt->max_total_bytes : CANDIDATE_MAX_TOTAL_BYTES;
    uint64_t left = total > c->total_bytes ? total - c->total_bytes : 0;
    size_t per_object = fo->max_bytes ? fo->max_bytes : FETCH_DEFAULT_MAX_BYTES;
    if (left == 0) {
        set_failure(c, "candidate_too_large", "the selected segments exceed %llu bytes in all",
                    (unsigned long long)total);
        return NARROW_NOTHING_LEFT;
    }
    if (left < per_object) {
        fo->max_bytes = (size_t)left;
        return NARROW_BY_TOTAL;
    }
    return NARROW_OK;
}

/* Fetches url, keeps and records the result in *out: 0, or -1 when out of
 * memory.  *out is NULL when nothing was requested (the failure is set). */
static int fetch_one(struct candidate *c, const struct candidate_options *opt, struct fetch_options fo,
                     const char *url, bool segment, struct fetch_result **out)
{
    *out = NULL;
    enum narrowed limited = narrow(c, opt, &fo, segment);
    if (limited == NARROW_NOTHING_LEFT)
        return 0;
    struct fetch_result res;
    fo.accept_encoding = !segment;   /* a playlist may come compressed (RFC 9110); a segment as it is */
    fetch_get(&fo, url, &res);
    struct fetch_result *kept = keep(c, &res);
    if (!kept)
        return -1;
    for (size_t i = 0; i < kept->n_redirects && kept->other_host_redirect; i++)
        note_host(c, kept->redirects[i].location, kept->url);
    const char *code = fetch_error_code(kept->error);
    if (kept->error == FETCH_TIMEOUT && opt->deadline_ms && util_now_ms() >= opt->deadline_ms)
        code = "deadline_exceeded";
    else if (kept->error == FETCH_TOO_LARGE && limited == NARROW_BY_TOTAL)
        code = "candidate_too_large";
    if (kept->error != FETCH_OK)
        set_failure(c, code, "%s: %s", kept->url ? kept->url : "(url)", kept->message);
    *out = kept;
    return 0;
}

static void add_segment(struct candidate *c, const struct fetch_result *res, bool joins_previous)
{
    struct bsrc_segment *s = &c->segs[c->nsegs++];
    memset(s, 0, sizeof *s);
    s->data = res->data;
    s->len = res->size;
    s->joins_previous = joins_previous;
    c->total_bytes += res->size;
    c->length_unproven |= res->length_unproven;
}

/* The segment needs another init segment than the one before it (the
 * first one with an EXT-X-MAP always does): fetched once per change, as
 * FFmpeg's hls demuxer does; an unchanged one is not fetched again. */
static bool map_changes(const struct hls_segment *prev, const struct hls_segment *seg)
{
    if (!seg->map_uri)
        return false;
    if (!prev || !prev->map_uri)
        return true;
    return strcmp(prev->map_uri, seg->map_uri) != 0 || prev->map_has_byterange != seg->map_has_byterange ||
           prev->map_byterange_length != seg->map_byterange_length ||
           prev->map_byterange_offset != seg->map_byterange_offset;
}

/* The init segment of seg, through the same bounded fetch path as the
 * segments (its bytes count towards the same limits).  1: added; 0: not
 * delivered (the failure is recorded, nothing after it is read); -1:
 * internal error. */
static int fetch_map(struct candidate *c, const struct candidate_options *opt, const char *base,
                     const struct hls_segment *seg)
{
    char *url = NULL;
    enum uri_status us = uri_resolve_alloc(base, seg->map_uri, &url);
    if (us != URI_OK) {
        set_failure(c, "bad_segment_uri", "init segment (EXT-X-MAP) of segment %llu: %s",
                    (unsigned long long)seg->media_sequence, uri_status_message(us));
        return 0;
    }
    struct fetch_options fo = opt->fetch;
    if (seg->map_has_byterange)
        fo.range = (struct fetch_range){.offset = seg->map_byterange_offset, .length = seg->map_byterange_length};
    struct fetch_result *res;
    int frc = fetch_one(c, opt, fo, url, true, &res);
    free(url);
    if (frc)
        return -1;
    if (!res || res->error != FETCH_OK)
        return 0;
    add_segment(c, res, false);
    return 1;
}

static const char *playlist_reason(enum hls_status st)
{
    switch (st) {
    case HLS_E_BOM: return "playlist_bom";
    case HLS_E_SELECT_DISCONTINUITY: return "interval_crosses_discontinuity";
    case HLS_E_SELECT_NOT_FOUND: return "segment_not_in_playlist";
    default: break;
    }
    switch (hls_status_class(st)) {
    case HLS_CLASS_OUTSIDE_PROFILE: return "playlist_outside_profile";
    case HLS_CLASS_INVALID_DELIVERY: return "playlist_invalid";
    default: return "playlist_unusable";
    }
}

/* The variants, for the usage error; their URIs redacted like every URL
 * printed (a master playlist's variant URIs often carry tokens). */
static void list_variants(const struct hls_playlist *pl, const struct redact_policy *pol, char *err,
                          size_t errlen)
{
    size_t used = (size_t)snprintf(err, errlen, "the candidate is a master playlist; name one media playlist:");
    for (size_t i = 0; i < pl->variant_count && used < errlen; i++) {
        char uri[1024];
        redact_url(pl->variants[i].uri, pol, uri, sizeof uri);
        used += (size_t)snprintf(err + used, errlen - used, "\n  %s  (BANDWIDTH=%llu%s%s%s%s)", uri,
                                 (unsigned long long)pl->variants[i].bandwidth,
                                 pl->variants[i].resolution ? " RESOLUTION=" : "",
                                 pl->variants[i].resolution ? pl->variants[i].resolution : "",
                                 pl->variants[i].codecs ? " CODECS=" : "",
                                 pl->variants[i].codecs ? pl->variants[i].codecs : "");
    }
}

/* The last key fetched: a playlist names the same key for many segments. */
struct key_cache {
    char *url;                   /* unredacted: never printed */
    uint8_t key[HLSKEY_LEN];
};

static void key_cache_free(struct key_cache *k)
{
    free(k->url);
    OPENSSL_cleanse(k->key, sizeof k->key);
}

/* The key of an AES-128 segment, from the cache or fetched (the request is
 * recorded with its URL hidden).  0, 1 when the failure is set, -1 out of
 * memory. */
static int segment_key(struct candidate *c, const struct candidate_options *opt, const char *base,
                       const struct hls_segment *seg, struct key_cache *k)
{
    char *url = NULL;
    if (uri_resolve_alloc(base, seg->key.uri, &url) != URI_OK) {
        free(url);
        set_failure(c, "key_unavailable", "segment %llu: the key URI does not resolve",
                    (unsigned long long)seg->media_sequence);
        return 1;
    }
    if (k->url && !strcmp(k->url, url)) {
        free(url);
        return 0;
    }
    key_cache_free(k);
    memset(k, 0, sizeof *k);
    struct fetch_options fo = opt->fetch;
    if (narrow(c, opt, &fo, false) == NARROW_NOTHING_LEFT) {
        free(url);
        return 1;
    }
    json_t *record = NULL;
    int64_t started = 0, ended = 0;
    char why[160];
    const char *reason = hlskey_fetch(&fo, url, (int)json_array_size(c->fetches), k->key, &record, &started,
                                      &ended, why, sizeof why);
    if (!record || json_array_append_new(c->fetches, record)) {
        free(url);
        return -1;
    }
    note_times(c, started, ended);
    if (reason) {
        free(url);
        set_failure(c, reason, "segment %llu: %s", (unsigned long long)seg->media_sequence, why);
        return 1;
    }
    k->url = url;
    return 0;
}

/* Decrypts an AES-128 segment in place: 0, or 1 when the failure is set. */
static int decrypt_segment(struct candidate *c, const struct hls_segment *seg, const struct key_cache *k,
                           struct fetch_result *res)
{
    uint8_t iv[16];
    hlskey_iv(seg, iv);
    char why[160];
    const char *reason = hlskey_decrypt(res->data, &res->size, k->key, iv, why, sizeof why);
    if (reason) {
        set_failure(c, reason, "segment %llu: %s", (unsigned long long)seg->media_sequence, why);
        return 1;
    }
    c->encrypted = true;
    return 0;
}

static enum candidate_status fetch_segments(struct candidate *c, const struct candidate_options *opt,
                                            const struct hls_playlist *pl, const char *base,
                                            char *err, size_t errlen)
{
    if (pl->segment_count == 0) {
        set_failure(c, "playlist_empty", "the playlist lists no segment");
        return CANDIDATE_OK;
    }
    uint64_t first = opt->have_sequence ? opt->seq_first : pl->segments[0].media_sequence;
    uint64_t last = opt->have_sequence ? opt->seq_last : pl->segments[pl->segment_count - 1].media_sequence;
    struct hls_selection sel;
    struct hls_error herr;
    enum hls_status st = hls_select(pl, first, last, &sel, &herr);
    if (st == HLS_E_SELECT_RANGE) {
        snprintf(err, errlen, "media sequence %llu:%llu is not a range", (unsigned long long)first,
                 (unsigned long long)last);
        return CANDIDATE_USAGE;
    }
    if (st != HLS_OK) {
        set_failure(c, playlist_reason(st), "%s", herr.message);
        return CANDIDATE_OK;
    }
    if (sel.count > CANDIDATE_MAX_SEGMENTS) {
        snprintf(err, errlen, "%zu segments selected; at most %d per check", sel.count, CANDIDATE_MAX_SEGMENTS);
        return CANDIDATE_USAGE;
    }
    size_t maps = 0;
    for (size_t i = 0; i < sel.count; i++)
        maps += map_changes(i ? &pl->segments[sel.first_index + i - 1] : NULL, &pl->segments[sel.first_index + i]);
    if (sel.count + maps > CANDIDATE_MAX_SEGMENTS - 1) {
        snprintf(err, errlen, "%zu segments and %zu init segments (EXT-X-MAP) selected; at most %d per check",
                 sel.count, maps, CANDIDATE_MAX_SEGMENTS - 1);
        return CANDIDATE_USAGE;
    }
    char *prev_url = NULL;       /* a byte range right after the previous one of */
    uint64_t prev_end = 0;       /* the same resource continues its bytes */
    struct key_cache key = {0};
    enum candidate_status rc = CANDIDATE_OK;
    for (size_t i = 0; i < sel.count && !c->failure; i++) {
        const struct hls_segment *seg = &pl->segments[sel.first_index + i];
        if (seg->key.method == HLS_KEY_AES_128 && seg->map_uri) {
            /* whether the init segment is encrypted too depends on the tags' order (RFC 8216
             * 4.3.2.5): not read yet, so not checked */
            set_failure(c, "playlist_outside_profile", "segment %llu: AES-128 with fMP4 segments (EXT-X-MAP) "
                        "is outside profile v1", (unsigned long long)seg->media_sequence);
            break;
        }
        int krc = seg->key.method == HLS_KEY_AES_128 ? segment_key(c, opt, base, seg, &key) : 0;
        if (krc) {
            rc = krc < 0 ? CANDIDATE_FAILED : CANDIDATE_OK;
            break;
        }
        if (map_changes(i ? seg - 1 : NULL, seg)) {
            int mrc = fetch_map(c, opt, base, seg);
            if (mrc < 0) {
                rc = CANDIDATE_FAILED;
                break;
            }
            free(prev_url);      /* the init segment's bytes stand between */
            prev_url = NULL;
            if (mrc == 0)
                break;
        }
        char *url = NULL;
        enum uri_status us = uri_resolve_alloc(base, seg->uri, &url);
        if (us != URI_OK) {
            set_failure(c, "bad_segment_uri", "segment %llu: %s", (unsigned long long)seg->media_sequence,
                        uri_status_message(us));
            break;
        }
        struct fetch_options fo = opt->fetch;
        if (seg->has_byterange)
            fo.range = (struct fetch_range){.offset = seg->byterange_offset, .length = seg->byterange_length};
        struct fetch_result *res;
        int frc = fetch_one(c, opt, fo, url, true, &res);
        bool joins = seg->has_byterange && prev_url && !strcmp(prev_url, url) && seg->byterange_offset == prev_end;
        free(prev_url);
        prev_url = seg->has_byterange ? url : NULL;
        prev_end = seg->byterange_offset + seg->byterange_length;
        if (!seg->has_byterange)
            free(url);
        if (frc) {
            rc = CANDIDATE_FAILED;
            break;
        }
        if (!res || res->error != FETCH_OK)
            break;
        if (seg->key.method == HLS_KEY_AES_128 && decrypt_segment(c, seg, &key, res))
            break;
        add_segment(c, res, joins);
    }
    free(prev_url);
    key_cache_free(&key);
    return rc;
}

static enum candidate_status open_url(struct candidate *c, const struct candidate_options *opt,
                                      char *err, size_t errlen)
{
    c->fetches = json_array();
    c->redirect_hosts = json_array();
    struct fetch_result *first;
    if (!c->fetches || !c->redirect_hosts || fetch_one(c, opt, opt->fetch, opt->location, false, &first))
        return CANDIDATE_FAILED;
    if (!first || first->error != FETCH_OK)
        return CANDIDATE_OK;
    if (!hls_looks_like_playlist(first->data, first->size)) {
        add_segment(c, first, false);
        return CANDIDATE_OK;
    }
    c->is_playlist = true;
    struct hls_playlist pl;
    struct hls_error herr;
    enum hls_status st = hls_parse(first->data, first->size, &pl, &herr);
    enum candidate_status rc = CANDIDATE_OK;
    if (st == HLS_E_MASTER_PLAYLIST) {
        list_variants(&pl, &opt->fetch.redact, err, errlen);
        rc = CANDIDATE_USAGE;
    } else if (st != HLS_OK) {
        set_failure(c, playlist_reason(st), "playlist line %lu: %s", herr.line, herr.message);
    } else {
        /* the base is the playlist's URL after redirects, unredacted */
        char *base = strdup(first->raw_effective_url ? first->raw_effective_url : opt->location);
        rc = base ? fetch_segments(c, opt, &pl, base, err, errlen) : CANDIDATE_FAILED;
        free(base);
    }
    hls_playlist_free(&pl);
    return rc;
}

bool candidate_location_is_url(const char *location)
{
    size_t n = strspn(location, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
    return n > 0 && strncmp(location + n, "://", 3) == 0;
}

/* A location of URL form that is not a usable http(s) URL: a usage error
 * that never echoes the URL (it may carry a signature): scheme and host at
 * most. */
static enum candidate_status refuse_url(const char *location, char *err, size_t errlen)
{
    char origin[300];
    redact_url_origin(location, origin, sizeof origin);
    size_t scheme = strcspn(location, ":");
    if (!((scheme == 4 && !strncasecmp(location, "http", 4)) || (scheme == 5 && !strncasecmp(location, "https", 5))))
        snprintf(err, errlen, "unsupported scheme '%.*s' in --candidate: use a local file or an http(s) URL",
                 (int)(scheme < 16 ? scheme : 16), location);
    else
        snprintf(err, errlen, "--candidate %s...: the URL cannot be parsed (RFC 3986); not shown, it may "
                 "carry credentials", origin);
    return CANDIDATE_USAGE;
}

/* A local candidate must be a readable regular file: a directory, a FIFO or
 * a device is refused before anything is checked or stored. */
#define LOCAL_PLAYLIST_MAX (1024 * 1024)
#define LOCAL_PLAYLIST_HEAD 4096

/* A local file that holds a playlist (by content, as for a URL): a master
 * playlist gets the usage error a master playlist URL gets, a media
 * playlist the reason a local candidate cannot be one.  0 when the file is
 * no playlist (it is then read as MPEG-TS). */
static enum candidate_status local_playlist(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return CANDIDATE_OK;   /* open_local's own read reports it */
    /* the head decides (hls_looks_like_playlist reads only the start): an
     * MPEG-TS candidate costs one small read, a playlist is read whole */
    char head[LOCAL_PLAYLIST_HEAD];
    size_t n = fread(head, 1, sizeof head, f);
    char *buf = hls_looks_like_playlist(head, n) ? malloc(LOCAL_PLAYLIST_MAX) : NULL;
    if (buf) {
        memcpy(buf, head, n);
        n += fread(buf + n, 1, LOCAL_PLAYLIST_MAX - n, f);
    }
    fclose(f);
    enum candidate_status rc = CANDIDATE_OK;
    if (buf) {
        struct hls_playlist pl;
        struct hls_error herr;
        enum hls_status st = hls_parse(buf, n, &pl, &herr);
        struct redact_policy none = {0};
        if (st == HLS_E_MASTER_PLAYLIST)
            list_variants(&pl, &none, err, errlen);
        else
            snprintf(err, errlen, "the candidate is a playlist file; a local candidate is one MPEG-TS segment "
                     "(give a media playlist by its http(s) URL)");
        hls_playlist_free(&pl);
        rc = CANDIDATE_USAGE;
    }
    free(buf);
    return rc;
}

static enum candidate_status open_local(struct candidate *c, const char *path, char *err, size_t errlen)
{
    if (util_check_regular_file(path, err, errlen))
        return CANDIDATE_NOINPUT;
    enum candidate_status pl = local_playlist(path, err, errlen);
    if (pl != CANDIDATE_OK)
        return pl;
    c->segs[0].path = path;
    c->nsegs = 1;
    return CANDIDATE_OK;
}

enum candidate_status candidate_open(const struct candidate_options *opt, struct candidate *c,
                                     char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (candidate_location_is_url(opt->location) && !uri_is_http(opt->location))
        return refuse_url(opt->location, err, errlen);
    c->object = redact_url_dup(opt->location, &opt->fetch.redact);
    if (!c->object)
        return CANDIDATE_FAILED;
    if (candidate_location_is_url(opt->location)) {
        enum candidate_status rc = open_url(c, opt, err, errlen);
        /* A failed delivery ends the byte stream with an error, so that the
         * decoding side can never take a partial delivery for a whole one. */
        if (rc == CANDIDATE_OK && c->failure && c->nsegs < CANDIDATE_MAX_SEGMENTS) {
            struct bsrc_segment *s = &c->segs[c->nsegs++];
            memset(s, 0, sizeof *s);
            s->error = c->failure;
        }
        return rc;
    }
    return open_local(c, opt->location, err, errlen);
}

void candidate_free(struct candidate *c)
{
    for (size_t i = 0; i < c->nbodies; i++)
        fetch_result_free(&c->bodies[i]);
    free(c->bodies);
    json_decref(c->fetches);
    json_decref(c->redirect_hosts);
    free(c->object);
    memset(c, 0, sizeof *c);
}

void candidate_annotate_report(json_t *report, const struct candidate *c)
{
    json_t *o = json_object_get(report, "candidate");
    if (!json_is_object(o))
        return;
    if (c->failure)
        json_object_set_new(o, "delivery_failure",
                            json_pack("{s:s, s:s}", "reason", c->failure, "detail", c->failure_detail));
    json_object_set_new(o, "redirect_hosts", c->redirect_hosts ? json_copy(c->redirect_hosts) : json_array());
    json_object_set_new(o, "length_proven", json_boolean(!c->length_unproven));
    if (c->encrypted)
        json_object_set_new(o, "encryption", json_string("AES-128"));
}
