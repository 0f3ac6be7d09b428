/* refscan.c - envelope, digests, interval and boundaries of the reference. */
#include "refscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>

#include "au.h"
#include "indigest.h"
#include "ts33.h"

#define NO_TIME INT64_MIN
#define RECOVERY_SEARCH 4096     /* access units searched for a recovery point's end */
#define AUDIO_PROBE_FRAMES 8     /* AAC frames tried to learn the audio's profile */

/* Times are signed offsets from the first one seen (the anchor), which
 * orders them correctly across a 33-bit wrap as long as the reference
 * spans less than 2^32 ticks (13 hours). */
struct vinfo {
    int64_t t;                   /* ticks from the anchor, NO_TIME when untimed */
    int recovery;                /* random access point: frames to recovery, else -1 */
    bool ref;                    /* a reference picture (nal_ref_idc != 0) */
    bool ps_ready;               /* an SPS and a PPS were seen by the end of this unit */
    bool intra;                  /* every slice is I or SI (h264_au_intra) */
};

struct ainfo {
    int64_t u, end;              /* 1/720000 s from the anchor, NO_TIME when untimed */
    bool digest_ok;
    uint8_t payload[AU_PAYLOAD_DIGEST];   /* its raw data blocks (au_aac_payload_digest) */
    int blocks;                  /* raw data blocks (au_aac_blocks) */
    /* cat[j]: the raw data blocks of the j + 2 frames ending with this one,
     * as one run (what one candidate ADTS frame of j + 2 blocks holds) */
    bool cat_ok[REFSCAN_CAT];
    uint8_t cat[REFSCAN_CAT][AU_PAYLOAD_DIGEST];
};

/* The raw data blocks of the last REFSCAN_CAT frames, newest first. */
struct payload_tail {
    uint8_t *data[REFSCAN_CAT];
    size_t len[REFSCAN_CAT];
    bool ok[REFSCAN_CAT];
};

struct scan {
    const struct profile *p;
    struct bsrc b;
    struct au_demux ad;
    struct indigest dg;          /* the decoder input, for the fast path */
    bool anchored;
    int64_t anchor;
    struct vinfo *v;
    size_t nv, capv;
    struct ainfo *a;
    size_t na, capa;
    struct payload_tail tail;
    bool oom;
    bool have_sps, have_pps;
    int pix_fmt, width, height;
    int64_t video_delay;         /* the largest PTS - DTS */
    int64_t quantum[TSD_TRACKS]; /* the coarsest au.quantum_units per track */
    /* the audio's profile, from decoding its first frames */
    AVCodecContext *adec;
    AVFrame *frame;
    AVPacket *pkt;
    int audio_tries;
    bool audio_known;
    int audio_profile, sample_rate, channels;
};

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static bool grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 1024;
    void *p = realloc(*arr, c * size);
    if (!p)
        return false;
    *arr = p;
    *cap = c;
    return true;
}

/* Digests of this frame's raw data blocks after those of the frames
 * before it (ainfo.cat), then this frame's kept for the next ones.  A
 * frame whose blocks are not one run breaks every run through it.  False
 * without memory. */
static bool concat_payloads(struct payload_tail *t, const struct au *au, struct ainfo *a)
{
    const uint8_t *p = NULL;
    size_t n = 0;
    bool ok = au_aac_payload(au, &p, &n);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md)
        return false;
    for (int j = 0; j < REFSCAN_CAT; j++) {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        bool all = ok;
        for (int k = 0; k <= j; k++)
            all &= t->ok[k];
        a->cat_ok[j] = false;
        if (!all || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
            continue;
        bool fed = true;
        for (int k = j; k >= 0; k--)
            fed &= EVP_DigestUpdate(md, t->data[k], t->len[k]) == 1;
        if (fed && EVP_DigestUpdate(md, p, n) && EVP_DigestFinal_ex(md, out, &len) && len >= AU_PAYLOAD_DIGEST) {
            memcpy(a->cat[j], out, AU_PAYLOAD_DIGEST);
            a->cat_ok[j] = true;
        }
    }
    EVP_MD_CTX_free(md);
    uint8_t *last = t->data[REFSCAN_CAT - 1];
    memmove(&t->data[1], &t->data[0], (REFSCAN_CAT - 1) * sizeof t->data[0]);
    memmove(&t->len[1], &t->len[0], (REFSCAN_CAT - 1) * sizeof t->len[0]);
    memmove(&t->ok[1], &t->ok[0], (REFSCAN_CAT - 1) * sizeof t->ok[0]);
    uint8_t *copy = ok ? realloc(last, n ? n : 1) : last;
    if (!copy) {
        free(last);
        t->data[0] = NULL;
        t->ok[0] = false;
        return false;
    }
    if (ok)
        memcpy(copy, p, n);
    t->data[0] = copy;
    t->len[0] = ok ? n : 0;
    t->ok[0] = ok;
    return true;
}

