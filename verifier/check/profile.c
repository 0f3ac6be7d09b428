/* profile.c - DecodeProfile loading, runtime check and fingerprint. */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/cpu.h>
#include <libswresample/swresample.h>

#include "evidence_fingerprint.h"
#include "util.h"

extern const char exactav_embedded_profile[];
extern const size_t exactav_embedded_profile_len;

/* The runtime pins and the fingerprint are evidence/fingerprint's: the
 * evidence store recomputes the fingerprint from a report the same way. */
#define RUNTIME_PINS evidence_fingerprint_pins

static int fail(char *err, size_t errlen, const char *fmt, const char *field)
{
    snprintf(err, errlen, fmt, field);
    return -1;
}

static int get_string(json_t *obj, const char *key, char *out, size_t outlen, const char *where,
                      char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v) || json_string_length(v) >= outlen)
        return fail(err, errlen, "profile: %s must be a (short) string", where);
    snprintf(out, outlen, "%s", json_string_value(v));
    return 0;
}

/* Flags are named, so that a profile says what it pins in words. */
static int parse_flags(json_t *arr, int *out, const char *where, char *err, size_t errlen)
{
    static const struct { const char *name; int flag; int flags2; } known[] = {
        {"bitexact", AV_CODEC_FLAG_BITEXACT, 0},
        {"unaligned", AV_CODEC_FLAG_UNALIGNED, 0},
        {"skip_manual", 0, AV_CODEC_FLAG2_SKIP_MANUAL},
    };
    *out = 0;
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return fail(err, errlen, "profile: %s must be an array of flag names", where);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        const char *name = json_string_value(v);
        size_t k;
        for (k = 0; k < sizeof known / sizeof known[0]; k++)
            if (name && !strcmp(name, known[k].name))
                break;
        if (k == sizeof known / sizeof known[0])
            return fail(err, errlen, "profile: unknown flag in %s", where);
        bool is_flags2 = strstr(where, "flags2") != NULL;
        if (is_flags2 != (known[k].flags2 != 0))
            return fail(err, errlen, "profile: flag in the wrong list in %s", where);
        *out |= is_flags2 ? known[k].flags2 : known[k].flag;
    }
    return 0;
}

/* The largest picture either side may decode: work and memory are bounded
 * by it, and v1's envelope ends at 1920x1080. */
#define V1_MAX_WIDTH 1920
#define V1_MAX_HEIGHT 1080

static int parse_resolution(json_t *env, struct profile *p, char *err, size_t errlen)
{
    json_t *w = json_object_get(env, "max_width"), *h = json_object_get(env, "max_height");
    if (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > V1_MAX_WIDTH)
        return fail(err, errlen, "profile: %s must be an integer 1..1920 in Exact-AV v1", "video.envelope.max_width");
    if (!json_is_integer(h) || json_integer_value(h) < 1 || json_integer_value(h) > V1_MAX_HEIGHT)
        return fail(err, errlen, "profile: %s must be an integer 1..1080 in Exact-AV v1", "video.envelope.max_height");
    p->max_width = (int)json_integer_value(w);
    p->max_height = (int)json_integer_value(h);
    return 0;
}

static int parse_video(json_t *v, struct profile *p, char *err, size_t errlen)
{
    if (!json_is_object(v))
        return fail(err, errlen, "profile: %s must be an object", "video");
    if (get_string(v, "decoder", p->video_decoder, sizeof p->video_decoder, "video.decoder", err, errlen))
        return -1;
    p->video_threads = (int)json_integer_value(json_object_get(v, "thread_count"));
    if (parse_flags(json_object_get(v, "flags"), &p->video_flags, "video.flags", err, errlen))
        return -1;
    const char *strict = json_string_value(json_object_get(v, "strict_std_compliance"));
    p->strict_std_compliance = strict && !strcmp(strict, "strict") ? FF_COMPLIANCE_STRICT : FF_COMPLIANCE_NORMAL;
    const char *output = json_string_value(json_object_get(v, "output"));
    /* v1 compares YUV420p8 planes; the comparison cannot honour anything else. */
    if (strcmp(p->video_decoder, "h264"))
        return fail(err, errlen, "profile: %s must be \"h264\" in Exact-AV v1", "video.decoder");
    if (!output || strcmp(output, "yuv420p"))
        return fail(err, errlen, "profile: %s must be \"yuv420p\" in Exact-AV v1", "video.output");
    if (!(p->video_flags & AV_CODEC_FLAG_BITEXACT) || !(p->video_flags & AV_CODEC_FLAG_UNALIGNED))
        return fail(err, errlen, "profile: %s must include bitexact and unaligned", "video.flags");
    return parse_resolution(json_object_get(v, "envelope"), p, err, errlen);
}

