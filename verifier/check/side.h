/* side.h - one decoding side: demux, decode, validity, hand-off.
 *
 * A side runs in its own thread with its own single-threaded decoders.  It
 * starts feeding its decoders at the declared decode boundary (mapped onto
 * its own timeline with the declared offset), so that both sides decode the
 * same packet sequence; pre-roll frames build state and are not handed on.
 *
 * Validity is tracked the way the contract needs it:
 *   video: frames are grouped in output order from key frame to key frame.
 *     A corrupt or concealed frame, a decoder error, a corrupt packet, a lost
 *     TS packet on the video PID, or an incomplete end of stream invalidates
 *     the current group and every group until a key frame that starts after
 *     the damage has been output.  Differences found in a group are only
 *     confirmed when the group ends valid on both sides (see compare.h).
 *   audio: AAC decoding depends on history, so after the first audio error
 *     every later audio item is invalid.
 */
#ifndef SIDE_H
#define SIDE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bsrc.h"
#include "profile.h"
#include "xfer.h"

struct side_config {
    int index;                   /* XFER_REF or XFER_CAND */
    const struct profile *profile;
    struct bsrc_segment *segs;
    size_t nsegs;
    int64_t offset;              /* side_pts = (reference_pts + offset) mod 2^33 */
    int64_t start, end;          /* the interval, reference timeline */
    int64_t video_boundary;      /* reference timeline */
    int64_t audio_boundary;
    bool want_audio;             /* the reference has audio */
    struct xfer *xfer;
    int64_t deadline_ms;         /* wall clock UTC ms to stop by (deadline_exceeded); 0: none */
};

/* What the FFmpeg log said about one decoder (filled by avlog.c), and what
 * its get_format callback refused (side.c): the decoder's opaque. */
struct side_log {
    atomic_int errors;           /* messages at AV_LOG_ERROR or worse */
    atomic_int reorder_growth;   /* "Increasing reorder buffer" */
    int max_width, max_height;   /* the profile's envelope (video only; 0: no limit) */
    atomic_int oversize;         /* a picture beyond it was refused before decoding */
};

struct side_track {
    bool present;                /* the side carries this track */
    bool codec_ok;               /* decodable by the profile's decoder */
    char codec[32];
    bool started;                /* the decode boundary was found */
    bool decode_error;           /* send/receive failed, or the log said error */
    bool corrupt;                /* a frame flagged corrupt or concealed */
    bool lost_packets;           /* CC gap on its PID, or a corrupt packet */
    bool missing_pts;
    bool dropped;                /* frames dropped by the decoder */
    bool params_changed;         /* reference only: left the envelope mid-stream */
    bool oversize;               /* pictures larger than the profile's max_width x max_height */
    int64_t packets_fed, frames_out;
    int64_t in_interval;         /* frames (video) or samples (audio) handed on */
    char first_error[160];
};

struct side_result {
    bool opened;                 /* the demuxer accepted the stream */
    char open_error[256];
    bool io_error;
    char io_reason[64], io_detail[256];
    bool ts_complete;
    enum ts_issue ts_issue;
    uint64_t ts_issue_offset;
    int ts_issue_pid;
    uint64_t bytes;
    bool aborted;                /* the exchange was aborted */
    bool internal_error;
    struct side_track video, audio;
};

struct side {
    struct side_config cfg;
    struct side_result res;
    struct side_log vlog, alog;
    pthread_t thread;
};

/* Starts the side's thread; 0 on success. */
int side_start(struct side *s, const struct side_config *cfg);
void side_join(struct side *s);

#endif
