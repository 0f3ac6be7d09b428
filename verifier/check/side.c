/* side.c - one decoding side in its own thread (see side.h). */
#include "side.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>

#include "indigest.h"
#include "ts33.h"
#include "util.h"
#include "vvalid.h"

#define PENDING_MAX 16           /* decoded pictures waiting for final validity (a DPB) */
#define PAST_END_RUN 8           /* units in a row past the interval before decoding stops: one
                                  * unit with a wild timestamp does not end the decode */
#define AREC_RING 32

struct pending {
    AVFrame *frame;
    int64_t d, pts;
};

/* Per-thread decoding state. */
struct decode_state {
    struct side *s;
    struct bsrc b;
    struct au_demux ad;
    struct indigest dg;          /* digest_only: the decoder input */
    AVCodecContext *vdec, *adec;
    AVFrame *frame;
    AVPacket *pkt;
    bool failed;                 /* the exchange was aborted or memory ran out */
    /* video */
    struct vvalid vv;
    struct pending pend[PENDING_MAX];
    int npend;
    int64_t vlast;               /* decode index of the last unit fed */
    int vpast, apast;            /* units in a row past the interval */
    bool vstopped;
    bool access_window;          /* from a recovery point start to the next random access point */
    /* audio */
    bool astopped, audio_taint;
    struct { int64_t serial, units; bool timed; } arec[AREC_RING];
    int64_t aserial;
    bool a_have_next;            /* where the next decoded frame starts, by the samples */
    int64_t a_next;              /* decoded so far (1/720000 s) */
    int64_t a_last_serial;       /* the unit of the last decoded frame */
    bool a_skipped_overlap;      /* the last frame skipped before the boundary overlaps it */
    bool a_quantum_seen;         /* the first timed frame decided the residual (quantum_aligned) */
    int64_t v_residual;          /* ticks taken off every video unit's times (video_quantum_aligned) */
    int64_t a_residual;          /* 1/720000 s taken off every frame's time */
};

static void track_error(struct side_track *t, const char *what, int rc)
{
    t->decode_error = true;
    if (!t->first_error[0])
        snprintf(t->first_error, sizeof t->first_error, "%s: %s", what, av_err2str(rc));
}

/* Called by the decoder when a new sequence (SPS) is activated, before any
 * picture of that size is allocated or decoded: a size beyond the profile's
 * envelope is refused there, so hostile dimensions cost no memory. */
static enum AVPixelFormat get_format_in_envelope(AVCodecContext *c, const enum AVPixelFormat *fmts)
{
    struct side_log *log = c->opaque;
    if (log && log->max_width > 0 && (c->width > log->max_width || c->height > log->max_height)) {
        atomic_store(&log->oversize, 1);
        return AV_PIX_FMT_NONE;
    }
    return avcodec_default_get_format(c, fmts);
}

static AVCodecContext *open_decoder(struct decode_state *st, const char *name, int flags, int flags2,
                                    struct side_log *log, struct side_track *t)
{
    const struct profile *p = st->s->cfg.profile;
    const AVCodec *codec = avcodec_find_decoder_by_name(name);
    AVCodecContext *c = codec ? avcodec_alloc_context3(codec) : NULL;
    if (!c) {
        snprintf(t->first_error, sizeof t->first_error, "decoder %s unavailable", name);
        return NULL;
    }
    c->thread_count = 1;         /* profile v1: single-threaded, see profile.c */
    c->thread_type = 0;
    c->flags |= flags;
    c->flags2 |= flags2;
    c->strict_std_compliance = p->strict_std_compliance;
    c->pkt_timebase = (AVRational){1, 90000};
    c->opaque = log;
    if (log->max_width > 0)
        c->get_format = get_format_in_envelope;
    if (avcodec_open2(c, codec, NULL) < 0) {
        avcodec_free_context(&c);
        snprintf(t->first_error, sizeof t->first_error, "decoder %s cannot be opened", name);
        return NULL;
    }
    return c;
}

static bool in_span(const struct span *sp, int64_t ref_t)
{
    return ts33_in_interval(ref_t, sp->start, sp->end);
}

/* Outside the span but within the tolerance of it (xfer.h); *rel then its
 * signed distance from the start in ticks. */
static bool in_margin(const struct span *sp, int64_t ref_t, int64_t *rel)
{
    int64_t d = ts33_diff(ref_t, sp->start), len = ts33_interval_len(sp->start, sp->end);
    *rel = d;
    return (d < 0 && d >= -XFER_TOLERANCE_TICKS) || (d >= len && d < len + XFER_TOLERANCE_TICKS);
}

