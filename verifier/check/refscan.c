/* refscan.c - envelope, digests, interval and boundaries of the reference. */
#include "refscan.h"

#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>

#include "demux.h"
#include "ts33.h"

/* Timestamps are handled as signed offsets from the first one seen (the
 * anchor), which orders them correctly across a 33-bit wrap as long as the
 * reference spans less than 2^32 ticks (13 hours). */
struct scan_state {
    bool anchored;
    int64_t anchor;
    bool have_key;
    int64_t first_key_d;
    bool have_audio;
    int64_t first_audio_d;
    int64_t max_end_d;
    bool have_end;
    /* For the default interval (START = the first key frame), the AAC frame
     * containing START: audio seen before that key frame is remembered (the
     * last few, which are the only ones near it), later audio compared. */
    int64_t pre_key_audio[64];
    unsigned n_pre_key_audio;
    bool have_audio_best;
    int64_t audio_best_d;
};

static void note_audio_best(struct scan_state *s, int64_t d)
{
    if (d <= s->first_key_d && (!s->have_audio_best || d > s->audio_best_d)) {
        s->audio_best_d = d;
        s->have_audio_best = true;
    }
}

static enum refscan_status check_video(const AVStream *st, const struct profile *p, struct refscan *r,
                                       char *err, size_t errlen)
{
    const AVCodecParameters *cp = st->codecpar;
    if (cp->codec_id != AV_CODEC_ID_H264) {
        snprintf(err, errlen, "reference video is %s; Exact-AV v1 requires H.264",
                 avcodec_get_name(cp->codec_id));
        return REFSCAN_UNUSABLE;
    }
    if (cp->format != AV_PIX_FMT_YUV420P && cp->format != AV_PIX_FMT_YUVJ420P) {
        const char *name = av_get_pix_fmt_name(cp->format);
        snprintf(err, errlen, "reference video pixel format is %s; Exact-AV v1 requires 8-bit 4:2:0 (yuv420p)",
                 name ? name : "unknown");
        return REFSCAN_UNUSABLE;
    }
    if (cp->width > p->max_width || cp->height > p->max_height) {
        snprintf(err, errlen, "reference video is %dx%d; the profile's %s is %d (video.envelope.max_width x "
                 "max_height: %dx%d)", cp->width, cp->height,
                 cp->width > p->max_width ? "video.envelope.max_width" : "video.envelope.max_height",
                 cp->width > p->max_width ? p->max_width : p->max_height, p->max_width, p->max_height);
        return REFSCAN_UNUSABLE;
    }
    r->has_video = true;
    r->video_pid = st->id;
    r->width = cp->width;
    r->height = cp->height;
    r->pix_fmt = cp->format;
    return REFSCAN_OK;
}

static enum refscan_status check_audio(const AVStream *st, const struct profile *p, struct refscan *r,
                                       char *err, size_t errlen)
{
    const AVCodecParameters *cp = st->codecpar;
    if (cp->codec_id != AV_CODEC_ID_AAC) {
        snprintf(err, errlen, "reference audio is %s; Exact-AV v1 requires AAC-LC",
                 avcodec_get_name(cp->codec_id));
        return REFSCAN_UNUSABLE;
    }
    if (cp->profile != FF_PROFILE_AAC_LOW) {
        const char *name = avcodec_profile_name(cp->codec_id, cp->profile);
        snprintf(err, errlen, "reference audio is AAC profile %s; Exact-AV v1 requires AAC-LC",
                 name ? name : "unknown");
        return REFSCAN_UNUSABLE;
    }
    if (cp->sample_rate != p->audio_sample_rate || cp->ch_layout.nb_channels != p->audio_channels) {
        snprintf(err, errlen, "reference audio is %d Hz, %d channel(s); Exact-AV v1 requires %d Hz stereo",
                 cp->sample_rate, cp->ch_layout.nb_channels, p->audio_sample_rate);
        return REFSCAN_UNUSABLE;
    }
    r->has_audio = true;
    r->audio_pid = st->id;
    r->sample_rate = cp->sample_rate;
    r->channels = cp->ch_layout.nb_channels;
    return REFSCAN_OK;
}

