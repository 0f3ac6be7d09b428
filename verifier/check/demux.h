/* demux.h - libavformat's MPEG-TS demuxer over a byte source.
 *
 * The container is forced to mpegts: untrusted input is never probed into
 * some other format.  The AVIO context is not seekable, so pkt->pos counts
 * bytes of the continuous stream, the same numbering as bsrc.pos.
 */
#ifndef DEMUX_H
#define DEMUX_H

#include <stdbool.h>
#include <stddef.h>

#include <libavformat/avformat.h>

#include "bsrc.h"

struct demux {
    AVFormatContext *fmt;
    AVIOContext *avio;
};

/* 0, or -1 with a message.  probe: also read stream parameters that need
 * decoding (pixel format, AAC profile, sample rate) with
 * avformat_find_stream_info; the reference scan needs them for the envelope,
 * a decoding side does not (the PMT names the codecs, the decoders configure
 * themselves in-band), and skipping it saves decoding the first frames twice. */
int demux_open(struct demux *d, struct bsrc *b, bool probe, char *err, size_t errlen);
void demux_close(struct demux *d);

/* Streams a v1 stream may declare.  libavformat silently drops the streams
 * beyond its max_streams, so the demuxer is allowed one more: a stream
 * that reaches it has more than this many and cannot be read as a whole
 * (the one video stream may be among the dropped ones). */
#define DEMUX_MAX_STREAMS 1000
bool demux_too_many_streams(const struct demux *d);

/* The single stream of this type that a v1 stream may carry: its index, -1
 * when there is none, -2 when there are several. */
int demux_find_stream(const struct demux *d, enum AVMediaType type);

#endif