/* At or after the span's end (before its start is not "past"). */
static bool past_end(const struct span *sp, int64_t ref_t)
{
    return ts33_diff(ref_t, sp->start) >= ts33_interval_len(sp->start, sp->end);
}

/* Signed distance a - b in 1/720000 s units, the short way round. */
static int64_t units_diff(int64_t a, int64_t b)
{
    int64_t d = (a - b) % AU_UNITS_MOD;
    if (d < 0)
        d += AU_UNITS_MOD;
    return d >= AU_UNITS_MOD / 2 ? d - AU_UNITS_MOD : d;
}

static bool send_packet(struct decode_state *st, AVCodecContext *c, const uint8_t *pre, size_t pre_len,
                        const uint8_t *data, size_t len, int64_t pts, int64_t dts, int64_t pos, int *rc)
{
    AVPacket *pkt = st->pkt;
    if (av_new_packet(pkt, (int)(pre_len + len)) < 0) {
        st->s->res.internal_error = st->failed = true;
        return false;
    }
    if (pre_len)
        memcpy(pkt->data, pre, pre_len);
    memcpy(pkt->data + pre_len, data, len);
    pkt->pts = pts;
    pkt->dts = dts;
    pkt->pos = pos;
    *rc = avcodec_send_packet(c, pkt);
    av_packet_unref(pkt);
    return true;
}

/* ---- video ---- */

static bool push_video(struct decode_state *st, AVFrame *f, int64_t pts, int64_t rel, bool margin, bool valid)
{
    struct side *s = st->s;
    struct vitem it = {.pts = pts, .rel = rel, .margin = margin, .valid = valid, .frame = av_frame_alloc()};
    if (!it.frame) {
        s->res.internal_error = st->failed = true;
        return false;
    }
    av_frame_move_ref(it.frame, f);
    s->res.video.in_interval += !margin;
    if (!valid && !margin)       /* a margin frame's validity counts where it pairs (compare.c) */
        s->res.video.invalid = true;
    if (!xfer_push_video(s->cfg.xfer, s->cfg.index, &it)) {
        vitem_release(&it);
        st->failed = true;
        return false;
    }
    return true;
}

/* Hands on, in output order, the pictures whose validity is final. */
static void drain_pending(struct decode_state *st)
{
    const struct side_config *cfg = &st->s->cfg;
    while (st->npend > 0 && vvalid_final(&st->vv, st->pend[0].d)) {
        struct pending p = st->pend[0];
        memmove(st->pend, st->pend + 1, (size_t)--st->npend * sizeof st->pend[0]);
        int64_t ref_pts = ts33_sub(p.pts, cfg->offset), rel = 0;
        bool inside = in_span(&cfg->video, ref_pts), margin = !inside && in_margin(&cfg->video, ref_pts, &rel);
        if (inside)
            rel = ts33_sub(ref_pts, cfg->video.start);
        if (!st->failed && (inside || margin))
            push_video(st, p.frame, p.pts, rel, margin, vvalid_valid(&st->vv, p.d, p.pts));
        av_frame_free(&p.frame);
    }
}

/* The reference must stay 8-bit 4:2:0 all along (the scan saw only its
 * first parameters); the candidate may differ, which the comparer reports. */
static bool reference_frame_in_envelope(struct decode_state *st, const AVFrame *f)
{
    if (st->s->cfg.index != XFER_REF || f->format == AV_PIX_FMT_YUV420P || f->format == AV_PIX_FMT_YUVJ420P)
        return true;
    st->s->res.video.params_changed = true;
    return false;
}

