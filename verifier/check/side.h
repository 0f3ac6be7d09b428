/* side.h - one decoding side: access units, decode, validity, hand-off.
 *
 * A side runs in its own thread with its own single-threaded decoders.  It
 * reads its bytes through the access-unit layer (au.h), selecting the
 * program as configured, and feeds its decoders from the declared decode
 * boundary (mapped onto its own timeline with the declared offset), so
 * that both sides decode the same access units:
 *   video: from the access unit at the boundary's PTS (a random access
 *     point of the reference), with the latest SPS/PPS seen before it fed
 *     first; units displayed before the recovery point of that random
 *     access are pre-roll (decoded, never compared, their failures are
 *     expected); decoding stops at the first unit whose DTS is past the
 *     interval, since nothing in the interval depends on it;
 *   audio: from the AAC frame at the boundary (one frame before the one
 *     holding the interval's start, so that the overlap is complete), to
 *     the first frame starting past the interval.
 * Validity: video by decode dependency (vvalid.h); audio, whose decoder
 * carries state forward, is invalid after the first error.  Only frames
 * and samples of the track's interval are handed on, each marked valid or
 * not.  Every access unit of the interval must be decoded into valid
 * output, else the side says why (skipped before a random access point,
 * dropped by the decoder, after the decode stopped, invalid).
 */
#ifndef SIDE_H
#define SIDE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "au.h"
#include "bsrc.h"
#include "indigest.h"
#include "profile.h"
#include "tsdemux.h"
#include "xfer.h"

/* A half-open interval [start, end) on the reference timeline, 90 kHz, 33-bit. */
struct span {
    int64_t start, end;
};

struct side_config {
    int index;                   /* XFER_REF or XFER_CAND */
    const struct profile *profile;
    struct bsrc_segment *segs;
    size_t nsegs;
    struct tsd_select select;    /* which program */
    int64_t offset;              /* side_pts = (reference_pts + offset) mod 2^33 */
    struct span video, audio;    /* each track's interval, reference timeline */
    int64_t video_boundary;      /* PTS of the access unit decoding starts at */
    int64_t video_recovery;      /* PTS from which decoded pictures are valid */
    int64_t audio_boundary;      /* start of the AAC frame decoding starts at, 1/720000 s */
    bool want_audio;             /* the reference has audio */
    /* the reference's containers' quanta (refscan.h): a candidate's track is
     * put on the reference's grid under the coarser of the two */
    int64_t ref_video_quantum, ref_audio_quantum;
    struct xfer *xfer;
    int64_t deadline_ms;         /* wall clock UTC ms to stop by (deadline_exceeded); 0: none */
    bool digest_only;            /* decode nothing: only the decoder input's digest (indigest.h) */
};

/* What the FFmpeg log said about one decoder (filled by avlog.c), and what
 * its get_format callback refused (side.c): the decoder's opaque. */
struct side_log {
    atomic_int errors;           /* messages at AV_LOG_ERROR or worse */
    atomic_int reorder_growth;   /* "Increasing reorder buffer" */
    atomic_int ref_marking;      /* of the errors: reference marking ("mmco: ...") */
    int max_width, max_height;   /* the profile's envelope (video only; 0: no limit) */
    atomic_int oversize;         /* a picture beyond it was refused before decoding */
};

struct side_track {
    bool present;                /* the selected program carries this track */
    bool codec_ok;               /* decodable by the profile's decoder */
    char codec[32];
    bool started;                /* the decode boundary was found */
    bool decode_error;           /* send/receive failed, or the log said error (not in pre-roll) */
    bool corrupt;                /* a frame flagged corrupt or concealed (not in pre-roll) */
    bool lost_packets;           /* an access unit with lost or erroneous transport packets */
    bool missing_pts;            /* a unit of the track that cannot be placed in time */
    bool dropped;                /* units of the interval the decoder never output */
    bool skipped;                /* units of the interval before the decode boundary */
    bool late;                   /* units of the interval after decoding stopped */
    bool invalid;                /* frames/samples of the interval from damaged data */
    bool params_changed;         /* reference only: left the envelope mid-stream */
    bool oversize;               /* pictures larger than the profile's max_width x max_height */
    /* audio: the first frame fed starts later than the decode boundary (by
     * more than the tolerance): the decoder lacks the history (overlap, PNS
     * noise state) the interval's samples depend on (issue 18, class 7) */
    bool history_missing;
    int64_t first_units;         /* audio: start of the first frame fed, 1/720000 s, side timeline */
    int first_blocks;            /* audio: its raw data blocks (au_aac_blocks) */
    /* audio: the frame skipped last before the boundary holds it on its own
     * block grid (an ADTS frame of several raw data blocks, the boundary at
     * one of its later blocks): this side cannot start where the other
     * does; straddle_units is that frame's start, side timeline (verify.c
     * moves both sides' boundary there when the other side has a frame
     * starting there) */
    bool straddled;
    int64_t straddle_units;
    /* the container's quantum (au.h quantum_units; the coarser of the two
     * sides') and the constant taken off every unit's time to put the track
     * on the reference's grid (less than one quantum; 0: none taken),
     * 1/720000 s */
    int64_t quantum_units, quantum_residual_units;
    bool first_digest_ok;
    uint8_t first_payload[AU_PAYLOAD_DIGEST];   /* audio: its raw data blocks (au_aac_payload_digest) */
    int64_t packets_fed, frames_out;
    int64_t in_interval;         /* frames (video) or samples (audio) handed on */
    char first_error[160];
};

struct side_result {
    bool opened;                 /* a program with a PMT was found */
    char open_error[256];
    enum tsd_selection selection;
    struct tsd_program program;  /* the selected program (number 0: none) */
    /* every program the PAT announced, in PAT order: the report names them
     * when the one a player plays is not the one compared */
    struct { int number, nvideo, naudio; bool have_pmt; } programs[TSD_MAX_PROGRAMS];
    int nprograms;
    int played_program;          /* its number, 0: none or unknown */
    bool track_set_changed;      /* a later PMT changed the program's track set */
    bool io_error;
    char io_reason[64], io_detail[256];
    bool ts_complete;
    enum ts_issue ts_issue;
    uint64_t ts_issue_offset;
    int ts_issue_pid;
    /* the first issue on a PID no decoder reads, when nothing decisive has
     * one: recorded, not decisive (issue 18, class 13) */
    enum ts_issue ts_issue_elsewhere;
    uint64_t ts_issue_elsewhere_offset;
    int ts_issue_elsewhere_pid;
    uint64_t bytes;
    bool fmp4;                   /* read as fMP4/CMAF (mp4src.h), else MPEG-TS: report "container" */
    bool aborted;                /* the exchange was aborted */
    bool internal_error;
    struct side_track video, audio;
    uint8_t input_digest[INDIGEST_LEN];  /* digest_only: every access unit of the program */
    bool input_digest_ok;        /* digest_only: taken, no unit damaged, not aborted */
};

struct side {
    struct side_config cfg;
    struct side_result res;
    struct side_log vlog, alog;
    atomic_bool cancel;          /* side_cancel: stop at the next access unit, aborted */
    pthread_t thread;
};

/* Starts the side's thread; 0 on success. */
int side_start(struct side *s, const struct side_config *cfg);
void side_join(struct side *s);
/* Asks a running side to stop; its result is then aborted (never complete). */
void side_cancel(struct side *s);

#endif
