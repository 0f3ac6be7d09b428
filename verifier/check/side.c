/* side.c - one decoding side in its own thread (see side.h). */
#include "side.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>

#include "demux.h"
#include "ts33.h"
#include "util.h"

/* Per-thread decoding state; lives on the side thread's stack. */
struct decode_state {
    struct side *s;
    struct demux dm;
    struct bsrc b;
    int vi, ai;                  /* stream indexes, -1 when absent */
    int vpid, apid;
    uint32_t vgaps_seen, agaps_seen;
    AVCodecContext *vdec, *adec;
    AVFrame *frame;
    /* video groups */
    bool group_open;
    uint32_t group;
    bool group_invalid;
    bool taint;                  /* damage seen, no clean key frame since */
    int64_t taint_after_pos;     /* a recovery key frame must start after this byte */
    bool recovery_pending;
    int64_t recovery_pts;
    /* audio */
    bool audio_taint;
    bool audio_have_next;
    int64_t audio_next_units;    /* where the next frame starts, 1/720000 s mod 2^36 */
};

static void track_error(struct side_track *t, const char *what, int rc)
{
    t->decode_error = true;
    if (!t->first_error[0])
        snprintf(t->first_error, sizeof t->first_error, "%s: %s", what, av_err2str(rc));
}

static void taint_video(struct decode_state *st, int64_t after_pos)
{
    st->group_invalid = true;
    if (!st->taint || after_pos > st->taint_after_pos)
        st->taint_after_pos = after_pos;
    st->taint = true;
    st->recovery_pending = false;
}

