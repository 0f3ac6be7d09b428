/* verify.c - one Exact-AV v1 check (see verify.h). */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "diffpic.h"
#include "evidence_fingerprint.h"
#include "exitcodes.h"
#include "refscan.h"
#include "side.h"
#include "ts33.h"
#include "tsdemux.h"
#include "util.h"
#include "verdict.h"
#include "xfer.h"

/* Ring sizes: a few decoded pictures, and about ten seconds of AAC frames
 * (audio items are small; a deep audio ring absorbs interleaving skew). */
#define VIDEO_RING 6
#define AUDIO_RING 512

struct run {
    const struct verify_request *rq;
    struct refscan ref;
    struct xfer x;
    struct side sides[2];
    struct vcmp v;
    struct acmp a;
    bool skew;
    json_t *runtime;
    char fingerprint[65];
    const char *compare;         /* "full" or "decoder-input": how the verdict was reached */
    bool early;                  /* the candidate's access-unit pass runs, started before the
                                  * reference scan (start_candidate_early) */
    const char *ref_decode;      /* how the reference's decode is known: "decoded" in this run,
                                  * "remembered" (the memo), "stored" (the decode store) */
    json_t *ref_stored;          /* "stored": the report's reference side of that decode */
    bool boundary_moved;         /* decoded again from a common audio boundary */
    int64_t moved_from_units;    /* the reference's own audio boundary then */
};

/* ---- the comparer loop ---- */

static bool producers_stuck(const struct xfer *x)
{
    for (int s = 0; s < 2; s++) {
        const struct ring *r = x->blocked_on[s];
        if (!x->producer_done[s] && !(r && r->count == r->cap))
            return false;
    }
    return true;
}

static void show_progress(const struct run *r, int64_t *last_ms)
{
    int64_t now = util_now_ms();
    if (!r->rq->progress || now - *last_ms < 500)
        return;
    *last_ms = now;
    fprintf(stderr, "\rexactav: %lld frames, %lld samples compared",
            (long long)r->v.compared_frames, (long long)r->a.ref_samples);
}

static void compare_streams(struct run *r)
{
    struct xfer *x = &r->x;
    int64_t last_ms = util_now_ms();
    pthread_mutex_lock(&x->mu);
    for (;;) {
        bool p = vcmp_step(&r->v, &x->video[0], &x->video[1]);
        p |= acmp_step(&r->a, &x->audio[0], &x->audio[1]);
        if (p)
            pthread_cond_broadcast(&x->cv);
        if ((r->v.done && r->a.done) || x->aborted)
            break;
        if (!p && producers_stuck(x)) {
            r->skew = true;
            x->aborted = true;
            pthread_cond_broadcast(&x->cv);
            break;
        }
        if (!p)
            pthread_cond_wait(&x->cv, &x->mu);
        show_progress(r, &last_ms);
    }
    pthread_mutex_unlock(&x->mu);
    if (r->rq->progress && isatty(STDERR_FILENO))
        fprintf(stderr, "\r%60s\r", "");
}

/* ---- assessing each track ---- */

static bool side_observation_complete(const struct side_result *s)
{
    return s->opened && (s->selection == TSD_SEL_OK || s->selection == TSD_SEL_TRACK_SET) && !s->io_error &&
           s->ts_complete && !s->aborted && !s->internal_error;
}

static bool track_clean(const struct side_track *t)
{
    return !t->decode_error && !t->corrupt && !t->lost_packets && !t->dropped && !t->missing_pts &&
           !t->params_changed && !t->skipped && !t->late && !t->invalid && !t->oversize;
}

/* The first reason, in a fixed order, why one side's track is not a
 * complete and valid observation; NULL when it is. */
static const char *side_problem(const struct side_result *s, const struct side_track *t)
{
    if (!s->opened && !s->io_error && s->ts_issue >= TS_ISSUE_MP4_TRUNCATED_BOX)
        return tscheck_issue_code(s->ts_issue);   /* an MP4 that could not be opened says why */
    if (!s->opened)
        return s->io_error ? (s->io_reason[0] ? s->io_reason : "io_error") : "not_mpegts";
    if (s->selection == TSD_SEL_AMBIGUOUS || s->selection == TSD_SEL_NOT_FOUND ||
        s->selection == TSD_SEL_NOT_PLAYED)
        return tsd_selection_code(s->selection);
    if (s->io_error)
        return s->io_reason[0] ? s->io_reason : "io_error";
    if (!s->ts_complete)
        return tscheck_issue_code(s->ts_issue);
    if (t->oversize)             /* before the decoder error the refusal causes */
        return "out_of_envelope";
    if (t->lost_packets)         /* lost packets are a transport issue, reported above */
        return "corrupt_pes";
    if (t->skipped)
        return "no_random_access_before_interval";
    if (t->decode_error)
        return "decoder_error";
    if (t->corrupt)
        return "corrupt_frame";
    if (t->dropped)
        return "frames_dropped";
    if (t->late)
        return "access_unit_out_of_order";
    if (t->missing_pts)
        return "missing_timestamp";
    if (t->params_changed)
        return "params_changed";
    if (t->invalid)
        return "corrupt_frame";
    if (s->aborted)
        return "aborted";
    if (s->internal_error)
        return "internal_error";
    return NULL;
}