static int64_t rel_ticks(struct scan *s, int64_t pts)
{
    if (!s->anchored) {
        s->anchored = true;
        s->anchor = ts33_norm(pts);
    }
    return ts33_diff(pts, s->anchor);
}

static void probe_audio(struct scan *s, const struct au *au)
{
    if (s->audio_known || s->audio_tries >= AUDIO_PROBE_FRAMES)
        return;
    s->audio_tries++;
    if (!s->adec) {
        const AVCodec *codec = avcodec_find_decoder_by_name(s->p->audio_decoder);
        s->adec = codec ? avcodec_alloc_context3(codec) : NULL;
        if (!s->adec)
            return;
        s->adec->thread_count = 1;
        s->adec->flags |= s->p->audio_flags;
        s->adec->flags2 |= s->p->audio_flags2;
        if (avcodec_open2(s->adec, codec, NULL) < 0 || !(s->frame = av_frame_alloc()) ||
            !(s->pkt = av_packet_alloc())) {
            s->audio_tries = AUDIO_PROBE_FRAMES;
            return;
        }
    }
    if (av_new_packet(s->pkt, (int)au->size) < 0)
        return;
    memcpy(s->pkt->data, au->data, au->size);
    if (avcodec_send_packet(s->adec, s->pkt) >= 0 && avcodec_receive_frame(s->adec, s->frame) >= 0) {
        s->audio_known = true;
        s->audio_profile = s->adec->profile;
        s->sample_rate = s->frame->sample_rate;
        s->channels = s->frame->ch_layout.nb_channels;
        av_frame_unref(s->frame);
    }
    av_packet_unref(s->pkt);
}

static bool on_au(void *opaque, const struct au *au)
{
    struct scan *s = opaque;
    indigest_add(&s->dg, au, s->ad.t[au->track].codec);
    if (au->track == TSD_VIDEO && s->ad.t[TSD_VIDEO].codec == AU_CODEC_H264) {
        if (!grow((void **)&s->v, &s->capv, s->nv, sizeof *s->v)) {
            s->oom = true;
            return false;
        }
        const AVCodecParserContext *pc = s->ad.t[TSD_VIDEO].parser;
        if (s->pix_fmt < 0 && pc->format >= 0) {
            s->pix_fmt = pc->format;
            s->width = pc->width;
            s->height = pc->height;
        }
        struct vinfo *v = &s->v[s->nv++];
        s->quantum[TSD_VIDEO] = max64(s->quantum[TSD_VIDEO], au->quantum_units);
        v->t = au->pts != AU_NO_TS ? rel_ticks(s, au->pts) : NO_TIME;
        if (au->pts != AU_NO_TS && au->dts != AU_NO_TS && ts33_diff(au->pts, au->dts) > s->video_delay)
            s->video_delay = ts33_diff(au->pts, au->dts);
        v->recovery = au->h264.idr ? 0 : au->h264.recovery_cnt;
        v->ref = au->h264.ref_idc > 0;
        v->intra = h264_au_intra(&au->h264);
        s->have_sps |= au->h264.has_sps;
        s->have_pps |= au->h264.has_pps;
        v->ps_ready = s->have_sps && s->have_pps;
    } else if (au->track == TSD_AUDIO && s->ad.t[TSD_AUDIO].codec == AU_CODEC_AAC) {
        s->quantum[TSD_AUDIO] = max64(s->quantum[TSD_AUDIO], au->quantum_units);
        if (!grow((void **)&s->a, &s->capa, s->na, sizeof *s->a)) {
            s->oom = true;
            return false;
        }
        struct ainfo *a = &s->a[s->na++];
        int unit = au_units_per_sample(au->sample_rate);
        a->u = a->end = NO_TIME;
        if (au->timed) {
            int64_t t = rel_ticks(s, ts33_norm(au->units / AU_UNITS_PER_TICK));
            a->u = t * AU_UNITS_PER_TICK + au->units % AU_UNITS_PER_TICK;
            a->end = a->u + (int64_t)au->samples * (unit ? unit : 15);
        }
        a->digest_ok = au_aac_payload_digest(au, a->payload);
        a->blocks = au_aac_blocks(au);
        if (!concat_payloads(&s->tail, au, a))
            s->oom = true;
        probe_audio(s, au);
    }
    return true;
}