static int pick_stream(const struct demux *d, enum AVMediaType type, enum AVCodecID want)
{
    int first = -1;
    for (unsigned i = 0; i < d->fmt->nb_streams; i++) {
        const AVCodecParameters *cp = d->fmt->streams[i]->codecpar;
        if (cp->codec_type != type)
            continue;
        if (cp->codec_id == want)
            return (int)i;
        if (first < 0)
            first = (int)i;
    }
    return first;
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

static AVCodecContext *open_decoder(struct decode_state *st, int idx, const char *name, int flags,
                                    int flags2, struct side_log *log, struct side_track *t)
{
    const AVStream *avs = st->dm.fmt->streams[idx];
    const struct profile *p = st->s->cfg.profile;
    const AVCodec *codec = avcodec_find_decoder_by_name(name);
    AVCodecContext *c = codec ? avcodec_alloc_context3(codec) : NULL;
    if (!c || avcodec_parameters_to_context(c, avs->codecpar) < 0) {
        avcodec_free_context(&c);
        snprintf(t->first_error, sizeof t->first_error, "decoder %s unavailable", name);
        return NULL;
    }
    c->thread_count = 1;         /* profile v1: single-threaded, see profile.c */
    c->thread_type = 0;
    c->flags |= flags;
    c->flags2 |= flags2;
    c->strict_std_compliance = p->strict_std_compliance;
    c->pkt_timebase = avs->time_base;
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

static void setup_tracks(struct decode_state *st)
{
    struct side *s = st->s;
    const struct profile *p = s->cfg.profile;
    st->vi = pick_stream(&st->dm, AVMEDIA_TYPE_VIDEO, AV_CODEC_ID_H264);
    st->ai = s->cfg.want_audio ? pick_stream(&st->dm, AVMEDIA_TYPE_AUDIO, AV_CODEC_ID_AAC) : -1;
    if (st->vi >= 0) {
        const AVStream *avs = st->dm.fmt->streams[st->vi];
        s->res.video.present = true;
        snprintf(s->res.video.codec, sizeof s->res.video.codec, "%s", avcodec_get_name(avs->codecpar->codec_id));
        st->vpid = avs->id;
        if (avs->codecpar->codec_id == AV_CODEC_ID_H264) {
            st->vdec = open_decoder(st, st->vi, p->video_decoder, p->video_flags, 0, &s->vlog, &s->res.video);
            s->res.video.codec_ok = st->vdec != NULL;
        }
    }
    if (st->ai >= 0) {
        const AVStream *avs = st->dm.fmt->streams[st->ai];
        s->res.audio.present = true;
        snprintf(s->res.audio.codec, sizeof s->res.audio.codec, "%s", avcodec_get_name(avs->codecpar->codec_id));
        st->apid = avs->id;
        if (avs->codecpar->codec_id == AV_CODEC_ID_AAC) {
            st->adec = open_decoder(st, st->ai, p->audio_decoder, p->audio_flags, p->audio_flags2,
                                    &s->alog, &s->res.audio);
            s->res.audio.codec_ok = st->adec != NULL;
        }
    }
}

/* Lost TS packets on a track's PID, seen by the integrity scanner. */
static void check_gaps(struct decode_state *st)
{
    const struct tscheck *ts = st->b.ts;
    if (st->vdec && ts->pid[st->vpid & 0x1FFF].gaps != st->vgaps_seen) {
        st->vgaps_seen = ts->pid[st->vpid & 0x1FFF].gaps;
        st->s->res.video.lost_packets = true;
        taint_video(st, (int64_t)st->b.pos);
    }
    if (st->adec && ts->pid[st->apid & 0x1FFF].gaps != st->agaps_seen) {
        st->agaps_seen = ts->pid[st->apid & 0x1FFF].gaps;
        st->s->res.audio.lost_packets = true;
        st->audio_taint = true;
    }
}

/* The FFmpeg log may report damage the API does not (e.g. reorder growth). */
static void check_logs(struct decode_state *st)
{
    struct side *s = st->s;
    if (atomic_exchange(&s->vlog.errors, 0)) {
        s->res.video.decode_error = true;
        if (!s->res.video.first_error[0])
            snprintf(s->res.video.first_error, sizeof s->res.video.first_error, "decoder logged an error");
        taint_video(st, (int64_t)st->b.pos);
    }
    if (atomic_exchange(&s->vlog.reorder_growth, 0)) {
        s->res.video.dropped = true;
        taint_video(st, (int64_t)st->b.pos);
    }
    if (atomic_exchange(&s->vlog.oversize, 0)) {
        s->res.video.oversize = true;
        taint_video(st, (int64_t)st->b.pos);
    }
    if (atomic_exchange(&s->alog.errors, 0)) {
        s->res.audio.decode_error = true;
        st->audio_taint = true;
    }
}

static bool push_group_end(struct decode_state *st)
{
    struct vitem end = {.kind = VITEM_GROUP_END, .group = st->group, .group_invalid = st->group_invalid};
    return xfer_push_video(st->s->cfg.xfer, st->s->cfg.index, &end);
}

/* Output order: a key frame starts a new group; damage invalidates groups
 * until a key frame that starts after the damage has been output. */
static bool enter_frame_group(struct decode_state *st, const AVFrame *f, int64_t pts)
{
    if (f->key_frame || !st->group_open) {
        if (st->group_open) {
            if (!push_group_end(st))
                return false;
            st->group++;
        }
        st->group_open = true;
        if (st->taint && st->recovery_pending && f->key_frame && pts == st->recovery_pts)
            st->taint = st->recovery_pending = false;
        st->group_invalid = st->taint;
    }
    if (st->taint)
        st->group_invalid = true;
    return true;
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

static bool handle_video_frame(struct decode_state *st, AVFrame *f)
{
    struct side *s = st->s;
    struct side_track *t = &s->res.video;
    /* Only the frame's own PTS places it: FFmpeg's best_effort_timestamp is a
     * guess, and a guessed time is not a declared one. */
    int64_t pts = f->pts;
    t->frames_out++;
    if (!enter_frame_group(st, f, ts33_norm(pts)))
        return false;
    if ((f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags) {
        t->corrupt = true;
        st->group_invalid = true;
    }
    if (!reference_frame_in_envelope(st, f))
        st->group_invalid = true;
    if (pts == AV_NOPTS_VALUE) {
        t->missing_pts = true;
        st->group_invalid = true;
        av_frame_unref(f);
        return true;
    }
    pts = ts33_norm(pts);
    int64_t ref_pts = ts33_sub(pts, s->cfg.offset);
    if (!ts33_in_interval(ref_pts, s->cfg.start, s->cfg.end)) {
        av_frame_unref(f);       /* pre-roll or after the interval */
        return true;
    }
    struct vitem it = {.kind = VITEM_FRAME, .pts = pts, .group = st->group,
                       .rel = ts33_sub(ref_pts, s->cfg.start), .frame = av_frame_alloc()};
    if (!it.frame) {
        s->res.internal_error = true;
        return false;
    }
    av_frame_move_ref(it.frame, f);
    t->in_interval++;
    if (!xfer_push_video(s->cfg.xfer, s->cfg.index, &it)) {
        vitem_release(&it);
        return false;
    }
    return true;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* Audio time is kept in 1/720000 s: a 90 kHz tick is 8 units and a 48 kHz
 * sample 15 units, so sample times are exact integers. */
static bool handle_audio_frame(struct decode_state *st, AVFrame *f)
{
    struct side *s = st->s;
    struct side_track *t = &s->res.audio;
    t->frames_out++;
    if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT)) {
        t->corrupt = true;
        st->audio_taint = true;
    }
    /* A PES carries one PTS for the first AAC frame that begins in it; the
     * frames after it are timed by continuation (ISO/IEC 13818-1 2.4.3.7),
     * exactly, in sample units.  A frame with neither cannot be placed. */
    bool timed = f->pts != AV_NOPTS_VALUE;
    if ((!timed && !st->audio_have_next) || f->format != AV_SAMPLE_FMT_FLTP || f->sample_rate <= 0) {
        t->missing_pts |= !timed;
        st->audio_taint = true;
        st->audio_have_next = false;
        return true;
    }
    int channels = f->ch_layout.nb_channels;
    if (s->cfg.index == XFER_REF &&
        (f->sample_rate != s->cfg.profile->audio_sample_rate || channels != s->cfg.profile->audio_channels))
        t->params_changed = true;
    int64_t unit = 720000 / f->sample_rate;   /* 15 at 48 kHz */
    if (720000 % f->sample_rate)
        unit = 15;                            /* other rates only ever mismatch */
    int64_t abs_units = timed ? ts33_norm(f->pts) * 8 : st->audio_next_units;
    st->audio_next_units = (abs_units + f->nb_samples * unit) % (TS33_MOD * 8);
    st->audio_have_next = true;
    /* signed distance from START, in units, the short way round */
    int64_t d = (abs_units - ts33_add(s->cfg.start, s->cfg.offset) * 8) % (TS33_MOD * 8);
    if (d < 0)
        d += TS33_MOD * 8;
    if (d >= TS33_MOD * 4)
        d -= TS33_MOD * 8;
    int64_t len = ts33_interval_len(s->cfg.start, s->cfg.end) * 8;
    int64_t i0 = d >= 0 ? 0 : ceil_div(-d, unit);
    int64_t i1 = ceil_div(len - d, unit);
    if (i1 > f->nb_samples)
        i1 = f->nb_samples;
    if (i0 >= i1)
        return true;
    size_t n = (size_t)(i1 - i0);
    struct aitem it = {.nb_samples = (int)n, .channels = channels, .sample_rate = f->sample_rate,
                       .pts = abs_units / 8, .rel_units = d + i0 * unit, .valid = !st->audio_taint,
                       .pcm = malloc(n * (size_t)channels * sizeof(float))};
    if (!it.pcm) {
        s->res.internal_error = true;
        return false;
    }
    /* Interleave by copying: no arithmetic touches a sample. */
    for (int c = 0; c < channels; c++) {
        const float *plane = (const float *)f->extended_data[c] + i0;
        for (size_t i = 0; i < n; i++)
            it.pcm[i * (size_t)channels + (size_t)c] = plane[i];
    }
    t->in_interval += (int64_t)n;
    if (!xfer_push_audio(s->cfg.xfer, s->cfg.index, &it)) {
        aitem_release(&it);
        return false;
    }
    return true;
}

static bool receive_all(struct decode_state *st, AVCodecContext *c, bool video)
{
    struct side_track *t = video ? &st->s->res.video : &st->s->res.audio;
    for (;;) {
        int rc = avcodec_receive_frame(c, st->frame);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
            return true;
        if (rc < 0) {
            track_error(t, "receive", rc);
            if (video)
                taint_video(st, (int64_t)st->b.pos);
            else
                st->audio_taint = true;
            return true;
        }
        check_logs(st);
        bool ok = video ? handle_video_frame(st, st->frame) : handle_audio_frame(st, st->frame);
        av_frame_unref(st->frame);
        if (!ok)
            return false;
    }
}

/* Packets before the boundary are skipped: the boundary is where both sides
 * begin the same packet sequence. */
static bool at_boundary(struct decode_state *st, const AVPacket *pkt, bool video)
{
    const struct side_config *cfg = &st->s->cfg;
    if (pkt->pts == AV_NOPTS_VALUE || (video && !(pkt->flags & AV_PKT_FLAG_KEY)))
        return false;
    int64_t ref_pts = ts33_sub(ts33_norm(pkt->pts), cfg->offset);
    return ts33_diff(ref_pts, video ? cfg->video_boundary : cfg->audio_boundary) >= 0;
}

static bool feed(struct decode_state *st, AVCodecContext *c, AVPacket *pkt, bool video)
{
    struct side_track *t = video ? &st->s->res.video : &st->s->res.audio;
    if (!t->started) {
        if (!at_boundary(st, pkt, video))
            return true;
        t->started = true;
    }
    if (pkt->flags & AV_PKT_FLAG_CORRUPT) {
        t->lost_packets = true;
        if (video)
            taint_video(st, pkt->pos);
        else
            st->audio_taint = true;
    }
    if (video && st->taint && (pkt->flags & AV_PKT_FLAG_KEY) && pkt->pos > st->taint_after_pos &&
        !st->recovery_pending && pkt->pts != AV_NOPTS_VALUE) {
        st->recovery_pending = true;
        st->recovery_pts = ts33_norm(pkt->pts);
    }
    t->packets_fed++;
    int rc = avcodec_send_packet(c, pkt);
    check_logs(st);
    if (rc < 0 && rc != AVERROR(EAGAIN)) {
        track_error(t, "send", rc);
        if (video)
            taint_video(st, pkt->pos);
        else
            st->audio_taint = true;
    }
    return receive_all(st, c, video);
}

/* Limits of the whole check, enforced as the side reads (docs/exact-av-v1.md):
 * the deadline, and the number of streams the demuxer may hold.  True when
 * one is reached; the side then stops as after a read error. */
static bool over_limits(struct decode_state *st)
{
    const char *why = NULL;
    if (st->s->cfg.deadline_ms && util_now_ms() >= st->s->cfg.deadline_ms)
        why = "deadline_exceeded";
    else if (demux_too_many_streams(&st->dm))
        why = "too_many_streams";
    if (!why)
        return false;
    if (!st->b.io_error) {
        st->b.io_error = true;
        snprintf(st->b.io_reason, sizeof st->b.io_reason, "%s", why);
        snprintf(st->b.io_detail, sizeof st->b.io_detail, "%s", why[0] == 'd'
                 ? "the check's deadline (--deadline) passed while decoding"
                 : "more streams than the demuxer holds; a stream may be missing");
    }
    return true;
}

static bool run_packets(struct decode_state *st)
{
    AVPacket *pkt = av_packet_alloc();
    if (!pkt)
        return false;
    bool ok = true;
    int rc = AVERROR_EOF;
    while (ok && !over_limits(st) && (rc = av_read_frame(st->dm.fmt, pkt)) >= 0) {
        check_gaps(st);
        if (pkt->stream_index == st->vi && st->vdec)
            ok = feed(st, st->vdec, pkt, true);
        else if (pkt->stream_index == st->ai && st->adec)
            ok = feed(st, st->adec, pkt, false);
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    over_limits(st);   /* streams declared without any packet count too */
    if (ok && rc != AVERROR_EOF && !st->b.io_error) {
        snprintf(st->b.io_reason, sizeof st->b.io_reason, "demux_error");
        snprintf(st->b.io_detail, sizeof st->b.io_detail, "%s", av_err2str(rc));
        st->b.io_error = true;
    }
    return ok;
}

/* End of stream: an incomplete observation taints what is still in flight. */
static bool flush_all(struct decode_state *st)
{
    check_gaps(st);
    bool complete = !st->b.io_error && tscheck_complete(st->b.ts);
    if (!complete) {
        taint_video(st, INT64_MAX);
        st->audio_taint = true;
    }
    if (st->vdec && st->s->res.video.started) {
        avcodec_send_packet(st->vdec, NULL);
        if (!receive_all(st, st->vdec, true))
            return false;
    }
    if (st->adec && st->s->res.audio.started) {
        avcodec_send_packet(st->adec, NULL);
        if (!receive_all(st, st->adec, false))
            return false;
    }
    if (st->group_open && !push_group_end(st))
        return false;
    struct side_track *v = &st->s->res.video;
    if (v->started && v->frames_out < v->packets_fed && !v->decode_error)
        v->dropped = true;
    return true;
}

static void record_observation(struct decode_state *st)
{
    struct side_result *r = &st->s->res;
    if (!st->b.ts->finished)
        tscheck_finish(st->b.ts);
    r->io_error = st->b.io_error;
    snprintf(r->io_reason, sizeof r->io_reason, "%s", st->b.io_reason);
    snprintf(r->io_detail, sizeof r->io_detail, "%s", st->b.io_detail);
    r->ts_complete = tscheck_complete(st->b.ts);
    r->ts_issue = st->b.ts->issue;
    r->ts_issue_offset = st->b.ts->issue_offset;
    r->ts_issue_pid = st->b.ts->issue_pid;
    r->bytes = st->b.pos;
}

static void *side_main(void *arg)
{
    struct side *s = arg;
    struct decode_state st = {.s = s, .vi = -1, .ai = -1};
    bool ok = false;
    if (bsrc_init(&st.b, s->cfg.segs, s->cfg.nsegs)) {
        s->res.internal_error = true;
        goto done;
    }
    if (demux_open(&st.dm, &st.b, false, s->res.open_error, sizeof s->res.open_error)) {
        bsrc_drain(&st.b);
        record_observation(&st);
        goto done;
    }
    s->res.opened = true;
    st.frame = av_frame_alloc();
    if (!st.frame) {
        s->res.internal_error = true;
    } else {
        setup_tracks(&st);
        ok = run_packets(&st) && flush_all(&st);
    }
    record_observation(&st);
    s->res.aborted = !ok && !s->res.internal_error;
    av_frame_free(&st.frame);
    avcodec_free_context(&st.vdec);
    avcodec_free_context(&st.adec);
    demux_close(&st.dm);
done:
    bsrc_close(&st.b);
    xfer_close(s->cfg.xfer, s->cfg.index);
    return NULL;
}

int side_start(struct side *s, const struct side_config *cfg)
{
    memset(&s->res, 0, sizeof s->res);
    s->cfg = *cfg;
    atomic_init(&s->vlog.errors, 0);
    atomic_init(&s->vlog.reorder_growth, 0);
    atomic_init(&s->alog.errors, 0);
    atomic_init(&s->alog.reorder_growth, 0);
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
