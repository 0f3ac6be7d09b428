/* dt_side.h - what FFmpeg's command-line tools observe on one side of a case
 * (reference or candidate): programs and tracks (ffprobe), packets in demux
 * order (ffprobe), decoded frames in output order with their content hashes,
 * parameters and cleanliness (ffmpeg with showinfo/ashowinfo), whether
 * `ffmpeg -xerror` fails, and the oracle's own transport scan.
 * Internal to the oracle (dt_oracle.c). */
#ifndef DT_SIDE_H
#define DT_SIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt_case.h"
#include "dt_exec.h"

#define DT_MAX_PROGRAMS 16
#define DT_MAX_PROG_STREAMS 16

/* "no timestamp": libavformat unwraps 33-bit timestamps, so a real one can be negative */
#define DT_NOPTS INT64_MIN

struct dt_pkt {
    int64_t pts, dts; /* as ffprobe reports them (unwrapped by libavformat), DT_NOPTS: none;
                       * in 90 kHz ticks (an fMP4 track's timescale converted, dt_side.c) */
    int sub;          /* the part of the PTS below a tick, 1/720000 s (0..7; 0 for TS) */
    bool key;
};

struct dt_vframe {
    int64_t pts;        /* as the filter saw it (libavformat-unwrapped), DT_NOPTS: none */
    char md5[33];       /* MD5 of the raw frame (framemd5 of rawvideo) */
    char params[256];   /* fmt, sar, size, field order, colour properties, chroma location */
    bool clean;         /* output before any damage event of the video stream */
};

struct dt_aframe {
    int64_t pts;        /* of the packet it was decoded from, DT_NOPTS: not placed */
    int sub;            /* below a tick, 1/720000 s (from its packet: dt_pkt.sub) */
    int64_t spts;       /* as ashowinfo printed it (1/rate units), DT_NOPTS: none */
    int channels, rate, nb;
    char fmt[16];
    size_t off;         /* first float of this frame in pcm[] */
    bool clean;
};

struct dt_pstream {
    int index;          /* input stream index (ffmpeg's #0:N) */
    char type[12];      /* video, audio, data */
    char codec[32];
    unsigned pid;
    char chroma[32];
    unsigned tag;       /* the stream type the PMT announces (ffprobe's codec_tag) */
    char tag_string[16];/* fMP4: the sample entry (avc1, mp4a, encv, ...) */
    int64_t tb_num, tb_den; /* the stream's time base (fMP4: 1/timescale) */
};

struct dt_program {
    int id;
    struct dt_pstream s[DT_MAX_PROG_STREAMS];
    int ns, nv, na;     /* streams; video and audio among them */
};

struct dt_side {
    const char *label;              /* "reference" or "candidate" */
    char dir[DT_PATH_MAX];          /* scratch */
    char ts[DT_PATH_MAX];           /* the bytes decoded */
    bool mp4;                       /* fMP4/CMAF bytes (an ISO BMFF box first), not MPEG-TS:
                                     * no PIDs, programs nor transport scan (README, rule 16) */
    bool unreadable;                /* fMP4: FFmpeg finds no stream in the bytes */
    bool untrimmed;                 /* fMP4: starts before the reference, decoded from there */
    int64_t a_quantum;              /* fMP4: the audio track's start quantum, 1/720000 s
                                     * (an empty edit in the movie timescale), 0: none */
    int64_t v_quantum;              /* the same for the video track */
    int64_t vtb_num, vtb_den, atb_num, atb_den; /* the selected tracks' time bases */

    struct dt_program prog[DT_MAX_PROGRAMS];
    int nprog;
    int pat_order[DT_MAX_PROGRAMS]; /* program numbers in the first PAT's order (transport scan) */
    int npat;
    uint8_t es_type[0x2000];        /* stream_type per elementary PID, from the PMTs (0: none) */
    int vindex, aindex;             /* selected input streams, -1: none */
    unsigned vpid, apid;
    char vchroma[32];
    char vcodec[48], acodec[48];    /* the selected tracks' announced codecs (dt_side.c) */