static void handle_video_frame(struct decode_state *st, AVFrame *f)
{
    struct side_track *t = &st->s->res.video;
    int64_t d = f->pkt_pos;
    bool preroll = vvalid_preroll(&st->vv, d);
    t->frames_out++;
    if (((f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags) && !preroll) {
        t->corrupt = true;
        vvalid_damage(&st->vv, d);
    }
    if (!reference_frame_in_envelope(st, f))
        vvalid_damage(&st->vv, d);
    /* Only the frame's own PTS places it: a guessed time is not a declared one. */
    int64_t pts = f->pts == AV_NOPTS_VALUE ? -1 : ts33_norm(f->pts);
    vvalid_output(&st->vv, d, pts);
    if (pts < 0) {
        t->missing_pts |= !preroll;
        av_frame_unref(f);
    } else {
        if (st->npend == PENDING_MAX) {
            vvalid_force(&st->vv, st->pend[0].d);   /* more held back than any DPB */
            drain_pending(st);
        }
        struct pending *p = &st->pend[st->npend];
        p->frame = av_frame_alloc();
        if (!p->frame) {
            st->s->res.internal_error = st->failed = true;
            return;
        }
        av_frame_move_ref(p->frame, f);
        p->d = d, p->pts = pts;
        st->npend++;
    }
    drain_pending(st);
}

/* Damage reported by the decoder or its log belongs to the unit being
 * decoded.  After a start at a recovery point (not an IDR), the pictures
 * of its first GOP may carry reference marking commands for pictures from
 * before the start, which were never decoded: those failures are expected
 * and name no damage (a picture that is really missing shows as a failed
 * prediction, which is). */
static void video_damage(struct decode_state *st, const char *what, int rc)
{
    struct side *s = st->s;
    bool preroll = vvalid_preroll(&st->vv, st->vlast);
    if (rc < 0) {
        vvalid_damage(&st->vv, st->vlast);
        if (!preroll)
            track_error(&s->res.video, what, rc);
    }
    int errors = atomic_exchange(&s->vlog.errors, 0), marking = atomic_exchange(&s->vlog.ref_marking, 0);
    if (errors && errors == marking && st->access_window)
        errors = 0;
    if (errors) {
        vvalid_damage(&st->vv, st->vlast);
        if (!preroll && !s->res.video.decode_error) {
            s->res.video.decode_error = true;
            snprintf(s->res.video.first_error, sizeof s->res.video.first_error, "decoder logged an error");
        }
    }
    if (atomic_exchange(&s->vlog.reorder_growth, 0)) {
        vvalid_damage(&st->vv, st->vlast);
        s->res.video.dropped |= !preroll;
    }
    if (atomic_exchange(&s->vlog.oversize, 0)) {   /* refused, pre-roll or not */
        vvalid_damage(&st->vv, st->vlast);
        s->res.video.oversize = true;
    }
}

static void receive_video(struct decode_state *st)
{
    for (;;) {
        int rc = avcodec_receive_frame(st->vdec, st->frame);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
            break;
        video_damage(st, "receive", rc);
        if (rc < 0)
            break;
        handle_video_frame(st, st->frame);
        av_frame_unref(st->frame);
    }
}

static void stop_video(struct decode_state *st)
{
    if (!st->vdec || st->vstopped)
        return;
    st->vstopped = true;
    avcodec_send_packet(st->vdec, NULL);
    receive_video(st);
    vvalid_flush(&st->vv);
    drain_pending(st);
    if (st->vv.dropped_in_interval)
        st->s->res.video.dropped = true;
}

static bool random_access_point(const struct au *au)
{
    return au->h264.idr || au->h264.recovery_cnt >= 0;
}

static void feed_video(struct decode_state *st, const struct au *au, int64_t ref_pts, bool in_interval)
{
    struct side *s = st->s;
    const struct side_config *cfg = &s->cfg;
    struct side_track *t = &s->res.video;
    bool timed = au->pts != AU_NO_TS;
    bool preroll = timed && ts33_diff(ref_pts, cfg->video_recovery) < -XFER_TOLERANCE_TICKS;
    enum vv_cut cut = au->h264.idr ? VV_CUT_IDR
                      : au->h264.recovery_cnt == 0 && h264_au_intra(&au->h264) ? VV_CUT_RECOVERY
                                                                                : VV_CUT_NONE;
    if (t->packets_fed == 0)
        st->access_window = !au->h264.idr;
    else if (random_access_point(au))
        st->access_window = false;
    int64_t d = st->vlast = vvalid_feed(&st->vv, timed ? au->pts : -1, preroll, in_interval, cut);
    if (au->damaged) {
        vvalid_damage(&st->vv, d);
        t->lost_packets |= !preroll;
    }
    /* The first unit gets the latest parameter sets seen before it. */
    uint8_t *ps = NULL;
    size_t ps_len = 0;
    if (t->packets_fed == 0 && (ps_len = h264_ps_size(&st->ad.t[TSD_VIDEO].ps)) > 0) {
        ps = malloc(ps_len);
        ps_len = ps ? h264_ps_write(&st->ad.t[TSD_VIDEO].ps, ps) : 0;
    }
    t->packets_fed++;
    int rc = 0;
    bool sent = send_packet(st, st->vdec, ps, ps_len, au->data, au->size, timed ? au->pts : AV_NOPTS_VALUE,
                            au->dts != AU_NO_TS ? au->dts : AV_NOPTS_VALUE, d, &rc);
    free(ps);
    if (!sent)
        return;
    video_damage(st, "send", rc == AVERROR(EAGAIN) ? 0 : rc);
    receive_video(st);
}

/* The container's quantum for video (as quantum_aligned for audio): the
 * random access point at which this side's decoding would start, the
 * counterpart of the reference's boundary unit, lies more than the
 * tolerance and less than one quantum from the boundary; that distance
 * is taken off every unit's PTS and DTS.  Decided once, before decoding
 * starts, from that one unit (never a search: a side whose decoding
 * starts without one, at the boundary or at a later random access point,
 * is not moved); a video shift of a quantum or more is judged as a timing
 * difference. */
static const struct au *video_quantum_aligned(struct decode_state *st, const struct au *au, struct au *copy)
{
    struct side_track *t = &st->s->res.video;
    const struct side_config *cfg = &st->s->cfg;
    int64_t quantum = au->quantum_units > cfg->ref_video_quantum ? au->quantum_units : cfg->ref_video_quantum;
    if (!t->started && !st->v_residual && au->pts != AU_NO_TS && random_access_point(au) &&
        quantum / AU_UNITS_PER_TICK > XFER_TOLERANCE_TICKS) {
        int64_t from = ts33_diff(ts33_sub(au->pts, cfg->offset), cfg->video_boundary);
        if (llabs(from) > XFER_TOLERANCE_TICKS && llabs(from) * AU_UNITS_PER_TICK < quantum) {
            st->v_residual = from;
            t->quantum_units = quantum;
            t->quantum_residual_units = from * AU_UNITS_PER_TICK;
        }
    }
    if (!st->v_residual)
        return au;
    *copy = *au;
    if (copy->pts != AU_NO_TS)
        copy->pts = ts33_sub(copy->pts, st->v_residual);
    if (copy->dts != AU_NO_TS)
        copy->dts = ts33_sub(copy->dts, st->v_residual);
    return copy;
}

static void video_au(struct decode_state *st, const struct au *in)
{
    struct au aligned;
    const struct au *au = video_quantum_aligned(st, in, &aligned);
    struct side *s = st->s;
    const struct side_config *cfg = &s->cfg;
    struct side_track *t = &s->res.video;
    bool timed = au->pts != AU_NO_TS;
    int64_t ref_pts = timed ? ts33_sub(au->pts, cfg->offset) : 0;
    bool in_interval = timed && in_span(&cfg->video, ref_pts);
    if (st->vstopped) {
        t->late |= in_interval;
        return;
    }
    if (!t->started) {
        /* the reference's random access point, or the first one after it */
        int64_t from = timed ? ts33_diff(ref_pts, cfg->video_boundary) : 0;
        bool here = timed && (llabs(from) <= XFER_TOLERANCE_TICKS ||
                              (random_access_point(au) && from >= -XFER_TOLERANCE_TICKS));
        if (!here) {
            t->skipped |= in_interval;
            return;
        }
        st->vdec = open_decoder(st, cfg->profile->video_decoder, cfg->profile->video_flags, 0, &s->vlog, t);
        if (!st->vdec) {
            s->res.internal_error = st->failed = true;
            return;
        }
        t->started = true;
    }
    /* Nothing of the interval is decoded from a unit whose DTS is past it
     * (DTS only grows): after a run of such units decoding stops. */
    int64_t ref_dts = au->dts != AU_NO_TS ? ts33_sub(au->dts, cfg->offset) : ref_pts;
    bool past = (timed || au->dts != AU_NO_TS) && past_end(&cfg->video, ref_dts);
    st->vpast = past ? st->vpast + 1 : 0;
    if (st->vpast >= PAST_END_RUN) {
        stop_video(st);
        t->late |= in_interval;
        return;
    }
    feed_video(st, au, ref_pts, in_interval);
}

/* ---- audio ---- */

/* The first sample i >= 0 of a frame whose first sample is at d (units
 * from START) with d + i * unit >= at. */
static int64_t first_sample_from(int64_t d, int64_t at, int64_t unit)
{
    return d >= at ? 0 : (at - d + unit - 1) / unit;
}

static void handle_audio_frame(struct decode_state *st, AVFrame *f)
{
    struct side *s = st->s;
    const struct side_config *cfg = &s->cfg;
    struct side_track *t = &s->res.audio;
    t->frames_out++;
    if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT)) {
        t->corrupt = true;
        st->audio_taint = true;
    }
    int64_t serial = f->pkt_pos;
    bool known = serial >= 0 && serial < st->aserial && st->aserial - serial <= AREC_RING &&
                 st->arec[serial % AREC_RING].serial == serial && st->arec[serial % AREC_RING].timed;
    if (!known || f->format != AV_SAMPLE_FMT_FLTP || f->sample_rate <= 0) {
        t->missing_pts |= !known;
        st->audio_taint = true;
        st->a_have_next = false;
        return;
    }
    int channels = f->ch_layout.nb_channels;
    if (s->cfg.index == XFER_REF && (f->sample_rate != cfg->profile->audio_sample_rate ||
                                     channels != cfg->profile->audio_channels)) {
        t->params_changed = true;
        st->audio_taint = true;
    }
    int64_t unit = au_units_per_sample(f->sample_rate);
    if (!unit)
        unit = 15;               /* rates with inexact sample times only ever mismatch */
    /* an ADTS frame of several raw data blocks decodes to one frame per
     * block (FFmpeg 5.1): a later block follows the samples of the one
     * before it, not the ADTS frame's time (issue 18, class 9) */
    bool later_block = serial == st->a_last_serial && st->a_have_next;
    int64_t abs_units = later_block ? st->a_next : st->arec[serial % AREC_RING].units;
    st->a_last_serial = serial;
    st->a_next = (abs_units + f->nb_samples * unit) % AU_UNITS_MOD;
    st->a_have_next = true;
    int64_t d = units_diff(abs_units, ts33_add(cfg->audio.start, cfg->offset) * AU_UNITS_PER_TICK);
    int64_t len = ts33_interval_len(cfg->audio.start, cfg->audio.end) * AU_UNITS_PER_TICK;
    const int64_t m = XFER_TOLERANCE_UNITS;     /* the margin on each side (xfer.h) */
    int64_t i0 = first_sample_from(d, -m, unit), i1 = first_sample_from(d, len + m, unit);
    int64_t in0 = first_sample_from(d, 0, unit), in1 = first_sample_from(d, len, unit);
    if (i1 > f->nb_samples)
        i1 = f->nb_samples;
    if (i0 >= i1)
        return;
    in0 = in0 < i0 ? i0 : in0 > i1 ? i1 : in0;
    in1 = in1 < in0 ? in0 : in1 > i1 ? i1 : in1;
    size_t n = (size_t)(i1 - i0);
    struct aitem it = {.nb_samples = (int)n, .channels = channels, .sample_rate = f->sample_rate,
                       .pts = abs_units / AU_UNITS_PER_TICK, .rel_units = d + i0 * unit,
                       .head_margin = (int)(in0 - i0), .tail_margin = (int)(i1 - in1),
                       .frame_units = d, .first_index = (int)i0,
                       .valid = !st->audio_taint, .pcm = malloc(n * (size_t)channels * sizeof(float))};
    if (!it.pcm) {
        s->res.internal_error = st->failed = true;
        return;
    }
    /* Interleave by copying: no arithmetic touches a sample. */
    for (int c = 0; c < channels; c++) {
        const float *plane = (const float *)f->extended_data[c] + i0;
        for (size_t i = 0; i < n; i++)
            it.pcm[i * (size_t)channels + (size_t)c] = plane[i];
    }
    t->in_interval += in1 - in0;
    t->invalid |= !it.valid && in1 > in0;
    if (!xfer_push_audio(s->cfg.xfer, s->cfg.index, &it)) {
        aitem_release(&it);
        st->failed = true;
    }
}