static int parse_audio(json_t *a, struct profile *p, char *err, size_t errlen)
{
    if (!json_is_object(a))
        return fail(err, errlen, "profile: %s must be an object", "audio");
    if (get_string(a, "decoder", p->audio_decoder, sizeof p->audio_decoder, "audio.decoder", err, errlen))
        return -1;
    p->audio_threads = (int)json_integer_value(json_object_get(a, "thread_count"));
    if (parse_flags(json_object_get(a, "flags"), &p->audio_flags, "audio.flags", err, errlen) ||
        parse_flags(json_object_get(a, "flags2"), &p->audio_flags2, "audio.flags2", err, errlen))
        return -1;
    json_t *env = json_object_get(a, "envelope");
    p->audio_sample_rate = (int)json_integer_value(json_object_get(env, "sample_rate"));
    p->audio_channels = (int)json_integer_value(json_object_get(env, "channels"));
    p->audio_optional = json_is_true(json_object_get(env, "optional"));
    const char *output = json_string_value(json_object_get(a, "output"));
    /* The float decoder outputs f32 planes that are interleaved by copying;
     * aac_fixed (S32P) would need conversion arithmetic, which v1 forbids. */
    if (strcmp(p->audio_decoder, "aac"))
        return fail(err, errlen, "profile: %s must be \"aac\" in Exact-AV v1", "audio.decoder");
    if (!output || strcmp(output, "f32le-interleaved"))
        return fail(err, errlen, "profile: %s must be \"f32le-interleaved\" in Exact-AV v1", "audio.output");
    if (p->audio_sample_rate != 48000 || p->audio_channels != 2)
        return fail(err, errlen, "profile: %s must be 48000 Hz, 2 channels in Exact-AV v1", "audio.envelope");
    return 0;
}

static int parse_profile(struct profile *p, char *err, size_t errlen)
{
    json_t *doc = p->doc;
    if (!json_is_object(doc))
        return fail(err, errlen, "profile: %s is not a JSON object", "document");
    if (get_string(doc, "id", p->id, sizeof p->id, "id", err, errlen))
        return -1;
    json_t *ver = json_object_get(doc, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) < 1)
        return fail(err, errlen, "profile: %s must be a positive integer", "version");
    p->version = json_integer_value(ver);
    if (parse_video(json_object_get(doc, "video"), p, err, errlen) ||
        parse_audio(json_object_get(doc, "audio"), p, err, errlen))
        return -1;
    /* Frame threading hides corrupt reference frames (FACTS.md): v1 decodes
     * each side single-threaded. */
    if (p->video_threads != 1 || p->audio_threads != 1)
        return fail(err, errlen, "profile: %s must be 1 in Exact-AV v1", "thread_count");
    json_t *rt = json_object_get(doc, "runtime");
    for (size_t i = 0; i < EVIDENCE_FINGERPRINT_N_PINS; i++)
        if (!json_is_string(json_object_get(rt, RUNTIME_PINS[i])))
            return fail(err, errlen, "profile: runtime.%s is missing", RUNTIME_PINS[i]);
    return 0;
}

int profile_load(const char *path, struct profile *p, char *err, size_t errlen)
{
    json_error_t jerr;
    memset(p, 0, sizeof *p);
    if (path) {
        p->doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
        snprintf(p->source, sizeof p->source, "%s", path);
    } else {
        p->doc = json_loadb(exactav_embedded_profile, exactav_embedded_profile_len,
                            JSON_REJECT_DUPLICATES, &jerr);
        snprintf(p->source, sizeof p->source, "embedded");
    }
    if (!p->doc) {
        snprintf(err, errlen, "profile %s: %s (line %d)", p->source, jerr.text, jerr.line);
        return -1;
    }
    if (parse_profile(p, err, errlen)) {
        profile_free(p);
        return -1;
    }
    return 0;
}

