/* refscan.h - the reference, read once before decoding.
 *
 * One pass over the reference through the same access-unit layer the
 * decoding sides use (no picture is decoded; one AAC frame is, to learn
 * the audio's profile) establishes what the comparison needs before it
 * starts: that the reference is inside the v1 envelope and undamaged, each
 * file's SHA-256, its program and track set, the interval, and where each
 * track's decoding starts:
 *   - video: at a random access point (an IDR, or a picture with a
 *     recovery point SEI) whose recovery is complete at START and before
 *     which, in decode order, no picture of the interval lies; the latest
 *     such point.  When none exists, the first one (the side then reports
 *     the interval's pictures before it as not decodable);
 *   - audio: at the AAC frame before the one holding START (the overlap of
 *     the first compared frame needs it), else at the first frame.
 * Each track's interval is I cut to the reference's own extent of that
 * track: content of the candidate beyond what the reference covers is not
 * "extra".  All timestamps are 33-bit values on the reference timeline.
 */
#ifndef REFSCAN_H
#define REFSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bsrc.h"
#include "indigest.h"
#include "profile.h"
#include "side.h"
#include "tsdemux.h"

enum refscan_status {
    REFSCAN_FAILED = 0,          /* internal failure */
    REFSCAN_OK,
    REFSCAN_UNOPENABLE,          /* an input cannot be opened or read (exit 66) */
    REFSCAN_UNUSABLE,            /* outside the profile or damaged (exit 65) */
};

/* The reference's AAC frames from the decode boundary on, as far as held:
 * what a candidate whose audio starts later is compared with (issue 18,
 * class 7), after the few frames before the boundary a candidate's ADTS
 * frame of several raw data blocks may start at (a common boundary,
 * verify.c).  units: 1/720000 s, reference timeline, mod AU_UNITS_MOD. */
#define REFSCAN_AUDIO_WINDOW 64
#define REFSCAN_AUDIO_BEFORE 3   /* an ADTS frame holds at most 4 raw data blocks */
#define REFSCAN_CAT 3
struct refscan_aframe {
    int64_t units;
    bool digest_ok;
    uint8_t payload[AU_PAYLOAD_DIGEST];   /* au_aac_payload_digest */
    int blocks;                  /* au_aac_blocks */
    /* cat[j]: a digest of the raw data blocks of the j + 2 frames ending
     * with this one, as one run (what one ADTS frame of j + 2 blocks holds) */
    bool cat_ok[REFSCAN_CAT];
    uint8_t cat[REFSCAN_CAT][AU_PAYLOAD_DIGEST];
};

struct refscan {
    bool has_video, has_audio;
    int video_pid, audio_pid;
    struct tsd_program program;  /* the reference's program */
    int width, height, pix_fmt;
    int sample_rate, channels;
    int64_t start, end;          /* the interval I (end: the later track end by default) */
    struct span video, audio;    /* each track's interval: I cut to the reference's extent */
    int64_t video_boundary;      /* PTS of the access unit video decoding starts at */
    int64_t video_recovery;      /* PTS from which pictures decoded from there are valid */
    int64_t audio_boundary;      /* start of the AAC frame audio decoding starts at, 1/720000 s */
    int64_t video_quantum, audio_quantum;   /* the coarsest start-time quantum of each track's
                                  * access units (au.h quantum_units), 1/720000 s; 0: exact */
    int64_t video_units, audio_frames;   /* access units of each track */
    int64_t video_delay;         /* the largest PTS - DTS of a picture, ticks: how far apart a cut
                                  * by an IDR's DTS and one by its PTS lie (issue 18, class 7) */
    struct refscan_aframe audio_window[REFSCAN_AUDIO_BEFORE + REFSCAN_AUDIO_WINDOW];
    int audio_window_len;        /* timed frames held */
    int audio_window_first;      /* the index of the boundary's frame among them */
    bool audio_window_full;      /* more followed than were held */
    uint8_t input_digest[INDIGEST_LEN];  /* every access unit of the program (indigest.h) */
    bool input_digest_ok;        /* ... taken over a complete, undamaged transport */
};

/* Scans the reference.  When have_interval is false the interval starts
 * at the first picture decodable from the first random access point and
 * runs to the end of each track.  err explains any status other than
 * REFSCAN_OK. */
enum refscan_status refscan_run(struct bsrc_segment *segs, size_t nsegs, const struct profile *p,
                                bool have_interval, int64_t start, int64_t end,
                                struct refscan *out, char *err, size_t errlen);

#endif