static void receive_audio(struct decode_state *st)
{
    struct side *s = st->s;
    for (;;) {
        int rc = avcodec_receive_frame(st->adec, st->frame);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
            break;
        if (rc < 0) {
            track_error(&s->res.audio, "receive", rc);
            st->audio_taint = true;
            break;
        }
        if (atomic_exchange(&s->alog.errors, 0)) {
            s->res.audio.decode_error = true;
            st->audio_taint = true;
        }
        handle_audio_frame(st, st->frame);
        av_frame_unref(st->frame);
    }
}

static void stop_audio(struct decode_state *st)
{
    if (!st->adec || st->astopped)
        return;
    st->astopped = true;
    avcodec_send_packet(st->adec, NULL);
    receive_audio(st);
}

static void feed_audio(struct decode_state *st, const struct au *au)
{
    struct side *s = st->s;
    struct side_track *t = &s->res.audio;
    int64_t serial = st->aserial++;
    /* A frame without a PTS of its own follows the samples the previous one
     * decoded to (every raw data block of it: handle_audio_frame). */
    bool own = au->pts != AU_NO_TS;
    st->arec[serial % AREC_RING].serial = serial;
    st->arec[serial % AREC_RING].units = !own && st->a_have_next ? st->a_next : au->units;
    st->arec[serial % AREC_RING].timed = au->timed || (!own && st->a_have_next);
    if (au->damaged)
        t->lost_packets = st->audio_taint = true;
    if (!st->arec[serial % AREC_RING].timed)
        t->missing_pts = st->audio_taint = true;   /* neither a PTS nor a previous frame */
    st->a_have_next = false;     /* until this frame's output says where the next starts */
    t->packets_fed++;
    int rc = 0;
    if (!send_packet(st, st->adec, NULL, 0, au->data, au->size, AV_NOPTS_VALUE, AV_NOPTS_VALUE, serial, &rc))
        return;
    if (rc < 0 && rc != AVERROR(EAGAIN)) {
        track_error(t, "send", rc);
        st->audio_taint = true;
    }
    if (atomic_exchange(&s->alog.errors, 0)) {
        t->decode_error = true;
        st->audio_taint = true;
    }
    receive_audio(st);
}

