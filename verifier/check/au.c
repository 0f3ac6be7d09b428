/* au.c - PES to access units (see au.h). */
#include "au.h"

#include <string.h>

#include <openssl/evp.h>

#include "bsrc.h"
#include "mp4src.h"

bool au_aac_payload(const struct au *au, const uint8_t **data, size_t *size)
{
    size_t skip = 0;
    /* ADTS (ISO/IEC 13818-7 6.2): 7 bytes, 9 with the CRC (protection_absent 0) */
    if (au->size >= 9 && au->data[0] == 0xFF && (au->data[1] & 0xF0) == 0xF0) {
        /* Several raw data blocks with CRCs: block positions after the
         * header and a CRC after each block (adts_header_error_check,
         * adts_raw_data_block_error_check), so the blocks are not one
         * run of bytes: not comparable. */
        if (!(au->data[1] & 1) && (au->data[6] & 3))
            return false;
        skip = (au->data[1] & 1) ? 7 : 9;
    }
    *data = au->data + skip;
    *size = au->size - skip;
    return true;
}

bool au_aac_payload_digest(const struct au *au, uint8_t out[AU_PAYLOAD_DIGEST])
{
    const uint8_t *p;
    size_t n = 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    memset(out, 0, AU_PAYLOAD_DIGEST);
    if (!au_aac_payload(au, &p, &n) || !EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) ||
        len < AU_PAYLOAD_DIGEST)
        return false;
    memcpy(out, md, AU_PAYLOAD_DIGEST);
    return true;
}

int au_aac_blocks(const struct au *au)
{
    return au->samples > 1024 && au->samples % 1024 == 0 ? au->samples / 1024 : 1;
}

int au_units_per_sample(int sample_rate)
{
    return sample_rate > 0 && AU_UNITS_PER_SECOND % sample_rate == 0 ? AU_UNITS_PER_SECOND / sample_rate : 0;
}

static void on_pes(void *opaque, const struct tsd_pes *pes);

enum ts_issue au_transport_issue(const struct au_demux *a, uint64_t *offset, int *pid)
{
    const struct tscheck *ts = a->src->ts;
    if (!a->td.decided) {        /* no tracks chosen yet: every PID may be one */
        *offset = ts->issue_offset;
        *pid = ts->issue_pid;
        return ts->issue;
    }
    int pids[TSD_MAX_DECISIVE];
    size_t n = tsdemux_decisive_pids(&a->td, pids);
    return tscheck_issue_among(ts, pids, n, offset, pid);
}

bool au_transport_complete(const struct au_demux *a)
{
    uint64_t offset;
    int pid;
    return a->src->ts->finished && au_transport_issue(a, &offset, &pid) == TS_ISSUE_NONE;
}

int au_demux_init(struct au_demux *a, const struct tsd_select *sel, au_fn fn, void *opaque, struct bsrc *src)
{
    memset(a, 0, sizeof *a);
    a->fn = fn;
    a->opaque = opaque;
    a->src = src;
    return tsdemux_init(&a->td, sel, on_pes, a);
}

void au_demux_free(struct au_demux *a)
{
    for (int t = 0; t < TSD_TRACKS; t++) {
        av_parser_close(a->t[t].parser);
        avcodec_free_context(&a->t[t].pctx);
        h264_ps_free(&a->t[t].ps);
    }
    tsdemux_free(&a->td);
}

/* ADTS syncword and layer 0 (ISO/IEC 14496-3 1.A.2). */
static bool adts_sync(const uint8_t *p, size_t len)
{
    return len >= 2 && p[0] == 0xFF && (p[1] & 0xF6) == 0xF0;
}

static int adts_rate(const uint8_t *p, size_t len)
{
    static const int rates[16] = {96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050,
                                  16000, 12000, 11025, 8000, 7350, 0, 0, 0};
    return len >= 3 && adts_sync(p, len) ? rates[p[2] >> 2 & 15] : 0;
}

/* Samples per channel of one ADTS frame: 1024 per raw data block
 * (number_of_raw_data_blocks_in_frame + 1, ISO/IEC 14496-3 1.A.2.2.1), each
 * of which FFmpeg 5.1 decodes; its parser's duration says 1024 whatever
 * the header says (issue 18, class 9). */
static int adts_samples(const uint8_t *p, size_t len)
{
    return len >= 7 && adts_sync(p, len) ? 1024 * (1 + (p[6] & 3)) : 1024;
}

