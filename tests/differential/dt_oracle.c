/* dt_oracle.c - the expected verdict from FFmpeg's decodes (see dt_oracle.h
 * and README.md, "The oracle").  The sides are observed by dt_side.c; this
 * file aligns them, places frames and samples in the interval, compares and
 * turns what it found into a set of acceptable verdicts. */
#include "dt_oracle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_side.h"

#define MOD33 (INT64_C(1) << 33)
#define HALF33 (INT64_C(1) << 32)
#define NEVER INT64_MAX

const char *dt_verdict_name(enum dt_verdict v)
{
    switch (v) {
    case DT_MATCH: return "MATCH";
    case DT_MISMATCH: return "MISMATCH";
    case DT_USAGE: return "USAGE";
    case DT_ERROR: return "ERROR";
    case DT_UNKNOWN: break;
    }
    return "UNKNOWN";
}

void dt_verdict_set_name(char *out, size_t size, unsigned set)
{
    dt_fmt(out, size, "%s", set ? "" : "any");
    for (int v = DT_UNKNOWN; v <= DT_USAGE; v++)
        if (set & DT_VSET(v)) {
            size_t used = strlen(out);
            snprintf(out + used, size - used, "%s%s", used ? "|" : "", dt_verdict_name((enum dt_verdict)v));
        }
}

/* Position of a time on the reference timeline relative to START, in
 * [-2^32, 2^32): negative means before the interval. */
static int64_t rel_signed(int64_t t_ref, int64_t start)
{
    int64_t r = dt_mod33(t_ref - start);
    return r >= HALF33 ? r - MOD33 : r;
}

/* ---- what a track comparison found -------------------------------------------- */

enum diff_kind { D_NONE = 0, D_CONTENT, D_PARAMS, D_PTS, D_MISSING, D_EXTRA };

static const char *diff_name(enum diff_kind k, bool video)
{
    switch (k) {
    case D_CONTENT: return video ? "pixels" : "samples";
    case D_PARAMS: return "params";
    case D_PTS: return "pts";
    case D_MISSING: return "missing";
    case D_EXTRA: return "extra";
    case D_NONE: break;
    }
    return "none";
}

struct track_result {
    bool neutral;              /* nothing of this track in I on either side */
    size_t nref, ncand, npairs;
    int64_t horizon;           /* first position that is not cleanly observed on either side */
    int64_t unobserved;        /* first position where a packet gave no frame (or none could be
                                * placed), on either side: part of the horizon */
    bool damaged;              /* damage somewhere in this track, on either side (in I or not) */
    enum diff_kind first;      /* first difference in time order */
    int64_t first_at;
    bool clean_content;        /* a content/params/pts difference before the horizon */
    bool any_diff;
    unsigned kinds;            /* 1 << diff_kind of every difference noted */
    int64_t cand_last;         /* the candidate's last position in I, -1: none */
};

static void note_diff(struct track_result *t, enum diff_kind k, int64_t at)
{
    if (!t->any_diff || at < t->first_at) {
        t->first = k;
        t->first_at = at;
    }
    t->any_diff = true;
    t->kinds |= 1u << k;
    if (at < t->horizon && (k == D_CONTENT || k == D_PARAMS || k == D_PTS))
        t->clean_content = true;
}

/* ---- positions in the interval ---------------------------------------------------- */

/* One frame (video) or one sample instant (audio) of a side inside I. */
struct pos {
    int64_t at;         /* video: ticks from START; audio: 1/720000 s from START (tick 8, sample 15) */
    uint64_t params;    /* hash of what gives the content its meaning */
    uint64_t content;   /* video: a 64-bit hash of the frame's MD5; audio: L and R bit patterns */
    bool margin;        /* outside I but within a tick of it (issue 18, class 5) */
    int64_t frame;      /* audio: its decoded frame's start (as at); video: at */
    int index;          /* audio: its index in that frame; video: 0 */
};

/* Issue 18, class 5: a time within one 90 kHz tick of the other side's is
 * the same time (muxers that floor nanoseconds to ticks, GStreamer, against
 * those that round), per unit; a frame or a sample (15 units) further is a
 * difference.  Positions within the tolerance outside I are kept as margin
 * and count only where they pair with a reference position inside I. */
#define TOL_TICKS 1
#define TOL_UNITS 8

