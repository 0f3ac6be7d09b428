/* report.c - JSON and human writers (see report.h). */
#include "report.h"

#include <string.h>

#include "evidence_text.h"

/* Every string of the report is printed escaped: a path id, a reason or an
 * object may come from outside (evidence_text.h).  A few slots, so that one
 * fprintf can show several values. */
struct shown {
    char slot[6][512];
    int next;
};

static const char *str(struct shown *sh, const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    char *buf = sh->slot[sh->next++ % 6];
    return evidence_text_escape(s, false, buf, sizeof sh->slot[0]);
}

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

int report_write_json(FILE *out, const json_t *report)
{
    if (json_dumpf(report, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
        return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

/* The cause of a video_pts MISMATCH, when it is a constant offset. */
static void write_constant_offset(FILE *out, const json_t *co)
{
    if (!json_is_object(co))
        return;
    long long ticks = num(co, "ticks");
    fprintf(out, "          cause: every frame paired by time (%lld) is %lld ticks (%.3f ms) %s the reference's and\n"
                 "          none could be compared: a constant time offset (e.g. another mux delay), not a\n"
                 "          content difference.\n", num(co, "frames"), ticks < 0 ? -ticks : ticks,
            (double)(ticks < 0 ? -ticks : ticks) / 90.0, ticks < 0 ? "before" : "after");
    if (json_is_integer(json_object_get(co, "suggested_time_offset")))
        fprintf(out, "          If that offset is declared, check again with --time-offset %lld (never applied\n"
                     "          here).\n", num(co, "suggested_time_offset"));
    else
        fputs("          Frames were also missing or extra, so the offset is ambiguous by whole frames: no\n"
              "          --time-offset is suggested.\n", out);
}

static void write_video(FILE *out, const json_t *v)
{
    struct shown sh = {.next = 0};
    fprintf(out, "video:    %s (%s): %lld reference frames, %lld candidate frames, %lld compared\n",
            str(&sh, v, "verdict"), str(&sh, v, "reason"), num(v, "reference_frames"), num(v, "candidate_frames"),
            num(v, "compared_frames"));
    const json_t *fm = json_object_get(v, "first_mismatch");
    if (json_is_object(fm)) {
        fprintf(out, "          first difference: frame %lld (pts %lld), %s", num(fm, "index"), num(fm, "pts"),
                str(&sh, fm, "plane"));
        if (json_is_integer(json_object_get(fm, "x")))
            fprintf(out, " at x=%lld y=%lld", num(fm, "x"), num(fm, "y"));
        fputc('\n', out);
    }
    write_constant_offset(out, json_object_get(v, "constant_offset"));
}

static void write_audio(FILE *out, const json_t *a)
{
    struct shown sh = {.next = 0};
    if (!json_is_object(a)) {
        fprintf(out, "audio:    (reference has no audio)\n");
        return;
    }
    fprintf(out, "audio:    %s (%s): %lld reference samples, %lld candidate samples per channel\n",
            str(&sh, a, "verdict"), str(&sh, a, "reason"), num(a, "reference_samples"), num(a, "candidate_samples"));
    const json_t *fm = json_object_get(a, "first_mismatch");
    if (json_is_object(fm)) {
        fprintf(out, "          first difference: sample %lld (pts %lld), %s", num(fm, "sample_index"),
                num(fm, "pts"), str(&sh, fm, "kind"));
        if (json_is_integer(json_object_get(fm, "channel")))
            fprintf(out, " on channel %s", num(fm, "channel") ? "R" : "L");
        fputc('\n', out);
    }
}

/* The candidate's program and streams, when they are not simply the reference's. */
static void write_streams(FILE *out, struct shown *sh, const json_t *cand)
{
    const char *sel = str(sh, cand, "program_selection");
    const json_t *streams = json_object_get(cand, "streams");
    if (!strcmp(sel, "ok") && json_array_size(streams) <= 2)
        return;
    if (json_is_integer(json_object_get(cand, "program")))
        fprintf(out, "program:  candidate program %lld (%s):", num(cand, "program"), sel);
    else
        fprintf(out, "program:  no candidate program compared (%s)", sel);
    size_t i;
    const json_t *s;
    json_array_foreach(streams, i, s)
        fprintf(out, " %s/%s pid %lld%s", str(sh, s, "kind"), str(sh, s, "codec"), num(s, "pid"),
                json_is_true(json_object_get(s, "compared")) ? "" : " (not compared)");
    json_array_foreach(json_object_get(cand, "programs"), i, s)
        fprintf(out, "%s program %lld: %lld video, %lld audio%s", i ? ";" : "", num(s, "number"), num(s, "video"),
                num(s, "audio"), json_is_true(json_object_get(s, "played")) ? " (the one a player plays)" : "");
    fputc('\n', out);
}

/* What the delivery said beyond the verdict: redirects to other hosts. */
static void write_delivery(FILE *out, const json_t *cand)
{
    const json_t *hosts = json_object_get(cand, "redirect_hosts");
    if (!json_array_size(hosts))
        return;
    fputs("redirect: followed to other host(s):", out);
    size_t i;
    const json_t *h;
    json_array_foreach(hosts, i, h) {
        fputc(' ', out);
        evidence_text_fputs(out, json_string_value(h));
    }
    fputs(" (--allow-redirect-host restricts)\n", out);
}

/* The pictures --diff-dir wrote, one per line, and why one is missing. */
static void write_diff_images(FILE *out, const json_t *files)
{
    static const char *const keys[] = {"video_reference", "video_candidate", "video_difference", "audio_plot",
                                       "error"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = json_string_value(json_object_get(files, keys[i]));
        if (!v)
            continue;
        fprintf(out, "picture:  %s: ", keys[i]);
        evidence_text_fputs(out, v);
        fputc('\n', out);
    }
}

int report_write_human(FILE *out, const json_t *report)
{
    struct shown sh = {.next = 0};
    const json_t *profile = json_object_get(report, "profile");
    const json_t *interval = json_object_get(report, "interval");
    fprintf(out, "verdict:  %s (%s)\n", str(&sh, report, "verdict"), str(&sh, report, "reason"));
    fprintf(out, "profile:  %s v%lld, fingerprint %.16s...\n", str(&sh, profile, "id"), num(profile, "version"),
            str(&sh, profile, "fingerprint"));
    fprintf(out, "interval: [%lld, %lld) ticks, time offset %lld, observed %s\n", num(interval, "start"),
            num(interval, "end"), num(report, "time_offset"), str(&sh, report, "observed_at"));
    write_video(out, json_object_get(report, "video"));
    write_audio(out, json_object_get(report, "audio"));
    if (json_is_string(json_object_get(report, "compare")) &&
        !strcmp(json_string_value(json_object_get(report, "compare")), "decoder-input"))
        fputs("compare:  decoder-input: byte-identical decoder input, the candidate was not decoded\n", out);
    write_streams(out, &sh, json_object_get(report, "candidate"));
    write_delivery(out, json_object_get(report, "candidate"));
    write_diff_images(out, json_object_get(report, "diff_images"));
    const json_t *sig = json_object_get(report, "signature");
    if (json_is_object(sig))
        fprintf(out, "signed:   %s, key %s\n", str(&sh, sig, "alg"), str(&sh, sig, "key_id"));
    /* "evidence: ID" is printed by verify once the row is committed. */
    return ferror(out) ? -1 : 0;
}