static const char *reference_reason(const char *problem)
{
    static const struct { const char *code, *ref; } map[] = {
        {"io_error", "reference_io_error"}, {"continuity_gap", "reference_continuity_gap"},
        {"corrupt_pes", "reference_corrupt_pes"},
        {"decoder_error", "reference_decoder_error"}, {"corrupt_frame", "reference_corrupt_frame"},
        {"frames_dropped", "reference_frames_dropped"}, {"missing_timestamp", "reference_missing_timestamp"},
        {"params_changed", "reference_out_of_profile"}, {"out_of_envelope", "reference_out_of_profile"},
        {"access_unit_out_of_order", "reference_access_unit_out_of_order"},
        {"deadline_exceeded", "deadline_exceeded"},
        /* the reference itself cannot be decoded there: its own name */
        {"no_random_access_before_interval", "no_random_access_before_interval"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(problem, map[i].code))
            return map[i].ref;
    return "reference_invalid";
}

static const char *video_mismatch_reason(const char *plane)
{
    if (!strcmp(plane, "params")) return "video_params";
    if (!strcmp(plane, "pts")) return "video_pts";
    if (!strcmp(plane, "missing")) return "video_missing_frames";
    if (!strcmp(plane, "extra")) return "video_extra_frames";
    return "video_pixels";
}

static const char *audio_mismatch_reason(const char *kind)
{
    if (!strcmp(kind, "params")) return "audio_params";
    if (!strcmp(kind, "pts")) return "audio_pts";
    if (!strcmp(kind, "missing")) return "audio_missing_samples";
    if (!strcmp(kind, "extra")) return "audio_extra_samples";
    return "audio_samples";
}

/* UNKNOWN reasons common to both tracks, candidate first. */
static const char *unknown_reason(const struct run *r, bool video)
{
    const struct side_result *ref = &r->sides[0].res, *cand = &r->sides[1].res;
    if (r->rq->candidate_failure)
        return r->rq->candidate_failure;
    if (r->skew)    /* the sides stopped because the exchange was aborted */
        return "interleave_skew";
    const char *p = side_problem(cand, video ? &cand->video : &cand->audio);
    if (p)
        return strcmp(p, "out_of_envelope") ? p : "candidate_out_of_envelope";
    p = side_problem(ref, video ? &ref->video : &ref->audio);
    if (p)
        return reference_reason(p);
    return NULL;
}

static bool track_complete(const struct run *r, bool video)
{
    const struct side_result *ref = &r->sides[0].res, *cand = &r->sides[1].res;
    return side_observation_complete(ref) && side_observation_complete(cand) && !r->skew &&
           !r->rq->candidate_failure &&
           track_clean(video ? &ref->video : &ref->audio) && track_clean(video ? &cand->video : &cand->audio);
}

/* Missing or extra frames and samples are only confirmed over a complete
 * observation of the whole stream: a cut inside a video PES is invisible to
 * the transport check but shows in the video decode, and then the "missing"
 * audio at the end is just as unobserved. */
static bool observation_complete(const struct run *r)
{
    return track_complete(r, true) && (!r->ref.has_audio || track_complete(r, false));
}

/* The candidate's selected program carries another audio/video track set
 * than the reference (a track missing, or one more), as observed: not when
 * its reading was cut short (more programs or streams than the demuxer
 * holds, the deadline, a read error), where a track may be unseen. */
static bool track_set_differs(const struct run *r)
{
    const struct side_result *cand = &r->sides[1].res;
    return (cand->selection == TSD_SEL_TRACK_SET || (cand->selection == TSD_SEL_OK && cand->track_set_changed)) &&
           !r->rq->candidate_failure && !cand->io_error;
}

static struct track_verdict assess_video(struct run *r)
{
    const struct side_result *cand = &r->sides[1].res;
    bool complete = track_complete(r, true);
    vcmp_finish(&r->v, observation_complete(r));
    if (track_set_differs(r) && !cand->video.present) {
        r->v.confirmed = (struct video_diff){.set = true, .index = 0, .pts = r->ref.video.start,
                                             .plane = "missing", .x = -1, .y = -1};
        return (struct track_verdict){VERDICT_MISMATCH, "track_set"};
    }
    /* A candidate whose video is not H.264 was transcoded: the stream
     * parameters differ over a complete observation. */
    if (complete && cand->video.present && !cand->video.codec_ok && !r->v.confirmed.set)
        r->v.confirmed = (struct video_diff){.set = true, .index = 0, .pts = r->ref.video.start,
                                             .plane = "params", .param = "codec", .x = -1, .y = -1};
    /* A close-delimited body cut short looks like a shorter candidate: its
     * missing frames are not confirmed absent. */
    if (r->v.confirmed.set && r->rq->candidate_length_unproven && !strcmp(r->v.confirmed.plane, "missing"))
        return (struct track_verdict){VERDICT_UNKNOWN, "length_unproven"};
    if (r->v.confirmed.set)
        return (struct track_verdict){VERDICT_MISMATCH, video_mismatch_reason(r->v.confirmed.plane)};
    const char *why = unknown_reason(r, true);
    if (why || !complete)
        return (struct track_verdict){VERDICT_UNKNOWN, why ? why : "incomplete_observation"};
    if (r->v.unconfirmed)
        return (struct track_verdict){VERDICT_UNKNOWN,
                                      observation_complete(r) ? "unconfirmed_difference" : "incomplete_observation"};
    return (struct track_verdict){VERDICT_MATCH, "identical"};
}

/* b - a on the 2^33-tick timeline in 1/720000 s, nearest way round. */
static int64_t units_between(int64_t a, int64_t b)
{
    int64_t d = ((b - a) % AU_UNITS_MOD + AU_UNITS_MOD) % AU_UNITS_MOD;
    return d >= AU_UNITS_MOD / 2 ? d - AU_UNITS_MOD : d;
}

/* Whether the candidate's first frame holds the raw data blocks of the
 * reference's held frame i on: the same frame, or (a candidate ADTS frame
 * of k blocks against the reference's frames of one) the k frames from i,
 * one after the other, as one run. */
static bool same_blocks(const struct refscan *ref, int i, const struct side_track *t)
{
    const struct refscan_aframe *f = &ref->audio_window[i];
    int k = t->first_blocks;
    if (!t->first_digest_ok)
        return false;
    if (k == f->blocks)
        return f->digest_ok && !memcmp(f->payload, t->first_payload, AU_PAYLOAD_DIGEST);
    if (k < 2 || k - 2 >= REFSCAN_CAT || i + k > ref->audio_window_len)
        return false;
    for (int j = i; j < i + k; j++) {
        const struct refscan_aframe *g = &ref->audio_window[j];
        if (g->blocks != 1)
            return false;
        if (j > i && llabs(units_between(ref->audio_window[j - 1].units, g->units) -
                           1024 * (int64_t)au_units_per_sample(ref->sample_rate)) > XFER_TOLERANCE_UNITS)
            return false;
    }
    const struct refscan_aframe *last = &ref->audio_window[i + k - 1];
    return last->cat_ok[k - 2] && !memcmp(last->cat[k - 2], t->first_payload, AU_PAYLOAD_DIGEST);
}

/* Whether decoder history can explain a candidate whose audio starts
 * later than the reference's decode boundary: only when its first frame is
 * the reference's own frame at that time, raw data blocks byte for byte
 * (another packager's cut of the same stream).  A first frame off the
 * reference's frame grid, or another frame on it (audio shifted by half a
 * frame or a whole one: differential edit_shift_audio), is a timing or
 * content difference, judged as such.  A first frame past the reference
 * frames held (REFSCAN_AUDIO_WINDOW) cannot be told apart: history it
 * stays, UNKNOWN, never MATCH. */
static bool history_explains(const struct run *r)
{
    const struct side_track *t = &r->sides[1].res.audio;
    const struct refscan *ref = &r->ref;
    int64_t cand = ((t->first_units - ts33_norm(r->rq->offset) * AU_UNITS_PER_TICK) % AU_UNITS_MOD +
                    AU_UNITS_MOD) % AU_UNITS_MOD;
    for (int i = ref->audio_window_first; i < ref->audio_window_len; i++) {
        const struct refscan_aframe *f = &ref->audio_window[i];
        int64_t d = units_between(f->units, cand);
        if (d < -XFER_TOLERANCE_UNITS)
            return false;            /* between two held frames: off the grid */
        if (d <= XFER_TOLERANCE_UNITS)
            return same_blocks(ref, i, t);
    }
    return ref->audio_window_full || ref->audio_window_len == 0;
}

static struct track_verdict assess_audio(struct run *r)
{
    const struct side_result *cand = &r->sides[1].res;
    bool complete = track_complete(r, false);
    acmp_finish(&r->a, observation_complete(r));
    if (track_set_differs(r) && !cand->audio.present) {
        r->a.confirmed = (struct audio_diff){.set = true, .sample_index = 0, .channel = -1,
                                             .pts = r->ref.audio.start, .kind = "missing"};
        return (struct track_verdict){VERDICT_MISMATCH, "track_set"};
    }
    if (complete && cand->audio.present && !cand->audio.codec_ok && !r->a.confirmed.set)
        r->a.confirmed = (struct audio_diff){.set = true, .sample_index = 0, .channel = -1,
                                             .pts = r->ref.audio.start, .kind = "params"};
    /* The candidate's decoder started later than the reference's (issue 18,
     * class 7): its first frames decode cold, the PNS noise state differs
     * for good, so a sample difference (or its absence) says nothing, and
     * the samples before its start may be content (lost) or another
     * packager's cut (in the previous segment).  Never MATCH, never
     * MISMATCH for history alone; a different sample rate or channel count
     * is not history and stays MISMATCH. */
    if (cand->audio.history_missing && history_explains(r) &&
        !(r->a.confirmed.set && !strcmp(r->a.confirmed.kind, "params"))) {
        r->a.confirmed.set = r->a.gap.set = false;
        return (struct track_verdict){VERDICT_UNKNOWN, "audio_history_unavailable"};
    }
    /* The candidate's audio ends less than the reference video's reorder
     * delay (the largest PTS - DTS) plus one AAC frame before the
     * reference's: one packager cut its segment at the next IDR's DTS
     * (FFmpeg), the other's at its PTS (hlssink2), and the frames between
     * lie in the candidate's next segment or are lost; which, a segment
     * cannot say (issue 18, class 7).  Only for missing samples at the end
     * and nothing else confirmed. */
    if (r->a.gap.set && !r->a.confirmed.set && !strcmp(r->a.gap.kind, "missing") && r->a.cand_ended &&
        r->a.gap.sample_index == r->a.cand_end_index && !r->rq->candidate_length_unproven &&
        (r->a.ref_samples - r->a.cand_end_index - 1024) * au_units_per_sample(r->ref.sample_rate) <=
            r->ref.video_delay * AU_UNITS_PER_TICK) {
        r->a.gap.set = false;
        return (struct track_verdict){VERDICT_UNKNOWN, "audio_segment_end_cut"};
    }
    /* The first confirmed difference in sample order is reported. */
    struct audio_diff *first = &r->a.confirmed;
    if (r->a.gap.set && (!first->set || r->a.gap.sample_index < first->sample_index))
        first = &r->a.gap;
    if (first != &r->a.confirmed)
        r->a.confirmed = *first;
    if (r->a.confirmed.set && r->rq->candidate_length_unproven && !strcmp(r->a.confirmed.kind, "missing"))
        return (struct track_verdict){VERDICT_UNKNOWN, "length_unproven"};
    if (r->a.confirmed.set)
        return (struct track_verdict){VERDICT_MISMATCH, audio_mismatch_reason(r->a.confirmed.kind)};
    const char *why = unknown_reason(r, false);
    if (why || !complete)
        return (struct track_verdict){VERDICT_UNKNOWN, why ? why : "incomplete_observation"};
    if (r->a.unconfirmed)
        return (struct track_verdict){VERDICT_UNKNOWN,
                                      observation_complete(r) ? "unconfirmed_difference" : "incomplete_observation"};
    return (struct track_verdict){VERDICT_MATCH, "identical"};
}

/* ---- the report ---- */

/* The cause of a timing MISMATCH (video_pts, or missing / extra frames)
 * where no frame could be compared and every frame paired by time differs
 * from the reference's by the same ticks: a constant time offset (e.g.
 * another mux delay), not a content difference.  The offset that would
 * declare it is suggested only when it is not ambiguous by whole frames
 * (the first frames paired, less than a frame apart); it is never applied,
 * and never searched.  NULL when that is not the case. */
static json_t *constant_offset_json(const struct run *r, struct track_verdict tv)
{
    const struct vcmp *v = &r->v;
    if (tv.verdict != VERDICT_MISMATCH || v->compared_frames != 0 || v->timing_pairs < 2 || v->timing_varies ||
        (strcmp(tv.reason, "video_pts") && strcmp(tv.reason, "video_missing_frames") &&
         strcmp(tv.reason, "video_extra_frames")))
        return NULL;
    int64_t suggested = ts33_add(r->rq->offset, v->timing_delta);
    if (suggested >= TS33_MOD / 2)
        suggested -= TS33_MOD;   /* the nearer of the two equivalent offsets */
    int64_t mag = v->timing_delta < 0 ? -v->timing_delta : v->timing_delta;
    /* unambiguous: the first frames paired, less than a frame apart */
    bool sure = v->unpaired_first == 0 && v->ref_step > 0 && mag < v->ref_step;
    return json_pack("{s:I, s:I, s:o}", "ticks", (json_int_t)v->timing_delta, "frames", (json_int_t)v->timing_pairs,
                     "suggested_time_offset", sure ? json_integer((json_int_t)suggested) : json_null());
}

/* What the candidate's times of one track were put on the reference's
 * grid by (side.c quantum_aligned, video_quantum_aligned;
 * docs/exact-av-v1.md "the container's quantum"). */
static json_t *quantum_json(const struct side_track *t, bool video)
{
    char detail[400];
    snprintf(detail, sizeof detail,
             "the candidate's or the reference's container knows the %s track's start only to %lld/720000 s "
             "(an fMP4 empty edit in a coarser movie timescale); every %s time of the candidate was moved "
             "by %lld/720000 s onto the reference's %s, less than that quantum",
             video ? "video" : "audio", (long long)t->quantum_units, video ? "picture" : "audio frame",
             (long long)-t->quantum_residual_units, video ? "boundary picture" : "frame grid");
    return json_pack("{s:I, s:I, s:s}", "quantum_units", (json_int_t)t->quantum_units, "shift_units",
                     (json_int_t)-t->quantum_residual_units, "detail", detail);
}

static json_t *video_json(const struct run *r, struct track_verdict tv)
{
    const struct video_diff *d = &r->v.confirmed;
    json_t *fm = d->set ? json_pack("{s:I, s:I, s:s, s:o, s:o, s:o}", "index", (json_int_t)d->index,
                                    "pts", (json_int_t)d->pts, "plane", d->plane,
                                    "x", d->x >= 0 ? json_integer(d->x) : json_null(),
                                    "y", d->y >= 0 ? json_integer(d->y) : json_null(),
                                    "param", d->param ? json_string(d->param) : json_null())
                        : json_null();
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:b, s:{s:i, s:i}}",
                          "verdict", verdict_name(tv.verdict), "reason", tv.reason,
                          "reference_frames", (json_int_t)r->v.ref_frames,
                          "candidate_frames", (json_int_t)r->v.cand_frames,
                          "compared_frames", (json_int_t)r->v.compared_frames,
                          "first_mismatch", fm, "unconfirmed_differences", r->v.unconfirmed,
                          "reference_size", "width", r->ref.width, "height", r->ref.height);
    const struct side_track *vt = &r->sides[1].res.video;
    if (o && vt->quantum_residual_units) /* only where it was taken */
        json_object_set_new(o, "container_quantum", quantum_json(vt, true));
    json_t *co = constant_offset_json(r, tv);
    if (o && co)
        json_object_set_new(o, "constant_offset", co);
    else
        json_decref(co);
    return o;
}