static int cmp_pos(const void *a, const void *b)
{
    const struct pos *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

/* Frames of side s in I, sorted; *horizon lowered to the first unclean frame
 * or packet without a decoded frame in I. */
static struct pos *video_positions(const struct dt_side *s, int64_t start, int64_t len,
                                   int64_t offset, size_t *n, int64_t *horizon, int64_t *unobs)
{
    struct pos *v = calloc(s->nvf + 1, sizeof *v);
    int64_t *have = calloc(s->nvf + 1, sizeof *have);
    *n = 0;
    if (v == NULL || have == NULL) {
        free(v);
        free(have);
        return NULL;
    }
    for (size_t i = 0; i < s->nvf; i++) {
        const struct dt_vframe *f = &s->vf[i];
        have[i] = f->pts == DT_NOPTS ? -1 : dt_mod33(f->pts);
        if (f->pts == DT_NOPTS) {
            *unobs = 0; /* a frame that cannot be placed: the whole track is unobserved */
            continue;
        }
        int64_t r = rel_signed(f->pts - offset, start) - s->v_shift_ticks;
        if (r < -TOL_TICKS || r >= len + TOL_TICKS)
            continue;
        bool margin = r < 0 || r >= len;
        v[(*n)++] = (struct pos){r, fnv(f->params), fnv(f->md5), margin, r, 0};
        if (!f->clean && !margin && r < *horizon)
            *horizon = r;
    }
    qsort(have, s->nvf, sizeof *have, dt_cmp_i64);
    for (size_t k = 0; k < s->nvpk; k++) {
        if (s->vpk[k].pts == DT_NOPTS)
            continue;
        int64_t key = dt_mod33(s->vpk[k].pts);
        int64_t r = rel_signed(s->vpk[k].pts - offset, start);
        if (r < 0 || r >= len)
            continue;
        if (!bsearch(&key, have, s->nvf, sizeof *have, dt_cmp_i64) && r < *unobs)
            *unobs = r; /* a packet in I that produced no frame */
    }
    free(have);
    qsort(v, *n, sizeof *v, cmp_pos);
    return v;
}

/* Sample instants of side s in I, sorted; *horizon as for video. */
static struct pos *audio_positions(const struct dt_side *s, int64_t start, int64_t len,
                                   int64_t offset, size_t *n, int64_t *horizon, int64_t *unobs)
{
    size_t cap = 0;
    for (size_t i = 0; i < s->naf; i++)
        cap += (size_t)(s->af[i].nb > 0 ? s->af[i].nb : 0);
    struct pos *v = malloc((cap + 1) * sizeof *v);
    *n = 0;
    if (v == NULL)
        return NULL;
    int out_ch = s->naf ? s->af[0].channels : 2; /* what ffmpeg wrote per sample */
    int64_t end_u = 8 * len;
    for (size_t i = 0; i < s->naf; i++) {
        const struct dt_aframe *f = &s->af[i];
        if (f->pts == DT_NOPTS) {
            *unobs = 0;
            continue;
        }
        int64_t r0 = rel_signed(f->pts - offset, start);
        int64_t step = f->rate > 0 ? 720000 / f->rate : 15; /* 15 at 48 kHz */
        uint64_t params = (uint64_t)f->channels * 1000000u + (uint64_t)f->rate;
        int64_t u0 = 8 * r0 + f->sub - s->a_shift_units; /* below a tick: an fMP4 timescale */
        for (int k = 0; k < f->nb; k++) {
            int64_t u = u0 + step * k;
            if (u < -TOL_UNITS || u >= end_u + TOL_UNITS)
                continue;
            bool margin = u < 0 || u >= end_u;
            if (!f->clean && !margin && u < *horizon)
                *horizon = u;
            size_t at = f->off + (size_t)k * (size_t)out_ch;
            uint32_t l = 0, rr = 0;
            if (at + (out_ch > 1 ? 1 : 0) < s->npcm) {
                memcpy(&l, &s->pcm[at], sizeof l);
                memcpy(&rr, &s->pcm[at + (out_ch > 1 ? 1 : 0)], sizeof rr);
            }
            v[(*n)++] = (struct pos){u, params, ((uint64_t)l << 32) | rr, margin, u0, k};
        }
    }
    for (size_t k = 0; k < s->napk; k++) { /* packets in I whose frame did not come out */
        bool decoded = false;
        for (size_t i = 0; i < s->naf && !decoded; i++)
            decoded = s->af[i].pts == s->apk[k].pts;
        if (decoded || s->apk[k].pts == DT_NOPTS)
            continue;
        int64_t u = 8 * rel_signed(s->apk[k].pts - offset, start) + s->apk[k].sub - s->a_shift_units;
        if (u + 15 * 1024 > 0 && u < end_u && (u < 0 ? 0 : u) < *unobs)
            *unobs = u < 0 ? 0 : u;
    }
    qsort(v, *n, sizeof *v, cmp_pos);
    return v;
}

static size_t inside_count(const struct pos *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; p && i < n; i++)
        k += !p[i].margin;
    return k;
}