/* The codec of a track, decided on its first PES with data, from what the
 * PMT announces: a player's demuxer picks its decoder from the stream type
 * and descriptors, not from the bytes (hls.js routes 0x03/0x04 to its MPEG
 * audio path and drops 0x11 LATM; FFmpeg decodes 0x03 with the MP3 decoder).
 * So ADTS frames announced as anything but ADTS AAC (stream type 0x0F) are
 * not AAC here either: that announcement is part of what the candidate
 * delivers (issue 18, class 3).  A private stream (0x06) with the DVB AAC
 * descriptor is AAC to FFmpeg but nothing to hls.js 1.7.4, which reads 0x06
 * only for AC-3: not the reference's delivery either ("aac_private"). */
static void identify(struct au_track *tr, const struct tsd_pes *pes)
{
    tr->codec = AU_CODEC_OTHER;
    tr->codec_name = pes->codec;
    enum AVCodecID id = AV_CODEC_ID_NONE;
    if (pes->track == TSD_VIDEO && pes->stream_type == 0x1B) {
        tr->codec = AU_CODEC_H264, tr->codec_name = "h264", id = AV_CODEC_ID_H264;
    } else if (pes->track == TSD_AUDIO && pes->stream_type == 0x0F) {
        tr->codec = AU_CODEC_AAC, tr->codec_name = "aac", id = AV_CODEC_ID_AAC;
    } else if (pes->track == TSD_AUDIO && pes->stream_type == 0x06 && strcmp(pes->codec, "aac") == 0) {
        tr->codec_name = "aac_private";
    }
    if (id == AV_CODEC_ID_NONE)
        return;
    tr->parser = av_parser_init(id);
    tr->pctx = avcodec_alloc_context3(NULL);
    if (!tr->parser || !tr->pctx) {
        tr->codec = AU_CODEC_OTHER;    /* cannot parse: decodes nothing, never matches */
        tr->codec_name = "unparsable";
    }
}

/* The PES whose time a video access unit takes: from (where it began) but
 * when the unit's bytes before a later PES (up to to) that declares a time
 * are non-VCL NAL units only, and that PES holds its first slice: an SEI,
 * SPS or PPS written after the previous picture's slices in that picture's
 * PES is where FFmpeg's parser begins this unit (H.264 7.4.1.2.3), while
 * the packager declared this picture's time on the next PES (au.h). */
static int64_t picture_pes(const struct au_track *tr, const uint8_t *data, size_t size, int64_t from, int64_t to)
{
    size_t vcl = h264_first_vcl(data, size);
    int64_t own = from;
    for (int64_t q = from + 1; q <= to && to - from < AU_PES_RING; q++) {
        uint64_t at = tr->pes[q % AU_PES_RING].start - tr->emitted;
        if (at > vcl)
            break;
        if (tr->pes[q % AU_PES_RING].pts != AU_NO_TS)
            own = q;
    }
    return own;
}

/* The parser's last video unit holds no slice and began after a picture
 * inside a PES, with no later PES declaring a time: the non-VCL NAL units a
 * packager wrote after the last picture's slices (picture_pes), which
 * belong to that picture's PES and decode to nothing (FFmpeg's decoder
 * says "no frame!"), not a picture lost. */
static bool trailing_nals(const struct au_track *tr, const uint8_t *data, size_t size, int64_t from, int64_t to)
{
    if (h264_first_vcl(data, size) < size || to - from >= AU_PES_RING ||
        tr->emitted <= tr->pes[from % AU_PES_RING].start)
        return false;
    for (int64_t q = from + 1; q <= to; q++)
        if (tr->pes[q % AU_PES_RING].pts != AU_NO_TS)
            return false;
    return true;
}

/* ends_before: the access unit ended before the PES being read began;
 * flush: nothing follows it. */
