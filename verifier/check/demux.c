/* demux.c - MPEG-TS demuxer over a byte source (see demux.h). */
#include "demux.h"

#include <stdio.h>

#include <libavutil/mem.h>

#define DEMUX_IO_BUFFER 65536

int demux_open(struct demux *d, struct bsrc *b, bool probe, char *err, size_t errlen)
{
    d->fmt = NULL;
    uint8_t *buf = av_malloc(DEMUX_IO_BUFFER);
    d->avio = buf ? avio_alloc_context(buf, DEMUX_IO_BUFFER, 0, b, bsrc_read, NULL, NULL) : NULL;
    if (!d->avio) {
        av_free(buf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->avio->seekable = 0;
    d->fmt = avformat_alloc_context();
    if (!d->fmt) {
        demux_close(d);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->fmt->pb = d->avio;
    d->fmt->max_streams = DEMUX_MAX_STREAMS + 1;
    d->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    const AVInputFormat *ts = av_find_input_format("mpegts");
    int rc = avformat_open_input(&d->fmt, NULL, ts, NULL);
    if (rc < 0) {
        d->fmt = NULL; /* freed by avformat_open_input on failure */
        demux_close(d);
        snprintf(err, errlen, "not a readable MPEG-TS stream: %s", av_err2str(rc));
        return -1;
    }
    rc = probe ? avformat_find_stream_info(d->fmt, NULL) : 0;
    if (rc < 0) {
        demux_close(d);
        snprintf(err, errlen, "cannot read stream parameters: %s", av_err2str(rc));
        return -1;
    }
    return 0;
}

void demux_close(struct demux *d)
{
    if (d->fmt)
        avformat_close_input(&d->fmt);
    if (d->avio) {
        av_freep(&d->avio->buffer);
        avio_context_free(&d->avio);
    }
}

int demux_find_stream(const struct demux *d, enum AVMediaType type)
{
    int found = -1;
    for (unsigned i = 0; i < d->fmt->nb_streams; i++) {
        const AVStream *st = d->fmt->streams[i];
        if (st->codecpar->codec_type != type || (st->disposition & AV_DISPOSITION_ATTACHED_PIC))
            continue;
        if (found >= 0)
            return -2;
        found = (int)i;
    }
    return found;
}

bool demux_too_many_streams(const struct demux *d)
{
    return d->fmt && d->fmt->nb_streams > DEMUX_MAX_STREAMS;
}
