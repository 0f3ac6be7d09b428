/* mp4src.c - fMP4/CMAF access units through FFmpeg's mov demuxer (see mp4src.h). */
#include "mp4src.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>

#include "bsrc.h"
#include "evidence_fingerprint.h"
#include "mp4box.h"
#include "ts33.h"

#define AVIO_BUF 65536
#define MAX_STREAMS 64
#define ADTS_HEADER 7
#define ADTS_MAX_FRAME 8191      /* frame_length is 13 bits */
#define STREAM_TYPE_H264 0x1B    /* the TS stream types that announce the same codecs */
#define STREAM_TYPE_AAC 0x0F

struct aac_config {
    bool ok;
    int object, rate_index, channels, rate, frame_samples;
};

struct mp4src {
    struct au_demux *a;
    struct bsrc *b;
    size_t seg;                  /* the segment being handed to the demuxer */
    bool loaded;                 /* cur holds segment seg */
    const uint8_t *cur;
    size_t cur_len, cur_pos;
    uint8_t *owned;              /* cur, when read from a file */
    uint64_t offset;             /* bytes of the source before segment seg */
    struct mp4box_init init;
    uint8_t *moov;               /* the current epoch's moov (a copy) */
    size_t moov_len;
    bool new_epoch;              /* segment seg starts a new demuxer */
    bool ended;                  /* damage, a read error or the consumer: nothing more */
    /* one epoch */
    AVFormatContext *fmt;
    AVBSFContext *bsf;
    int map[MAX_STREAMS];        /* stream index -> track, -1: not read */
    struct aac_config aac;
    int64_t audio_quantum;       /* the audio track's start-time quantum (quantum_units), 1/720000 s */
    int64_t video_quantum;       /* the video track's */
    uint8_t *frame;              /* an ADTS frame being built */
    bool first_epoch_done;
};

/* ---- the bytes ---- */

static bool hashes(const struct bsrc *b, const struct bsrc_segment *s)
{
    return !b->skip_sha256 && (s->expect_sha256 || s->want_sha256);
}

static bool read_file(struct mp4src *m, const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        bsrc_fail(m->b, "io_error", strerror(errno));
        return false;
    }
    size_t cap = 0, n = 0;
    bool ok = true;
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : AVIO_BUF;
            uint8_t *p = want <= MP4SRC_MAX_FILE + 1 ? realloc(m->owned, want) : NULL;
            if (!p) {
                bsrc_fail(m->b, want > MP4SRC_MAX_FILE ? "out_of_envelope" : "internal_error",
                          "an MP4 segment larger than 1 GiB, or no memory to read it");
                ok = false;
                break;
            }
            m->owned = p;
            cap = want;
        }
        size_t got = fread(m->owned + n, 1, cap - n, fp);
        n += got;
        if (got == 0)
            break;
    }
    if (ok && ferror(fp)) {
        bsrc_fail(m->b, "io_error", strerror(errno));
        ok = false;
    }
    fclose(fp);
    *len = n;
    return ok;
}

static void digest_segment(struct mp4src *m, struct bsrc_segment *s)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (hashes(m->b, s) && EVP_DigestInit_ex(m->b->sha, EVP_sha256(), NULL) &&
        EVP_DigestUpdate(m->b->sha, m->cur, m->cur_len) && EVP_DigestFinal_ex(m->b->sha, md, &mdlen) && mdlen == 32)
        evidence_digest_hex(md, s->sha256);
}

/* A moov in a segment after the epoch's own: the same one again is a
 * repeated init segment (handed nothing); another one starts an epoch. */
static bool same_moov(const struct mp4src *m, const struct mp4box_segment *sg)
{
    return m->moov && sg->moov_len == m->moov_len && !memcmp(m->cur + sg->moov_offset, m->moov, m->moov_len);
}

static bool keep_moov(struct mp4src *m, const struct mp4box_segment *sg)
{
    free(m->moov);
    m->moov = malloc(sg->moov_len);
    if (!m->moov)
        return false;
    memcpy(m->moov, m->cur + sg->moov_offset, sg->moov_len);
    m->moov_len = sg->moov_len;
    return true;
}

