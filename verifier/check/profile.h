/* profile.h - the DecodeProfile: everything that can change decoded output.
 *
 * A profile pins the decoders, their settings, the output formats, the
 * stream envelope and the exact FFmpeg runtime (library versions and a
 * digest of the build configuration).  The fingerprint is a SHA-256 over the
 * canonical profile plus the runtime description (which adds the CPU
 * architecture and the CPU-feature flags in effect); it goes into every
 * report.  Verification refuses to run on a runtime the profile does not pin.
 */
#ifndef PROFILE_H
#define PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct profile {
    json_t *doc;                 /* the profile as loaded (owned) */
    char id[64];
    long long version;
    char video_decoder[32];
    char audio_decoder[32];
    int video_threads;
    int audio_threads;
    int video_flags;             /* AV_CODEC_FLAG_* */
    int audio_flags;
    int audio_flags2;            /* AV_CODEC_FLAG2_* */
    int strict_std_compliance;
    int max_width, max_height;   /* video.envelope: largest picture decoded, either side */
    int audio_sample_rate;
    int audio_channels;
    bool audio_optional;
    char source[256];            /* file name or "embedded" */
};

/* Loads FILE, or the profile embedded at build time when path is NULL.
 * Returns 0, or -1 with a message naming the offending field. */
int profile_load(const char *path, struct profile *p, char *err, size_t errlen);
void profile_free(struct profile *p);

/* The description of this process's runtime: library versions, FFmpeg
 * version and configuration digest, CPU architecture and feature flags.
 * Caller owns the result. */
json_t *profile_runtime_description(void);

/* 0 when the runtime is the one the profile pins; otherwise -1 and err lists
 * every difference ("libavcodec: profile 59.37.100, runtime 60.3.100"). */
int profile_check_runtime(const struct profile *p, const json_t *runtime, char *err, size_t errlen);

/* SHA-256 (hex) over the canonical profile and the runtime description. */
void profile_fingerprint(const struct profile *p, const json_t *runtime, char out[65]);

/* A copy of the profile pinned to the current runtime, version + 1: the
 * documented way to make a profile for another runtime. Caller owns it. */
json_t *profile_pin_to_runtime(const struct profile *p, const json_t *runtime);

#endif