/* Where the two audio decoders started, on the reference timeline (90 kHz,
 * floored), and what would let them start at the same frame: only in a
 * report whose audio is audio_history_unavailable. */
static json_t *history_json(const struct run *r)
{
    const struct side_track *t = &r->sides[1].res.audio;
    int64_t ref_units = r->ref.audio_boundary;
    int64_t cand_units = ((t->first_units - ts33_norm(r->rq->offset) * AU_UNITS_PER_TICK) % AU_UNITS_MOD +
                          AU_UNITS_MOD) % AU_UNITS_MOD;
    int64_t rb = ref_units / AU_UNITS_PER_TICK, cf = cand_units / AU_UNITS_PER_TICK;
    char detail[640];
    if (t->straddled) {
        int64_t sf = ((t->straddle_units - ts33_norm(r->rq->offset) * AU_UNITS_PER_TICK) % AU_UNITS_MOD +
                      AU_UNITS_MOD) % AU_UNITS_MOD / AU_UNITS_PER_TICK;
        snprintf(detail, sizeof detail,
                 "the reference's audio decoding starts at the AAC frame of pts %lld, which the candidate carries "
                 "inside an ADTS frame of several raw data blocks starting at pts %lld, where the reference has "
                 "no frame: neither decoder can start where the other does, the candidate's first whole frame "
                 "after it is at pts %lld (reference timeline); decode from the previous segment on both sides "
                 "with this interval (not offered by verify yet: a binding takes no --interval)",
                 (long long)rb, (long long)sf, (long long)cf);
        return json_pack("{s:I, s:I, s:s}", "reference_decode_start_pts", (json_int_t)rb,
                         "candidate_first_frame_pts", (json_int_t)cf, "detail", detail);
    }
    snprintf(detail, sizeof detail,
             "the reference's audio decoding starts at the AAC frame of pts %lld (the one before the frame "
             "holding the interval's start), the candidate's first AAC frame at or after it is at pts %lld "
             "(reference timeline): the candidate lacks the frames before it (another packager's segment "
             "cut puts them in the previous segment, or they are lost), so its decoder has no history there; "
             "decode from the previous segment on both sides with this interval so that both decoders start "
             "at the same frame (not offered by verify yet: a binding takes no --interval)",
             (long long)rb, (long long)cf);
    return json_pack("{s:I, s:I, s:s}", "reference_decode_start_pts", (json_int_t)rb,
                     "candidate_first_frame_pts", (json_int_t)cf, "detail", detail);
}