/* Loads segment seg: its bytes, digest, box scan.  False when nothing of
 * it is handed on in this epoch (damage, a read error, a new epoch). */
static bool load_segment(struct mp4src *m)
{
    struct bsrc_segment *s = &m->b->segs[m->seg];
    size_t len = 0;
    if (s->path) {
        if (!read_file(m, s->path, &len))
            return m->ended = true, false;
        m->cur = m->owned;
    } else {
        m->cur = s->data;
        len = s->data ? s->len : 0;
    }
    m->cur_len = len;
    m->cur_pos = 0;
    m->loaded = true;
    s->bytes_read = len;
    m->b->ts->bytes += len;
    digest_segment(m, s);
    if (s->error)
        bsrc_fail(m->b, s->error, s->path ? s->path : "segment delivery failed");
    struct mp4box_segment sg;
    uint64_t where = 0;
    enum ts_issue issue = mp4box_scan(m->cur, len, &m->init, &sg, &where);
    if (issue != TS_ISSUE_NONE) {
        tscheck_note_container_issue(m->b->ts, issue, m->offset + where);
        return m->ended = true, false;
    }
    if (!sg.has_moov)
        return true;
    if (m->moov && same_moov(m, &sg) && !sg.has_moof) {
        m->cur_pos = m->cur_len;   /* the same init segment again: nothing new */
        return true;
    }
    bool had = m->moov != NULL;
    if (!keep_moov(m, &sg)) {
        bsrc_fail(m->b, "internal_error", "no memory for an init segment");
        return m->ended = true, false;
    }
    if (had)
        m->new_epoch = true;
    return !had;
}

static void next_segment(struct mp4src *m)
{
    m->offset += m->cur_len;
    m->seg++;
    m->loaded = false;
    m->cur = NULL;
    m->cur_len = m->cur_pos = 0;
}

static int read_cb(void *opaque, uint8_t *buf, int size)
{
    struct mp4src *m = opaque;
    for (;;) {
        if (m->ended || m->b->stop || m->new_epoch)
            return AVERROR_EOF;
        if (m->loaded && m->cur_pos < m->cur_len) {
            size_t n = m->cur_len - m->cur_pos < (size_t)size ? m->cur_len - m->cur_pos : (size_t)size;
            memcpy(buf, m->cur + m->cur_pos, n);
            m->cur_pos += n;
            return (int)n;
        }
        if (m->loaded)
            next_segment(m);
        if (m->seg >= m->b->nsegs)
            return AVERROR_EOF;
        if (!load_segment(m))
            return AVERROR_EOF;
    }
}

/* ---- codecs ---- */

struct bits {
    const uint8_t *p;
    size_t len, pos;
};

static unsigned get_bits(struct bits *b, int n)
{
    unsigned v = 0;
    for (int i = 0; i < n; i++, b->pos++)
        v = v << 1 | (b->pos / 8 < b->len ? (b->p[b->pos / 8] >> (7 - b->pos % 8)) & 1 : 0);
    return v;
}

/* AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1): what an ADTS header says. */
static struct aac_config parse_asc(const uint8_t *p, size_t len)
{
    static const int rates[13] = {96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025,
                                  8000, 7350};
    struct aac_config c = {0};
    struct bits b = {p, len, 0};
    if (len < 2)
        return c;
    c.object = (int)get_bits(&b, 5);
    if (c.object == 31)
        c.object = 32 + (int)get_bits(&b, 6);
    c.rate_index = (int)get_bits(&b, 4);
    if (c.rate_index >= 13)
        return c;                /* an explicit rate has no ADTS form */
    c.channels = (int)get_bits(&b, 4);
    c.frame_samples = get_bits(&b, 1) ? 960 : 1024;   /* GASpecificConfig frameLengthFlag */
    c.rate = rates[c.rate_index];
    /* 960-sample frames have no ADTS form: a decoder fed ADTS would read 1024 */
    c.ok = c.object >= 1 && c.object <= 4 && c.channels >= 1 && c.channels <= 7 && c.frame_samples == 1024;
    return c;
}

