/* compare.c - pairing and exact comparison (see compare.h). */
#include "compare.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/stereo3d.h>

#include "ts33.h"

void vcmp_init(struct vcmp *v)
{
    memset(v, 0, sizeof *v);
}

void acmp_init(struct acmp *a, int64_t start)
{
    memset(a, 0, sizeof *a);
    a->start = start;
    a->confirmed.channel = a->gap.channel = -1;
}

/* ---- planes ---- */

static bool plane_equal(const uint8_t *a, int la, const uint8_t *b, int lb, int w, int h, int *x, int *y)
{
    for (int row = 0; row < h; row++) {
        const uint8_t *ra = a + (ptrdiff_t)row * la, *rb = b + (ptrdiff_t)row * lb;
        if (memcmp(ra, rb, (size_t)w) == 0)
            continue;
        int col = 0;
        while (ra[col] == rb[col])
            col++;
        *x = col;
        *y = row;
        return false;
    }
    return true;
}

bool frames_equal(const AVFrame *a, const AVFrame *b, const char **plane, int *x, int *y)
{
    static const char *names[3] = {"Y", "U", "V"};
    assert(a->width == b->width && a->height == b->height && a->format == b->format);
    for (int p = 0; p < 3; p++) {
        int w = p ? (a->width + 1) / 2 : a->width;    /* chroma rounded up */
        int h = p ? (a->height + 1) / 2 : a->height;
        if (!plane_equal(a->data[p], a->linesize[p], b->data[p], b->linesize[p], w, h, x, y)) {
            *plane = names[p];
            return false;
        }
    }
    return true;
}

/* ---- parameters ---- */

/* Parameters compare by their meaning, not by whether the bitstream wrote
 * them (issue 18, class 8): H.264 E.2.1 infers video_full_range_flag 0 when
 * it is absent, so FFmpeg's "unspecified" range (nothing written) means the
 * limited range that an explicit flag 0 writes.  The other VUI defaults need
 * nothing: FFmpeg reports an absent colour description as the explicit value
 * 2 (unspecified) it is inferred to be, and an absent chroma location as the
 * inferred left. */
static enum AVColorRange range_meaning(enum AVColorRange r)
{
    return r == AVCOL_RANGE_UNSPECIFIED ? AVCOL_RANGE_MPEG : r;
}

/* Side data that changes what a player shows (issue 18, class 10): a display
 * matrix (rotation, flip) and stereo 3D packing, compared by meaning too: an
 * identity matrix and a plain 2D view say what nothing says. */
static bool shows_nothing(const AVFrameSideData *sd)
{
    if (sd == NULL)
        return true;
    if (sd->type == AV_FRAME_DATA_DISPLAYMATRIX && sd->size >= 9 * sizeof(int32_t)) {
        static const int32_t identity[9] = {1 << 16, 0, 0, 0, 1 << 16, 0, 0, 0, 1 << 30};
        return memcmp(sd->data, identity, sizeof identity) == 0;
    }
    if (sd->type == AV_FRAME_DATA_STEREO3D && sd->size >= sizeof(AVStereo3D)) {
        const AVStereo3D *s3d = (const AVStereo3D *)sd->data;
        return s3d->type == AV_STEREO3D_2D && s3d->flags == 0;
    }
    return false;
}

static bool side_data_equal(const AVFrame *a, const AVFrame *b, enum AVFrameSideDataType type)
{
    const AVFrameSideData *x = av_frame_get_side_data(a, type), *y = av_frame_get_side_data(b, type);
    if (shows_nothing(x) || shows_nothing(y))
        return shows_nothing(x) && shows_nothing(y);
    return x->size == y->size && memcmp(x->data, y->data, x->size) == 0;
}