static enum refscan_status check_envelope(const struct demux *d, const struct profile *p,
                                          struct refscan *r, int *vi, int *ai, char *err, size_t errlen)
{
    if (demux_too_many_streams(d)) {
        snprintf(err, errlen, "reference has more than %d streams (too_many_streams)", DEMUX_MAX_STREAMS);
        return REFSCAN_UNUSABLE;
    }
    *vi = demux_find_stream(d, AVMEDIA_TYPE_VIDEO);
    *ai = demux_find_stream(d, AVMEDIA_TYPE_AUDIO);
    if (*vi == -1) {
        snprintf(err, errlen, "reference has no video stream; Exact-AV v1 requires H.264 video");
        return REFSCAN_UNUSABLE;
    }
    if (*vi == -2 || *ai == -2) {
        snprintf(err, errlen, "reference has several %s streams; Exact-AV v1 takes one rendition",
                 *vi == -2 ? "video" : "audio");
        return REFSCAN_UNUSABLE;
    }
    enum refscan_status s = check_video(d->fmt->streams[*vi], p, r, err, errlen);
    if (s == REFSCAN_OK && *ai >= 0)
        s = check_audio(d->fmt->streams[*ai], p, r, err, errlen);
    return s;
}

static void note_packet(struct scan_state *s, const AVPacket *pkt, bool video)
{
    int64_t pts = ts33_norm(pkt->pts);
    if (!s->anchored) {
        s->anchored = true;
        s->anchor = pts;
    }
    int64_t d = ts33_diff(pts, s->anchor);
    int64_t end = d + (pkt->duration > 0 ? pkt->duration : 1);
    if (!s->have_end || end > s->max_end_d)
        s->max_end_d = end;
    s->have_end = true;
    if (video && (pkt->flags & AV_PKT_FLAG_KEY) && !s->have_key) {
        s->have_key = true;
        s->first_key_d = d;
        unsigned n = s->n_pre_key_audio < 64 ? s->n_pre_key_audio : 64;
        for (unsigned i = 0; i < n; i++)
            note_audio_best(s, s->pre_key_audio[i]);
    }
    if (!video && !s->have_audio) {
        s->have_audio = true;
        s->first_audio_d = d;
    }
    if (!video && s->have_key)
        note_audio_best(s, d);
    else if (!video)
        s->pre_key_audio[s->n_pre_key_audio++ % 64] = d;
}

/* The boundaries for a given START: the last key frame at or before it
 * (else the first key frame), and the last AAC frame starting at or before
 * it (else the first AAC frame). */
struct boundary_state {
    int64_t start;
    bool v_before, v_any, a_before, a_any;
    int64_t v, a;
};

static void pick(bool *before, bool *any, int64_t *best, int64_t pts, int64_t start)
{
    if (ts33_diff(pts, start) <= 0) {
        if (!*before || ts33_diff(pts, *best) > 0)
            *best = pts;
        *before = true;
    } else if (!*before && !*any) {
        *best = pts;
    }
    *any = true;
}

static void note_boundary(struct boundary_state *b, const AVPacket *pkt, bool video)
{
    int64_t pts = ts33_norm(pkt->pts);
    if (video && (pkt->flags & AV_PKT_FLAG_KEY))
        pick(&b->v_before, &b->v_any, &b->v, pts, b->start);
    else if (!video)
        pick(&b->a_before, &b->a_any, &b->a, pts, b->start);
}