/* Where the audio decoders started instead of the reference's own
 * boundary frame (move_to_common_boundary), reference timeline, 90 kHz. */
static json_t *common_boundary_json(const struct run *r)
{
    int64_t from = r->moved_from_units / AU_UNITS_PER_TICK, to = r->ref.audio_boundary / AU_UNITS_PER_TICK;
    char detail[480];
    snprintf(detail, sizeof detail,
             "the reference's audio decoding would start at the AAC frame of pts %lld, which the candidate "
             "carries inside an ADTS frame of several raw data blocks starting at pts %lld, where no decoder "
             "of the candidate can start; both sides were decoded from pts %lld instead, so that both "
             "decoders start cold at one frame",
             (long long)from, (long long)to, (long long)to);
    return json_pack("{s:I, s:I, s:s}", "reference_boundary_pts", (json_int_t)from, "decode_start_pts",
                     (json_int_t)to, "detail", detail);
}

static json_t *audio_json(const struct run *r, struct track_verdict tv)
{
    const struct audio_diff *d = &r->a.confirmed;
    json_t *fm = d->set ? json_pack("{s:I, s:o, s:I, s:s}", "sample_index", (json_int_t)d->sample_index,
                                    "channel", d->channel >= 0 ? json_integer(d->channel) : json_null(),
                                    "pts", (json_int_t)d->pts, "kind", d->kind)
                        : json_null();
    if (!strcmp(tv.reason, "audio_history_unavailable")) {
        json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:b, s:i, s:i, s:o}",
                              "verdict", verdict_name(tv.verdict), "reason", tv.reason,
                              "reference_samples", (json_int_t)r->a.ref_samples,
                              "candidate_samples", (json_int_t)r->a.cand_samples, "first_mismatch", fm,
                              "unconfirmed_differences", r->a.unconfirmed,
                              "sample_rate", r->ref.sample_rate, "channels", r->ref.channels,
                              "history", history_json(r));
        return o;
    }
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:b, s:i, s:i}",
                          "verdict", verdict_name(tv.verdict), "reason", tv.reason,
                          "reference_samples", (json_int_t)r->a.ref_samples,
                          "candidate_samples", (json_int_t)r->a.cand_samples, "first_mismatch", fm,
                          "unconfirmed_differences", r->a.unconfirmed,
                          "sample_rate", r->ref.sample_rate, "channels", r->ref.channels);
    const struct side_track *t = &r->sides[1].res.audio;
    if (o && r->boundary_moved)        /* only where it was moved */
        json_object_set_new(o, "common_boundary", common_boundary_json(r));
    if (o && t->quantum_residual_units) /* only where it was taken */
        json_object_set_new(o, "container_quantum", quantum_json(t, false));
    return o;
}