const char *frame_params_differ(const AVFrame *a, const AVFrame *b)
{
    if (a->width != b->width || a->height != b->height)
        return "dimensions";
    if (a->format != b->format)
        return "pixel_format";
    if (av_cmp_q(a->sample_aspect_ratio, b->sample_aspect_ratio))
        return "sample_aspect_ratio";
    if (range_meaning(a->color_range) != range_meaning(b->color_range))
        return "color_range";
    if (a->color_primaries != b->color_primaries)
        return "color_primaries";
    if (a->color_trc != b->color_trc)
        return "color_transfer";
    if (a->colorspace != b->colorspace)
        return "color_matrix";
    if (a->chroma_location != b->chroma_location)
        return "chroma_location";
    if (a->interlaced_frame != b->interlaced_frame ||
        (a->interlaced_frame && a->top_field_first != b->top_field_first))
        return "field_order";
    if (!side_data_equal(a, b, AV_FRAME_DATA_DISPLAYMATRIX))
        return "display_matrix";
    if (!side_data_equal(a, b, AV_FRAME_DATA_STEREO3D))
        return "stereo3d";
    return NULL;
}

/* ---- video pairing ---- */

/* Resolves pending differences in order; the first confirmed one wins. */
static void resolve(struct vcmp *v, bool at_end, bool clean)
{
    int i = 0;
    for (; i < v->npend && !v->confirmed.set; i++) {
        struct vpending *p = &v->pend[i];
        if (p->needs_complete && !at_end)
            break;
        if (p->valid && (!p->needs_complete || clean))
            v->confirmed = p->d;
        else
            v->unconfirmed = true;
    }
    if (v->confirmed.set)
        i = v->npend;
    memmove(v->pend, v->pend + i, (size_t)(v->npend - i) * sizeof v->pend[0]);
    v->npend -= i;
}

static void add_pending(struct vcmp *v, const struct vitem *r, const struct vitem *c, int64_t index,
                        const char *plane, const char *param, int x, int y, bool needs_complete)
{
    if (v->confirmed.set)
        return;
    if (v->npend == VCMP_MAX_PENDING) {
        v->unconfirmed = true;   /* cannot track more: never confirm blindly */
        return;
    }
    struct vpending *p = &v->pend[v->npend++];
    p->d = (struct video_diff){.set = true, .index = index, .plane = plane, .param = param, .x = x, .y = y,
                               .pts = r ? r->pts : c->pts};
    p->valid = (!r || r->valid) && (!c || c->valid);
    p->needs_complete = needs_complete;
}

/* The next item after the head; NULL with *wait set when it is not there yet. */
static const struct vitem *next_frame(const struct ring *r, bool *wait)
{
    const struct vitem *it = ring_peek(r, 1);
    *wait = !it && !r->closed;
    return it;
}

static void consume(struct ring *r)
{
    vitem_release(ring_peek(r, 0));
    ring_drop(r);
}

static void compare_pair(struct vcmp *v, struct vitem *r, struct vitem *c)
{
    const AVFrame *a = r->frame, *b = c->frame;
    int64_t index = v->ref_frames;
    const char *plane, *param = frame_params_differ(a, b);
    int x = -1, y = -1;
    if (param) {
        add_pending(v, r, c, index, "params", param, -1, -1, false);
        return;
    }
    v->compared_frames++;
    if (!frames_equal(a, b, &plane, &x, &y))
        add_pending(v, r, c, index, plane, NULL, x, y, false);
}

/* Notes the time of each reference frame taken, for the smallest step. */
static void note_ref(struct vcmp *v, const struct vitem *r)
{
    int64_t step = r->rel - v->prev_ref_rel;
    if (v->ref_frames > 0 && step > 0 && (v->ref_step == 0 || step < v->ref_step))
        v->ref_step = step;
    v->prev_ref_rel = r->rel;
}

/* The first valid difference of a pair is the one confirmed unless an
 * earlier missing/extra frame is: only its two frames are kept. */
static void keep_pair(struct vcmp *v, const struct vitem *r, const struct vitem *c)
{
    if (!v->keep || v->kept[0] || v->confirmed.set || !r->valid || !c->valid)
        return;
    v->kept[0] = av_frame_clone(r->frame);
    v->kept[1] = av_frame_clone(c->frame);
    v->kept_index = v->ref_frames;
    if (!v->kept[0] || !v->kept[1])
        vcmp_release(v);
}

void vcmp_release(struct vcmp *v)
{
    av_frame_free(&v->kept[0]);
    av_frame_free(&v->kept[1]);
}

/* A margin frame (xfer.h) counts only where it pairs with a reference
 * frame inside the interval: one of the reference's, or one that pairs
 * with none, is outside the interval and dropped unseen.  True when one
 * was dropped. */