/* The audio decode boundary on this side's timeline, 1/720000 s. */
static int64_t audio_boundary(const struct side_config *cfg)
{
    return (cfg->audio_boundary + ts33_norm(cfg->offset) * AU_UNITS_PER_TICK) % AU_UNITS_MOD;
}

/* The container's quantum (docs/exact-av-v1.md): an fMP4 track whose start
 * is an empty edit in a coarser movie timescale (FFmpeg's mp4 muxers write
 * milliseconds) is rounded to it on its own, so each track is off by its
 * own constant under one quantum, which no single --time-offset declares
 * for both.  The first timed frame's distance to the reference's frame
 * grid (the boundary frame, frame durations on) is that constant when it
 * is more than the tolerance and less than one quantum; it is then taken
 * off every frame of the track.  Never more than the quantum: a shift the
 * container can express is a timing difference, judged as one.  Not a
 * search: one distance, from the first frame, fixed for the track. */
static const struct au *quantum_aligned(struct decode_state *st, const struct au *au, struct au *copy)
{
    struct side_track *t = &st->s->res.audio;
    int64_t quantum = au->quantum_units > st->s->cfg.ref_audio_quantum ? au->quantum_units
                                                                         : st->s->cfg.ref_audio_quantum;
    if (!au->timed || quantum <= XFER_TOLERANCE_UNITS)
        return au;
    if (!st->a_quantum_seen) {
        st->a_quantum_seen = true;
        int64_t unit = au_units_per_sample(au->sample_rate);
        int64_t frame = (int64_t)au->samples * (unit ? unit : 15);
        int64_t d = frame > 0 ? units_diff(au->units, audio_boundary(&st->s->cfg)) % frame : 0;
        if (d > frame / 2)
            d -= frame;
        else if (d < -frame / 2)
            d += frame;
        t->quantum_units = quantum;
        if (llabs(d) > XFER_TOLERANCE_UNITS && llabs(d) < quantum)
            st->a_residual = t->quantum_residual_units = d;
    }
    if (!st->a_residual)
        return au;
    *copy = *au;
    copy->units = ((au->units - st->a_residual) % AU_UNITS_MOD + AU_UNITS_MOD) % AU_UNITS_MOD;
    copy->pts = copy->units / AU_UNITS_PER_TICK;
    return copy;
}