static json_t *track_obs_json(const struct side_track *t)
{
    return json_pack("{s:b, s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:I, s:I, s:I, s:s}",
                     "present", t->present, "codec", t->codec, "decode_boundary_found", t->started,
                     "decoder_error", t->decode_error, "corrupt_frames", t->corrupt,
                     "lost_packets", t->lost_packets, "frames_dropped", t->dropped,
                     "params_changed", t->params_changed, "missing_timestamps", t->missing_pts,
                     "skipped_before_random_access", t->skipped, "invalid_in_interval", t->invalid,
                     "out_of_order", t->late,
                     "packets", (json_int_t)t->packets_fed,
                     "frames", (json_int_t)t->frames_out, "in_interval", (json_int_t)t->in_interval,
                     "first_error", t->first_error);
}

/* The selected program's elementary streams; metadata is listed, never compared. */
static json_t *streams_json(const struct side_result *s)
{
    json_t *arr = json_array();
    const struct tsd_program *p = &s->program;
    int compared[TSD_TRACKS] = {-1, -1};
    for (int i = 0; i < p->nstreams; i++) {
        const struct tsd_stream *st = &p->streams[i];
        bool av = st->kind == TSD_KIND_VIDEO || st->kind == TSD_KIND_AUDIO;
        int t = st->kind == TSD_KIND_VIDEO ? TSD_VIDEO : TSD_AUDIO;
        bool used = av && compared[t] < 0;
        if (used)
            compared[t] = i;
        json_array_append_new(arr, json_pack("{s:i, s:i, s:s, s:s, s:b}", "pid", st->pid, "stream_type",
                                             st->stream_type, "kind", tsd_kind_name(st->kind), "codec",
                                             st->codec, "compared", used));
    }
    return arr;
}

/* Every program of the PAT, in its order, and which one a player plays. */
static json_t *programs_json(const struct side_result *s)
{
    json_t *arr = json_array();
    for (int i = 0; i < s->nprograms; i++)
        json_array_append_new(arr, json_pack("{s:i, s:b, s:i, s:i, s:b}", "number", s->programs[i].number,
                                             "pmt_seen", s->programs[i].have_pmt, "video",
                                             s->programs[i].nvideo, "audio", s->programs[i].naudio, "played",
                                             s->programs[i].number == s->played_program));
    return arr;
}

static json_t *side_json(const struct side_result *s, const char *object)
{
    json_t *o = json_pack("{s:s, s:b, s:I, s:b, s:s, s:o, s:o}", "object", object ? object : "",
                          "opened", s->opened, "bytes", (json_int_t)s->bytes,
                          "transport_complete", s->ts_complete, "transport_issue",
                          tscheck_issue_code(s->ts_issue), "video", track_obs_json(&s->video),
                          "audio", track_obs_json(&s->audio));
    if (s->ts_issue != TS_ISSUE_NONE) {
        json_object_set_new(o, "transport_issue_offset", json_integer((json_int_t)s->ts_issue_offset));
        json_object_set_new(o, "transport_issue_pid", s->ts_issue_pid >= 0 ? json_integer(s->ts_issue_pid) : json_null());
    }
    if (s->ts_issue_elsewhere != TS_ISSUE_NONE)
        json_object_set_new(o, "transport_issue_elsewhere",
                            json_pack("{s:s, s:I, s:i}", "issue", tscheck_issue_code(s->ts_issue_elsewhere),
                                      "offset", (json_int_t)s->ts_issue_elsewhere_offset, "pid",
                                      s->ts_issue_elsewhere_pid));
    json_object_set_new(o, "container", json_string(s->fmp4 ? "fmp4" : "ts"));
    json_object_set_new(o, "program", s->program.number ? json_integer(s->program.number) : json_null());
    json_object_set_new(o, "program_selection", json_string(tsd_selection_code(s->selection)));
    json_object_set_new(o, "streams", streams_json(s));
    if (s->selection == TSD_SEL_NOT_PLAYED)
        json_object_set_new(o, "programs", programs_json(s));
    if (s->io_error)
        json_object_set_new(o, "io_error", json_pack("{s:s, s:s}", "reason", s->io_reason, "detail", s->io_detail));
    if (!s->opened && s->open_error[0])
        json_object_set_new(o, "open_error", json_string(s->open_error));
    return o;
}

/* The reference side of a stored decode of the same decoder input, named
 * as this run's reference. */
static json_t *stored_side_json(const json_t *stored, const char *object)
{
    json_t *o = json_deep_copy(stored);
    if (o)
        json_object_set_new(o, "object", json_string(object ? object : ""));
    return o;
}

static json_t *context_json(const struct verify_request *rq)
{
    static const char *keys[] = {"path_id", "channel", "rendition", "program_version"};
    json_t *c = json_object();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = rq->context ? json_object_get(rq->context, keys[i]) : NULL;
        json_object_set(c, keys[i], json_is_string(v) ? v : json_null());
    }
    json_object_set_new(c, "reference_version",
                        rq->reference_version ? json_string(rq->reference_version) : json_null());
    /* issue 17: only in a report of a check delivered under an allocation */
    static const char *alloc_keys[] = {"allocation_id", "pathway"};
    for (size_t i = 0; rq->context && i < 2; i++) {
        json_t *v = json_object_get(rq->context, alloc_keys[i]);
        if (json_is_string(v))
            json_object_set(c, alloc_keys[i], v);
    }
    return c;
}

