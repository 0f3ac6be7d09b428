/* evidence_rules.c - what a valid evidence report and row are.
 *
 * A report is accepted only when `exactav verify` could have produced it
 * (docs/evidence.md, "Rules of a valid report").  The same rules serve
 * `exactav evidence import`, every insert, and stepctl for each row it
 * reads (evidence_newest): one implementation, so a row the controller acts
 * on has passed exactly the checks an import would have made.  The first
 * broken rule is reported, naming the field.
 */
#include "evidence_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "evidence_fingerprint.h"

struct rules {
    char *err;
    size_t errlen;
};

static enum evidence_rc broken(struct rules *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum evidence_rc broken(struct rules *c, const char *field, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    evidence_seterr(c->err, c->errlen, "%s: %s", field, why);
    return EVIDENCE_E_INVALID;
}

/* A stable code: 1-64 of [a-z0-9_]. */
static bool is_code(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

static bool is_hex64(const char *s)
{
    return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* One track of the report, as read. */
struct track {
    const char *name;        /* "video" / "audio" */
    bool present;            /* audio: false when null (video-only reference) */
    enum evidence_verdict verdict;
    const char *reason;
    int64_t ref, cand, compared; /* frames or samples per channel; compared: video only */
    const json_t *first;     /* first_mismatch object, or NULL */
    bool unconfirmed;
};

static enum evidence_rc count(struct rules *c, const json_t *o, const char *track, const char *key,
                              int64_t *out)
{
    char f[64];
    const json_t *v = json_object_get(o, key);
    snprintf(f, sizeof f, "%s.%s", track, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return broken(c, f, "required (integer >= 0)");
    *out = json_integer_value(v);
    return EVIDENCE_OK;
}

static enum evidence_rc read_track(struct rules *c, const json_t *report, const char *name,
                                   struct track *t)
{
    char f[64];
    const json_t *o = json_object_get(report, name);
    memset(t, 0, sizeof *t);
    t->name = name;
    if (!strcmp(name, "audio") && json_is_null(o))
        return EVIDENCE_OK; /* the reference has no audio */
    if (!json_is_object(o))
        return broken(c, name, "required object%s", strcmp(name, "audio") ? "" : " (or null)");
    t->present = true;
    snprintf(f, sizeof f, "%s.verdict", name);
    if (!evidence_verdict_parse(json_string_value(json_object_get(o, "verdict")), &t->verdict))
        return broken(c, f, "must be MATCH, MISMATCH or UNKNOWN");
    t->reason = json_string_value(json_object_get(o, "reason"));
    snprintf(f, sizeof f, "%s.reason", name);
    if (!is_code(t->reason))
        return broken(c, f, "required (a reason code)");
    bool video = !strcmp(name, "video");
    enum evidence_rc rc;
    if ((rc = count(c, o, name, video ? "reference_frames" : "reference_samples", &t->ref)) != EVIDENCE_OK ||
        (rc = count(c, o, name, video ? "candidate_frames" : "candidate_samples", &t->cand)) != EVIDENCE_OK ||
        (video && (rc = count(c, o, name, "compared_frames", &t->compared)) != EVIDENCE_OK))
        return rc;
    const json_t *fm = json_object_get(o, "first_mismatch"), *u = json_object_get(o, "unconfirmed_differences");
    snprintf(f, sizeof f, "%s.first_mismatch", name);
    if (!json_is_null(fm) && !json_is_object(fm))
        return broken(c, f, "must be null or an object");
    t->first = json_is_object(fm) ? fm : NULL;
    snprintf(f, sizeof f, "%s.unconfirmed_differences", name);
    if (!json_is_boolean(u))
        return broken(c, f, "required (boolean)");
    t->unconfirmed = json_is_true(u);
    if (video && t->compared > (t->ref < t->cand ? t->ref : t->cand))
        return broken(c, "video.compared_frames", "%lld compared, but only %lld reference and %lld "
                      "candidate frames", (long long)t->compared, (long long)t->ref, (long long)t->cand);
    return EVIDENCE_OK;
}

/* The reason a confirmed difference of this kind is reported under. */
static const char *mismatch_reason(const struct track *t)
{
    static const struct {
        const char *kind, *video, *audio;
    } map[] = {
        {"Y", "video_pixels", NULL}, {"U", "video_pixels", NULL}, {"V", "video_pixels", NULL},
        {"samples", NULL, "audio_samples"},
        {"params", "video_params", "audio_params"},
        {"pts", "video_pts", "audio_pts"},
        {"missing", "video_missing_frames", "audio_missing_samples"},
        {"extra", "video_extra_frames", "audio_extra_samples"},
    };
    bool video = !strcmp(t->name, "video");
    const char *kind = json_string_value(json_object_get(t->first, video ? "plane" : "kind"));
    for (size_t i = 0; kind && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(kind, map[i].kind))
            return video ? map[i].video : map[i].audio;
    return NULL;
}

/* A track's verdict against its own data. */
static enum evidence_rc check_track(struct rules *c, const struct track *t)
{
    char f[64];
    if (!t->present)
        return EVIDENCE_OK;
    snprintf(f, sizeof f, "%s.first_mismatch", t->name);
    if (t->verdict == EVIDENCE_VERDICT_MISMATCH) {
        const char *want = t->first ? mismatch_reason(t) : NULL;
        if (!want)
            return broken(c, f, "a MISMATCH names its first difference (plane or kind)");
        snprintf(f, sizeof f, "%s.reason", t->name);
        if (strcmp(want, t->reason))
            return broken(c, f, "%s does not match the first difference (%s)", t->reason, want);
        return EVIDENCE_OK;
    }
    if (t->first)
        return broken(c, f, "only a MISMATCH has a first difference");
    if (t->verdict != EVIDENCE_VERDICT_MATCH)
        return EVIDENCE_OK;
    bool video = !strcmp(t->name, "video");
    snprintf(f, sizeof f, "%s.reason", t->name);
    if (strcmp(t->reason, "identical"))
        return broken(c, f, "a MATCH has reason identical, not %s", t->reason);
    snprintf(f, sizeof f, "%s.unconfirmed_differences", t->name);
    if (t->unconfirmed)
        return broken(c, f, "a MATCH has no unconfirmed difference");
    snprintf(f, sizeof f, "%s.%s", t->name, video ? "compared_frames" : "candidate_samples");
    if (t->cand != t->ref || (video && t->compared != t->ref))
        return broken(c, f, "a MATCH compares everything in the interval: %lld reference, %lld "
                      "candidate%s", (long long)t->ref, (long long)t->cand,
                      video ? (t->compared != t->ref ? ", fewer compared" : "") : "");
    return EVIDENCE_OK;
}

/* The lattice (docs/exact-av-v1.md): any MISMATCH, else any UNKNOWN, else
 * MATCH; the reason of the first track carrying it; a MATCH over nothing is
 * UNKNOWN empty_interval. */
static void combine(const struct track *v, const struct track *a, enum evidence_verdict *verdict,
                    const char **reason)
{
    static const enum evidence_verdict order[] = {EVIDENCE_VERDICT_MISMATCH,
                                                  EVIDENCE_VERDICT_UNKNOWN, EVIDENCE_VERDICT_MATCH};
    const struct track *tracks[2] = {v, a};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < 2; i++)
            if (tracks[i]->present && tracks[i]->verdict == order[k]) {
                *verdict = order[k];
                *reason = tracks[i]->reason;
                if (*verdict == EVIDENCE_VERDICT_MATCH && v->ref == 0 && (!a->present || a->ref == 0))
                    *verdict = EVIDENCE_VERDICT_UNKNOWN, *reason = "empty_interval";
                return;
            }
}

static enum evidence_rc check_profile(struct rules *c, const json_t *report)
{
    const json_t *p = json_object_get(report, "profile");
    if (!json_is_object(p))
        return broken(c, "profile", "required object");
    const char *id = json_string_value(json_object_get(p, "id"));
    const json_t *version = json_object_get(p, "version"), *doc = json_object_get(p, "document");
    const json_t *runtime = json_object_get(p, "runtime");
    const char *fp = json_string_value(json_object_get(p, "fingerprint"));
    if (!id || !*id)
        return broken(c, "profile.id", "required (non-empty string)");
    if (!json_is_integer(version) || json_integer_value(version) < 1)
        return broken(c, "profile.version", "required (integer >= 1)");
    if (!is_hex64(fp))
        return broken(c, "profile.fingerprint", "must be 64 lowercase hex digits (SHA-256)");
    if (!json_is_object(doc))
        return broken(c, "profile.document", "required (the DecodeProfile the check ran under)");
    if (!json_is_object(runtime))
        return broken(c, "profile.runtime", "required (the runtime description)");
    if (!json_equal(json_object_get(doc, "id"), json_object_get(p, "id")) ||
        !json_equal(json_object_get(doc, "version"), version))
        return broken(c, "profile.document", "is not profile %s version %lld", id,
                      (long long)json_integer_value(version));
    char diff[512], again[65];
    if (evidence_fingerprint_check_pins(doc, runtime, diff, sizeof diff) != 0)
        return broken(c, "profile.runtime", "differs from the profile's pins, where exactav "
                      "verify refuses to run: %s", diff);
    if (evidence_fingerprint(doc, runtime, again) != 0)
        return EVIDENCE_E_INTERNAL;
    if (strcmp(again, fp))
        return broken(c, "profile.fingerprint", "is not the one recomputed from profile.document "
                      "and profile.runtime (%.16s...)", again);
    return EVIDENCE_OK;
}

/* The flags of one side's track that must all be false in a MATCH. */
static enum evidence_rc check_clean(struct rules *c, const json_t *side, const char *sname,
                                    const char *tname)
{
    static const char *const flags[] = {"decoder_error", "corrupt_frames", "lost_packets",
                                        "frames_dropped", "params_changed", "missing_timestamps"};
    char f[96];
    const json_t *t = json_object_get(side, tname);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        snprintf(f, sizeof f, "%s.%s.%s", sname, tname, flags[i]);
        if (!json_is_false(json_object_get(t, flags[i])))
            return broken(c, f, "a MATCH needs a clean decode (false) on both sides");
    }
    return EVIDENCE_OK;
}

/* What a MATCH needs beyond its tracks: the interval it covers, complete,
 * clean observations on both sides and a delivery without any failure.
 * An UNKNOWN needs none of this (nothing beyond what shows it is UNKNOWN:
 * a check that never decoded, e.g. the canary's playlist_stalled, has no
 * interval and no decode flags); a MATCH always needs all of it. */
static enum evidence_rc check_match(struct rules *c, const json_t *report, bool audio)
{
    static const char *const sides[] = {"reference", "candidate"};
    char f[96];
    enum evidence_rc rc;
    const json_t *iv = json_object_get(report, "interval");
    if (!json_is_integer(json_object_get(iv, "start")) || !json_is_integer(json_object_get(iv, "end")))
        return broken(c, "interval", "a MATCH names the interval it compared (start and end)");
    for (size_t i = 0; i < 2; i++) {
        const json_t *s = json_object_get(report, sides[i]);
        snprintf(f, sizeof f, "%s.transport_complete", sides[i]);
        if (!json_is_true(json_object_get(s, "opened")) ||
            !json_is_true(json_object_get(s, "transport_complete")))
            return broken(c, f, "a MATCH needs a complete transport stream on both sides");
        if ((rc = check_clean(c, s, sides[i], "video")) != EVIDENCE_OK ||
            (audio && (rc = check_clean(c, s, sides[i], "audio")) != EVIDENCE_OK))
            return rc;
    }
    const json_t *df = json_object_get(json_object_get(report, "candidate"), "delivery_failure");
    if (df && !json_is_null(df))
        return broken(c, "candidate.delivery_failure", "a MATCH cannot have a failed delivery");
    size_t i;
    const json_t *fe;
    json_array_foreach(json_object_get(report, "fetches"), i, fe) {
        const json_t *e = json_object_get(fe, "error");
        snprintf(f, sizeof f, "fetches[%zu].error", i);
        if (e && !json_is_null(e))
            return broken(c, f, "a MATCH cannot hold a failed request");
    }
    return EVIDENCE_OK;
}

static enum evidence_rc check_shape(struct rules *c, const json_t *report)
{
    static const char *const sides[] = {"reference", "candidate"};
    for (size_t i = 0; i < 2; i++)
        if (!json_is_object(json_object_get(report, sides[i])))
            return broken(c, sides[i], "required object (what this side observed)");
    const json_t *fetches = json_object_get(report, "fetches");
    if (!json_is_array(fetches))
        return broken(c, "fetches", "required array (empty for local files)");
    size_t i;
    const json_t *fe;
    json_array_foreach(fetches, i, fe) {
        char f[48];
        snprintf(f, sizeof f, "fetches[%zu].seq", i);
        if (json_integer_value(json_object_get(fe, "seq")) != (json_int_t)i)
            return broken(c, f, "requests are numbered 0, 1, 2... in order");
    }
    return EVIDENCE_OK;
}

enum evidence_rc evidence_check_report(const json_t *report, char *err, size_t errlen)
{
    struct rules c = {err, errlen};
    struct track v, a;
    enum evidence_verdict verdict;
    enum evidence_rc rc;
    if (!json_is_object(report))
        return broken(&c, "report", "must be a JSON object");
    if (!evidence_verdict_parse(json_string_value(json_object_get(report, "verdict")), &verdict))
        return broken(&c, "verdict", "must be MATCH, MISMATCH or UNKNOWN");
    const char *reason = json_string_value(json_object_get(report, "reason"));
    if (!is_code(reason))
        return broken(&c, "reason", "required (a reason code: [a-z0-9_], at most 64)");
    /* EVIDENCE_OK is not 0 (the zero value is the failing one): compare. */
    if ((rc = check_profile(&c, report)) != EVIDENCE_OK || (rc = check_shape(&c, report)) != EVIDENCE_OK ||
        (rc = read_track(&c, report, "video", &v)) != EVIDENCE_OK ||
        (rc = read_track(&c, report, "audio", &a)) != EVIDENCE_OK ||
        (rc = check_track(&c, &v)) != EVIDENCE_OK || (rc = check_track(&c, &a)) != EVIDENCE_OK)
        return rc;
    enum evidence_verdict want = EVIDENCE_VERDICT_UNKNOWN;
    const char *want_reason = "";
    combine(&v, &a, &want, &want_reason);
    if (verdict != want)
        return broken(&c, "verdict", "%s does not follow from the tracks (video %s, audio %s): "
                      "the lattice gives %s", evidence_verdict_name(verdict),
                      evidence_verdict_name(v.verdict), a.present ? evidence_verdict_name(a.verdict) : "none",
                      evidence_verdict_name(want));
    /* A canary row whose report is the check of a segment's LL-HLS parts
     * against the parent segment itself (parts.reported "against_segment",
     * docs/canary.md): its MISMATCH is reported as parts_differ_from_segment,
     * the tracks keep the reason of their first difference. */
    const char *reported = json_string_value(json_object_get(json_object_get(report, "parts"), "reported"));
    if (verdict == EVIDENCE_VERDICT_MISMATCH && reported && !strcmp(reported, "against_segment"))
        want_reason = "parts_differ_from_segment";
    if (strcmp(reason, want_reason))
        return broken(&c, "reason", "%s is not the reason the lattice carries (%s)", reason, want_reason);
    if (verdict == EVIDENCE_VERDICT_MATCH)
        return check_match(&c, report, a.present);
    return EVIDENCE_OK;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_int(struct evidence_int a, struct evidence_int b)
{
    return a.present == b.present && (!a.present || a.value == b.value);
}

/* Every column of the row equals what the report says (the import mapping,
 * docs/evidence.md): an edited column cannot make a row say more than its
 * report. */
static enum evidence_rc check_columns(struct rules *c, const struct evidence_record *row,
                                      const struct evidence_record *rep)
{
    const struct {
        const char *column, *a, *b;
    } text[] = {
        {"id", row->id, rep->id}, {"check_kind", row->check_kind, rep->check_kind},
        {"reason", row->reason, rep->reason}, {"profile_id", row->profile_id, rep->profile_id},
        {"profile_fingerprint", row->profile_fingerprint, rep->profile_fingerprint},
        {"path_id", row->path_id, rep->path_id}, {"channel", row->channel, rep->channel},
        {"rendition", row->rendition, rep->rendition},
        {"program_version", row->program_version, rep->program_version},
        {"reference_version", row->reference_version, rep->reference_version},
        {"object", row->object, rep->object},
        {"allocation_id", row->allocation_id, rep->allocation_id},
        {"pathway", row->pathway, rep->pathway},
    };
    if (row->verdict != rep->verdict)
        return broken(c, "verdict", "the column (%s) differs from the report (%s)",
                      evidence_verdict_name(row->verdict), evidence_verdict_name(rep->verdict));
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (!same_text(text[i].a, text[i].b))
            return broken(c, text[i].column, "the column (%.64s) differs from the report (%.64s)",
                          text[i].a ? text[i].a : "NULL", text[i].b ? text[i].b : "NULL");
    if (!same_int(row->interval_start, rep->interval_start) ||
        !same_int(row->interval_end, rep->interval_end))
        return broken(c, "interval_start", "the interval columns differ from the report");
    if (row->observed_at_ms != rep->observed_at_ms || row->observed_end_ms != rep->observed_end_ms)
        return broken(c, "observed_at_ms", "the observation times differ from the report");
    if (!same_int(row->media_sequence, rep->media_sequence))
        return broken(c, "media_sequence", "the column differs from the report");
    if (!same_int(row->part_index, rep->part_index))
        return broken(c, "part_index", "the column differs from the report");
    return EVIDENCE_OK;
}

enum evidence_rc evidence_check_row(const struct evidence_record *row, const json_t *report,
                                    char *err, size_t errlen)
{
    struct rules c = {err, errlen};
    struct evidence_report_buf buf = {0};
    struct evidence_record rep = {0};
    enum evidence_rc rc = evidence_check_report(report, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = evidence_record_from_report(report, &buf, &rep, err, errlen);
    if (rc == EVIDENCE_OK)
        rc = check_columns(&c, row, &rep);
    evidence_report_buf_free(&buf);
    return rc;
}
