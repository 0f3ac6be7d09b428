/* au.h - access units of the selected program's tracks, in decode order.
 *
 * The layer between the transport and the decoders: PES packets from
 * tsdemux.h are split into access units by FFmpeg's own parsers (h264,
 * aac), so a packager's PES packing never shows above this line.  Each
 * access unit carries the time the stream declares for it:
 *   - video: the PTS/DTS of the PES in which it is the first access unit
 *     to begin (ISO/IEC 13818-1 2.4.3.7), else none; but when only non-VCL
 *     NAL units of it lie in the PES before the one holding its first slice
 *     and that one declares a time, that time: FFmpeg's parser begins a
 *     unit at an SEI, SPS or PPS after the slices (H.264 7.4.1.2.3), yet a
 *     packager that writes side data after the picture puts it in the
 *     picture's own PES, and the next PES, with the next picture, is the
 *     one that declares the next picture's time (issue 18, class 12);
 *   - audio: one ADTS frame; timed by its PES like video, else exactly by
 *     continuation from the previous frame (its sample count at the
 *     header's rate), in 1/720000 s units (a 90 kHz tick is 8, a 48 kHz
 *     sample 15).
 * The codec is the one the PMT announces, as a player's demuxer chooses
 * its decoder: AAC is stream type 0x0F (ADTS frames announced as 0x11 LATM,
 * MPEG audio or AC-3 are not AAC: issue 18, class 3).  An
 * access unit holding bytes of a damaged PES is marked damaged, and so is
 * one that swallows a whole PES declaring a time of its own: a PES with a
 * PTS holds the start of an access unit (ISO/IEC 13818-1 2.4.3.7), so a
 * unit went missing inside it (a broken start code or sync word).  A PES
 * that repeats the unit's own PTS is packing, not a lost unit.
 *
 * Every access unit passes through one callback before anything decodes
 * it: the place for a digest of the decoder input.
 */
#ifndef AU_H
#define AU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libavcodec/avcodec.h>

#include "h264nal.h"
#include "tsdemux.h"

#define AU_NO_TS TSD_NO_TS
#define AU_UNITS_PER_TICK 8
#define AU_UNITS_PER_SECOND 720000
#define AU_UNITS_MOD ((int64_t)AU_UNITS_PER_TICK << 33)
#define AU_PES_RING 16

enum au_codec {
    AU_CODEC_NONE = 0,           /* not known yet, or no track */
    AU_CODEC_H264,
    AU_CODEC_AAC,                /* AAC in ADTS frames */
    AU_CODEC_OTHER,              /* anything the profile does not decode */
};

struct au {
    enum tsd_track track;
    const uint8_t *data;         /* valid during the callback only */
    size_t size;
    int64_t pts, dts;            /* 33-bit, or AU_NO_TS */
    bool damaged;
    uint64_t index;              /* per track, from 0 in stream order */
    struct h264_au_info h264;    /* video */
    bool timed;                  /* audio: units is known */
    int64_t units;               /* audio: first sample, 1/720000 s mod AU_UNITS_MOD */
    int samples;                 /* audio: per channel, at the header's rate: 1024 per raw data block */
    int sample_rate;             /* audio: of the ADTS header */
    int64_t quantum_units;       /* the container knows the track's start only to this, 1/720000 s
                                  * (an fMP4 empty edit in a coarser movie timescale); 0: exact */
};

/* Returns false to stop the stream (nothing more is read). */
typedef bool (*au_fn)(void *opaque, const struct au *au);

struct au_track {
    enum au_codec codec;
    const char *codec_name;      /* "h264", "aac", or what the stream type names */
    AVCodecParserContext *parser;
    AVCodecContext *pctx;
    struct { int64_t pts, dts; bool damaged; uint64_t start; } pes[AU_PES_RING];
    uint64_t fed, emitted;       /* bytes given to the parser, and in units it returned */
    int64_t serial;              /* PES packets fed so far */
    int64_t au_start_serial;     /* the PES in which the next access unit begins, at the latest */
    bool have_next;
    int64_t next_units;
    uint64_t count;
    struct h264_ps ps;           /* video: the latest SPS/PPS seen */
};

struct au_demux {
    struct tsdemux td;
    struct au_track t[TSD_TRACKS];
    au_fn fn;
    void *opaque;
    struct bsrc *src;            /* told to stop reading when fn says so */
    bool stopped;
    bool fmp4;                   /* the source was read as fMP4 (mp4src.h) */
};

struct bsrc;

/* 0, or -1 without memory. */
int au_demux_init(struct au_demux *a, const struct tsd_select *sel, au_fn fn, void *opaque, struct bsrc *src);
void au_demux_free(struct au_demux *a);

/* Reads the whole source through the scanner and the demuxer, calling fn
 * for every access unit; then flushes.  Returns bsrc_run's result. */
int au_demux_run(struct au_demux *a);

/* The transport was observed whole where it matters: no issue on the PAT,
 * the PMTs or the selected tracks, none untied to a PID (tsdemux.h,
 * tscheck.h; before the selection every PID counts). */
bool au_transport_complete(const struct au_demux *a);

/* The first issue that decides it (TS_ISSUE_NONE: none), and where. */
enum ts_issue au_transport_issue(const struct au_demux *a, uint64_t *offset, int *pid);

#define AU_PAYLOAD_DIGEST 16

/* A digest of an AAC access unit's raw data blocks: the ADTS frame without
 * its header, which another packager may write otherwise (CRC, buffer
 * fullness) and which is not content.  What tells whether two packagers'
 * frames at one time are the same frame (issue 18, class 7).  False
 * without memory (out is then zero). */
bool au_aac_payload_digest(const struct au *au, uint8_t out[AU_PAYLOAD_DIGEST]);

/* Those raw data blocks as one run of bytes (within au->data); false for
 * an ADTS frame of several blocks with CRCs, whose blocks are interleaved
 * with their positions and CRCs (then the digest is false as well). */
bool au_aac_payload(const struct au *au, const uint8_t **data, size_t *size);

/* The raw data blocks of an AAC access unit (ADTS: 1 to 4, 1024 samples
 * each; one in MP4). */
int au_aac_blocks(const struct au *au);

/* 1/720000 s per sample at this rate (15 at 48 kHz); 0 when not whole. */
int au_units_per_sample(int sample_rate);

#endif
