/* compare.h - pairs and compares what the two sides hand on.  No I/O.
 *
 * Video frames are paired by their time on the reference timeline (never by
 * arrival order).  A pair at the same time is compared on every parameter
 * that gives its planes their meaning (dimensions, pixel format, sample
 * aspect ratio, range, primaries, transfer, matrix, chroma location, field
 * order, display matrix, stereo 3D packing) and then on the visible Y, U and V pixels, row by row, ignoring
 * linesize and padding.  A reference frame with no
 * candidate frame at its time is "missing", a candidate frame with no
 * reference frame is "extra", and a candidate frame between two reference
 * frames is a "pts" difference.
 *
 * Audio items are compared on sample rate and channel count, item by item,
 * then on the f32 bit patterns.
 *
 * Confirmation: a difference is only a MISMATCH when it lies in validly
 * decoded data; each side marks every frame and item valid or not, finally
 * (vvalid.h), before handing it on.  Missing or extra frames and samples
 * are confirmed only at the end, and only when both observations were
 * complete and decoded cleanly.
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "diffpic.h"
#include "xfer.h"

struct video_diff {
    bool set;
    int64_t index;               /* presentation index among reference frames in I */
    int64_t pts;                 /* reference PTS (candidate PTS for "extra") */
    const char *plane;           /* Y U V pts missing extra params */
    const char *param;           /* params: which one (e.g. "color_primaries"), else NULL */
    int x, y;                    /* first differing pixel (planes only), else -1 */
};

struct audio_diff {
    bool set;
    int64_t sample_index;        /* per channel, from the first reference sample in I */
    int channel;                 /* 0 = L, 1 = R; -1 when not a value difference */
    int64_t pts;                 /* 90 kHz tick of that sample (floor) */
    const char *kind;            /* samples pts missing extra params */
};

#define VCMP_MAX_PENDING 64

struct vpending {
    struct video_diff d;
    bool valid;                  /* in valid data on every side that has it */
    bool needs_complete;         /* missing/extra: confirmed only over a complete observation */
};

struct vcmp {
    int64_t ref_frames, cand_frames, compared_frames;
    /* Frames paired by time whose times differ (a candidate frame between
     * two reference frames): how many, the first difference (candidate
     * minus reference, ticks), and whether any other differed otherwise.
     * A cause, not a verdict: a constant difference is a time offset. */
    int64_t timing_pairs, timing_delta;
    bool timing_varies;
    int64_t unpaired;            /* frames taken as missing or extra */
    int64_t unpaired_first;      /* ... before the first timing pair */
    int64_t ref_step;            /* the smallest step between two reference frames, 0: none yet */
    int64_t prev_ref_rel;        /* the last reference frame taken (valid when ref_frames > 0) */
    struct video_diff confirmed;
    bool unconfirmed;            /* a difference was seen in invalid data */
    struct vpending pend[VCMP_MAX_PENDING];
    int npend;
    bool done;
    /* keep: the frames of the first valid pixel or parameter difference
     * are kept (references, not copies) for its pictures (diffpic.h) */
    bool keep;
    AVFrame *kept[2];            /* reference, candidate; NULL: none kept */
    int64_t kept_index;
};

struct acmp {
    int64_t ref_samples, cand_samples;   /* per channel, in I */
    int64_t start;               /* interval start, to report PTS */
    size_t roff, coff;           /* samples already used of each head item */
    struct audio_diff confirmed; /* first confirmed value/pts/params difference */
    struct audio_diff gap;       /* first missing/extra, confirmed at the end */
    bool unconfirmed;
    bool invalid_seen[2];
    bool done;
    /* the candidate's audio ended before the reference's: from this sample
     * (per channel, in I) on, the reference's samples have no counterpart */
    bool cand_ended;
    int64_t cand_end_index;
    /* keep: the channel's samples around the first confirmed sample value
     * difference are copied for its plot (diffpic.h) */
    bool keep;
    struct diffpic_audio *kept;  /* allocated when keep is set; n 0: none */
};

void vcmp_init(struct vcmp *v);
void acmp_init(struct acmp *a, int64_t start);

/* One step each: consumes what can be consumed now from the rings; returns
 * true when anything was consumed.  Sets ->done when both rings are closed
 * and empty. */
bool vcmp_step(struct vcmp *v, struct ring *ref, struct ring *cand);
bool acmp_step(struct acmp *a, struct ring *ref, struct ring *cand);

/* At the end: confirms what waits for completeness.  clean: both sides'
 * observations were complete and their decodes of this track clean. */
void vcmp_finish(struct vcmp *v, bool clean);
void acmp_finish(struct acmp *a, bool clean);

/* Releases what keep kept. */
void vcmp_release(struct vcmp *v);
void acmp_release(struct acmp *a);

/* The first parameter (in the order listed above) in which two frames
 * differ, by name, or NULL. */
const char *frame_params_differ(const AVFrame *a, const AVFrame *b);

/* Visible-pixel comparison of two frames of the same size and format:
 * returns false and the first differing plane and pixel (raster order,
 * planes in the order Y, U, V) when they differ. */
bool frames_equal(const AVFrame *a, const AVFrame *b, const char **plane, int *x, int *y);

#endif
