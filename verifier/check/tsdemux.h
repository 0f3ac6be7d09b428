/* tsdemux.h - programs, tracks and PES packets of an MPEG-TS stream.
 *
 * Reads the packets the integrity scanner hands on (bsrc -> tscheck ->
 * here): PAT and PMT sections (CRC-checked), the programs they announce,
 * and the PES packets of the selected program's video and audio track,
 * reassembled per PID and handed on whole with their PTS/DTS.
 *
 * Program selection waits until every program the PAT lists has its PMT
 * (packets that arrive before are held, bounded), then picks the program
 * whose audio/video track set equals the wanted one (the reference's), or
 * the one forced by number.  Several equal candidates are ambiguous, never
 * a guess.  The one that is chosen must also be the program a player plays:
 * the first in the PAT with audio or video (hls.js reads the PAT's first
 * program only, FFmpeg's default selection shows it too); otherwise what
 * would be compared is not what viewers see (TSD_SEL_NOT_PLAYED, issue 18
 * class 4; RFC 8216 3.2 wants one program per segment anyway).  A later PMT version of the selected program may move its
 * tracks to other PIDs: the tracks follow it.
 *
 * Segment joins are invisible here: the scanner restarts continuity
 * counters at a join, and a PES continues across it until it ends.  A PES
 * is damaged when packets of it, or just before it, were lost (a continuity
 * gap: whole PES may have gone, and what follows decodes from a hole), carried
 * transport_error_indicator, or when it is cut short or has no PES header,
 * or when payload follows its declared PES_packet_length before the PID's
 * next PES (bytes of no PES; a PES is handed on at the next one's start).
 * Scrambling flags are not trusted: scrambled data fails to decode.
 */
#ifndef TSDEMUX_H
#define TSDEMUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tscheck.h"

/* What the demuxer holds.  A stream announcing more (a PAT with more
 * programs, a PMT with more elementary streams) cannot be read as a whole:
 * too_many is set, never a silent drop (the video may be among the rest). */
#define TSD_MAX_PROGRAMS 64
#define TSD_MAX_STREAMS 32       /* elementary streams per program */
#define TSD_HOLD_PACKETS 8192    /* held before the selection (1.5 MB) */
#define TSD_MAX_PES (16 << 20)   /* a larger PES is damage */
#define TSD_NO_TS (-1)

enum tsd_kind {
    TSD_KIND_OTHER = 0,          /* neither audio, video nor known metadata */
    TSD_KIND_VIDEO,
    TSD_KIND_AUDIO,
    TSD_KIND_METADATA,           /* ID3, SCTE-35, KLV, private data */
};

enum tsd_track { TSD_VIDEO = 0, TSD_AUDIO = 1, TSD_TRACKS = 2 };

struct tsd_stream {
    int pid;
    int stream_type;
    enum tsd_kind kind;
    const char *codec;           /* from the stream type, e.g. "h264", "aac", "scte35" */
};

struct tsd_program {
    int number;
    int pmt_pid;
    bool have_pmt;
    int version;
    struct tsd_stream streams[TSD_MAX_STREAMS];
    int nstreams;
    int nvideo, naudio;
};

/* How a program is chosen. */
struct tsd_select {
    int program;                 /* > 0: this program_number */
    bool reference;              /* the reference: the one program with audio or video */
    int want_video, want_audio;  /* otherwise: the wanted track set */
};

/* The outcome; the failing value is zero. */
enum tsd_selection {
    TSD_SEL_NONE = 0,            /* no program with a PMT was found */
    TSD_SEL_OK,                  /* selected; its track set is the wanted one */
    TSD_SEL_TRACK_SET,           /* selected (the only candidate); its track set differs */
    TSD_SEL_AMBIGUOUS,           /* several programs fit equally */
    TSD_SEL_NOT_FOUND,           /* the forced program is not in the stream */
    TSD_SEL_NOT_PLAYED,          /* the one program with the wanted set is not the one a player
                                    plays (the PAT's first with audio or video): nothing compared */
};