static json_t *build_report(struct run *r, struct track_verdict overall, struct track_verdict tv,
                            struct track_verdict ta, int64_t t0, int64_t t1)
{
    const struct verify_request *rq = r->rq;
    char at[32];
    int64_t obs0 = rq->observed_at_ms ? rq->observed_at_ms : t0;
    int64_t obs1 = rq->observed_end_ms ? rq->observed_end_ms : t1;
    util_rfc3339(obs0, at);
    json_t *rep = json_pack(
        "{s:s, s:s, s:o, s:s, s:s, s:{s:s, s:I, s:s, s:s, s:O, s:O}, s:o, s:{s:I, s:I, s:I, s:I}, s:I,"
        " s:s, s:I, s:I, s:o, s:o, s:o, s:o}",
        "tool", "exactav " EXACTAV_VERSION, "check_kind", "exact-av-v1",
        "evidence_id", rq->evidence_id ? json_string(rq->evidence_id) : json_null(),
        "verdict", verdict_name(overall.verdict), "reason", overall.reason,
        "profile", "id", rq->profile->id, "version", (json_int_t)rq->profile->version,
        "fingerprint", r->fingerprint, "source", rq->profile->source, "runtime", r->runtime,
        /* the document too: the store recomputes the fingerprint from the report alone */
        "document", rq->profile->doc,
        "context", context_json(rq),
        "interval", "start", (json_int_t)r->ref.start, "end", (json_int_t)r->ref.end,
        "video_boundary", (json_int_t)r->ref.video_boundary,
        "audio_boundary", (json_int_t)(r->ref.audio_boundary / AU_UNITS_PER_TICK),
        "time_offset", (json_int_t)rq->offset,
        "observed_at", at, "observed_at_ms", (json_int_t)obs0, "observed_end_ms", (json_int_t)obs1,
        "video", video_json(r, tv),
        "audio", r->ref.has_audio ? audio_json(r, ta) : json_null(),
        "reference", r->ref_stored ? stored_side_json(r->ref_stored, rq->reference_object)
                                   : side_json(&r->sides[0].res, rq->reference_object),
        "candidate", side_json(&r->sides[1].res, rq->candidate_object));
    if (!rep)
        return NULL;
    json_t *iv = json_object_get(rep, "interval");
    json_object_set_new(iv, "video", json_pack("{s:I, s:I}", "start", (json_int_t)r->ref.video.start,
                                               "end", (json_int_t)r->ref.video.end));
    json_object_set_new(iv, "audio", r->ref.has_audio ? json_pack("{s:I, s:I}", "start", (json_int_t)r->ref.audio.start,
                                                                  "end", (json_int_t)r->ref.audio.end)
                                                      : json_null());
    json_object_set_new(iv, "video_recovery", json_integer((json_int_t)r->ref.video_recovery));
    json_object_set_new(rep, "compare", json_string(r->compare));
    json_object_set_new(rep, "reference_decode", json_string(r->ref_decode));
    json_object_set_new(rep, "fetches", rq->fetches ? json_incref(rq->fetches) : json_array());
    json_object_set_new(rep, "elapsed_ms", json_integer((json_int_t)(util_now_ms() - t0)));
    return rep;
}

/* ---- the pictures of a MISMATCH ---- */

/* The report's "diff_images": the files written for the first difference of
 * each MISMATCH track that has pictures (pixel or parameter differences of
 * video, sample values of audio), and "error" when one could not be
 * written (the verdict stands either way). */
static void add_diff_images(const struct run *r, struct track_verdict tv, struct track_verdict ta, json_t *rep)
{
    const struct verify_request *rq = r->rq;
    json_t *files = json_object();
    char err[512] = "";
    /* the stem comes from the evidence id (made here, hex and '-') and never from the input */
    const char *id = rq->evidence_id;
    const char *stem = id && id[0] && strspn(id, "0123456789abcdef-") == strlen(id) ? id : "verify";
    const struct video_diff *vd = &r->v.confirmed;
    bool pictured = vd->set && (!strcmp(vd->plane, "Y") || !strcmp(vd->plane, "U") || !strcmp(vd->plane, "V") ||
                                !strcmp(vd->plane, "params"));
    bool video = tv.verdict == VERDICT_MISMATCH && pictured && r->v.kept[0] && r->v.kept_index == vd->index;
    const struct audio_diff *ad = &r->a.confirmed;
    bool audio = ta.verdict == VERDICT_MISMATCH && ad->set && !strcmp(ad->kind, "samples") && r->a.kept &&
                 r->a.kept->n > 0 && r->a.kept->diff_index == ad->sample_index;
    int rc = (video || audio) ? diffpic_make_dir(rq->diff_dir, err, sizeof err) : 0;
    if (!rc && video)
        rc = diffpic_video(rq->diff_dir, stem, r->v.kept[0], r->v.kept[1], files, err, sizeof err);
    if (!rc && audio)
        rc = diffpic_audio(rq->diff_dir, stem, r->a.kept, files, err, sizeof err);
    if (rc)
        json_object_set_new(files, "error", json_string(err));
    json_object_set_new(rep, "diff_images", files);
}

/* ---- the run ---- */

static int prepare(struct run *r, char *err, size_t errlen)
{
    const struct verify_request *rq = r->rq;
    r->runtime = profile_runtime_description();
    if (!r->runtime)
        return EXACTAV_EXIT_INTERNAL;
    char diff[512];
    if (profile_check_runtime(rq->profile, r->runtime, diff, sizeof diff)) {
        snprintf(err, errlen, "runtime does not match profile %s v%lld: %s", rq->profile->id,
                 rq->profile->version, diff);
        return EXACTAV_EXIT_UNUSABLE;
    }
    profile_fingerprint(rq->profile, r->runtime, r->fingerprint);
    return 0;
}

static int scan_reference(struct run *r, char *err, size_t errlen)
{
    const struct verify_request *rq = r->rq;
    switch (refscan_run(rq->ref_segs, rq->n_ref, rq->profile, rq->have_interval, rq->start, rq->end,
                        &r->ref, err, errlen)) {
    case REFSCAN_OK: return 0;
    case REFSCAN_UNOPENABLE: return EXACTAV_EXIT_NOINPUT;
    case REFSCAN_UNUSABLE: return EXACTAV_EXIT_UNUSABLE;
    case REFSCAN_FAILED: break;
    }
    return EXACTAV_EXIT_INTERNAL;
}

/* Starts the sides in [from, to); digest_only: nothing decoded (the fast
 * path's candidate pass). */
static int start_sides(struct run *r, int from, int to, bool digest_only)
{
    const struct verify_request *rq = r->rq;
    for (int s = from; s < to; s++) {
        struct side_config cfg = {
            .index = s, .profile = rq->profile,
            .segs = s == 0 ? rq->ref_segs : rq->cand_segs, .nsegs = s == 0 ? rq->n_ref : rq->n_cand,
            .offset = s == 0 ? 0 : ts33_norm(rq->offset),
            .video = r->ref.video, .audio = r->ref.audio,
            .video_boundary = r->ref.video_boundary, .video_recovery = r->ref.video_recovery,
            .audio_boundary = r->ref.audio_boundary,
            .ref_video_quantum = r->ref.video_quantum, .ref_audio_quantum = r->ref.audio_quantum,
            .want_audio = r->ref.has_audio, .xfer = &r->x, .deadline_ms = rq->deadline_ms,
            .digest_only = digest_only,
        };
        /* the reference's own program; the candidate's by track set unless forced */
        cfg.select = s == 0 ? (struct tsd_select){.program = r->ref.program.number, .reference = true}
                            : (struct tsd_select){.program = rq->program, .want_video = 1,
                                                  .want_audio = r->ref.has_audio};
        if (side_start(&r->sides[s], &cfg)) {
            if (s == 1 && from == 0) {
                xfer_abort(&r->x);
                side_join(&r->sides[0]);
            }
            return -1;
        }
    }
    return 0;
}