static bool drop_margin(struct ring *ref, struct ring *cand, struct vitem *r, struct vitem *c, bool same_time)
{
    if (same_time && r->margin) {
        consume(ref), consume(cand);
        return true;
    }
    if (same_time)
        return false;
    bool ref_first = r && (!c || r->rel < c->rel);
    struct vitem *first = ref_first ? r : c;
    if (!first || !first->margin)
        return false;
    consume(ref_first ? ref : cand);
    return true;
}

/* One pairing decision; false when it must wait for more items. */
static bool pair_once(struct vcmp *v, struct ring *ref, struct ring *cand)
{
    struct vitem *r = ring_peek(ref, 0), *c = ring_peek(cand, 0);
    bool wait = false;
    if ((!r && !ref->closed) || (!c && !cand->closed))
        return false;
    if (!r && !c) {
        v->done = true;
        return false;
    }
    bool same_time = r && c && llabs(r->rel - c->rel) <= XFER_TOLERANCE_TICKS;
    if (drop_margin(ref, cand, r, c, same_time))
        return true;
    if (r)
        note_ref(v, r);
    if (same_time) {
        if (c->margin && !c->valid)
            v->unconfirmed = true;   /* a damaged frame stands in for one inside I */
        int64_t npend = v->npend;
        compare_pair(v, r, c);
        if (v->npend > npend)
            keep_pair(v, r, c);
        v->ref_frames++, v->cand_frames++;
        consume(ref), consume(cand);
        return true;
    }
    if (r && (!c || r->rel < c->rel)) {
        const struct vitem *n = c ? next_frame(ref, &wait) : NULL;
        if (wait)
            return false;
        if (!c || (n && n->rel <= c->rel)) {
            add_pending(v, r, NULL, v->ref_frames, "missing", NULL, -1, -1, true);
            v->unpaired++;
            v->ref_frames++;
            consume(ref);
            return true;
        }
    } else {
        const struct vitem *n = r ? next_frame(cand, &wait) : NULL;
        if (wait)
            return false;
        if (!r || (n && n->rel <= r->rel)) {
            add_pending(v, NULL, c, v->ref_frames, "extra", NULL, -1, -1, true);
            v->unpaired++;
            v->cand_frames++;
            consume(cand);
            return true;
        }
    }
    /* A candidate frame between two reference frames: time correspondence. */
    if (v->timing_pairs++ == 0) {
        v->timing_delta = c->rel - r->rel;
        v->unpaired_first = v->unpaired;
    }
    else if (c->rel - r->rel != v->timing_delta)
        v->timing_varies = true;
    add_pending(v, r, c, v->ref_frames, "pts", NULL, -1, -1, false);
    v->ref_frames++, v->cand_frames++;
    consume(ref), consume(cand);
    return true;
}

bool vcmp_step(struct vcmp *v, struct ring *ref, struct ring *cand)
{
    bool progress = false;
    while (!v->done && pair_once(v, ref, cand))
        progress = true;
    resolve(v, false, false);
    return progress;
}

void vcmp_finish(struct vcmp *v, bool clean)
{
    resolve(v, true, clean);
}

/* ---- audio ---- */

static int64_t sample_unit(const struct aitem *it)
{
    return it->sample_rate > 0 && 720000 % it->sample_rate == 0 ? 720000 / it->sample_rate : 15;
}

static int64_t sample_pts(const struct acmp *a, int64_t rel_units)
{
    return ts33_add(a->start, rel_units / 8);
}

static void note_audio(struct acmp *a, struct audio_diff *slot, bool valid, int64_t index, int channel,
                       int64_t rel_units, const char *kind)
{
    if (!valid) {
        a->unconfirmed = true;
        return;
    }
    if (slot->set)
        return;
    *slot = (struct audio_diff){.set = true, .sample_index = index, .channel = channel,
                                .pts = sample_pts(a, rel_units), .kind = kind};
}

static void advance_by(struct acmp *a, struct ring *r, int s, size_t n, bool counted)
{
    struct aitem *it = ring_peek(r, 0);
    size_t *off = s == 0 ? &a->roff : &a->coff;
    if (counted && s == 0)
        a->ref_samples += (int64_t)n;
    else if (counted)
        a->cand_samples += (int64_t)n;
    *off += n;
    if (!it->valid)
        a->invalid_seen[s] = true;
    if (*off >= (size_t)it->nb_samples) {
        aitem_release(it);
        ring_drop(r);
        *off = 0;
    }
}

