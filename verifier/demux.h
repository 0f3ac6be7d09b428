/* demux.h - libavformat's MPEG-TS demuxer over a byte source.
 *
 * The container is forced to mpegts: untrusted input is never probed into
 * some other format.  The AVIO context is not seekable, so pkt->pos counts
 * bytes of the continuous stream, the same numbering as bsrc.pos.
 */
#ifndef DEMUX_H
#define DEMUX_H

#include <stddef.h>

#include <libavformat/avformat.h>

#include "bsrc.h"

struct demux {
    AVFormatContext *fmt;
    AVIOContext *avio;
};

/* 0, or -1 with a message. */
int demux_open(struct demux *d, struct bsrc *b, char *err, size_t errlen);
void demux_close(struct demux *d);

/* The single stream of this type that a v1 stream may carry: its index, -1
 * when there is none, -2 when there are several. */
int demux_find_stream(const struct demux *d, enum AVMediaType type);

#endif
