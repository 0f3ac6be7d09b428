/* mp4src.h - access units of an fMP4/CMAF source (the second container).
 *
 * A source whose first segment starts with an ISO BMFF box (mp4box.h:
 * detection by content, never by file name) is read here instead of by the
 * TS layers: its segments (an init segment, then media segments, or one
 * fragmented MP4 file) are fed as one stream to FFmpeg's mov demuxer
 * through a custom AVIOContext, as FFmpeg's hls demuxer feeds init +
 * fragments.  Every segment passes the box scan (mp4box.h) and its SHA-256
 * before the demuxer sees a byte of it; a damaged segment ends the stream
 * there, its issue recorded in the source's scanner (tscheck.h) like
 * transport damage, so it decides the verdict the same way (UNKNOWN).
 *
 * A segment holding a moov other than the one before (EXT-X-MAP changed)
 * starts a new demuxer on it; the same moov again is skipped.
 *
 * The access units are those the TS path hands on (au.h), so decoding,
 * comparison and the fast path's digest are shared:
 *   - H.264 (sample entry avc1/avc3) through h264_mp4toannexb: Annex B with
 *     the parameter sets before each IDR that does not carry its own;
 *   - AAC (mp4a, AAC object types 1-4) as ADTS frames built from the
 *     AudioSpecificConfig exactly as FFmpeg's ADTS writer builds them;
 *   - times from tfdt/trun on the track's timescale (edit lists applied as
 *     the mov demuxer applies them) mapped with integer arithmetic: video
 *     onto 90 kHz, audio onto 1/720000 s; a time the timescale cannot
 *     express exactly in those units is floored.  A video DTS equal to the
 *     PTS is left out, as a TS muxer leaves it out of the PES header.
 * The codec identity is the sample entry's, as the stream type is TS's.
 * The demuxer's program view (tsdemux fields the sides read) is filled in
 * as one program holding the file's tracks.
 */
#ifndef MP4SRC_H
#define MP4SRC_H

#include <stdbool.h>

#include "au.h"

#define MP4SRC_MAX_FILE ((size_t)1 << 30)   /* a larger local segment is refused */

/* The source's first bytes are an ISO BMFF box (reads the first segment's
 * first 8 bytes; false when unreadable: the TS path then reports it). */
bool mp4src_detect(const struct bsrc *b);

/* au_demux_run for an fMP4 source. */
int mp4src_run(struct au_demux *a);

#endif