static enum refscan_status scan_packets(struct demux *d, int vi, int ai, struct boundary_state *bs,
                                        struct refscan *r,
                                        struct scan_state *ss, char *err, size_t errlen)
{
    AVPacket *pkt = av_packet_alloc();
    if (!pkt)
        return REFSCAN_FAILED;
    int rc;
    while ((rc = av_read_frame(d->fmt, pkt)) >= 0) {
        bool video = pkt->stream_index == vi, audio = ai >= 0 && pkt->stream_index == ai;
        if ((video || audio) && pkt->pts != AV_NOPTS_VALUE) {
            note_packet(ss, pkt, video);
            if (bs)    /* only with a declared interval; the default derives them */
                note_boundary(bs, pkt, video);
            r->video_packets += video;
            r->audio_packets += audio;
        }
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    if (rc != AVERROR_EOF) {
        snprintf(err, errlen, "reference demux failed: %s", av_err2str(rc));
        return REFSCAN_UNUSABLE;
    }
    return REFSCAN_OK;
}

static enum refscan_status check_integrity(const struct bsrc *b, char *err, size_t errlen)
{
    if (b->io_error) {
        snprintf(err, errlen, "reference cannot be read: %s", b->io_detail);
        return REFSCAN_UNOPENABLE;
    }
    if (!tscheck_complete(b->ts)) {
        snprintf(err, errlen, "reference transport stream is damaged: %s at byte %llu",
                 tscheck_issue_code(b->ts->issue), (unsigned long long)b->ts->issue_offset);
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

/* One demux-only pass: envelope, packets, integrity, digests. */
static enum refscan_status scan_pass(struct bsrc_segment *segs, size_t nsegs, const struct profile *p,
                                     struct boundary_state *bs, struct scan_state *ss,
                                     struct refscan *r, char *err, size_t errlen)
{
    struct bsrc b;
    if (bsrc_init(&b, segs, nsegs))
        return REFSCAN_FAILED;
    struct demux d;
    enum refscan_status s;
    if (demux_open(&d, &b, true, err, errlen)) {
        s = b.io_error ? REFSCAN_UNOPENABLE : REFSCAN_UNUSABLE;
        if (b.io_error)
            snprintf(err, errlen, "reference cannot be read: %s", b.io_detail);
        bsrc_close(&b);
        return s;
    }
    int vi, ai;
    memset(r, 0, sizeof *r);
    s = check_envelope(&d, p, r, &vi, &ai, err, errlen);
    if (s == REFSCAN_OK)
        s = scan_packets(&d, vi, ai, bs, r, ss, err, errlen);
    demux_close(&d);
    if (s == REFSCAN_OK) {
        bsrc_drain(&b); /* digests cover every byte, even after the last packet */
        s = check_integrity(&b, err, errlen);
    }
    if (s == REFSCAN_OK && !ss->have_key) {
        snprintf(err, errlen, "reference has no video key frame to start decoding from");
        s = REFSCAN_UNUSABLE;
    }
    bsrc_close(&b);
    return s;
}

enum refscan_status refscan_run(struct bsrc_segment *segs, size_t nsegs, const struct profile *p,
                                bool have_interval, int64_t start, int64_t end,
                                struct refscan *r, char *err, size_t errlen)
{
    struct scan_state ss = {0};
    struct boundary_state bs = {.start = ts33_norm(start)};
    enum refscan_status s = scan_pass(segs, nsegs, p, have_interval ? &bs : NULL, &ss, r, err, errlen);
    if (s != REFSCAN_OK)
        return s;
    if (have_interval) {
        r->start = ts33_norm(start);
        r->end = ts33_norm(end);
        r->video_boundary = bs.v;
        r->audio_boundary = bs.a_any ? bs.a : r->start;
        return REFSCAN_OK;
    }
    /* The whole reference: from the first key frame to the end of the last
     * frame; decoding starts at that key frame and at the AAC frame that
     * contains it (else the first AAC frame). */
    r->start = ts33_add(ss.anchor, ss.first_key_d);
    r->end = ts33_add(ss.anchor, ss.max_end_d);
    r->video_boundary = r->start;
    r->audio_boundary = ss.have_audio_best ? ts33_add(ss.anchor, ss.audio_best_d)
                        : ss.have_audio    ? ts33_add(ss.anchor, ss.first_audio_d)
                                           : r->start;
    return REFSCAN_OK;
}