typedef struct pos *(*positions_fn)(const struct dt_side *, int64_t, int64_t, int64_t, size_t *,
                                    int64_t *, int64_t *);

/* Pair the two sides' positions by time (within tol) and note every
 * difference. */
static void compare_track(positions_fn positions, const struct dt_side *r, const struct dt_side *c,
                          int64_t start, int64_t len, int64_t offset, bool damaged, int64_t tol,
                          struct track_result *t)
{
    memset(t, 0, sizeof *t);
    int64_t hr = NEVER, hc = NEVER, ur = NEVER, uc = NEVER;
    size_t nr = 0, nc = 0;
    struct pos *pr = positions(r, start, len, 0, &nr, &hr, &ur);
    struct pos *pc = positions(c, start, len, offset, &nc, &hc, &uc);
    t->unobserved = ur < uc ? ur : uc;
    t->horizon = hr < hc ? hr : hc;
    if (t->unobserved < t->horizon)
        t->horizon = t->unobserved;
    t->damaged = damaged;
    t->nref = inside_count(pr, nr);
    t->ncand = inside_count(pc, nc);
    t->neutral = t->nref == 0 && t->ncand == 0 && t->horizon == NEVER;
    t->cand_last = -1;
    for (size_t k = 0; pc && k < nc; k++)
        if (!pc[k].margin && pc[k].at > t->cand_last)
            t->cand_last = pc[k].at;
    size_t i = 0, j = 0;
    while (pr && pc && (i < nr || j < nc)) {
        bool same = i < nr && j < nc && llabs(pr[i].at - pc[j].at) <= tol;
        bool ref_first = j >= nc || (i < nr && pr[i].at < pc[j].at);
        /* a margin sample "at the same time" as the other side's sample of
         * another frame or index is its neighbour (a tick is more than half
         * a 48 kHz sample), not its partner: dropped (rule 19) */
        bool neighbours = same && (pr[i].margin || pc[j].margin) &&
                          (llabs(pr[i].frame - pc[j].frame) > tol || pr[i].index != pc[j].index);
        if (neighbours) {
            if (pc[j].margin && (!pr[i].margin || pc[j].at <= pr[i].at))
                j++;
            else
                i++;
        } else if (same && pr[i].margin) { /* outside I on the reference */
            i++, j++;
        } else if (!same && ref_first && pr[i].margin) {
            i++;
        } else if (!same && !ref_first && pc[j].margin) {
            j++;
        } else if (same) {
            t->npairs++;
            if (pr[i].params != pc[j].params)
                note_diff(t, D_PARAMS, pr[i].at);
            else if (pr[i].content != pc[j].content)
                note_diff(t, D_CONTENT, pr[i].at);
            i++;
            j++;
        } else if (j >= nc || (i < nr && pr[i].at < pc[j].at)) {
            note_diff(t, D_MISSING, pr[i].at);
            i++;
        } else {
            bool between = i > 0 && i < nr; /* a candidate instant between two reference ones */
            note_diff(t, between ? D_PTS : D_EXTRA, pc[j].at);
            j++;
        }
    }
    free(pr);
    free(pc);
}

/* ---- verdict ---------------------------------------------------------------------- */