/* ---- the envelope ---- */

static enum refscan_status check_video(struct scan *s, struct refscan *r, char *err, size_t errlen)
{
    const struct au_track *t = &s->ad.t[TSD_VIDEO];
    if (t->codec == AU_CODEC_NONE) {
        snprintf(err, errlen, "reference video stream carries no data");
        return REFSCAN_UNUSABLE;
    }
    if (t->codec != AU_CODEC_H264) {
        snprintf(err, errlen, "reference video is %s; Exact-AV v1 requires H.264",
                 t->codec_name ? t->codec_name : s->ad.td.pes[TSD_VIDEO].codec);
        return REFSCAN_UNUSABLE;
    }
    if (s->pix_fmt >= 0 && s->pix_fmt != AV_PIX_FMT_YUV420P && s->pix_fmt != AV_PIX_FMT_YUVJ420P) {
        const char *name = av_get_pix_fmt_name(s->pix_fmt);
        snprintf(err, errlen, "reference video pixel format is %s; Exact-AV v1 requires 8-bit 4:2:0 (yuv420p)",
                 name ? name : "unknown");
        return REFSCAN_UNUSABLE;
    }
    const struct profile *p = s->p;
    if (s->width > p->max_width || s->height > p->max_height) {
        snprintf(err, errlen, "reference video is %dx%d; the profile's %s is %d (video.envelope.max_width x "
                 "max_height: %dx%d)", s->width, s->height,
                 s->width > p->max_width ? "video.envelope.max_width" : "video.envelope.max_height",
                 s->width > p->max_width ? p->max_width : p->max_height, p->max_width, p->max_height);
        return REFSCAN_UNUSABLE;
    }
    r->has_video = true;
    r->video_pid = s->ad.td.pes[TSD_VIDEO].pid;
    r->width = s->width;
    r->height = s->height;
    r->pix_fmt = s->pix_fmt;
    return REFSCAN_OK;
}

static enum refscan_status check_audio(struct scan *s, struct refscan *r, char *err, size_t errlen)
{
    const struct au_track *t = &s->ad.t[TSD_AUDIO];
    if (t->codec == AU_CODEC_NONE) {
        snprintf(err, errlen, "reference audio stream carries no data");
        return REFSCAN_UNUSABLE;
    }
    if (t->codec != AU_CODEC_AAC) {
        snprintf(err, errlen, "reference audio is %s; Exact-AV v1 requires AAC-LC",
                 t->codec_name ? t->codec_name : s->ad.td.pes[TSD_AUDIO].codec);
        return REFSCAN_UNUSABLE;
    }
    if (!s->audio_known) {
        snprintf(err, errlen, "reference audio cannot be decoded; Exact-AV v1 requires AAC-LC");
        return REFSCAN_UNUSABLE;
    }
    if (s->audio_profile != FF_PROFILE_AAC_LOW) {
        const char *name = avcodec_profile_name(AV_CODEC_ID_AAC, s->audio_profile);
        snprintf(err, errlen, "reference audio is AAC profile %s; Exact-AV v1 requires AAC-LC",
                 name ? name : "unknown");
        return REFSCAN_UNUSABLE;
    }
    if (s->sample_rate != s->p->audio_sample_rate || s->channels != s->p->audio_channels) {
        snprintf(err, errlen, "reference audio is %d Hz, %d channel(s); Exact-AV v1 requires %d Hz stereo",
                 s->sample_rate, s->channels, s->p->audio_sample_rate);
        return REFSCAN_UNUSABLE;
    }
    r->has_audio = true;
    r->audio_pid = s->ad.td.pes[TSD_AUDIO].pid;
    r->sample_rate = s->sample_rate;
    r->channels = s->channels;
    return REFSCAN_OK;
}