/* The ADTS header FFmpeg's writer puts on a raw frame (libavformat
 * adtsenc / mpegtsenc): MPEG-4, no CRC, buffer fullness 0x7FF, one block. */
static void adts_header(const struct aac_config *c, size_t frame, uint8_t h[ADTS_HEADER])
{
    h[0] = 0xFF;
    h[1] = 0xF1;
    h[2] = (uint8_t)((c->object - 1) << 6 | c->rate_index << 2 | c->channels >> 2);
    h[3] = (uint8_t)((c->channels & 3) << 6 | frame >> 11);
    h[4] = (uint8_t)(frame >> 3);
    h[5] = (uint8_t)((frame & 7) << 5 | 0x1F);
    h[6] = 0xFC;
}

static bool is_tag(uint32_t tag, const char *s)
{
    return tag == MKTAG(s[0], s[1], s[2], s[3]);
}

/* The codec a player's demuxer chooses from the sample entry (issue 18,
 * class 3: the announcement is part of the delivery). */
static void identify(struct mp4src *m, enum tsd_track t, const AVCodecParameters *par)
{
    struct au_track *tr = &m->a->t[t];
    enum au_codec was = tr->codec;
    tr->codec = AU_CODEC_OTHER;
    tr->codec_name = avcodec_get_name(par->codec_id);
    if (t == TSD_VIDEO && par->codec_id == AV_CODEC_ID_H264 &&
        (is_tag(par->codec_tag, "avc1") || is_tag(par->codec_tag, "avc3"))) {
        tr->codec = AU_CODEC_H264, tr->codec_name = "h264";
        if (!tr->parser && (tr->parser = av_parser_init(AV_CODEC_ID_H264)) != NULL)
            tr->parser->flags |= PARSER_FLAG_COMPLETE_FRAMES;
        if (!tr->pctx)
            tr->pctx = avcodec_alloc_context3(NULL);
        if (!tr->parser || !tr->pctx)
            tr->codec = AU_CODEC_OTHER, tr->codec_name = "unparsable";
    } else if (t == TSD_AUDIO && par->codec_id == AV_CODEC_ID_AAC && is_tag(par->codec_tag, "mp4a")) {
        m->aac = parse_asc(par->extradata, par->extradata ? (size_t)par->extradata_size : 0);
        tr->codec_name = m->aac.ok ? "aac" : "aac_without_adts_form";
        tr->codec = m->aac.ok ? AU_CODEC_AAC : AU_CODEC_OTHER;
    }
    if (was != AU_CODEC_NONE && was != tr->codec)   /* a new init segment changed the codec */
        tscheck_note_container_issue(m->b->ts, TS_ISSUE_MP4_INIT_MISMATCH, m->offset);
}

/* The start-time quantum of track id in 1/720000 s (mp4box.h
 * edit_timescale), 0 when its times are exact. */
static int64_t quantum_units(const struct mp4src *m, int id)
{
    for (int i = 0; i < m->init.ntracks; i++)
        if ((int)m->init.tracks[i].id == id && m->init.tracks[i].edit_timescale)
            return (AU_UNITS_PER_SECOND + m->init.tracks[i].edit_timescale - 1) / m->init.tracks[i].edit_timescale;
    return 0;
}

/* ---- the program view the sides read (tsdemux.h) ---- */

static void add_stream(struct tsd_program *p, const AVStream *st, enum tsd_kind kind, const char *codec)
{
    if (p->nstreams == TSD_MAX_STREAMS)
        return;
    struct tsd_stream *s = &p->streams[p->nstreams++];
    s->pid = st->id;
    s->kind = kind;
    s->codec = codec;
    s->stream_type = !strcmp(codec, "h264") ? STREAM_TYPE_H264 : !strcmp(codec, "aac") ? STREAM_TYPE_AAC : 0;
    p->nvideo += kind == TSD_KIND_VIDEO;
    p->naudio += kind == TSD_KIND_AUDIO;
}

