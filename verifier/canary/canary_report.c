/* canary_report.c - the canary's report fields (see canary_report.h). */
#include "canary_report.h"

#include <string.h>

#include "binding.h"
#include "util.h"

static json_t *str_or_null(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}

json_t *canary_report_context(const struct canary_target *t)
{
    json_t *c = json_pack("{s:s, s:s, s:s, s:s}", "path_id", t->path_id, "channel", t->channel, "rendition",
                          t->rendition, "program_version", t->program_version);
    /* an allocation target's check (issue 17): the allocation it followed */
    if (c && t->allocation_id && t->pathway &&
        (json_object_set_new(c, "allocation_id", json_string(t->allocation_id)) ||
         json_object_set_new(c, "pathway", json_string(t->pathway)))) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static json_t *context(const struct canary_target *t)
{
    json_t *c = canary_report_context(t);
    if (c && json_object_set_new(c, "reference_version", json_null())) {
        json_decref(c);
        return NULL;
    }
    return c;
}

json_t *canary_report_unknown(const struct canary_run_info *run, const struct canary_unknown *u)
{
    const struct profile *p = run->profile;
    char at[32];
    util_rfc3339(u->observed_at_ms, at);
    json_t *cand = json_pack("{s:o, s:{s:s, s:s}}", "object", str_or_null(u->candidate_object), "delivery_failure",
                             "reason", u->reason, "detail", u->detail ? u->detail : "");
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:I, s:s, s:s, s:O, s:O}, s:o, s:n, s:I, s:s, s:I, s:I,"
        " s:{s:s, s:s, s:i, s:i, s:i, s:n, s:b}, s:n, s:{s:o}, s:o, s:o, s:i, s:o, s:{s:s, s:b}}",
        "tool", "exactav " EXACTAV_VERSION, "check_kind", "exact-av-v1", "evidence_id", u->evidence_id,
        "verdict", "UNKNOWN", "reason", u->reason,
        "profile", "id", p->id, "version", (json_int_t)p->version, "fingerprint", run->fingerprint,
        "source", p->source, "runtime", run->runtime,
        /* as verify's report: the store recomputes the fingerprint from it */
        "document", p->doc,
        "context", context(u->target), "interval", "time_offset", (json_int_t)u->target->time_offset,
        "observed_at", at, "observed_at_ms", (json_int_t)u->observed_at_ms,
        "observed_end_ms", (json_int_t)(u->observed_end_ms >= u->observed_at_ms ? u->observed_end_ms : u->observed_at_ms),
        "video", "verdict", "UNKNOWN", "reason", u->reason, "reference_frames", 0, "candidate_frames", 0,
        "compared_frames", 0, "first_mismatch", "unconfirmed_differences", 0,
        "audio", "reference", "object", str_or_null(u->reference_object), "candidate", cand,
        "fetches", u->fetches ? json_copy(u->fetches) : json_array(), "elapsed_ms", 0,
        "media_sequence", u->have_seq ? json_integer((json_int_t)u->seq) : json_null(),
        "canary", "target", u->target->key, "decoded", 0);
    return r;
}

int canary_reference_version(const json_t *report, const struct canary_target *t, const char *profile_id,
                             const struct canary_segment *ref, char out[65])
{
    const json_t *iv = json_object_get(report, "interval");
    const json_t *start = json_object_get(iv, "start"), *end = json_object_get(iv, "end");
    const json_t *vb = json_object_get(iv, "video_boundary"), *ab = json_object_get(iv, "audio_boundary");
    if (!json_is_integer(start) || !json_is_integer(end) || !json_is_integer(vb) || !ref->ok || !ref->name)
        return -1;
    bool audio = json_is_object(json_object_get(report, "audio"));
    struct binding_spec spec = {
        .channel = t->channel, .program_version = t->program_version, .rendition = t->rendition,
        .profile_id = profile_id, .start = json_integer_value(start), .end = json_integer_value(end),
        .video_boundary = json_integer_value(vb), .has_audio = audio && json_is_integer(ab),
        .audio_boundary = json_integer_value(ab), .have_media_sequence = true,
        .seq_first = (int64_t)ref->media_sequence, .seq_last = (int64_t)ref->media_sequence,
    };
    json_t *files = json_pack("[{s:s, s:s, s:I}]", "path", ref->name, "sha256", ref->sha256, "bytes",
                              (json_int_t)ref->len);
    json_t *doc = files ? binding_document(&spec, files) : NULL;
    const char *v = json_string_value(json_object_get(doc, "reference_version"));
    if (v)
        memcpy(out, v, 65);
    json_decref(doc);
    return v ? 0 : -1;
}

int canary_report_annotate(json_t *report, const struct canary_run_info *run, const struct canary_target *t,
                           const struct canary_segment *ref)
{
    char version[65];
    json_t *ctx = json_object_get(report, "context");
    if (json_is_object(ctx) && canary_reference_version(report, t, run->profile->id, ref, version) == 0)
        json_object_set_new(ctx, "reference_version", json_string(version));
    int rc = json_object_set_new(report, "media_sequence", json_integer((json_int_t)ref->media_sequence));
    rc |= json_object_set_new(report, "canary",
                              json_pack("{s:s, s:b, s:s}", "target", t->key, "decoded", 1, "reference_segment",
                                        ref->object ? ref->object : ""));
    return rc ? -1 : 0;
}