/* Whether a frame starting d before the boundary has a later raw data
 * block starting at it (within the tolerance): the boundary's frame is
 * then inside this one, which is not a mistimed frame but one this side
 * cannot start its decoder at (differential pack_adts_blocks:3156). */
static bool straddles(const struct au *au, int64_t d, int64_t unit)
{
    int64_t block = 1024 * unit;
    int blocks = au_aac_blocks(au);
    if (blocks < 2 || d <= XFER_TOLERANCE_UNITS)
        return false;
    int64_t j = (d + block / 2) / block;
    return j >= 1 && j < blocks && llabs(d - j * block) <= XFER_TOLERANCE_UNITS;
}

static void audio_au(struct decode_state *st, const struct au *in)
{
    struct au aligned;
    const struct au *au = quantum_aligned(st, in, &aligned);
    struct side *s = st->s;
    const struct side_config *cfg = &s->cfg;
    struct side_track *t = &s->res.audio;
    int64_t unit = au_units_per_sample(au->sample_rate);
    int64_t span = au->samples * (unit ? unit : 15);
    int64_t len = ts33_interval_len(cfg->audio.start, cfg->audio.end) * AU_UNITS_PER_TICK;
    int64_t rel = au->timed ? units_diff(au->units, ts33_add(cfg->audio.start, cfg->offset) * AU_UNITS_PER_TICK)
                            : 0;
    bool in_interval = au->timed && rel + span > 0 && rel < len;
    if (st->astopped) {
        t->late |= in_interval;
        return;
    }
    if (!t->started) {
        int64_t boundary = audio_boundary(cfg);
        if (!au->timed || units_diff(au->units, boundary) < -XFER_TOLERANCE_UNITS) {
            /* a frame whose last sample lies before the span's start (within
             * the tolerance of it at most: a one-tick floor, class 5) holds
             * none of the interval's samples (issue 18, class 7: GStreamer's
             * hlssink2 segments as references) */
            t->skipped |= in_interval && rel + span - (unit ? unit : 15) >= 0;
            t->straddled = au->timed && straddles(au, units_diff(boundary, au->units), unit ? unit : 15);
            t->straddle_units = au->units;
            st->a_skipped_overlap = au->timed && units_diff(au->units, boundary) + span > 0 && !t->straddled;
            return;
        }
        st->adec = open_decoder(st, cfg->profile->audio_decoder, cfg->profile->audio_flags,
                                cfg->profile->audio_flags2, &s->alog, t);
        if (!st->adec) {
            s->res.internal_error = st->failed = true;
            return;
        }
        t->started = true;
        /* Not the boundary's frame but a later one (another packager put the
         * frames before it in the previous segment, or they are lost): this
         * decoder starts cold where the other side's has history, so what
         * it decodes cannot be compared either way (issue 18, class 7).  Not
         * when the frame before it overlaps the boundary: that is the
         * boundary's frame mistimed (more than a tick early), a timing
         * difference judged as such. */
        t->first_units = au->units;
        t->first_blocks = au_aac_blocks(au);
        t->first_digest_ok = au_aac_payload_digest(au, t->first_payload);
        t->history_missing = units_diff(au->units, boundary) > XFER_TOLERANCE_UNITS && !st->a_skipped_overlap;
    }
    st->apast = au->timed && rel >= len ? st->apast + 1 : 0;
    if (st->apast >= PAST_END_RUN) {
        stop_audio(st);
        return;
    }
    feed_audio(st, au);
}