static void select_program(struct tsdemux *td)
{
    const struct tsd_program *p = &td->programs[0];
    td->decided = true;
    td->played = 0;
    td->selected = 0;
    if (td->sel.program > 0 && td->sel.program != p->number)
        td->selection = TSD_SEL_NOT_FOUND, td->selected = -1;
    else if (p->nvideo + p->naudio == 0)
        td->selection = TSD_SEL_NONE, td->selected = -1;
    else if (td->sel.reference || td->sel.program > 0 ||
             (p->nvideo == td->sel.want_video && p->naudio == td->sel.want_audio))
        td->selection = TSD_SEL_OK;
    else
        td->selection = TSD_SEL_TRACK_SET;
}

/* Which streams are read; the program view from the first epoch. */
static void map_streams(struct mp4src *m)
{
    struct tsdemux *td = &m->a->td;
    struct tsd_program *p = &td->programs[0];
    bool first = !m->first_epoch_done;
    if (first) {
        memset(p, 0, sizeof *p);
        p->number = 1;
        p->pmt_pid = -1;
        p->have_pmt = true;
        td->nprograms = 1;
    }
    int have[TSD_TRACKS] = {0};
    for (unsigned i = 0; i < m->fmt->nb_streams && i < MAX_STREAMS; i++) {
        const AVStream *st = m->fmt->streams[i];
        enum AVMediaType type = st->codecpar->codec_type;
        m->map[i] = -1;
        if (type != AVMEDIA_TYPE_VIDEO && type != AVMEDIA_TYPE_AUDIO)
            continue;
        enum tsd_track t = type == AVMEDIA_TYPE_VIDEO ? TSD_VIDEO : TSD_AUDIO;
        if (!have[t]++) {
            m->map[i] = t;
            identify(m, t, st->codecpar);
            /* the epoch's init segment is scanned before the demuxer reads it */
            if (t == TSD_AUDIO)
                m->audio_quantum = quantum_units(m, st->id);
            else
                m->video_quantum = quantum_units(m, st->id);
        }
        if (first) {
            add_stream(p, st, t == TSD_VIDEO ? TSD_KIND_VIDEO : TSD_KIND_AUDIO,
                       have[t] == 1 ? m->a->t[t].codec_name : avcodec_get_name(st->codecpar->codec_id));
            if (have[t] == 1) {
                td->pes[t].pid = st->id;
                td->pes[t].codec = m->a->t[t].codec_name;
                td->pes[t].stream_type = p->streams[p->nstreams - 1].stream_type;
            }
        }
    }
    td->too_many = m->fmt->nb_streams > MAX_STREAMS;
    if (first)
        select_program(td);
    m->first_epoch_done = true;
}

/* ---- access units ---- */

/* v in time base tb as a count of 1/per_second units, floored (exact where
 * the timescale allows it): integer arithmetic only. */
static int64_t rescale_floor(int64_t v, int64_t per_second, AVRational tb)
{
    __int128 num = (__int128)v * per_second * tb.num, den = tb.den;
    __int128 q = num / den;
    if (num % den != 0 && (num < 0) != (den < 0))
        q--;
    return (int64_t)q;
}

static void emit(struct mp4src *m, struct au *au)
{
    struct au_demux *a = m->a;
    struct au_track *tr = &a->t[au->track];
    au->index = tr->count++;
    if (!a->stopped && !a->fn(a->opaque, au)) {
        a->stopped = true;
        m->b->stop = true;
    }
}