/* The acceptable verdicts of one track. */
static enum dt_verdict track_verdict(const struct track_result *t, bool global_clean,
                                     unsigned *allowed)
{
    if (t->neutral) {
        *allowed = DT_VSET(DT_MATCH);
        return DT_MATCH;
    }
    enum dt_verdict v = DT_UNKNOWN;
    *allowed = DT_VSET(DT_UNKNOWN);
    if (t->horizon == NEVER) {
        /* every frame and sample of I cleanly observed on both sides */
        if (!t->any_diff)
            v = DT_MATCH;
        else if (t->clean_content || global_clean)
            v = DT_MISMATCH;
        /* else only frames missing or extra while some of the observation (the
         * other track, the other side, the transport) was not clean: an absence
         * is confirmed only over a complete observation (SPEC) */
        *allowed = DT_VSET(v);
        if (t->damaged) /* damage outside I: UNKNOWN is over-cautious, not wrong */
            *allowed |= DT_VSET(DT_UNKNOWN);
        return v;
    }
    if (t->clean_content) {
        *allowed = DT_VSET(DT_MISMATCH) | DT_VSET(DT_UNKNOWN);
        return DT_MISMATCH;
    }
    if (t->horizon == 0 && t->unobserved == NEVER && !t->any_diff) {
        /* damage before I (the first frame of I already came out after it), and
         * yet every frame and sample of I identical: what a viewer gets over I
         * is the reference's; UNKNOWN is over-cautious, not wrong */
        *allowed = DT_VSET(DT_MATCH) | DT_VSET(DT_UNKNOWN);
        return DT_MATCH;
    }
    return DT_UNKNOWN;
}

static enum dt_verdict combine(enum dt_verdict a, enum dt_verdict b)
{
    if (a == DT_MISMATCH || b == DT_MISMATCH)
        return DT_MISMATCH;
    if (a == DT_UNKNOWN || b == DT_UNKNOWN)
        return DT_UNKNOWN;
    return DT_MATCH;
}

static unsigned combine_sets(unsigned a, unsigned b)
{
    unsigned out = 0;
    for (int x = DT_UNKNOWN; x <= DT_MISMATCH; x++)
        for (int y = DT_UNKNOWN; y <= DT_MISMATCH; y++)
            if ((a & DT_VSET(x)) && (b & DT_VSET(y)))
                out |= DT_VSET(combine((enum dt_verdict)x, (enum dt_verdict)y));
    return out;
}

static void describe(char *buf, size_t size, const char *name, const struct track_result *t,
                     bool video, int64_t start)
{
    size_t used = strlen(buf);
    if (used >= size)
        return;
    if (t->neutral) {
        snprintf(buf + used, size - used, "%s: nothing in the interval; ", name);
        return;
    }
    const char *unit = video ? "frames" : "samples/ch";
    char first[128] = "identical";
    if (t->any_diff) {
        if (video)
            snprintf(first, sizeof first, "first difference %s at pts %" PRId64,
                     diff_name(t->first, true), dt_mod33(start + t->first_at));
        else
            snprintf(first, sizeof first, "first difference %s at sample %" PRId64 " (pts %" PRId64 ")",
                     diff_name(t->first, false), t->first_at / 15, dt_mod33(start + t->first_at / 8));
    }
    char hz[96] = "clean";
    if (t->horizon != NEVER)
        snprintf(hz, sizeof hz, "not cleanly observed from %s %" PRId64, video ? "pts" : "sample",
                 video ? dt_mod33(start + t->horizon) : t->horizon / 15);
    snprintf(buf + used, size - used, "%s: %zu ref / %zu cand %s in I, %zu paired, %s, %s; ", name,
             t->nref, t->ncand, unit, t->npairs, first, hz);
}

/* Default interval (no --interval): from the reference's first video key
 * frame (demux order) to the end of its own last frame, per track. */
static void default_interval(const struct dt_side *r, int64_t *start, int64_t *vend, int64_t *aend)
{
    *start = -1;
    for (size_t k = 0; k < r->nvpk && *start < 0; k++)
        if (r->vpk[k].key && r->vpk[k].pts != DT_NOPTS)
            *start = dt_mod33(r->vpk[k].pts);
    if (*start < 0)
        *start = r->nvpk && r->vpk[0].pts != DT_NOPTS ? dt_mod33(r->vpk[0].pts) : 0;
    int64_t vmax = -1, amax = -1;
    int64_t *rels = calloc(r->nvpk + 1, sizeof *rels);
    size_t n = 0;
    for (size_t k = 0; k < r->nvpk; k++) {
        if (r->vpk[k].pts == DT_NOPTS)
            continue;
        int64_t rel = rel_signed(r->vpk[k].pts, *start);
        if (rel >= 0 && rels)
            rels[n++] = rel;
        if (rel > vmax)
            vmax = rel;
    }
    int64_t dur = 3000;
    if (rels && n > 1) {
        qsort(rels, n, sizeof *rels, dt_cmp_i64);
        for (size_t k = 1; k < n; k++)
            if (rels[k] > rels[k - 1] && rels[k] - rels[k - 1] < dur)
                dur = rels[k] - rels[k - 1];
    }
    free(rels);
    for (size_t k = 0; k < r->napk; k++) {
        if (r->apk[k].pts == DT_NOPTS)
            continue;
        int64_t rel = rel_signed(r->apk[k].pts, *start);
        if (rel > amax)
            amax = rel;
    }
    int rate = r->naf && r->af[0].rate > 0 ? r->af[0].rate : 48000;
    *vend = dt_mod33(*start + (vmax >= 0 ? vmax + dur : 0));
    *aend = dt_mod33(*start + (amax >= 0 ? amax + 1024 * 90000 / rate : 0));
}