static enum refscan_status check_envelope(struct scan *s, struct refscan *r, char *err, size_t errlen)
{
    const struct tsdemux *td = &s->ad.td;
    const struct tsd_program *p = tsdemux_program(td);
    if (td->too_many) {
        snprintf(err, errlen, "reference has more than %d programs or %d streams in a program (too_many_streams)",
                 TSD_MAX_PROGRAMS, TSD_MAX_STREAMS);
        return REFSCAN_UNUSABLE;
    }
    if (td->selection == TSD_SEL_AMBIGUOUS) {
        snprintf(err, errlen, "reference has several programs with audio or video; Exact-AV v1 takes one rendition");
        return REFSCAN_UNUSABLE;
    }
    if (!p || p->nvideo == 0) {
        snprintf(err, errlen, "reference has no video stream; Exact-AV v1 requires H.264 video");
        return REFSCAN_UNUSABLE;
    }
    if (p->nvideo > 1 || p->naudio > 1) {
        snprintf(err, errlen, "reference has several %s streams; Exact-AV v1 takes one rendition",
                 p->nvideo > 1 ? "video" : "audio");
        return REFSCAN_UNUSABLE;
    }
    r->program = *p;
    enum refscan_status st = check_video(s, r, err, errlen);
    if (st == REFSCAN_OK && p->naudio == 1)
        st = check_audio(s, r, err, errlen);
    return st;
}

/* Damage where a decoder reads (the PAT, the PMTs, the tracks; tsdemux.h)
 * refuses a reference; damage on a PID nothing decodes does not. */
static enum refscan_status check_integrity(const struct bsrc *b, const struct au_demux *ad, char *err,
                                           size_t errlen)
{
    if (b->io_error) {
        snprintf(err, errlen, "reference cannot be read: %s", b->io_detail);
        return REFSCAN_UNOPENABLE;
    }
    if (!au_transport_complete(ad)) {
        uint64_t offset;
        int pid;
        enum ts_issue issue = au_transport_issue(ad, &offset, &pid);
        if (issue == TS_ISSUE_NONE)
            snprintf(err, errlen, "reference transport stream was not read to its end");
        else
            snprintf(err, errlen, "reference %s is damaged: %s at byte %llu",
                     ad->fmp4 ? "fMP4 stream" : "transport stream", tscheck_issue_code(issue),
                     (unsigned long long)offset);
        return REFSCAN_UNUSABLE;
    }
    for (size_t i = 0; i < b->nsegs; i++) {
        const struct bsrc_segment *s = &b->segs[i];
        if (s->expect_sha256 && strcmp(s->sha256, s->expect_sha256)) {
            snprintf(err, errlen, "reference file %s does not match its binding (sha256 %s, binding says %s)",
                     s->path ? s->path : "(memory)", s->sha256, s->expect_sha256);
            return REFSCAN_UNUSABLE;
        }
    }
    return REFSCAN_OK;
}

/* ---- random access ---- */

/* The PTS (from the anchor) from which decoding from random access point i
 * gives valid pictures: the point itself for an IDR or a recovery point of
 * count 0, else the reference picture whose frame_num is recovery_frame_cnt
 * further (frame_num grows by one after each reference picture, 7.4.3);
 * NO_TIME when the stream ends before. */
static int64_t recovery_time(const struct scan *s, size_t i)
{
    int refs = 0;
    for (size_t j = i; j < s->nv && j < i + RECOVERY_SEARCH; j++) {
        if (s->v[j].ref && refs == s->v[i].recovery)
            return s->v[j].t;
        if (s->v[j].ref && ++refs > s->v[i].recovery)
            break;
        if (s->v[i].recovery == 0)
            return s->v[i].t;    /* a non-reference point with count 0 */
    }
    return NO_TIME;
}

struct access {
    bool found;
    int64_t at, recovery;        /* ticks from the anchor */
};

/* Random access points are usable once an SPS and a PPS have been seen.
 * The latest random access point serving video from start on: recovered by
 * then, and nothing of [start, ...) before it in decode order.  With none,
 * the first usable one (found = false).  With start == NO_TIME: the first
 * usable one, and in *start the first time decodable from it. */
static struct access video_access(const struct scan *s, int64_t *start)
{
    struct access best = {0}, first = {0};
    bool have_first = false;
    int64_t max_before = INT64_MIN;
    for (size_t i = 0; i < s->nv; i++) {
        if (s->v[i].recovery >= 0 && s->v[i].t != NO_TIME && s->v[i].ps_ready) {
            int64_t rec = recovery_time(s, i);
            if (rec != NO_TIME) {
                if (!have_first) {
                    have_first = true;
                    first = (struct access){.at = s->v[i].t, .recovery = rec};
                    if (*start == NO_TIME)
                        *start = max_before != INT64_MIN && max_before + 1 > rec ? max_before + 1 : rec;
                }
                if (rec <= *start && (max_before == INT64_MIN || max_before < *start))
                    best = (struct access){.found = true, .at = s->v[i].t, .recovery = rec};
            }
        }
        if (s->v[i].t != NO_TIME && s->v[i].t > max_before)
            max_before = s->v[i].t;
    }
    if (!best.found && have_first) {
        best = first;
        best.found = false;
    }
    return best;
}

