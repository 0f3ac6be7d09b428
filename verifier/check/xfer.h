/* xfer.h - bounded queues between the two decoding sides and the comparer.
 *
 * Each side (0 = reference, 1 = candidate) pushes video items and audio
 * items into its own two rings; the comparer pops from all four.  One mutex
 * and one condition variable guard everything: the work done under the lock
 * is a few pointer moves, and the rings are small, so memory stays flat
 * whatever the segment's duration.
 *
 * Deadlock: if both producers wait on full rings while the comparer waits
 * for an item that one of them cannot produce (the two streams are
 * interleaved very differently), the exchange aborts and the check ends
 * UNKNOWN ("interleave_skew") instead of hanging.
 */
#ifndef XFER_H
#define XFER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libavutil/frame.h>

enum { XFER_REF = 0, XFER_CAND = 1 };

/* Sub-tick timestamps (issue 18, class 5): muxers that floor nanoseconds to
 * 90 kHz (GStreamer) place a unit up to one tick from where one that rounds
 * (FFmpeg) places it.  A time within this many ticks of the other side's is
 * the same time, per unit (nothing accumulates); a frame or a sample (15
 * units at 48 kHz, more than a tick) further is a difference.  So each side
 * also hands on what lies within the tolerance outside the interval (the
 * "margin"), and the comparer keeps a margin frame or sample only where it
 * pairs with one of the reference inside the interval. */
#define XFER_TOLERANCE_TICKS 1
#define XFER_TOLERANCE_UNITS 8   /* the same in 1/720000 s */

/* A decoded picture of the interval, in presentation order; its validity
 * is final when it is handed on (vvalid.h). */
struct vitem {
    AVFrame *frame;              /* owned by the item while queued */
    int64_t pts;                 /* the side's own 33-bit PTS */
    int64_t rel;                 /* ticks since START on the reference timeline (negative in the margin) */
    bool valid;                  /* decoded from undamaged data */
    bool margin;                 /* outside the interval, within the tolerance of it */
};

struct aitem {
    float *pcm;                  /* interleaved f32 (owned while queued) */
    int nb_samples;              /* per channel */
    int channels;
    int sample_rate;
    int64_t pts;                 /* PTS of the first sample (side's own timeline) */
    int64_t rel_units;           /* first sample's time since START in 1/720000 s */
    bool valid;                  /* decoded without any error on this side so far */
    int head_margin, tail_margin;   /* samples at each end outside the interval, in the margin */
    /* the decoded frame's start since START, 1/720000 s, and the index in
     * it of the item's first sample: two sides' frames within the
     * tolerance of each other are one frame, whose samples pair by index
     * (a tick is more than half a 48 kHz sample: by time alone a sample
     * may seem to pair with its neighbour, compare.c audio_margin) */
    int64_t frame_units;
    int first_index;
};

struct ring {
    void *items;
    size_t item_size, cap, head, count;
    bool closed;                 /* the producer will push nothing more */
};

struct xfer {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ring video[2], audio[2];
    const struct ring *blocked_on[2];  /* the full ring a producer waits on */
    bool producer_done[2];
    bool aborted;
};

int xfer_init(struct xfer *x, size_t video_cap, size_t audio_cap);
void xfer_destroy(struct xfer *x);   /* frees items still queued */

/* Producer side: block while the ring is full; false when aborted. */
bool xfer_push_video(struct xfer *x, int side, const struct vitem *it);
bool xfer_push_audio(struct xfer *x, int side, const struct aitem *it);
void xfer_close(struct xfer *x, int side);  /* both of the side's rings */
void xfer_abort(struct xfer *x);

/* Consumer side, with x->mu held. */
void *ring_peek(const struct ring *r, size_t i);   /* NULL if absent */
void ring_drop(struct ring *r);                    /* pops the head */
void vitem_release(struct vitem *it);
void aitem_release(struct aitem *it);

#endif