    struct dt_pkt *vpk, *apk;       /* packets of the selected tracks, demux order */
    size_t nvpk, napk;
    struct dt_vframe *vf;
    size_t nvf;
    struct dt_aframe *af;
    size_t naf;
    float *pcm;                     /* interleaved f32 as ffmpeg wrote it */
    size_t npcm;

    bool xerror_failed;             /* `ffmpeg -xerror` exited non-zero */
    bool v_damaged, a_damaged;      /* the track has damage somewhere (-xerror failed and the
                                     * log places it in that track, or places nothing) */
    bool transport_damage;          /* found by the oracle's own scan */
    /* where it lies: the PIDs of the damaged packets (of the gaps, of the
     * faulty PES), or unplaced (a PSI, a transport error, the fMP4 boxes):
     * a difference on a track none of whose packets is damaged is not
     * the damage's doing (dt_oracle.c) */
    unsigned damaged_pid[4];
    int ndamaged_pids;
    bool damage_unplaced;
    bool silent_errors;             /* the decoder logged damage, yet -xerror passed */
    char transport_why[192];
    bool inconsistent;              /* FFmpeg's outputs disagree among themselves */
    char inconsistent_why[192];
    int64_t *vdeclared;             /* video PTS the PES headers declare, file order, mod 2^33 */
    size_t nvdeclared, vdeclared_cap;
    int64_t *adeclared;             /* the same for audio */
    size_t nadeclared, adeclared_cap;
    bool a_multiblock;              /* an ADTS frame of several raw data blocks (dt_side_scan_pes) */
    bool v_retime;                  /* FFmpeg's parser lost some of them (dt_side_scan_pes) */
    int64_t a_shift_units;          /* taken off the audio times (the container's quantum,
                                     * dt_oracle.c), 1/720000 s */
    int64_t v_shift_ticks;          /* the same for video, ticks */
    bool start_retimed;             /* candidate: no packet at the reference's first video
                                     * time, one within a frame of it (dt_oracle.c) */
};

/* Prepare the side's bytes: segs joined with invisible joins (tsedit join),
 * and scan them.  Returns 0 or -1 (an oracle error). */
int dt_side_prepare(struct dt_env *env, struct dt_side *s, const struct dt_seg *segs, size_t n);

/* ffprobe: programs and streams. */
int dt_side_probe_programs(struct dt_env *env, struct dt_side *s);

/* Select the tracks: the reference takes its first program with video; the
 * candidate the program whose audio/video track set equals the reference's.
 * Returns 0 selected, 1 no program matches (track set differs), 2 several
 * programs with different streams match (ambiguous). */
int dt_side_select(struct dt_side *s, const struct dt_side *ref);

/* PES-level integrity of the selected tracks, added to the transport scan's
 * findings (transport_damage, transport_why): sound headers and lengths, and
 * every declared PTS carried by a packet (after dt_side_probe_packets). */
void dt_side_scan_pes(struct dt_side *s);

/* Whether transport damage may lie on pid's packets: found there, or not
 * placed on any one PID. */
bool dt_side_damage_on(const struct dt_side *s, unsigned pid);

/* ffprobe: packets of the selected tracks. */
int dt_side_probe_packets(struct dt_env *env, struct dt_side *s);

/* Remove the first vskip video and askip audio packets (ffmpeg -c copy with
 * every timestamp kept), so both sides start decoding at the same packet;
 * then re-probe.  Returns 0 or -1. */
int dt_side_trim(struct dt_env *env, struct dt_side *s, size_t vskip, size_t askip);

/* The two ffmpeg decodes (content, then -xerror) and their parsing. */
int dt_side_decode(struct dt_env *env, struct dt_side *s);

void dt_side_free(struct dt_side *s);

#endif
