/* canary_parts.c - the LL-HLS parts of one candidate segment (see canary_parts.h). */
#include "canary_parts.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hls.h"
#include "redact.h"
#include "uri.h"
#include "util.h"

static const struct hls_segment *segment_of(const struct canary_playlist *pl, uint64_t seq)
{
    uint64_t first, last;
    if (!pl || !canary_playlist_range(pl, &first, &last) || seq < first || seq > last)
        return NULL;
    return &pl->pl.segments[seq - first];
}

bool canary_parts_listed(const struct canary_playlist *pl, uint64_t seq)
{
    const struct hls_segment *s = segment_of(pl, seq);
    return s && s->part_count > 0 && s->key.method == HLS_KEY_NONE;
}

static void fail(struct canary_parts *p, long index, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The first failure is the one reported (as candidate.delivery_failure). */
static void fail(struct canary_parts *p, long index, const char *code, const char *fmt, ...)
{
    if (p->c.failure)
        return;
    p->c.failure = code;
    p->failed_index = index;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->c.failure_detail, sizeof p->c.failure_detail, fmt, ap);
    va_end(ap);
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void note_times(struct candidate *c, int64_t started, int64_t ended)
{
    if (!c->observed_at_ms || (started && started < c->observed_at_ms))
        c->observed_at_ms = started;
    if (ended > c->observed_end_ms)
        c->observed_end_ms = ended;
}

/* One request through the fetcher, kept (its bytes are a segment of the
 * candidate) and recorded; index -1 is the init segment.  0, or -1 out of
 * memory. */
static int fetch_one(struct canary_parts *p, const char *base, const char *uri, struct fetch_range range,
                     const struct fetch_options *fo, int64_t deadline_ms, long index)
{
    struct candidate *c = &p->c;
    char *url = NULL;
    if (uri_resolve_alloc(base, uri, &url) != URI_OK || !url) {
        free(url);
        fail(p, index, "bad_segment_uri", "%s %ld: the URI cannot be resolved", index < 0 ? "init segment" : "part",
             index);
        return 0;
    }
    uint64_t left = CANDIDATE_MAX_TOTAL_BYTES - c->total_bytes;
    if (left == 0) { /* max_bytes 0 would mean the default */
        free(url);
        fail(p, index, "candidate_too_large", "the parts exceed %llu bytes in all",
             (unsigned long long)CANDIDATE_MAX_TOTAL_BYTES);
        return 0;
    }
    struct fetch_options o = canary_fetch_options_until(fo, deadline_ms);
    o.range = range;
    if ((o.max_bytes ? o.max_bytes : FETCH_DEFAULT_MAX_BYTES) > left)
        o.max_bytes = (size_t)left;
    struct fetch_result *res = &c->bodies[c->nbodies];
    int64_t first_gone = 0;
    int retries = 0;
    for (;;) {
        fetch_get(&o, url, res);
        bool gone = res->error == FETCH_HTTP_ERROR && (res->http_status == 404 || res->http_status == 410);
        if (!gone || index < 0)
            break;
        if (!first_gone)
            first_gone = res->started_at_ms;
        int64_t step = p->part_target_ms / 4 < 20 ? 20 : p->part_target_ms / 4 > 250 ? 250 : p->part_target_ms / 4;
        int64_t until = first_gone + p->wait_bound_ms < deadline_ms ? first_gone + p->wait_bound_ms : deadline_ms;
        if (util_now_ms() + step >= until)
            break;
        fetch_result_free(res);
        retries++;
        sleep_ms(step);
        o = canary_fetch_options_until(fo, deadline_ms);
        o.range = range;
        if ((o.max_bytes ? o.max_bytes : FETCH_DEFAULT_MAX_BYTES) > left)
            o.max_bytes = (size_t)left;
    }
    free(url);
    c->nbodies++;
    if (first_gone && res->error == FETCH_OK && res->started_at_ms - first_gone > p->part_target_ms) {
        json_t *fact = json_pack("{s:s, s:i, s:I, s:I, s:i}", "fact", "part_late", "part_index", (int)index,
                                 "waited_ms", (json_int_t)(res->started_at_ms - first_gone), "part_target_ms",
                                 (json_int_t)p->part_target_ms, "requests_refused", retries);
        if (!fact || json_array_append_new(p->delivery, fact))
            return -1;
    }
    json_t *rec = fetch_result_to_json(res, (int)json_array_size(c->fetches));
    if (!rec || json_array_append_new(c->fetches, rec))
        return -1;
    note_times(c, res->started_at_ms, res->ended_at_ms);
    if (!c->object && index >= 0)
        c->object = res->url ? strdup(res->url) : NULL;
    if (res->error != FETCH_OK) {
        bool gone = res->error == FETCH_HTTP_ERROR && (res->http_status == 404 || res->http_status == 410);
        if (gone && first_gone)
            fail(p, index, "part_missing", "part %ld: %s: %s, still after %lld ms (%d requests)", index,
                 res->url ? res->url : "(url)", res->message, (long long)(util_now_ms() - first_gone), retries + 1);
        else
            fail(p, index, gone ? "part_missing" : fetch_error_code(res->error), "%s %ld: %s: %s",
                 index < 0 ? "init segment" : "part", index, res->url ? res->url : "(url)", res->message);
        return 0;
    }
    struct bsrc_segment *s = &c->segs[c->nsegs++];
    memset(s, 0, sizeof *s);
    s->data = res->data;
    s->len = res->size;
    /* TS parts are one stream cut at packet boundaries: no join between
     * them (continuity counters go on); an fMP4 part is fragments of its own */
    s->joins_previous = !p->fmp4 && index > 0;
    c->total_bytes += res->size;
    c->length_unproven |= res->length_unproven;
    return 0;
}

/* Exact tick sums: each DURATION is num/10^k seconds (k <= 9). */
int canary_parts_place(struct canary_parts *p, const struct hls_playlist *pl, const struct hls_segment *s)
{
    p->count = s->part_count;
    p->end_ticks = calloc(s->part_count, sizeof *p->end_ticks);
    p->durations = json_array();
    if (!p->end_ticks || !p->durations)
        return -1;
    uint64_t ns = 0;
    for (size_t j = 0; j < s->part_count; j++) {
        const struct hls_part *h = &pl->parts[s->part_first + j];
        ns += h->duration_num * (1000000000u / (h->duration_den ? h->duration_den : 1));
        p->end_ticks[j] = ns * 9 / 100000; /* 90000 / 10^9, rounded down */
        json_array_append_new(p->durations, json_string(h->duration_text ? h->duration_text : ""));
    }
    return 0;
}

int canary_parts_fetch(const struct canary_playlist *pl, uint64_t seq, const struct fetch_options *fo,
                       int64_t deadline_ms, struct canary_parts *out)
{
    memset(out, 0, sizeof *out);
    out->failed_index = -1;
    const struct hls_segment *s = segment_of(pl, seq);
    if (!s || !s->part_count)
        return 0;
    struct candidate *c = &out->c;
    out->count = s->part_count;
    out->fmp4 = s->map_uri != NULL;
    c->is_playlist = true;
    c->fetches = json_array();
    c->redirect_hosts = json_array();
    c->bodies = calloc(s->part_count + 1, sizeof *c->bodies);
    out->delivery = json_array();
    out->part_target_ms = (int64_t)pl->pl.part_target.ms;
    out->wait_bound_ms = (int64_t)pl->pl.target_duration * 1000;
    if (!c->fetches || !c->redirect_hosts || !c->bodies || !out->delivery || canary_parts_place(out, &pl->pl, s))
        return -1;
    /* the parts were read from the cycle's playlist: its request comes first */
    if (pl->fetch) {
        json_t *rec = json_deep_copy(pl->fetch);
        if (!rec || json_object_set_new(rec, "seq", json_integer(0)) || json_array_append_new(c->fetches, rec))
            return -1;
        note_times(c, pl->started_at_ms, pl->ended_at_ms);
    }
    if (s->part_count + (out->fmp4 ? 1 : 0) > CANDIDATE_MAX_SEGMENTS) {
        fail(out, -1, "too_many_parts", "%zu parts: at most %d per check", s->part_count, CANDIDATE_MAX_SEGMENTS - 1);
        return 0;
    }
    if (out->fmp4) {
        struct fetch_range r = {s->map_byterange_offset, s->map_has_byterange ? s->map_byterange_length : 0};
        if (fetch_one(out, pl->base, s->map_uri, r, fo, deadline_ms, -1))
            return -1;
    }
    for (size_t j = 0; j < s->part_count && !c->failure; j++) {
        const struct hls_part *h = &pl->pl.parts[s->part_first + j];
        if (h->gap) {
            fail(out, (long)j, "part_gap", "part %zu of media sequence %llu is marked GAP=YES", j,
                 (unsigned long long)seq);
            break;
        }
        struct fetch_range r = {h->byterange_offset, h->has_byterange ? h->byterange_length : 0};
        if (fetch_one(out, pl->base, h->uri, r, fo, deadline_ms, (long)j))
            return -1;
    }
    if (!c->object)
        c->object = strdup(pl->object ? pl->object : "parts");
    return c->object ? 0 : -1;
}

void canary_parts_free(struct canary_parts *p)
{
    candidate_free(&p->c);
    free(p->end_ticks);
    json_decref(p->durations);
    json_decref(p->delivery);
    memset(p, 0, sizeof *p);
}

size_t canary_parts_index_at(const struct canary_parts *p, int64_t ticks)
{
    if (!p->count)
        return 0;
    for (size_t j = 0; j < p->count; j++)
        if (ticks < 0 || (uint64_t)ticks < p->end_ticks[j])
            return j;
    return p->count - 1;
}

bool canary_parts_same_bytes(const struct canary_parts *p, const struct candidate *parent)
{
    if (p->c.failure || parent->failure || p->c.total_bytes != parent->total_bytes)
        return false;
    /* walk both lists of pieces as one byte string each */
    size_t i = 0, j = 0, oi = 0, oj = 0;
    while (i < p->c.nsegs && j < parent->nsegs) {
        const struct bsrc_segment *a = &p->c.segs[i], *b = &parent->segs[j];
        size_t n = a->len - oi < b->len - oj ? a->len - oi : b->len - oj;
        if (n && memcmp(a->data + oi, b->data + oj, n))
            return false;
        oi += n, oj += n;
        if (oi == a->len)
            i++, oi = 0;
        if (oj == b->len)
            j++, oj = 0;
    }
    for (; i < p->c.nsegs; i++)
        if (p->c.segs[i].len)
            return false;
    for (; j < parent->nsegs; j++)
        if (parent->segs[j].len)
            return false;
    return true;
}

/* ---- the segment's one row ---- */

static int severity(const json_t *report)
{
    const char *v = json_string_value(json_object_get(report, "verdict"));
    return !v ? -1 : !strcmp(v, "MISMATCH") ? 2 : !strcmp(v, "UNKNOWN") ? 1 : 0;
}

static json_t *summary(const json_t *report, const char *by)
{
    if (!report && !by)
        return json_null();
    json_t *o = json_object();
    if (!report) { /* known without a check of its own */
        json_object_set_new(o, "verdict", json_string("MATCH"));
        json_object_set_new(o, "reason", json_string("identical"));
    } else {
        json_object_set_new(o, "verdict", json_copy(json_object_get(report, "verdict")));
        json_object_set_new(o, "reason", json_copy(json_object_get(report, "reason")));
        json_object_set_new(o, "compare", json_copy(json_object_get(report, "compare")));
    }
    if (by)
        json_object_set_new(o, "by", json_string(by));
    return o;
}

/* The first difference's time, ticks from the segment's start: video
 * first, then audio (the report's own track order). */
static bool first_difference(const json_t *report, int64_t *ticks)
{
    const json_t *iv = json_object_get(report, "interval");
    if (!json_is_integer(json_object_get(iv, "start")))
        return false;
    int64_t start = json_integer_value(json_object_get(iv, "start"));
    static const char *const tracks[] = {"video", "audio"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *t = json_object_get(report, tracks[i]);
        const json_t *pts = json_object_get(json_object_get(t, "first_mismatch"), "pts");
        if (json_is_integer(pts)) {
            *ticks = json_integer_value(pts) - start;
            return true;
        }
    }
    return false;
}

json_t *canary_parts_combine(const struct canary_parts_checks *k, const struct canary_parts *p)
{
    /* preference among equals: the segment, the parts against it, against the reference */
    const json_t *order[3] = {k->segment, k->against_segment, k->against_reference};
    static const char *const names[3] = {"segment", "against_segment", "against_reference"};
    size_t pick = 0;
    for (size_t i = 1; i < 3; i++)
        if (order[i] && severity(order[i]) > severity(order[pick]))
            pick = i;
    json_t *chosen = json_incref((json_t *)order[pick]);
    json_t *objects = json_array();
    for (size_t j = 0; j < p->c.nbodies; j++)
        if (p->c.bodies[j].url && (!p->fmp4 || j > 0))
            json_array_append_new(objects, json_string(p->c.bodies[j].url));
    json_t *part_index = json_null();
    int64_t ticks;
    if (pick > 0 && severity(chosen) == 2 && first_difference(chosen, &ticks))
        part_index = json_integer((json_int_t)canary_parts_index_at(p, ticks));
    else if (pick > 0 && p->c.failure && p->failed_index >= 0)
        part_index = json_integer(p->failed_index);
    json_t *parts = json_pack("{s:I, s:s, s:O, s:O, s:O, s:o, s:s, s:o, s:o, s:o}", "count", (json_int_t)p->count,
                              "container", p->fmp4 ? "fmp4" : "ts", "durations", p->durations, "objects", objects,
                              "delivery", p->delivery,
                              "part_index", part_index, "reported", names[pick], "segment",
                              summary(k->segment, NULL), "against_reference", summary(k->against_reference, NULL),
                              "against_segment", summary(k->against_segment, k->against_segment_by));
    json_decref(objects);
    if (!chosen || !parts || json_object_set_new(chosen, "parts", parts)) {
        json_decref(chosen);
        return NULL;
    }
    if (pick == 1 && severity(chosen) == 2)
        json_object_set_new(chosen, "reason", json_string("parts_differ_from_segment"));
    return chosen;
}