void profile_free(struct profile *p)
{
    json_decref(p->doc);
    p->doc = NULL;
}

static json_t *version_string(unsigned v)
{
    return json_sprintf("%u.%u.%u", v >> 16, (v >> 8) & 255, v & 255);
}

static json_t *cpu_flag_names(int flags)
{
    static const struct { int flag; const char *name; } known[] = {
#if defined(__x86_64__) || defined(__i386__)
        {AV_CPU_FLAG_MMX, "mmx"}, {AV_CPU_FLAG_MMXEXT, "mmxext"}, {AV_CPU_FLAG_SSE, "sse"},
        {AV_CPU_FLAG_SSE2, "sse2"}, {AV_CPU_FLAG_SSE3, "sse3"}, {AV_CPU_FLAG_SSSE3, "ssse3"},
        {AV_CPU_FLAG_SSE4, "sse4.1"}, {AV_CPU_FLAG_SSE42, "sse4.2"}, {AV_CPU_FLAG_AVX, "avx"},
        {AV_CPU_FLAG_AVX2, "avx2"}, {AV_CPU_FLAG_FMA3, "fma3"}, {AV_CPU_FLAG_FMA4, "fma4"},
        {AV_CPU_FLAG_XOP, "xop"}, {AV_CPU_FLAG_AVX512, "avx512"}, {AV_CPU_FLAG_AVX512ICL, "avx512icl"},
        {AV_CPU_FLAG_AESNI, "aesni"}, {AV_CPU_FLAG_BMI1, "bmi1"}, {AV_CPU_FLAG_BMI2, "bmi2"},
        {AV_CPU_FLAG_SSE2SLOW, "sse2slow"}, {AV_CPU_FLAG_SSE3SLOW, "sse3slow"},
        {AV_CPU_FLAG_AVXSLOW, "avxslow"}, {AV_CPU_FLAG_ATOM, "atom"}, {AV_CPU_FLAG_CMOV, "cmov"},
#elif defined(__aarch64__)
        {AV_CPU_FLAG_ARMV8, "armv8"}, {AV_CPU_FLAG_NEON, "neon"}, {AV_CPU_FLAG_VFP, "vfp"},
#endif
    };
    json_t *names = json_array();
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (flags & known[i].flag)
            json_array_append_new(names, json_string(known[i].name));
    return names;
}

json_t *profile_runtime_description(void)
{
    char cfg_sha[65];
    const char *cfg = avcodec_configuration();
    util_sha256_hex(cfg, strlen(cfg), cfg_sha);
    struct utsname u;
    const char *arch = uname(&u) == 0 ? u.machine : "unknown";
    int cpu = av_get_cpu_flags();
    return json_pack("{s:o, s:o, s:o, s:o, s:s, s:s, s:s, s:o, s:o}",
                     "libavcodec", version_string(avcodec_version()),
                     "libavformat", version_string(avformat_version()),
                     "libavutil", version_string(avutil_version()),
                     "libswresample", version_string(swresample_version()),
                     "ffmpeg_version", av_version_info(),
                     "ffmpeg_configuration_sha256", cfg_sha,
                     "arch", arch,
                     "cpu_flags", json_sprintf("0x%x", (unsigned)cpu),
                     "cpu_flag_names", cpu_flag_names(cpu));
}

int profile_check_runtime(const struct profile *p, const json_t *runtime, char *err, size_t errlen)
{
    return evidence_fingerprint_check_pins(p->doc, runtime, err, errlen);
}

void profile_fingerprint(const struct profile *p, const json_t *runtime, char out[65])
{
    evidence_fingerprint(p->doc, runtime, out);
}

json_t *profile_pin_to_runtime(const struct profile *p, const json_t *runtime)
{
    json_t *copy = json_deep_copy(p->doc);
    json_t *pins = json_object();
    for (size_t i = 0; i < EVIDENCE_FINGERPRINT_N_PINS; i++)
        json_object_set(pins, RUNTIME_PINS[i], json_object_get(runtime, RUNTIME_PINS[i]));
    json_object_set_new(copy, "runtime", pins);
    json_object_set_new(copy, "version", json_integer(p->version + 1));
    return copy;
}
