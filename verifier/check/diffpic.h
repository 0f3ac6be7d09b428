/* diffpic.h - pictures of a MISMATCH, for people who would rather look.
 *
 * For a video MISMATCH: PNGs of the first differing frame as the reference
 * and the candidate decoded it, and a difference map (black where the two
 * are equal, red where any of Y, U, V differ, brighter the larger the
 * difference).  For an audio MISMATCH: a plot of both sides' samples and
 * their difference around the first differing sample (gnuplot, run as a
 * child process with a bounded time).  The PNGs are encoded by FFmpeg's
 * own PNG encoder; YUV is converted to RGB here (BT.601 or BT.709 by the
 * frame's matrix, limited or full range), no new dependency.
 *
 * File names: DIR/<stem>-video-reference.png, -video-candidate.png,
 * -video-difference.png, -audio-difference.png, where the stem is made by
 * the caller from nothing untrusted (an evidence id).  DIR is created when
 * missing (with its parents, mode 0755).  A file is never replaced: an
 * existing name gets "-2", "-3", ... up to "-99" before the extension, and
 * beyond that nothing is written (the error says so).
 */
#ifndef DIFFPIC_H
#define DIFFPIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <libavutil/frame.h>

#define DIFFPIC_AUDIO_WINDOW 1024    /* samples of one channel in an audio plot */
#define DIFFPIC_PLOT_TIMEOUT_MS 10000

/* The samples of one channel around the first audio difference. */
struct diffpic_audio {
    int n;                       /* samples kept, 0: none */
    int channel;                 /* 0 = L, 1 = R */
    int sample_rate;
    int64_t first_index;         /* per-channel sample index of ref[0], from the interval start */
    int64_t diff_index;          /* the first differing sample */
    float ref[DIFFPIC_AUDIO_WINDOW], cand[DIFFPIC_AUDIO_WINDOW];
};

/* Creates dir and its parents when missing; 0, or -1 with err set. */
int diffpic_make_dir(const char *dir, char *err, size_t errlen);

/* Creates DIR/<stem><suffix>.png exclusively (see the naming rule above):
 * the open file descriptor, its path in path; -1 with err set. */
int diffpic_create(const char *dir, const char *stem, const char *suffix, char *path, size_t pathlen,
                   char *err, size_t errlen);

/* Writes the frame pair's PNGs; sets "video_reference", "video_candidate"
 * and (same size and a planar 8-bit YUV format on both sides)
 * "video_difference" in files to the paths written.  0, or -1 with err. */
int diffpic_video(const char *dir, const char *stem, const AVFrame *ref, const AVFrame *cand, json_t *files,
                  char *err, size_t errlen);

/* Plots the audio window; sets "audio_plot" in files.  0, or -1 with err. */
int diffpic_audio(const char *dir, const char *stem, const struct diffpic_audio *a, json_t *files, char *err,
                  size_t errlen);

/* The RGB24 picture of a planar 8-bit YUV frame (malloc'd, 3 * w * h
 * bytes), or NULL when the format is not one (or out of memory). */
uint8_t *diffpic_rgb(const AVFrame *f);

/* The RGB24 difference map of two frames of the same size and format, or NULL. */
uint8_t *diffpic_difference(const AVFrame *a, const AVFrame *b);

/* Encodes RGB24 pixels as PNG into fd (which it closes); 0 or -1. */
int diffpic_png(int fd, const uint8_t *rgb, int width, int height);

#endif