static void emit(struct au_demux *a, enum tsd_track t, const uint8_t *data, int size, bool ends_before, bool flush)
{
    struct au_track *tr = &a->t[t];
    struct au au = {.track = t, .data = data, .size = (size_t)size, .pts = AU_NO_TS, .dts = AU_NO_TS,
                    .index = tr->count++};
    /* the declared time: only for the first access unit beginning in a PES */
    int64_t pos = tr->parser->pos;
    if (pos >= 0 && pos < tr->serial && tr->serial - pos <= AU_PES_RING) {
        au.pts = tr->pes[pos % AU_PES_RING].pts;
        au.dts = tr->pes[pos % AU_PES_RING].dts;
    }
    /* its bytes lie in the PES from where it began to the one being read */
    int64_t from = tr->au_start_serial, to = tr->serial - 1 - ends_before;
    if (to < from)
        to = from;
    int64_t own = tr->codec == AU_CODEC_H264 ? picture_pes(tr, data, (size_t)size, from, to) : from;
    if (own != from) {
        au.pts = tr->pes[own % AU_PES_RING].pts;
        au.dts = tr->pes[own % AU_PES_RING].dts;
    }
    au.damaged = to - from >= AU_PES_RING;
    for (int64_t s = from; s <= to && !au.damaged; s++)
        au.damaged = tr->pes[s % AU_PES_RING].damaged;
    /* A PES that declares a time must hold the start of an access unit: one
     * swallowed whole by this access unit (its start code broken, say) means
     * a picture or frame went missing inside it.  A PES repeating the unit's
     * own time is plain packing (packagers that stamp every PES of a unit). */
    int64_t next = flush ? tr->serial : tr->serial - 1;   /* where the next one begins */
    for (int64_t q = own + 1; q < next && !au.damaged; q++) {
        int64_t t = tr->pes[q % AU_PES_RING].pts;
        au.damaged = t != AU_NO_TS && t != au.pts;
    }
    tr->au_start_serial = tr->serial - 1 < 0 ? 0 : tr->serial - 1;
    bool trailing = flush && tr->codec == AU_CODEC_H264 && trailing_nals(tr, data, (size_t)size, from, to);
    tr->emitted += (uint64_t)size;
    if (trailing)
        return;
    if (tr->codec == AU_CODEC_H264) {
        h264_au_scan(data, (size_t)size, &au.h264, &tr->ps);
    } else {
        au.sample_rate = adts_rate(data, (size_t)size);
        au.samples = adts_samples(data, (size_t)size);
        int unit = au_units_per_sample(au.sample_rate);
        if (au.pts != AU_NO_TS) {
            au.timed = true;
            au.units = au.pts * AU_UNITS_PER_TICK;
        } else if (tr->have_next) {
            au.timed = true;
            au.units = tr->next_units;
        }
        tr->have_next = au.timed && unit > 0;
        if (tr->have_next)
            tr->next_units = (au.units + (int64_t)au.samples * unit) % AU_UNITS_MOD;
    }
    if (!a->stopped && !a->fn(a->opaque, &au)) {
        a->stopped = true;
        if (a->src)
            a->src->stop = true;
    }
}

/* Feeds data (NULL, 0: flush) to the track's parser, emitting what it completes. */
static void parse(struct au_demux *a, enum tsd_track t, const uint8_t *data, size_t len, int64_t serial)
{
    struct au_track *tr = &a->t[t];
    int64_t pos = serial;
    bool flush = data == NULL, first = true;
    while ((len > 0 || flush) && !a->stopped) {
        uint8_t *out = NULL;
        int outlen = 0;
        int n = av_parser_parse2(tr->parser, tr->pctx, &out, &outlen, data, (int)len,
                                 pos >= 0 ? 0 : AV_NOPTS_VALUE, AV_NOPTS_VALUE, pos);
        pos = -1;                /* registered once per PES, as libavformat does */
        if (n < 0)
            n = 0;
        if (!flush) {
            data += n;
            len -= (size_t)n;
        }
        bool was_first = first;
        first = false;
        if (outlen > 0)
            emit(a, t, out, outlen, was_first && !flush && n == 0, flush);
        else if (flush || n == 0)
            break;
    }
}

static void on_pes(void *opaque, const struct tsd_pes *pes)
{
    struct au_demux *a = opaque;
    struct au_track *tr = &a->t[pes->track];
    if (a->stopped)
        return;
    if (tr->codec == AU_CODEC_NONE && pes->len >= 2)
        identify(tr, pes);
    if (!tr->parser)
        return;
    int64_t s = tr->serial++;
    tr->pes[s % AU_PES_RING].pts = pes->pts;
    tr->pes[s % AU_PES_RING].dts = pes->dts;
    tr->pes[s % AU_PES_RING].damaged = pes->damaged;
    tr->pes[s % AU_PES_RING].start = tr->fed;
    tr->fed += pes->len;
    parse(a, pes->track, pes->payload, pes->len, s);
}

int au_demux_run(struct au_demux *a)
{
    if ((a->fmp4 = mp4src_detect(a->src)))   /* the second container: by content, never by name */
        return mp4src_run(a);
    int rc = bsrc_run(a->src, tsdemux_packet, &a->td);
    /* The PES still open at the end (a video PES of no declared length) may
     * have lost its end only when the stream's end was lost: a read that
     * failed, or bytes ending inside a packet or in garbage.  Damage
     * elsewhere (an audio packet lost mid-stream) says nothing about the
     * last picture's bytes (differential combo:714749: its last picture
     * was taken for damaged, and a pixel difference in it unconfirmed);
     * packets lost inside that PES are gaps in it already (tsdemux). */
    if (!a->stopped)
        tsdemux_finish(&a->td, rc != 0 || a->src->io_error || a->src->ts->end_cut || !a->src->ts->finished);
    for (int t = 0; t < TSD_TRACKS; t++)
        if (a->t[t].parser && !a->stopped)
            parse(a, t, NULL, 0, -1);
    return rc;
}