/* One whole PES packet of a track; valid during the callback only. */
struct tsd_pes {
    enum tsd_track track;
    int stream_type;
    const char *codec;           /* what the PMT announces */
    const uint8_t *payload;      /* after the PES header */
    size_t len;
    int64_t pts, dts;            /* 33-bit, or TSD_NO_TS */
    bool damaged;
};

typedef void (*tsd_pes_fn)(void *opaque, const struct tsd_pes *pes);

struct tsd_section {
    int pid;
    uint8_t buf[1024 + 3 + 184];
    size_t len;
    bool active;                 /* a section is being assembled */
};

struct tsd_pesbuf {
    int pid;                     /* -1: no track */
    int stream_type;
    const char *codec;
    uint8_t *buf;
    size_t len, cap;
    bool active, damaged;
    bool after_gap;              /* packets were lost since the last PES began: the next is damaged */
    size_t declared;             /* 6 + PES_packet_length, 0 when unbounded */
    unsigned packets;            /* TS packets with payload in it so far */
};

struct tsdemux {
    struct tsd_select sel;
    tsd_pes_fn fn;
    void *opaque;
    /* PSI */
    struct tsd_section psi[TSD_MAX_PROGRAMS + 1];
    int npsi;
    bool have_pat;
    int pat_version;
    struct tsd_program programs[TSD_MAX_PROGRAMS];
    int nprograms;
    /* selection */
    bool decided;
    enum tsd_selection selection;
    int selected;                /* index into programs, -1 when none */
    int played;                  /* the program a player plays (first in the PAT with audio or
                                    video, its PMT seen), -1 when none or unknown */
    bool track_set_changed;      /* a later PMT version changed the track set */
    bool too_many;               /* more programs or streams announced than held */
    uint8_t *held;               /* packets waiting for the selection */
    unsigned char *held_done;    /* 1: already consumed (a PMT) */
    size_t nheld;
    bool held_overflow;
    /* the selected program's tracks */
    struct tsd_pesbuf pes[TSD_TRACKS];
    uint64_t pes_count[TSD_TRACKS];
    bool lost_before_start[TSD_TRACKS];   /* a gap with no PES open: the next one is damaged */
};

/* 0, or -1 without memory. */
int tsdemux_init(struct tsdemux *d, const struct tsd_select *sel, tsd_pes_fn fn, void *opaque);
void tsdemux_free(struct tsdemux *d);

/* The packet callback for tscheck_feed_packets / bsrc_run. */
void tsdemux_packet(void *opaque, const uint8_t *pkt, const struct ts_header *h, unsigned flags);

/* End of stream: decides if still pending, hands on the PES still open
 * (damaged if it declared a longer length, or when cut: the stream ended
 * without being read to its end). */
void tsdemux_finish(struct tsdemux *d, bool cut);

/* The PIDs whose integrity decides the observation (issue 18, class 13):
 * the PAT, every PMT the PAT names (a damaged one may hide the program a
 * player plays) and the selected tracks; at most TSD_MAX_DECISIVE, written
 * to pids, their number returned.  Damage on any other PID is recorded, not
 * decisive: no decoder reads it. */
#define TSD_MAX_DECISIVE (1 + TSD_MAX_PROGRAMS + TSD_TRACKS)
size_t tsdemux_decisive_pids(const struct tsdemux *d, int pids[TSD_MAX_DECISIVE]);

/* The selected program, or NULL. */
const struct tsd_program *tsdemux_program(const struct tsdemux *d);

/* Stable names. */
const char *tsd_selection_code(enum tsd_selection s);
const char *tsd_kind_name(enum tsd_kind k);

/* The kind and codec name an elementary stream type announces (13818-1
 * table 2-34 and common registrations); descriptors refine type 0x06. */
enum tsd_kind tsd_classify(int stream_type, const uint8_t *desc, size_t desc_len, const char **codec);

#endif