/* ---- the thread ---- */

/* Limits of the whole check, enforced as the side reads (docs/exact-av-v1.md):
 * the deadline, and the programs and streams the demuxer holds.  True when
 * one is reached; the side then stops as after a read error. */
static bool over_limits(struct decode_state *st)
{
    const char *why = NULL;
    if (st->s->cfg.deadline_ms && util_now_ms() >= st->s->cfg.deadline_ms)
        why = "deadline_exceeded";
    else if (st->ad.td.too_many)
        why = "too_many_streams";
    if (!why)
        return false;
    if (!st->b.io_error) {
        st->b.io_error = true;
        snprintf(st->b.io_reason, sizeof st->b.io_reason, "%s", why);
        snprintf(st->b.io_detail, sizeof st->b.io_detail, "%s", why[0] == 'd'
                 ? "the check's deadline (--deadline) passed while decoding"
                 : "more programs or streams than the demuxer holds; a stream may be missing");
    }
    return true;
}

static bool on_au(void *opaque, const struct au *au)
{
    struct decode_state *st = opaque;
    if (over_limits(st))
        return false;
    if (atomic_load(&st->s->cancel)) {
        st->failed = true;
        return false;
    }
    if (st->s->cfg.digest_only) {
        indigest_add(&st->dg, au, st->ad.t[au->track].codec);
        return true;
    }
    if (au->track == TSD_VIDEO && st->ad.t[TSD_VIDEO].codec == AU_CODEC_H264)
        video_au(st, au);
    else if (au->track == TSD_AUDIO && st->s->cfg.want_audio && st->ad.t[TSD_AUDIO].codec == AU_CODEC_AAC)
        audio_au(st, au);
    return !st->failed;
}

static void describe_track(const struct decode_state *st, enum tsd_track tr, struct side_track *t)
{
    const struct au_track *at = &st->ad.t[tr];
    t->present = st->ad.td.pes[tr].pid >= 0;
    if (!t->present)
        return;
    const char *announced = st->ad.td.pes[tr].codec, *want = tr == TSD_VIDEO ? "h264" : "aac";
    snprintf(t->codec, sizeof t->codec, "%s", at->codec_name ? at->codec_name : announced);
    /* a track without data keeps what its PMT announces: missing, not transcoded */
    t->codec_ok = at->codec == (tr == TSD_VIDEO ? AU_CODEC_H264 : AU_CODEC_AAC) ||
                  (at->codec == AU_CODEC_NONE && !strcmp(announced, want));
}