static void emit_video(struct mp4src *m, const AVPacket *pkt, AVRational tb)
{
    struct au au = {.track = TSD_VIDEO, .data = pkt->data, .size = (size_t)pkt->size, .pts = AU_NO_TS,
                    .dts = AU_NO_TS, .damaged = pkt->flags & AV_PKT_FLAG_CORRUPT};
    if (pkt->pts != AV_NOPTS_VALUE)
        au.pts = ts33_norm(rescale_floor(pkt->pts, 90000, tb));
    if (pkt->dts != AV_NOPTS_VALUE && pkt->dts != pkt->pts)
        au.dts = ts33_norm(rescale_floor(pkt->dts, 90000, tb));
    au.quantum_units = m->video_quantum;
    struct au_track *tr = &m->a->t[TSD_VIDEO];
    h264_au_scan(au.data, au.size, &au.h264, &tr->ps);
    if (tr->parser) {            /* whole units: the parser only reads their format, as on TS */
        uint8_t *out = NULL;
        int outlen = 0;
        av_parser_parse2(tr->parser, tr->pctx, &out, &outlen, au.data, (int)au.size, AV_NOPTS_VALUE,
                         AV_NOPTS_VALUE, 0);
    }
    emit(m, &au);
}


static void emit_audio(struct mp4src *m, const AVPacket *pkt, AVRational tb)
{
    size_t frame = ADTS_HEADER + (size_t)pkt->size;
    struct au au = {.track = TSD_AUDIO, .pts = AU_NO_TS, .dts = AU_NO_TS, .samples = m->aac.frame_samples,
                    .sample_rate = m->aac.rate, .damaged = pkt->flags & AV_PKT_FLAG_CORRUPT};
    if (frame > ADTS_MAX_FRAME) {
        tscheck_note_container_issue(m->b->ts, TS_ISSUE_MP4_SAMPLE_TABLE, m->offset);
        m->ended = true;
        return;
    }
    adts_header(&m->aac, frame, m->frame);
    memcpy(m->frame + ADTS_HEADER, pkt->data, (size_t)pkt->size);
    au.data = m->frame;
    au.size = frame;
    if (pkt->pts != AV_NOPTS_VALUE) {
        au.timed = true;
        au.units = rescale_floor(pkt->pts, AU_UNITS_PER_SECOND, tb) % AU_UNITS_MOD;
        au.units += au.units < 0 ? AU_UNITS_MOD : 0;
        au.pts = au.units / AU_UNITS_PER_TICK;
        au.quantum_units = m->audio_quantum;
    }
    emit(m, &au);
}

/* A packet the filter refuses (its NAL lengths do not fit it) is lost to
 * damage: noted, and nothing more is read, never dropped unseen (a lost
 * picture would read as one absent from a clean stream). */
static void drain_bsf(struct mp4src *m, AVPacket *out, AVRational tb)
{
    int rc = AVERROR(EAGAIN);
    while (!m->a->stopped && (rc = av_bsf_receive_packet(m->bsf, out)) == 0) {
        emit_video(m, out, tb);
        av_packet_unref(out);
    }
    if (!m->a->stopped && rc != AVERROR(EAGAIN) && rc != AVERROR_EOF && !m->ended) {
        tscheck_note_container_issue(m->b->ts, TS_ISSUE_MP4_SAMPLE_TABLE, m->offset + m->cur_pos);
        m->ended = true;
    }
}

static int open_bsf(struct mp4src *m, int index)
{
    const AVBitStreamFilter *f = av_bsf_get_by_name("h264_mp4toannexb");
    const AVStream *st = m->fmt->streams[index];
    if (!f || av_bsf_alloc(f, &m->bsf) < 0 || avcodec_parameters_copy(m->bsf->par_in, st->codecpar) < 0)
        return -1;
    m->bsf->time_base_in = st->time_base;
    return av_bsf_init(m->bsf) < 0 ? -1 : 0;
}

static void close_epoch(struct mp4src *m)
{
    av_bsf_free(&m->bsf);
    if (m->fmt) {
        av_freep(&m->fmt->pb->buffer);
        avio_context_free(&m->fmt->pb);
        avformat_close_input(&m->fmt);
    }
}