/* An intra picture that comes, in decode order, before the first usable
 * random access point but is not one: an open-GOP I picture without a
 * recovery point SEI.  A player shows it (hls.js builds its decoder
 * configuration from the segment's parameter sets, wherever they are, so
 * it decodes the I picture even when they come only with the later IDR);
 * FFmpeg, and so the check, decodes nothing before the random access
 * point.  Starting the default interval there would leave those pictures
 * uncompared without saying so (issue 18, class 11). */
static bool starts_with_unmarked_intra(const struct scan *s, int64_t rap_at)
{
    if (!s->have_sps || !s->have_pps)
        return false;
    for (size_t i = 0; i < s->nv && !(s->v[i].recovery >= 0 && s->v[i].t == rap_at); i++)
        if (s->v[i].intra && s->v[i].recovery < 0 && s->v[i].t != NO_TIME && s->v[i].t < rap_at)
            return true;
    return false;
}

/* ---- the interval ---- */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static void extent(const struct scan *s, int64_t *vfirst, int64_t *vend, int64_t *afirst, int64_t *aend)
{
    *vfirst = *afirst = INT64_MAX;
    *vend = *aend = INT64_MIN;
    for (size_t i = 0; i < s->nv; i++)
        if (s->v[i].t != NO_TIME) {
            *vfirst = min64(*vfirst, s->v[i].t);
            *vend = max64(*vend, s->v[i].t + 1);
        }
    for (size_t i = 0; i < s->na; i++)
        if (s->a[i].u != NO_TIME) {
            int64_t first = s->a[i].u >= 0 ? s->a[i].u / AU_UNITS_PER_TICK
                                           : -((-s->a[i].u + AU_UNITS_PER_TICK - 1) / AU_UNITS_PER_TICK);
            *afirst = min64(*afirst, first);
            *aend = max64(*aend, (s->a[i].end + AU_UNITS_PER_TICK - 1) / AU_UNITS_PER_TICK);
        }
}

/* The AAC frame before the one holding the span's start, else that one. */
static int64_t audio_access(const struct scan *s, int64_t start)
{
    size_t prev = SIZE_MAX;
    for (size_t i = 0; i < s->na; i++) {
        if (s->a[i].u == NO_TIME)
            continue;
        if (s->a[i].end > start * AU_UNITS_PER_TICK)
            return prev != SIZE_MAX ? s->a[prev].u : s->a[i].u;
        prev = i;
    }
    return prev != SIZE_MAX ? s->a[prev].u : 0;
}

static void hold_frame(const struct scan *s, size_t i, struct refscan_aframe *f)
{
    f->units = ((s->anchor * AU_UNITS_PER_TICK + s->a[i].u) % AU_UNITS_MOD + AU_UNITS_MOD) % AU_UNITS_MOD;
    f->digest_ok = s->a[i].digest_ok;
    memcpy(f->payload, s->a[i].payload, AU_PAYLOAD_DIGEST);
    f->blocks = s->a[i].blocks;
    memcpy(f->cat_ok, s->a[i].cat_ok, sizeof f->cat_ok);
    memcpy(f->cat, s->a[i].cat, sizeof f->cat);
}

/* The timed frames from the one starting at u (the boundary's) on, after
 * up to REFSCAN_AUDIO_BEFORE timed frames before it (a common boundary,
 * verify.c). */
static void hold_audio_window(const struct scan *s, int64_t u, struct refscan *r)
{
    r->audio_window_len = r->audio_window_first = 0;
    r->audio_window_full = false;
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < s->na && at == SIZE_MAX; i++)
        if (s->a[i].u != NO_TIME && s->a[i].u == u)
            at = i;
    if (at == SIZE_MAX)
        return;
    size_t first = at;
    for (size_t i = at, n = 0; i-- > 0 && n < REFSCAN_AUDIO_BEFORE;)
        if (s->a[i].u != NO_TIME) {
            first = i;
            n++;
        }
    for (size_t i = first; i < s->na; i++) {
        if (s->a[i].u == NO_TIME)
            continue;
        if (i > at && r->audio_window_len - r->audio_window_first == REFSCAN_AUDIO_WINDOW) {
            r->audio_window_full = true;
            return;
        }
        if (i == at)
            r->audio_window_first = r->audio_window_len;
        hold_frame(s, i, &r->audio_window[r->audio_window_len++]);
    }
}

