/* vvalid.h - which decoded video frames are valid data, by decode dependency.
 *
 * The access units a side feeds its decoder are numbered in decode order
 * (d).  Damage is attributed to the access unit it was found in: a
 * decoder error while that unit was decoded, lost or erroneous transport
 * packets in its bytes, or its output frame flagged corrupt.  A frame
 * decoded from unit d is invalid when a damaged unit k <= d is not cut off
 * from it by a random access point c with k < c <= d that it cannot look
 * past:
 *   - an IDR: nothing decoded after it refers to anything before it;
 *   - an intra picture with a recovery point SEI of recovery_frame_cnt 0
 *     (an open-GOP I frame): only the pictures displayed at or after it
 *     (PTS >= its PTS) are cut off; its leading pictures still refer back.
 * So damage taints every frame decoded from the damaged one whatever its
 * output order, and nothing that is provably independent of it.
 *
 * Damage can be learned late: a unit's own frame flags are seen when it
 * is output, possibly after later units were decoded and output.  A frame
 * is therefore final only when every unit up to its own has been resolved:
 * output, or known never to be output (VV_DROP_DISTANCE later units were
 * decoded without it coming out, a pre-roll unit displayed before a frame
 * that came out, or the stream ended).  A unit resolved as "dropped" whose
 * frame appears after all is an anomaly that invalidates the rest.
 *
 * Pre-roll units (decoded after the start but displayed before the
 * recovery point of the random access, e.g. the leading B-frames of an
 * open-GOP start) are expected to fail; their errors are not damage.
 */
#ifndef VVALID_H
#define VVALID_H

#include <stdbool.h>
#include <stdint.h>

#define VV_MAX_DAMAGE 256
#define VV_MAX_CUTS 64
#define VV_MAX_WINDOW 4096       /* unresolved units tracked at most */
#define VV_DROP_DISTANCE 34      /* a unit not output after this many later ones never will be
                                  * (two DPBs of 16 frames, and a margin) */

enum vv_cut { VV_CUT_NONE = 0, VV_CUT_IDR, VV_CUT_RECOVERY };

struct vv_unit {
    int64_t pts;                 /* side's timeline, 33-bit; -1 unknown */
    bool resolved, output, preroll, in_interval;
};

struct vvalid {
    struct vv_unit *units;       /* ring of units [base, next) */
    int64_t cap, base, next;
    int64_t min_unresolved;
    int64_t damage[VV_MAX_DAMAGE];
    int ndamage;
    bool saturated;              /* too much damage to track: all later frames invalid */
    struct { int64_t d, pts; enum vv_cut kind; } cuts[VV_MAX_CUTS];
    int ncuts, cut_head;
    bool anomaly;                /* an output the model cannot place: all later frames invalid */
    int64_t dropped_in_interval; /* units of the interval never output */
};

int vvalid_init(struct vvalid *v);
void vvalid_free(struct vvalid *v);

/* A unit is fed to the decoder; returns its decode index.  in_interval:
 * its PTS lies in the interval (then it must produce a frame). */
int64_t vvalid_feed(struct vvalid *v, int64_t pts, bool preroll, bool in_interval, enum vv_cut cut);

/* Damage found in unit d (ignored for pre-roll units). */
void vvalid_damage(struct vvalid *v, int64_t d);

/* The frame of unit d came out with this PTS. */
void vvalid_output(struct vvalid *v, int64_t d, int64_t pts);

/* Whether unit d is a pre-roll unit (false when unknown). */
bool vvalid_preroll(const struct vvalid *v, int64_t d);

/* More pictures are held back than any DPB holds: resolve every unit up
 * to d now and trust nothing decoded later (an anomaly). */
void vvalid_force(struct vvalid *v, int64_t d);

/* The stream ended: every unit is resolved. */
void vvalid_flush(struct vvalid *v);

/* Whether the frame of unit d may be judged now, and if so whether it is
 * valid data. */
bool vvalid_final(const struct vvalid *v, int64_t d);
bool vvalid_valid(const struct vvalid *v, int64_t d, int64_t pts);

#endif