/* Two packet times within a tick of each other (TOL_TICKS): the same time. */
static bool same_tick(int64_t a, int64_t b)
{
    int64_t d = dt_mod33(a - b);
    return d <= TOL_TICKS || d >= ((int64_t)1 << 33) - TOL_TICKS;
}

/* Index of the candidate packet that maps onto the reference's first one. */
static size_t align_index(const struct dt_pkt *rp, size_t nr, const struct dt_pkt *cp, size_t nc,
                          int64_t offset)
{
    if (nr == 0)
        return 0;
    for (size_t k = 0; k < nc; k++)
        if (cp[k].pts != DT_NOPTS && rp[0].pts != DT_NOPTS && same_tick(cp[k].pts - offset, rp[0].pts))
            return k;
    return 0;
}

/* Rule 3 has no common start when the candidate holds no packet at the
 * reference's first time, but one within a frame of it: its start unit was
 * retimed (a sound PTS field carrying another value).  FFmpeg then decodes
 * the candidate from other history than the reference's, and a verifier
 * that refuses to compare decodes that did not start at the same unit says
 * UNKNOWN honestly (the CI mutant of seed 1796149078, index 35). */
static bool start_retimed(const struct dt_pkt *rp, size_t nr, const struct dt_pkt *cp, size_t nc,
                          int64_t offset)
{
    if (nr < 2 || rp[0].pts == DT_NOPTS || align_index(rp, nr, cp, nc, offset) != 0 ||
        (nc > 0 && cp[0].pts != DT_NOPTS && same_tick(cp[0].pts - offset, rp[0].pts)))
        return false;
    int64_t frame = INT64_MAX;   /* the reference's shortest PTS step: one frame */
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nr && rp[i].pts != DT_NOPTS; j++) {
            int64_t d = rp[j].pts != DT_NOPTS ? dt_mod33(rp[j].pts - rp[i].pts) : 0;
            if (d > 0 && d < frame && d < ((int64_t)1 << 32))
                frame = d;
        }
    for (size_t k = 0; k < nc && frame != INT64_MAX; k++) {
        if (cp[k].pts == DT_NOPTS)
            continue;
        int64_t d = dt_mod33(cp[k].pts - offset - rp[0].pts);
        if (d > ((int64_t)1 << 32))
            d -= (int64_t)1 << 33;
        if (d != 0 && d > -frame && d < frame)
            return true;
    }
    return false;
}

/* The container's quantum (docs/exact-av-v1.md, README rule 17): an fMP4
 * audio track that starts with an empty edit in the movie timescale
 * (FFmpeg's muxers: milliseconds) has its start rounded to that unit on its
 * own, so no single --time-offset declares both tracks.  The candidate's
 * first audio frame's distance to the nearest reference frame start is
 * taken off all its audio when it is more than a tick and less than one
 * quantum (of either side): one distance, never a search; a shift the
 * container can express stays a timing difference. */
static int64_t quantum_shift(const struct dt_side *r, const struct dt_side *c, int64_t offset)
{
    int64_t q = r->a_quantum > c->a_quantum ? r->a_quantum : c->a_quantum;
    const struct dt_aframe *f = NULL;
    for (size_t i = 0; i < c->naf && !f; i++)
        if (c->af[i].pts != DT_NOPTS)
            f = &c->af[i];
    if (q <= TOL_UNITS || f == NULL)
        return 0;
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < r->naf; i++) {
        if (r->af[i].pts == DT_NOPTS)
            continue;
        int64_t d = 8 * rel_signed(f->pts - offset, r->af[i].pts) + f->sub - r->af[i].sub;
        if (llabs(d) < llabs(best))
            best = d;
    }
    return best != INT64_MAX && llabs(best) > TOL_UNITS && llabs(best) < q ? best : 0;
}