/* ---- the fast path (docs/exact-av-v1.md, "The fast path") ---- */

static bool fast_path_wanted(const struct verify_request *rq)
{
    return rq->compare == VERIFY_COMPARE_AUTO && !rq->candidate_failure && !rq->candidate_length_unproven;
}

/* The candidate's access-unit pass needs of the reference only its track
 * set (the candidate's program selection), so it can run on the other core
 * while the reference is scanned: started for video with audio, the common
 * case, and run again by candidate_input_equal when the scan finds no
 * audio.  Its xfer is the fast path's. */
static void start_candidate_early(struct run *r)
{
    if (!fast_path_wanted(r->rq) || xfer_init(&r->x, VIDEO_RING, AUDIO_RING))
        return;
    r->ref.has_audio = true;   /* the guess; the scan overwrites r->ref */
    if (start_sides(r, 1, 2, true) == 0)
        r->early = true;
    else
        xfer_destroy(&r->x);
}

/* An early pass nobody will use: stopped, joined, its xfer freed. */
static void end_early(struct run *r)
{
    if (!r->early)
        return;
    r->early = false;
    side_cancel(&r->sides[1]);
    side_join(&r->sides[1]);
    xfer_destroy(&r->x);
}

/* The candidate read without decoding: true when its decoder input is
 * byte-identical to the reference's, both observed completely and
 * undamaged, in the same track set. */
static bool candidate_input_equal(struct run *r)
{
    bool early = r->early;
    r->early = false;
    if (early)
        side_join(&r->sides[1]);
    if (!early || !r->ref.has_audio) {   /* not started, or for another track set */
        if (start_sides(r, 1, 2, true))
            return false;
        side_join(&r->sides[1]);
    }
    const struct side_result *c = &r->sides[1].res;
    return c->input_digest_ok && side_observation_complete(c) && c->selection == TSD_SEL_OK &&
           !c->track_set_changed && !memcmp(c->input_digest, r->ref.input_digest, INDIGEST_LEN);
}

/* The reference side alone: its frames and samples of the interval are
 * counted, never compared.  True when every one was validly decoded. */
static bool drain_reference(struct run *r)
{
    struct xfer *x = &r->x;
    struct ring *rv = &x->video[XFER_REF], *ra = &x->audio[XFER_REF];
    bool valid = true;
    pthread_mutex_lock(&x->mu);
    for (;;) {
        bool p = false;
        for (struct vitem *v; (v = ring_peek(rv, 0)); p = true) {
            valid &= v->valid;
            r->v.ref_frames += !v->margin;
            vitem_release(v);
            ring_drop(rv);
        }
        for (struct aitem *a; (a = ring_peek(ra, 0)); p = true) {
            valid &= a->valid;
            r->a.ref_samples += a->nb_samples - a->head_margin - a->tail_margin;
            aitem_release(a);
            ring_drop(ra);
        }
        if (p)
            pthread_cond_broadcast(&x->cv);
        else if (rv->closed && ra->closed)
            break;
        else
            pthread_cond_wait(&x->cv, &x->mu);
    }
    pthread_mutex_unlock(&x->mu);
    return valid;
}

static bool reference_clean(const struct run *r, bool valid)
{
    const struct side_result *ref = &r->sides[XFER_REF].res;
    return valid && side_observation_complete(ref) && ref->selection == TSD_SEL_OK && ref->video.codec_ok &&
           track_clean(&ref->video) && (!r->ref.has_audio || (ref->audio.codec_ok && track_clean(&ref->audio)));
}

static bool memo_fits(const struct run *r, const struct verify_refmemo *m)
{
    return m->clean && !memcmp(m->digest, r->ref.input_digest, INDIGEST_LEN) &&
           !strcmp(m->fingerprint, r->fingerprint) && m->start == r->ref.start && m->end == r->ref.end;
}

static void decode_key(const struct run *r, struct verify_decode_key *k)
{
    _Static_assert(INDIGEST_LEN == 32, "the decoder-input digest is a SHA-256");
    evidence_digest_hex(r->ref.input_digest, k->digest);
    k->fingerprint = r->fingerprint;
    k->start = r->ref.start;
    k->end = r->ref.end;
}

/* A clean decode of the same input, profile and interval in the decode
 * store (another process, another run). */
static bool load_stored(struct run *r)
{
    const struct verify_decode_store *ds = r->rq->decode_store;
    struct verify_decode_key k;
    json_t *side = NULL;
    int64_t frames = 0, samples = 0;
    if (!ds || !ds->load)
        return false;
    decode_key(r, &k);
    if (!ds->load(ds->ctx, &k, &frames, &samples, &side) || !json_is_object(side)) {
        json_decref(side);
        return false;
    }
    r->ref_stored = side;
    r->v.ref_frames = frames;
    r->a.ref_samples = samples;
    r->ref_decode = "stored";
    return true;
}

static void remember(struct run *r)
{
    struct verify_refmemo *m = r->rq->refmemo;
    if (m) {
        *m = (struct verify_refmemo){.clean = true, .start = r->ref.start, .end = r->ref.end,
                                     .res = r->sides[XFER_REF].res, .frames = r->v.ref_frames,
                                     .samples = r->a.ref_samples};
        memcpy(m->digest, r->ref.input_digest, INDIGEST_LEN);
        memcpy(m->fingerprint, r->fingerprint, sizeof m->fingerprint);
    }
    const struct verify_decode_store *ds = r->rq->decode_store;
    if (ds && ds->save) {
        struct verify_decode_key k;
        decode_key(r, &k);
        json_t *side = side_json(&r->sides[XFER_REF].res, NULL);
        if (side) {
            json_object_del(side, "object");   /* the reference is named by each report */
            ds->save(ds->ctx, &k, r->v.ref_frames, r->a.ref_samples, side, r->rq->evidence_id);
        }
        json_decref(side);
    }
}

/* The reference decodes cleanly under the profile: decoded here, or known
 * from a clean decode of the same input, profile and interval remembered
 * in this process or stored by an earlier one. */
static bool reference_decodes_clean(struct run *r)
{
    struct verify_refmemo *m = r->rq->refmemo;
    if (m && memo_fits(r, m)) {
        r->sides[XFER_REF].res = m->res;
        r->v.ref_frames = m->frames;
        r->a.ref_samples = m->samples;
        r->ref_decode = "remembered";
        return true;
    }
    if (load_stored(r))
        return true;
    if (start_sides(r, 0, 1, false))
        return false;
    bool valid = drain_reference(r);
    side_join(&r->sides[XFER_REF]);
    if (!reference_clean(r, valid))
        return false;
    remember(r);
    return true;
}

