/* dt_gen.h - the building blocks of the recipes (dt_recipe.c): seeded
 * choices, encodes from FFmpeg's synthetic sources (cached per run, since
 * many cases share them), muxing, packet tables, segmentation and playlists.
 * Every step runs through dt_run(), so it lands in the case's recipe log. */
#ifndef DT_GEN_H
#define DT_GEN_H

#include <stdint.h>

#include "dt_case.h"
#include "dt_exec.h"

struct dt_gen {
    struct dt_env *env;
    struct dt_case *c;
    uint64_t rng;       /* xorshift64* state, from the case's seed */
};

void dt_gen_init(struct dt_gen *g, struct dt_env *env, struct dt_case *c);
uint64_t dt_rand(struct dt_gen *g);
/* Uniform in [lo, hi]. */
int64_t dt_rand_in(struct dt_gen *g, int64_t lo, int64_t hi);
/* One of n strings. */
const char *dt_pick(struct dt_gen *g, const char *const *v, int n);

/* path of NAME inside the case directory (into out). */
const char *dt_gen_path(const struct dt_gen *g, const char *name, char *out, size_t size);

/* The encoder settings of a video elementary stream (libx264, constant QP). */
struct dt_video_spec {
    int w, h, fps, secs;
    char src[32];        /* testsrc2 | mandelbrot | smptebars */
    int keyint, bframes, pyramid, slices, qp;
    int open_gop, intra_refresh, interlaced;
    char edit[256];      /* filters applied to the source before encoding ("" none) */
    char x264_extra[64]; /* appended to -x264-params ("" none) */
};

/* An AAC-LC 48 kHz elementary stream (ADTS) from a synthetic source. */
struct dt_audio_spec {
    int secs;
    char src[16];        /* tones | noise */
    int seed;            /* noise seed */
    int channels;        /* 2, or 1 for a mono variant */
    char edit[256];      /* filters applied before encoding ("" none) */
    int lead_ms;         /* muxed this much before the video (-itsoffset), as AAC priming does */
};

void dt_video_default(struct dt_video_spec *v);
void dt_audio_default(struct dt_audio_spec *a);

/* Encode (or reuse the run's cached encode); out gets the path. 0 or -1. */
int dt_gen_video(struct dt_gen *g, const struct dt_video_spec *v, char *out, size_t size);
int dt_gen_audio(struct dt_gen *g, const struct dt_audio_spec *a, char *out, size_t size);

/* Mux video + audio (+ a second audio when a2) into MPEG-TS with extra muxer
 * options (NULL-terminated list, may be NULL); the audio starts lead_ms
 * before the video.  0 or -1. */
int dt_gen_mux(struct dt_gen *g, const char *v, const char *a, const char *a2, int lead_ms,
               const char *const *opts, const char *out);
/* Remux a TS keeping every PTS/DTS (-copyts -mpegts_copyts 1), with options. */
int dt_gen_remux(struct dt_gen *g, const char *in, const char *const *opts, const char *out);
/* Run tsedit / tsrepack / ffmpeg with the given arguments (NULL-terminated). */
int dt_gen_tool(struct dt_gen *g, const char *tool, ...);

/* One PES start of a TS file, from `tsedit list`. */
struct dt_pes {
    size_t packet;      /* file packet index of the PES's first packet */
    unsigned pid;
    int64_t pts, dts;   /* -1: absent */
    int rai;            /* random_access_indicator */
    uint64_t pes_index; /* index among the PES of its PID */
    size_t npackets;    /* packets of this PES (to the next start on the PID) */
};

/* PES starts of file ts; *n set.  Caller frees.  NULL on failure. */
struct dt_pes *dt_gen_pes_list(struct dt_gen *g, const char *ts, size_t *n, size_t *npackets);

/* Segment ts at the video key frames (every `every`-th one) with tsedit split
 * MODE (bytes, restart or continue); the segments' paths and durations go to
 * segs.  Returns the number of segments, or -1. */
int dt_gen_segments(struct dt_gen *g, const char *ts, unsigned vpid, int every, const char *mode,
                    const char *prefix, struct dt_seg *segs, size_t max);

/* Write an HLS media playlist for segs (URIs relative to its folder; byte
 * ranges where a seg is ranged); first media sequence number msn. */
int dt_gen_playlist(struct dt_gen *g, const char *path, const struct dt_seg *segs, size_t n,
                    uint64_t msn, bool endlist);

#endif
