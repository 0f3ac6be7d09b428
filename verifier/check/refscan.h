/* refscan.h - the reference, read once before decoding.
 *
 * One demux-only pass over the reference (no decoding) establishes what the
 * comparison needs before it starts: that the reference is inside the v1
 * envelope and undamaged, each file's SHA-256, the interval (the whole
 * reference by default) and the decode boundaries (the random access point
 * at or before START for video, the AAC frame containing START for audio).
 * All timestamps are 33-bit values on the reference timeline.
 */
#ifndef REFSCAN_H
#define REFSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bsrc.h"
#include "profile.h"

enum refscan_status {
    REFSCAN_FAILED = 0,          /* internal failure */
    REFSCAN_OK,
    REFSCAN_UNOPENABLE,          /* an input cannot be opened or read (exit 66) */
    REFSCAN_UNUSABLE,            /* outside the profile or damaged (exit 65) */
};

struct refscan {
    bool has_video, has_audio;
    int video_pid, audio_pid;
    int width, height, pix_fmt;
    int sample_rate, channels;
    int64_t start, end;          /* the interval I */
    int64_t video_boundary;      /* PTS of the key frame decoding starts at */
    int64_t audio_boundary;      /* PTS of the AAC frame decoding starts at */
    int64_t video_packets, audio_packets;
};

/* Scans the reference.  When have_interval is false the interval becomes
 * [first video key frame, end of the last frame).  err explains any status
 * other than REFSCAN_OK. */
enum refscan_status refscan_run(struct bsrc_segment *segs, size_t nsegs, const struct profile *p,
                                bool have_interval, int64_t start, int64_t end,
                                struct refscan *out, char *err, size_t errlen);

#endif