static void set_span(struct span *sp, int64_t anchor, int64_t from, int64_t to)
{
    sp->start = ts33_add(anchor, from);
    sp->end = ts33_add(anchor, to > from ? to : from);
}

static enum refscan_status place(struct scan *s, bool have_interval, int64_t start, int64_t end,
                                 struct refscan *r, char *err, size_t errlen)
{
    int64_t vfirst, vend, afirst, aend;
    extent(s, &vfirst, &vend, &afirst, &aend);
    int64_t ds = have_interval ? ts33_diff(start, s->anchor) : NO_TIME;
    struct access va = video_access(s, &ds);
    if (ds == NO_TIME) {
        snprintf(err, errlen, "reference has no video key frame (IDR or recovery point, with an SPS and a PPS "
                              "before it) to start decoding from");
        return REFSCAN_UNUSABLE;
    }
    /* The default interval is the whole reference when pictures a player
     * shows come before its first random access point: the check then says
     * UNKNOWN no_random_access_before_interval (as for an interval given
     * over them), never a MATCH of only what follows. */
    if (!have_interval && starts_with_unmarked_intra(s, va.at))
        ds = vfirst;
    int64_t de = have_interval ? ds + ts33_interval_len(start, end) : max64(vend, aend);
    int64_t vs = max64(ds, vfirst), ve = min64(de, vend);
    if (have_interval && vs > ds) {
        int64_t vstart = vs;     /* the span starts later: serve its start */
        va = video_access(s, &vstart);
    }
    int64_t as = r->has_audio ? max64(ds, afirst) : ds, ae = r->has_audio ? min64(de, aend) : ds;
    r->start = ts33_add(s->anchor, ds);
    r->end = ts33_add(s->anchor, de);
    set_span(&r->video, s->anchor, vs, ve);
    set_span(&r->audio, s->anchor, as, ae);
    r->video_boundary = ts33_add(s->anchor, va.at);
    r->video_recovery = ts33_add(s->anchor, va.recovery);
    int64_t au = r->has_audio ? audio_access(s, as) : as * AU_UNITS_PER_TICK;
    r->audio_boundary = ((s->anchor * AU_UNITS_PER_TICK + au) % AU_UNITS_MOD + AU_UNITS_MOD) % AU_UNITS_MOD;
    if (r->has_audio)
        hold_audio_window(s, au, r);
    r->video_quantum = s->quantum[TSD_VIDEO];
    r->audio_quantum = s->quantum[TSD_AUDIO];
    r->video_units = (int64_t)s->nv;
    r->video_delay = s->video_delay;
    r->audio_frames = (int64_t)s->na;
    return REFSCAN_OK;
}

static void scan_free(struct scan *s)
{
    avcodec_free_context(&s->adec);
    av_frame_free(&s->frame);
    av_packet_free(&s->pkt);
    au_demux_free(&s->ad);
    indigest_free(&s->dg);
    bsrc_close(&s->b);
    free(s->v);
    free(s->a);
    for (int j = 0; j < REFSCAN_CAT; j++)
        free(s->tail.data[j]);
}

enum refscan_status refscan_run(struct bsrc_segment *segs, size_t nsegs, const struct profile *p,
                                bool have_interval, int64_t start, int64_t end,
                                struct refscan *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct scan *s = calloc(1, sizeof *s);
    if (!s)
        return REFSCAN_FAILED;
    s->p = p;
    s->pix_fmt = -1;
    struct tsd_select sel = {.reference = true};
    enum refscan_status st = REFSCAN_FAILED;
    if (bsrc_init(&s->b, segs, nsegs) == 0 && indigest_init(&s->dg, 0) == 0 &&
        au_demux_init(&s->ad, &sel, on_au, s, &s->b) == 0) {
        au_demux_run(&s->ad);
        r->input_digest_ok = indigest_final(&s->dg, r->input_digest) && !s->b.io_error &&
                             au_transport_complete(&s->ad);
        st = s->oom ? REFSCAN_FAILED : check_integrity(&s->b, &s->ad, err, errlen);
        if (st == REFSCAN_OK)
            st = check_envelope(s, r, err, errlen);
        if (st == REFSCAN_OK)
            st = place(s, have_interval, start, end, r, err, errlen);
    }
    scan_free(s);
    free(s);
    return st;
}