/* MATCH without decoding the candidate, under the profile's premise that
 * identical decoder input gives identical output; false (nothing decided)
 * on any difference, damage, or anything unobserved. */
static bool fast_match(struct run *r)
{
    if (!fast_path_wanted(r->rq) || !r->ref.input_digest_ok) {
        end_early(r);
        return false;
    }
    if (!r->early && xfer_init(&r->x, VIDEO_RING, AUDIO_RING))
        return false;
    vcmp_init(&r->v);
    acmp_init(&r->a, r->ref.audio.start);
    bool ok = candidate_input_equal(r) && reference_decodes_clean(r) &&
              (r->v.ref_frames > 0 || r->a.ref_samples > 0);
    xfer_destroy(&r->x);
    r->v.cand_frames = r->v.compared_frames = r->v.ref_frames;
    r->a.cand_samples = r->a.ref_samples;
    return ok;
}

static int report_fast(struct run *r, json_t **report, int64_t t0)
{
    struct track_verdict tracks[2], tv = {VERDICT_MATCH, "identical"}, ta = {VERDICT_UNKNOWN, NULL};
    size_t n = 0;
    tracks[n++] = tv;
    if (r->ref.has_audio)
        tracks[n++] = ta = tv;
    struct track_verdict overall = verdict_combine(tracks, n);
    r->compare = "decoder-input";
    *report = build_report(r, overall, tv, ta, t0, util_now_ms());
    if (*report && r->rq->diff_dir)   /* a MATCH: no pictures */
        json_object_set_new(*report, "diff_images", json_object());
    return *report ? verdict_exit_code(overall.verdict) : EXACTAV_EXIT_INTERNAL;
}

/* Both sides decoded and compared (the full decode); 0, or an exit code
 * with err set.  On 0, release_decode frees what it holds. */
static int decode_both(struct run *r, char *err, size_t errlen)
{
    if (xfer_init(&r->x, VIDEO_RING, AUDIO_RING))
        return EXACTAV_EXIT_INTERNAL;
    r->skew = false;
    vcmp_init(&r->v);
    acmp_init(&r->a, r->ref.audio.start);
    r->a.done = !r->ref.has_audio;
    r->v.keep = r->a.keep = r->rq->diff_dir != NULL;
    if (r->rq->diff_dir)
        r->a.kept = calloc(1, sizeof *r->a.kept);   /* none: no plot, the check goes on */
    if (start_sides(r, 0, 2, false)) {
        snprintf(err, errlen, "cannot start decoding threads");
        vcmp_release(&r->v);
        acmp_release(&r->a);
        xfer_destroy(&r->x);
        return EXACTAV_EXIT_INTERNAL;
    }
    compare_streams(r);
    side_join(&r->sides[0]);
    side_join(&r->sides[1]);
    return 0;
}

static void release_decode(struct run *r)
{
    vcmp_release(&r->v);
    acmp_release(&r->a);
    xfer_destroy(&r->x);
}

/* The candidate's audio decoder could not start at the reference's
 * boundary frame because that frame's samples lie inside one of its ADTS
 * frames of several raw data blocks (side.h straddled): decoding the
 * candidate from that frame gives it history the reference lacks, from
 * the next one none, and FFmpeg's AAC output (overlap, PNS noise state)
 * then differs for good (differential pack_adts_blocks:3156).  When the
 * reference has a frame starting where that candidate frame starts (held
 * before its boundary), both sides' boundary moves there, so both
 * decoders start cold at one frame, and the check is decoded again.
 * Once; true when moved. */
static bool move_to_common_boundary(struct run *r)
{
    const struct side_track *t = &r->sides[1].res.audio;
    if (r->boundary_moved || !r->ref.has_audio || !t->straddled || !t->history_missing)
        return false;
    int64_t cand = ((t->straddle_units - ts33_norm(r->rq->offset) * AU_UNITS_PER_TICK) % AU_UNITS_MOD +
                    AU_UNITS_MOD) % AU_UNITS_MOD;
    for (int i = 0; i < r->ref.audio_window_first; i++)
        if (llabs(units_between(r->ref.audio_window[i].units, cand)) <= XFER_TOLERANCE_UNITS) {
            r->boundary_moved = true;
            r->moved_from_units = r->ref.audio_boundary;
            r->ref.audio_boundary = r->ref.audio_window[i].units;
            r->ref.audio_window_first = i;
            return true;
        }
    return false;
}

int verify_run(const struct verify_request *rq, json_t **report, char *err, size_t errlen)
{
    struct run *r = calloc(1, sizeof *r);
    if (!r)
        return EXACTAV_EXIT_INTERNAL;
    r->rq = rq;
    *report = NULL;
    int64_t t0 = util_now_ms();
    r->compare = "full";
    r->ref_decode = "decoded";
    int rc = prepare(r, err, errlen);
    if (rc == 0) {
        start_candidate_early(r);
        rc = scan_reference(r, err, errlen);
    }
    if (rc == 0 && fast_match(r)) {
        rc = report_fast(r, report, t0);
        json_decref(r->ref_stored);
        json_decref(r->runtime);
        free(r);
        return rc;
    }
    end_early(r);   /* the reference scan failed: the early pass is not wanted */
    /* the full decode: whatever the fast path learnt about the reference is dropped */
    json_decref(r->ref_stored);
    r->ref_stored = NULL;
    r->ref_decode = "decoded";
    if (rc == 0) {
        rc = decode_both(r, err, errlen);
        if (rc == 0 && move_to_common_boundary(r)) {
            release_decode(r);
            rc = decode_both(r, err, errlen);
        }
    }
    if (rc == 0) {
        int64_t t1 = util_now_ms();
        struct track_verdict tracks[3], tv = assess_video(r), ta = {VERDICT_UNKNOWN, NULL};
        size_t n = 0;
        if (track_set_differs(r))    /* a track more or less: the container's own difference */
            tracks[n++] = (struct track_verdict){VERDICT_MISMATCH, "track_set"};
        tracks[n++] = tv;
        if (r->ref.has_audio)
            tracks[n++] = ta = assess_audio(r);
        struct track_verdict overall = verdict_combine(tracks, n);
        if (overall.verdict == VERDICT_MATCH && r->v.ref_frames == 0 && r->a.ref_samples == 0)
            overall = (struct track_verdict){VERDICT_UNKNOWN, "empty_interval"};
        *report = build_report(r, overall, tv, ta, t0, t1);
        if (*report && rq->diff_dir)
            add_diff_images(r, tv, ta, *report);
        rc = *report ? verdict_exit_code(overall.verdict) : EXACTAV_EXIT_INTERNAL;
        release_decode(r);
    }
    json_decref(r->runtime);
    free(r);
    return rc;
}
