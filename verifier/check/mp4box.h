/* mp4box.h - integrity of fMP4/CMAF segments (ISO/IEC 14496-12), box by box.
 *
 * FFmpeg's mov demuxer is as tolerant as its TS demuxer: it skips boxes it
 * cannot place, clamps a trun that overruns its mdat, and reads a fragment
 * of a track its init segment does not announce as nothing.  For an exact
 * check that is the wrong default, so every segment passes this scan before
 * the demuxer sees a byte of it.  It never changes the bytes; it says
 * whether they are a complete, unencrypted fMP4 observation:
 *   - every box fits in its parent (the file at the top) and is at least its
 *     header (mp4_truncated_box);
 *   - every trun has a size for each sample (its own, the tfhd's default or
 *     the trex's) and its entries fit in the box (mp4_sample_table);
 *   - the sample data every trun addresses lies inside one mdat of the same
 *     segment (mp4_trun_overrun);
 *   - a fragment follows an init segment (moov) whose tracks include the
 *     fragment's (mp4_missing_init, mp4_init_mismatch);
 *   - no encv/enca sample entry, no senc box (mp4_encrypted: CENC is
 *     refused, never decoded as noise);
 *   - every H.264 sample its flags call sync (trun, tfhd or trex
 *     sample_flags without is_non_sync and depends-on-others, the rule of
 *     FFmpeg's mov demuxer) is a random access point: it holds an IDR
 *     slice or a recovery point SEI (mp4_false_sync_sample: a player starts
 *     or seeks there).  A fragment whose flags say nothing at any level
 *     claims nothing.
 * The issue codes are those of tscheck.h, so the verdict names them as it
 * names transport damage.
 */
#ifndef MP4BOX_H
#define MP4BOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tscheck.h"

#define MP4BOX_MAX_TRACKS 8
#define MP4BOX_MAX_RUNS 256      /* trun data ranges checked per segment */

struct mp4box_track {
    uint32_t id;
    bool has_default_size;       /* trex default_sample_size */
    uint32_t default_size;
    /* The movie timescale of the empty edit (elst media_time -1) that
     * starts the track, 0 without one: the track's start is then known
     * only to 1/edit_timescale s (FFmpeg's mp4 muxers write milliseconds,
     * each track rounded on its own: docs/exact-av-v1.md "the container's
     * quantum"). */
    uint32_t edit_timescale;
    uint8_t nal_length_size;     /* avc1/avc3: the avcC's NAL length size (1, 2 or 4); 0: not H.264 */
    bool has_default_flags;      /* trex default_sample_flags */
    uint32_t default_flags;
};

/* What the init segment before the fragments said; kept across segments. */
struct mp4box_init {
    bool have;
    uint32_t movie_timescale;    /* mvhd's, 0 before it */
    struct mp4box_track tracks[MP4BOX_MAX_TRACKS];
    int ntracks;
};

/* What one segment holds. */
struct mp4box_segment {
    bool has_moov, has_moof;
    size_t moov_offset, moov_len;   /* the moov box, when has_moov */
};

/* Scans one segment's bytes; init is updated by its moov (if any) and read
 * by its fragments.  TS_ISSUE_NONE, or the first issue and *where (byte
 * offset in the segment). */
enum ts_issue mp4box_scan(const uint8_t *p, size_t n, struct mp4box_init *init, struct mp4box_segment *seg,
                          uint64_t *where);

/* The bytes start with an ISO BMFF box a segment or file starts with
 * (ftyp, styp, moov, moof, sidx, emsg, prft, free, skip): container
 * detection by content. */
bool mp4box_looks_like_mp4(const uint8_t *p, size_t n);

#endif