static void advance(struct acmp *a, struct ring *r, int s, size_t n)
{
    advance_by(a, r, s, n, true);
}

/* The head sample at offset off lies in the item's margin (xfer.h). */
static bool in_margin(const struct aitem *it, size_t off)
{
    return off < (size_t)it->head_margin || off >= (size_t)(it->nb_samples - it->tail_margin);
}

/* Samples from off before the item's tail margin (at least one). */
static size_t before_tail(const struct aitem *it, size_t off)
{
    size_t end = (size_t)(it->nb_samples - it->tail_margin);
    return off < end ? end - off : 1;
}

/* A head sample in the margin counts only where it pairs with a reference
 * sample inside the interval (the rule of drop_margin for frames): one of
 * the reference's, or one pairing with none, is dropped unseen. */
static bool audio_margin(struct acmp *a, struct ring *ref, struct ring *cand, const struct aitem *r,
                         const struct aitem *c, int64_t tr, int64_t tc)
{
    bool rm = r && in_margin(r, a->roff), cm = c && in_margin(c, a->coff);
    bool same_time = r && c && llabs(tr - tc) <= XFER_TOLERANCE_UNITS;
    /* Samples pair by their index in one frame (its starts on both sides
     * within the tolerance).  A margin sample at "the same time" as the
     * other side's sample of another frame or another index is that
     * sample's neighbour, not its partner: a frame a tick late has sample k
     * 8/720000 s after the reference's sample k, so its sample k-1 only 7
     * before it (differential pack_subtick:23689).  Its own partner lies
     * outside the interval: it is dropped unseen (both in the margin: the
     * earlier). */
    if (same_time && (rm || cm)) {
        bool one_frame = llabs(r->frame_units - c->frame_units) <= XFER_TOLERANCE_UNITS;
        int64_t ri = r->first_index + (int64_t)a->roff, ci = c->first_index + (int64_t)a->coff;
        if (!one_frame || ri != ci) {
            bool drop_cand = cm && (!rm || tc <= tr);
            advance_by(a, drop_cand ? cand : ref, drop_cand ? 1 : 0, 1, false);
            return true;
        }
    }
    if (same_time && rm) {
        advance_by(a, ref, 0, 1, false);
        advance_by(a, cand, 1, 1, false);
        return true;
    }
    if (same_time)
        return false;
    bool ref_first = r && (!c || tr < tc);
    if (ref_first ? !rm : !cm)
        return false;
    advance_by(a, ref_first ? ref : cand, ref_first ? 0 : 1, 1, false);
    return true;
}

/* Copies one channel of the run [0, n) around its first difference. */
static void keep_window(struct acmp *a, const float *pr, const float *pc, size_t n, int channels, size_t sample,
                        int channel, int rate)
{
    struct diffpic_audio *k = a->kept;
    if (!a->keep || !k)
        return;
    size_t from = sample > DIFFPIC_AUDIO_WINDOW / 8 ? sample - DIFFPIC_AUDIO_WINDOW / 8 : 0;
    size_t to = n - from > DIFFPIC_AUDIO_WINDOW ? from + DIFFPIC_AUDIO_WINDOW : n;
    for (size_t s = from; s < to; s++) {
        k->ref[s - from] = pr[s * (size_t)channels + (size_t)channel];
        k->cand[s - from] = pc[s * (size_t)channels + (size_t)channel];
    }
    k->n = (int)(to - from);
    k->channel = channel;
    k->sample_rate = rate;
    k->first_index = a->ref_samples + (int64_t)from;
    k->diff_index = a->ref_samples + (int64_t)sample;
}

void acmp_release(struct acmp *a)
{
    free(a->kept);
    a->kept = NULL;
}