static int open_epoch(struct mp4src *m)
{
    uint8_t *buf = av_malloc(AVIO_BUF);
    AVIOContext *pb = buf ? avio_alloc_context(buf, AVIO_BUF, 0, m, read_cb, NULL, NULL) : NULL;
    m->fmt = avformat_alloc_context();
    if (!pb || !m->fmt) {
        if (pb)
            av_freep(&pb->buffer);
        else
            av_free(buf);
        avio_context_free(&pb);
        avformat_free_context(m->fmt);
        m->fmt = NULL;
        return -1;
    }
    m->fmt->pb = pb;
    m->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    if (avformat_open_input(&m->fmt, NULL, av_find_input_format("mov"), NULL) < 0) {
        /* avformat_open_input frees the context on failure, not the custom pb */
        av_freep(&pb->buffer);
        avio_context_free(&pb);
        return -1;
    }
    map_streams(m);
    for (unsigned i = 0; i < m->fmt->nb_streams && i < MAX_STREAMS; i++)
        if (m->map[i] == TSD_VIDEO && m->a->t[TSD_VIDEO].codec == AU_CODEC_H264 && open_bsf(m, (int)i))
            return -1;
    return 0;
}

/* Reads one epoch to its end; false on a demuxer failure. */
static bool read_epoch(struct mp4src *m, AVPacket *pkt, AVPacket *out)
{
    int rc = 0;
    AVRational vtb = {1, 90000};
    while (!m->a->stopped && (rc = av_read_frame(m->fmt, pkt)) >= 0) {
        int t = pkt->stream_index < MAX_STREAMS ? m->map[pkt->stream_index] : -1;
        AVRational tb = m->fmt->streams[pkt->stream_index]->time_base;
        if (t == TSD_VIDEO && m->bsf) {
            vtb = tb;
            if (av_bsf_send_packet(m->bsf, pkt) < 0)
                return false;
            drain_bsf(m, out, tb);
        } else if (t == TSD_AUDIO && m->a->t[TSD_AUDIO].codec == AU_CODEC_AAC) {
            emit_audio(m, pkt, tb);
        }
        av_packet_unref(pkt);
    }
    if (m->bsf && av_bsf_send_packet(m->bsf, NULL) == 0)
        drain_bsf(m, out, vtb);
    return m->a->stopped || m->ended || m->b->stop || m->new_epoch || rc == AVERROR_EOF;
}

static void run_epochs(struct mp4src *m)
{
    AVPacket *pkt = av_packet_alloc(), *out = av_packet_alloc();
    m->frame = malloc(ADTS_MAX_FRAME);
    if (!pkt || !out || !m->frame) {
        bsrc_fail(m->b, "internal_error", "no memory for the MP4 demuxer");
    } else {
        do {
            m->new_epoch = false;
            bool ok = open_epoch(m) == 0 && read_epoch(m, pkt, out);
            if (!ok && !m->ended && !m->b->io_error) {
                bool missing = !m->init.have;
                tscheck_note_container_issue(m->b->ts, missing ? TS_ISSUE_MP4_MISSING_INIT : TS_ISSUE_MP4_UNREADABLE,
                                             m->offset + m->cur_pos);
                m->ended = true;
            }
            close_epoch(m);
        } while (m->new_epoch && !m->ended && !m->a->stopped);
    }
    av_packet_free(&pkt);
    av_packet_free(&out);
    free(m->frame);
}

bool mp4src_detect(const struct bsrc *b)
{
    if (b->nsegs == 0)
        return false;
    const struct bsrc_segment *s = &b->segs[0];
    if (!s->path)
        return s->data && mp4box_looks_like_mp4(s->data, s->len);
    uint8_t head[8];
    FILE *fp = fopen(s->path, "rb");
    size_t n = fp ? fread(head, 1, sizeof head, fp) : 0;
    if (fp)
        fclose(fp);
    return mp4box_looks_like_mp4(head, n);
}

int mp4src_run(struct au_demux *a)
{
    struct mp4src m = {.a = a, .b = a->src};
    run_epochs(&m);
    /* segments never reached still count as read for the observation: none
     * is, a stop (consumer or damage) is not silence about the rest */
    a->src->ts->finished = true;
    free(m.owned);
    free(m.moov);
    return a->src->io_error ? -1 : 0;
}