/* The same for video (rule 17, stop 34): the candidate's first picture's
 * distance to the nearest reference picture, in ticks, taken off all its
 * video when more than a tick and less than one quantum of either side. */
static int64_t video_quantum_shift(const struct dt_side *r, const struct dt_side *c, int64_t offset)
{
    int64_t q = r->v_quantum > c->v_quantum ? r->v_quantum : c->v_quantum;
    const struct dt_vframe *f = NULL;
    for (size_t i = 0; i < c->nvf && !f; i++)
        if (c->vf[i].pts != DT_NOPTS)
            f = &c->vf[i];
    if (q <= TOL_UNITS || f == NULL)
        return 0;
    int64_t best = INT64_MAX;
    for (size_t i = 0; i < r->nvf; i++) {
        if (r->vf[i].pts == DT_NOPTS)
            continue;
        int64_t d = rel_signed(f->pts - offset, r->vf[i].pts);
        if (llabs(d) < llabs(best))
            best = d;
    }
    return best != INT64_MAX && llabs(best) > TOL_TICKS && 8 * llabs(best) < q ? best : 0;
}

/* Rule 18 (docs/exact-av-v1.md, audio_segment_end_cut): audio samples
 * missing only at the end of the candidate's audio, over at most the
 * reference video's reorder delay (largest PTS - DTS) plus one AAC frame,
 * may be a segment cut at the next IDR's DTS against one cut at its PTS:
 * the spec makes that UNKNOWN, so UNKNOWN is accepted there. */
static bool audio_tail_cut(const struct track_result *t, const struct dt_side *r, int64_t len_units)
{
    if (t->kinds != 1u << D_MISSING || t->first_at <= t->cand_last)
        return false;
    int64_t reorder = 0;
    for (size_t k = 0; k < r->nvpk; k++)
        if (r->vpk[k].pts != DT_NOPTS && r->vpk[k].dts != DT_NOPTS && r->vpk[k].pts - r->vpk[k].dts > reorder)
            reorder = r->vpk[k].pts - r->vpk[k].dts;
    return len_units - t->first_at <= 8 * reorder + 15 * 1024;
}

struct dt_oracle_cache {
    char key[DT_PATH_MAX];  /* the single reference file observed, "" none */
    struct dt_side ref;
};

struct dt_oracle_cache *dt_oracle_cache_new(void)
{
    return calloc(1, sizeof(struct dt_oracle_cache));
}

void dt_oracle_cache_free(struct dt_oracle_cache *cache)
{
    if (cache)
        dt_side_free(&cache->ref);
    free(cache);
}

static int observe_ref(struct dt_env *env, const struct dt_case *c, struct dt_side *r)
{
    if (dt_side_prepare(env, r, c->ref, c->nref) != 0 || dt_side_probe_programs(env, r) != 0)
        return -1;
    if (dt_side_select(r, NULL) != 0)
        return -1; /* a reference without video: not a case this harness makes */
    if (dt_side_probe_packets(env, r) != 0)
        return -1;
    dt_side_scan_pes(r);
    return dt_side_decode(env, r);
}

/* The reference side: observed now, or taken from the cache. */
static int reference_side(struct dt_env *env, const struct dt_case *c,
                          struct dt_oracle_cache *cache, struct dt_side *r, const struct dt_side **out)
{
    bool cacheable = cache && c->nref == 1 && !c->ref[0].ranged;
    if (cacheable && strcmp(cache->key, c->ref[0].path) == 0) {
        dt_note(env, "(the reference was observed by an earlier case: same commands)");
        *out = &cache->ref;
        return 0;
    }
    if (observe_ref(env, c, r) != 0)
        return -1;
    if (cacheable) {
        dt_side_free(&cache->ref);
        cache->ref = *r;
        memset(r, 0, sizeof *r); /* the cache owns the arrays now */
        dt_fmt(cache->key, sizeof cache->key, "%s", c->ref[0].path);
        *out = &cache->ref;
    } else {
        *out = r;
    }
    return 0;
}