static void compare_run(struct acmp *a, const struct aitem *r, const struct aitem *c, size_t n, int64_t t)
{
    const float *pr = r->pcm + a->roff * (size_t)r->channels;
    const float *pc = c->pcm + a->coff * (size_t)c->channels;
    size_t count = n * (size_t)r->channels;
    if (memcmp(pr, pc, count * sizeof(float)) == 0)
        return;
    size_t i = 0;
    while (memcmp(&pr[i], &pc[i], sizeof(float)) == 0)  /* bit patterns, not values */
        i++;
    size_t sample = i / (size_t)r->channels;
    if (r->valid && c->valid && !a->confirmed.set)
        keep_window(a, pr, pc, n, r->channels, sample, (int)(i % (size_t)r->channels), r->sample_rate);
    note_audio(a, &a->confirmed, r->valid && c->valid, a->ref_samples + (int64_t)sample,
               (int)(i % (size_t)r->channels), t + (int64_t)sample * sample_unit(r), "samples");
}

/* Sample rate and channel count, item by item: a change is a difference
 * at the first sample of the item where it happens. */
static bool params_differ(struct acmp *a, const struct aitem *r, const struct aitem *c, int64_t t)
{
    if (r->sample_rate == c->sample_rate && r->channels == c->channels)
        return false;
    note_audio(a, &a->confirmed, r->valid && c->valid, a->ref_samples, -1, t, "params");
    return true;
}

static bool audio_once(struct acmp *a, struct ring *ref, struct ring *cand)
{
    struct aitem *r = ring_peek(ref, 0), *c = ring_peek(cand, 0);
    if ((!r && !ref->closed) || (!c && !cand->closed))
        return false;
    if (!r && !c) {
        a->done = true;
        return false;
    }
    int64_t tr = r ? r->rel_units + (int64_t)a->roff * sample_unit(r) : 0;
    int64_t tc = c ? c->rel_units + (int64_t)a->coff * sample_unit(c) : 0;
    if (audio_margin(a, ref, cand, r, c, tr, tc))
        return true;
    if (!c) {   /* the candidate ended: the rest of the reference is missing */
        if (!a->cand_ended) {
            a->cand_ended = true;
            a->cand_end_index = a->ref_samples;
        }
        note_audio(a, &a->gap, true, a->ref_samples, -1, tr, "missing");
        advance(a, ref, 0, before_tail(r, a->roff));
        return true;
    }
    if (!r) {
        note_audio(a, &a->gap, true, a->ref_samples, -1, tc, "extra");
        advance(a, cand, 1, before_tail(c, a->coff));
        return true;
    }
    int64_t ur = sample_unit(r), uc = sample_unit(c);
    size_t nr = before_tail(r, a->roff), nc = before_tail(c, a->coff);
    if (params_differ(a, r, c, tr)) {
        advance(a, ref, 0, nr);
        advance(a, cand, 1, nc);
        return true;
    }
    if (llabs(tr - tc) <= XFER_TOLERANCE_UNITS) {   /* the same instants (xfer.h) */
        size_t n = nr < nc ? nr : nc;
        compare_run(a, r, c, n, tr);
        advance(a, ref, 0, n);
        advance(a, cand, 1, n);
    } else if (tc - tr >= ur || tr - tc >= uc) {
        /* Whole samples absent on one side at this time. */
        bool ref_first = tr < tc;
        int64_t gap = ref_first ? tc - tr : tr - tc;
        size_t n = (size_t)((gap + (ref_first ? ur : uc) - 1) / (ref_first ? ur : uc));
        size_t avail = ref_first ? nr : nc;
        note_audio(a, &a->gap, true, a->ref_samples, -1, ref_first ? tr : tc, ref_first ? "missing" : "extra");
        advance(a, ref_first ? ref : cand, ref_first ? 0 : 1, n < avail ? n : avail);
    } else {
        /* Sample instants that do not line up: time correspondence broken. */
        note_audio(a, &a->confirmed, r->valid && c->valid, a->ref_samples, -1, tr, "pts");
        size_t n = nr < nc ? nr : nc;
        advance(a, ref, 0, n);
        advance(a, cand, 1, n);
    }
    return true;
}

bool acmp_step(struct acmp *a, struct ring *ref, struct ring *cand)
{
    bool progress = false;
    while (!a->done && audio_once(a, ref, cand))
        progress = true;
    return progress;
}

void acmp_finish(struct acmp *a, bool clean)
{
    if (a->gap.set && !clean) {
        a->gap.set = false;
        a->unconfirmed = true;
    }
}
