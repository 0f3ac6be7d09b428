/* candidate.c - the candidate's bytes: file, segment URL or HLS playlist. */
#include "candidate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hls.h"
#include "redact.h"
#include "uri.h"

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
    json_array_append_new(c->fetches, fetch_result_to_json(res, (int)c->nbodies));
    if (!c->observed_at_ms || (res->started_at_ms && res->started_at_ms < c->observed_at_ms))
        c->observed_at_ms = res->started_at_ms;
    if (res->ended_at_ms > c->observed_end_ms)
        c->observed_end_ms = res->ended_at_ms;
    return &c->bodies[c->nbodies++];
}

static struct fetch_result *fetch_one(struct candidate *c, const struct fetch_options *opt, const char *url)
{
    struct fetch_result res;
    fetch_get(opt, url, &res);
    struct fetch_result *kept = keep(c, &res);
    if (!kept)
        return NULL;
    if (kept->error != FETCH_OK)
        set_failure(c, fetch_error_code(kept->error), "%s: %s", kept->url ? kept->url : "(url)", kept->message);
    return kept;
}

static void add_segment(struct candidate *c, const struct fetch_result *res, bool joins_previous)
{
    struct bsrc_segment *s = &c->segs[c->nsegs++];
    memset(s, 0, sizeof *s);
    s->data = res->data;
    s->len = res->size;
    s->joins_previous = joins_previous;
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

static void list_variants(const struct hls_playlist *pl, char *err, size_t errlen)
{
    size_t used = (size_t)snprintf(err, errlen, "the candidate is a master playlist; name one media playlist:");
    for (size_t i = 0; i < pl->variant_count && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, "\n  %s  (BANDWIDTH=%llu%s%s%s%s)", pl->variants[i].uri,
                                 (unsigned long long)pl->variants[i].bandwidth,
                                 pl->variants[i].resolution ? " RESOLUTION=" : "",
                                 pl->variants[i].resolution ? pl->variants[i].resolution : "",
                                 pl->variants[i].codecs ? " CODECS=" : "",
                                 pl->variants[i].codecs ? pl->variants[i].codecs : "");
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
    char *prev_url = NULL;       /* a byte range right after the previous one of */
    uint64_t prev_end = 0;       /* the same resource continues its bytes */
    for (size_t i = 0; i < sel.count && !c->failure; i++) {
        const struct hls_segment *seg = &pl->segments[sel.first_index + i];
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
        const struct fetch_result *res = fetch_one(c, &fo, url);
        bool joins = seg->has_byterange && prev_url && !strcmp(prev_url, url) && seg->byterange_offset == prev_end;
        free(prev_url);
        prev_url = seg->has_byterange ? url : NULL;
        prev_end = seg->byterange_offset + seg->byterange_length;
        if (!seg->has_byterange)
            free(url);
        if (!res) {
            free(prev_url);
            return CANDIDATE_FAILED;
        }
        if (res->error != FETCH_OK)
            break;
        c->total_bytes += res->size;
        if (c->total_bytes > CANDIDATE_MAX_TOTAL_BYTES) {
            set_failure(c, "candidate_too_large", "the selected segments exceed %llu bytes in all",
                        (unsigned long long)CANDIDATE_MAX_TOTAL_BYTES);
            break;
        }
        add_segment(c, res, joins);
    }
    free(prev_url);
    return CANDIDATE_OK;
}

static enum candidate_status open_url(struct candidate *c, const struct candidate_options *opt,
                                      char *err, size_t errlen)
{
    c->fetches = json_array();
    const struct fetch_result *first = fetch_one(c, &opt->fetch, opt->location);
    if (!first || !c->fetches)
        return CANDIDATE_FAILED;
    if (first->error != FETCH_OK)
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
        list_variants(&pl, err, errlen);
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

enum candidate_status candidate_open(const struct candidate_options *opt, struct candidate *c,
                                     char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->object = redact_url_dup(opt->location, opt->fetch.redact_names, opt->fetch.n_redact_names);
    if (!c->object)
        return CANDIDATE_FAILED;
    if (uri_is_http(opt->location)) {
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
    FILE *f = fopen(opt->location, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open candidate %s", opt->location);
        return CANDIDATE_NOINPUT;
    }
    fclose(f);
    c->segs[0].path = opt->location;
    c->nsegs = 1;
    return CANDIDATE_OK;
}

void candidate_free(struct candidate *c)
{
    for (size_t i = 0; i < c->nbodies; i++)
        fetch_result_free(&c->bodies[i]);
    free(c->bodies);
    json_decref(c->fetches);
    free(c->object);
    memset(c, 0, sizeof *c);
}