static void record_observation(struct decode_state *st)
{
    struct side_result *r = &st->s->res;
    const struct tsdemux *td = &st->ad.td;
    r->io_error = st->b.io_error;
    snprintf(r->io_reason, sizeof r->io_reason, "%s", st->b.io_reason);
    snprintf(r->io_detail, sizeof r->io_detail, "%s", st->b.io_detail);
    const struct tscheck *ts = st->b.ts;
    /* only damage where a decoder reads decides; the rest is recorded */
    r->ts_issue = au_transport_issue(&st->ad, &r->ts_issue_offset, &r->ts_issue_pid);
    r->ts_complete = ts->finished && r->ts_issue == TS_ISSUE_NONE;   /* au_transport_complete() */
    if (r->ts_issue == TS_ISSUE_NONE && ts->issue != TS_ISSUE_NONE) {
        r->ts_issue_elsewhere = ts->issue;
        r->ts_issue_elsewhere_offset = ts->issue_offset;
        r->ts_issue_elsewhere_pid = ts->issue_pid;
    }
    r->bytes = st->b.ts->bytes;
    r->fmp4 = st->ad.fmp4;
    r->selection = td->selection;
    r->opened = td->selection != TSD_SEL_NONE;
    if (!r->opened)
        snprintf(r->open_error, sizeof r->open_error, "no program (PAT/PMT) found");
    if (tsdemux_program(td))
        r->program = *tsdemux_program(td);
    r->nprograms = td->nprograms;
    for (int i = 0; i < td->nprograms; i++) {
        r->programs[i].number = td->programs[i].number;
        r->programs[i].nvideo = td->programs[i].nvideo;
        r->programs[i].naudio = td->programs[i].naudio;
        r->programs[i].have_pmt = td->programs[i].have_pmt;
    }
    r->played_program = td->played >= 0 ? td->programs[td->played].number : 0;
    r->track_set_changed = td->track_set_changed;
    describe_track(st, TSD_VIDEO, &r->video);
    describe_track(st, TSD_AUDIO, &r->audio);
}

static void release(struct decode_state *st)
{
    for (int i = 0; i < st->npend; i++)
        av_frame_free(&st->pend[i].frame);
    av_frame_free(&st->frame);
    av_packet_free(&st->pkt);
    avcodec_free_context(&st->vdec);
    avcodec_free_context(&st->adec);
    au_demux_free(&st->ad);
    indigest_free(&st->dg);
    vvalid_free(&st->vv);
    bsrc_close(&st->b);
}

static void *side_main(void *arg)
{
    struct side *s = arg;
    struct decode_state *st = calloc(1, sizeof *st);
    if (!st) {
        s->res.internal_error = true;
        xfer_close(s->cfg.xfer, s->cfg.index);
        return NULL;
    }
    st->s = s;
    int binit = bsrc_init(&st->b, s->cfg.segs, s->cfg.nsegs);
    st->b.skip_sha256 = true;   /* the reference scan checked the reference's digests */
    if (binit || indigest_init(&st->dg, s->cfg.offset) ||
        au_demux_init(&st->ad, &s->cfg.select, on_au, st, &st->b) || vvalid_init(&st->vv) ||
        !(st->frame = av_frame_alloc()) || !(st->pkt = av_packet_alloc())) {
        s->res.internal_error = true;
    } else {
        au_demux_run(&st->ad);
        over_limits(st);   /* streams declared without any access unit count too */
        if (!st->failed) {
            stop_video(st);
            stop_audio(st);
        }
        record_observation(st);
        if (s->cfg.digest_only)
            s->res.input_digest_ok = indigest_final(&st->dg, s->res.input_digest) && !st->failed;
    }
    s->res.aborted = st->failed && !s->res.internal_error;
    release(st);
    free(st);
    xfer_close(s->cfg.xfer, s->cfg.index);
    return NULL;
}

int side_start(struct side *s, const struct side_config *cfg)
{
    memset(&s->res, 0, sizeof s->res);
    s->cfg = *cfg;
    atomic_init(&s->cancel, false);
    atomic_init(&s->vlog.errors, 0);
    atomic_init(&s->vlog.reorder_growth, 0);
    atomic_init(&s->vlog.ref_marking, 0);
    atomic_init(&s->alog.errors, 0);
    atomic_init(&s->alog.reorder_growth, 0);
    atomic_init(&s->alog.ref_marking, 0);
    atomic_init(&s->vlog.oversize, 0);
    atomic_init(&s->alog.oversize, 0);
    s->vlog.max_width = cfg->profile->max_width;
    s->vlog.max_height = cfg->profile->max_height;
    s->alog.max_width = s->alog.max_height = 0;
    return pthread_create(&s->thread, NULL, side_main, s) ? -1 : 0;
}

void side_join(struct side *s)
{
    pthread_join(s->thread, NULL);
}

void side_cancel(struct side *s)
{
    atomic_store(&s->cancel, true);
}