static int observe_cand(struct dt_env *env, const struct dt_case *c, const struct dt_side *r,
                        struct dt_side *s, int *selection)
{
    if (dt_side_prepare(env, s, c->cand, c->ncand) != 0 || dt_side_probe_programs(env, s) != 0)
        return -1;
    if (s->unreadable) {
        *selection = 4; /* FFmpeg finds no track in the fMP4 bytes (rule 16) */
        return 0;
    }
    *selection = dt_side_select(s, r);
    if (dt_side_probe_packets(env, s) != 0)
        return -1;
    if (*selection != 0)
        return 0;
    dt_side_scan_pes(s);
    int64_t off = (int64_t)c->offset;
    s->start_retimed = start_retimed(r->vpk, r->nvpk, s->vpk, s->nvpk, off);
    size_t vskip = align_index(r->vpk, r->nvpk, s->vpk, s->nvpk, off);
    size_t askip = align_index(r->apk, r->napk, s->apk, s->napk, off);
    if ((vskip || askip) && dt_side_trim(env, s, vskip, askip) != 0)
        return -1;
    return dt_side_decode(env, s);
}

int dt_oracle_judge(struct dt_env *env, const struct dt_case *c, struct dt_oracle_cache *cache,
                    struct dt_expect *out)
{
    struct dt_side rs = {.label = "reference"}, s = {.label = "candidate"};
    const struct dt_side *rp = NULL;
    memset(out, 0, sizeof *out);
    if (!dt_fmt(rs.dir, sizeof rs.dir, "%s/oracle/ref", c->dir) ||
        !dt_fmt(s.dir, sizeof s.dir, "%s/oracle/cand", c->dir))
        return -1;
    dt_note(env, "---- oracle: FFmpeg's decode of each side");
    int selection = 0;
    if (reference_side(env, c, cache, &rs, &rp) != 0 || observe_cand(env, c, rp, &s, &selection) != 0) {
        dt_side_free(&rs);
        dt_side_free(&s);
        return -1;
    }
    const struct dt_side r = *rp;
    char *why = out->why;
    size_t wsz = sizeof out->why;
    if (selection != 0) {
        out->primary = selection == 1 ? DT_MISMATCH : DT_UNKNOWN;
        if (selection == 4) /* nothing decodable: damage, never a track set */
            out->primary = DT_UNKNOWN;
        out->allowed = DT_VSET(out->primary);
        if (s.transport_damage)
            out->allowed |= DT_VSET(DT_UNKNOWN);
        dt_fmt(why, wsz, "%s", selection == 4   ? "FFmpeg finds no audio or video track in the candidate's fMP4 bytes"
                               : selection == 1 ? "no candidate program has the reference's audio/video track set"
                               : selection == 2 ? "several candidate programs carry the reference's track set (ambiguous)"
                                                : "the program with the reference's track set is not the one a player "
                                                  "plays (the first with audio or video)");
        dt_side_free(&rs);
        dt_side_free(&s);
        return 0;
    }
    if ((r.vindex >= 0 && strcmp(r.vcodec, s.vcodec)) || (r.aindex >= 0 && strcmp(r.acodec, s.acodec))) {
        /* what the PMT announces picks the decoder a player uses (FFmpeg
         * probes some types, hls.js never does): another codec is another
         * delivery, whatever the bytes (issue 18, class 3) */
        out->primary = DT_MISMATCH;
        out->allowed = DT_VSET(DT_MISMATCH) | (s.transport_damage ? DT_VSET(DT_UNKNOWN) : 0u);
        dt_fmt(why, wsz, "the candidate announces video %s and audio %s, the reference video %s and audio %s",
               s.vcodec, s.acodec, r.vcodec, r.acodec);
        dt_side_free(&rs);
        dt_side_free(&s);
        return 0;
    }
    int64_t start, vend, aend;
    default_interval(&r, &start, &vend, &aend);
    if (c->has_interval) {
        start = (int64_t)c->start;
        vend = aend = (int64_t)c->end;
    }
    s.a_shift_units = quantum_shift(&r, &s, (int64_t)c->offset);
    s.v_shift_ticks = video_quantum_shift(&r, &s, (int64_t)c->offset);
    if (s.v_shift_ticks)
        dt_note(env, "oracle: the candidate's video is %" PRId64 " ticks off the reference's pictures, "
                     "under the container's quantum: taken off (rule 17)", s.v_shift_ticks);
    if (s.a_shift_units)
        dt_note(env, "oracle: the candidate's audio is %" PRId64 "/720000 s off the reference's frames, "
                     "under the container's quantum: taken off (rule 17)", s.a_shift_units);
    struct track_result tv, ta;
    compare_track(video_positions, &r, &s, start, dt_mod33(vend - start), (int64_t)c->offset,
                  r.v_damaged || s.v_damaged, TOL_TICKS, &tv);
    compare_track(audio_positions, &r, &s, start, dt_mod33(aend - start), (int64_t)c->offset,
                  r.a_damaged || s.a_damaged, TOL_UNITS, &ta);
    bool global_clean = tv.horizon == NEVER && ta.horizon == NEVER && !r.xerror_failed &&
                        !s.xerror_failed && !r.transport_damage && !s.transport_damage &&
                        !r.inconsistent && !s.inconsistent;
    unsigned av = 0, aa = 0;
    out->video = track_verdict(&tv, global_clean, &av);
    out->audio = track_verdict(&ta, global_clean, &aa);
    out->primary = combine(out->video, out->audio);
    out->allowed = combine_sets(av, aa);
    if (tv.neutral && ta.neutral) {
        out->primary = DT_UNKNOWN; /* nothing to compare is never MATCH */
        out->allowed = DT_VSET(DT_UNKNOWN);
    }
    bool silent = r.transport_damage || s.transport_damage || r.silent_errors || s.silent_errors;
    if (silent && !r.xerror_failed && !s.xerror_failed) {
        /* damage FFmpeg's decode does not show (in the transport, or decoder
         * errors `-xerror` passes on): UNKNOWN is honest too, and a difference
         * it may have caused is not preferred over UNKNOWN.  One it cannot
         * have caused is: a track that differs while none of its packets,
         * on either side, is damaged (the damage on the other track's PID;
         * SPEC: a MISMATCH wins over the other track's UNKNOWN; combo:641198,
         * a pixel edit with an audio packet lost) */
        out->allowed |= DT_VSET(DT_UNKNOWN);
        bool quiet = !r.silent_errors && !s.silent_errors;
        bool video_own = quiet && out->video == DT_MISMATCH && !dt_side_damage_on(&r, r.vpid) &&
                         !dt_side_damage_on(&s, s.vpid);
        bool audio_own = quiet && out->audio == DT_MISMATCH && !dt_side_damage_on(&r, r.apid) &&
                         !dt_side_damage_on(&s, s.apid);
        if (out->primary == DT_MISMATCH && !video_own && !audio_own)
            out->primary = DT_UNKNOWN;
    }
    if (s.start_retimed)
        out->allowed |= DT_VSET(DT_UNKNOWN);   /* no common start (start_retimed) */
    if (audio_tail_cut(&ta, &r, 8 * dt_mod33(aend - start)))
        out->allowed |= DT_VSET(DT_UNKNOWN);   /* the candidate's audio may end at a cut (rule 18) */
    if (s.untrimmed)
        out->allowed |= DT_VSET(DT_UNKNOWN);   /* another decode history (dt_side_trim, rule 16) */
    if (r.inconsistent || s.inconsistent) {
        out->primary = DT_UNKNOWN;
        out->allowed |= DT_VSET(DT_UNKNOWN);
    }
    dt_fmt(why, wsz, "I=[%" PRId64 ",%" PRId64 ")v [%" PRId64 ",%" PRId64 ")a; ", start,
           dt_mod33(vend), start, dt_mod33(aend));
    describe(why, wsz, "video", &tv, true, start);
    describe(why, wsz, "audio", &ta, false, start);
    size_t used = strlen(why);
    snprintf(why + used, wsz - used, "-xerror: ref %s, cand %s%s%s%s%s%s%s%s%s%s",
             r.xerror_failed ? "fails" : "ok", s.xerror_failed ? "fails" : "ok",
             s.start_retimed ? "; cand: its first video unit retimed (no common start)"
             : s.untrimmed   ? "; cand: fMP4 starting before the reference, decoded from its start"
                             : "",
             r.silent_errors && !r.xerror_failed ? " (decoder errors logged)" : "",
             s.silent_errors && !s.xerror_failed ? " (cand: decoder errors logged)" : "",
             r.transport_damage ? "; ref transport: " : "", r.transport_damage ? r.transport_why : "",
             s.transport_damage ? "; cand transport: " : "", s.transport_damage ? s.transport_why : "",
             s.inconsistent ? "; cand: " : "", s.inconsistent ? s.inconsistent_why : "");
    dt_side_free(&rs);
    dt_side_free(&s);
    return 0;
}
