/* dt_recipe.c - the recipes (see dt_recipe.h).  Each build function fills
 * g->c: reference, candidate, verify options; every file it makes is in the
 * case directory and every command is in the recipe log. */
#include "dt_recipe.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../fixtures/tools/mp4walk.h"

#define VPID 256u      /* ffmpeg's mpegts muxer: first stream 0x100 (video), then 0x101 */
#define APID 257u
#define PE(name, ext) dt_gen_path(g, #name ext, name##_buf, sizeof name##_buf)
#define P(name) PE(name, ".ts")   /* case-folder path NAME.ts, into NAME_buf */
#define PX(name) PE(name, "")     /* the same without extension (a prefix) */

/* ---- shared steps ------------------------------------------------------------------ */

/* Seeded encoder settings around the defaults: every recipe varies them a little. */
static void vary_specs(struct dt_gen *g, struct dt_video_spec *v, struct dt_audio_spec *a)
{
    static const int keyints[] = {15, 30, 45};
    static const char *const srcs[] = {"testsrc2", "testsrc2", "mandelbrot"};
    dt_video_default(v);
    dt_audio_default(a);
    v->keyint = keyints[dt_rand_in(g, 0, 2)];
    v->bframes = (int)dt_rand_in(g, 0, 3);
    v->pyramid = v->bframes >= 2 && dt_rand_in(g, 0, 1) ? 2 : 0;
    dt_fmt(v->src, sizeof v->src, "%s", dt_pick(g, srcs, 3));
    if (dt_rand_in(g, 0, 1)) {
        dt_fmt(a->src, sizeof a->src, "noise");
        a->seed = (int)dt_rand_in(g, 1, 1000);
    }
    static const int leads[] = {0, 0, 20, 40, 100};
    a->lead_ms = leads[dt_rand_in(g, 0, 4)];
}

static void set_case_ref(struct dt_case *c, const char *path)
{
    memset(&c->ref[0], 0, sizeof c->ref[0]);
    dt_fmt(c->ref[0].path, sizeof c->ref[0].path, "%s", path);
    c->nref = 1;
}

static void set_case_cand(struct dt_case *c, const char *path)
{
    memset(&c->cand[0], 0, sizeof c->cand[0]);
    dt_fmt(c->cand[0].path, sizeof c->cand[0].path, "%s", path);
    c->ncand = 1;
    c->cand_kind = DT_CAND_FILE;
}

/* Encode v and a, mux them into path (extra muxer options opts). */
static int make_ts(struct dt_gen *g, const struct dt_video_spec *v, const struct dt_audio_spec *a,
                   const char *const *opts, const char *path)
{
    char vp[DT_PATH_MAX], ap[DT_PATH_MAX];
    if (dt_gen_video(g, v, vp, sizeof vp) != 0 || (a && dt_gen_audio(g, a, ap, sizeof ap) != 0))
        return -1;
    return dt_gen_mux(g, vp, a ? ap : NULL, NULL, a ? a->lead_ms : 0, opts, path);
}

/* The reference of most recipes: ref.ts from seeded settings. */
static int make_ref(struct dt_gen *g, struct dt_video_spec *v, struct dt_audio_spec *a, char *ref,
                    size_t size)
{
    vary_specs(g, v, a);
    dt_gen_path(g, "ref.ts", ref, size);
    if (make_ts(g, v, a, NULL, ref) != 0)
        return -1;
    set_case_ref(g->c, ref);
    return 0;
}

/* Video PES of ts in file order; *n set. */
static struct dt_pes *video_pes(struct dt_gen *g, const char *ts, size_t *n)
{
    size_t all = 0;
    struct dt_pes *p = dt_gen_pes_list(g, ts, &all, NULL);
    size_t k = 0;
    for (size_t i = 0; p && i < all; i++)
        if (p[i].pid == VPID)
            p[k++] = p[i];
    *n = k;
    return p;
}


/* A seeded mid-stream interval: START at a frame between 25 % and 50 % of the
 * video (any frame, not only key frames), END at a frame between 60 % and 95 %. */
static int mid_interval(struct dt_gen *g, const char *ts)
{
    size_t n = 0;
    struct dt_pes *p = video_pes(g, ts, &n);
    if (p == NULL || n < 8) {
        free(p);
        return -1;
    }
    /* times relative to the first PES (mod 2^33), so a stream crossing 2^33 sorts right */
    const int64_t mask = (INT64_C(1) << 33) - 1, base = p[0].pts - 90000;
    int64_t *rel = malloc(n * sizeof *rel);
    for (size_t i = 0; rel && i < n; i++)
        rel[i] = (p[i].pts - base) & mask;
    free(p);
    if (rel == NULL)
        return -1;
    qsort(rel, n, sizeof *rel, dt_cmp_i64);
    size_t a = (size_t)dt_rand_in(g, (int64_t)n / 4, (int64_t)n / 2);
    size_t b = (size_t)dt_rand_in(g, (int64_t)n * 6 / 10, (int64_t)n * 95 / 100);
    g->c->has_interval = true;
    g->c->start = (uint64_t)((rel[a] + base) & mask);
    g->c->end = (uint64_t)((rel[b] + base) & mask);
    free(rel);
    dt_note(g->env, "interval [%" PRIu64 ", %" PRIu64 ") starts mid-stream", g->c->start, g->c->end);
    return 0;
}

static void add_extra(struct dt_case *c, const char *a, const char *b)
{
    if (c->nextra + 2 > DT_MAX_EXTRA)
        return;
    dt_fmt(c->extra[c->nextra++], sizeof c->extra[0], "%s", a);
    dt_fmt(c->extra[c->nextra++], sizeof c->extra[0], "%s", b);
}

/* HLS candidate: segs become the playlist index.m3u8 in the case folder. */
static int hls_candidate(struct dt_gen *g, const struct dt_seg *segs, size_t n, bool endlist)
{
    struct dt_case *c = g->c;
    char pl_buf[DT_PATH_MAX];
    dt_gen_path(g, "index.m3u8", pl_buf, sizeof pl_buf);
    if (n > DT_MAX_SEGS || dt_gen_playlist(g, pl_buf, segs, n, 0, endlist) != 0)
        return -1;
    memcpy(c->cand, segs, n * sizeof *segs);
    c->ncand = n;
    c->cand_kind = DT_CAND_HLS;
    dt_fmt(c->playlist, sizeof c->playlist, "%s", pl_buf);
    return 0;
}

/* Packet indexes inside n_cuts PES of at least 3 packets, increasing: PES of
 * the video (no declared length) or of the audio (PES_packet_length set),
 * by seed.  A cut lands between two packets of the PES. */
static size_t cuts_inside_pes(struct dt_gen *g, const char *ts, unsigned vpid, uint64_t *cuts, size_t n_cuts)
{
    size_t n = 0, k = 0, m = 0;
    unsigned pid = dt_rand_in(g, 0, 1) ? vpid + 1 : vpid;   /* the audio PID follows the video's */
    struct dt_pes *p = dt_gen_pes_list(g, ts, &n, NULL);
    for (size_t i = 0; p && i < n; i++)
        if (p[i].pid == pid)
            p[m++] = p[i];
    dt_note(g->env, "cuts inside %s PES", pid == vpid ? "video" : "audio");
    for (size_t i = 1; p && i < m && k < n_cuts; i++) {
        if (p[i].npackets < 3 || (int64_t)i < (int64_t)(m * (k + 1) / (n_cuts + 1)))
            continue;
        cuts[k++] = p[i].packet + (size_t)dt_rand_in(g, 1, (int64_t)p[i].npackets - 2);
    }
    free(p);
    return k;
}

/* Reference from seeded settings; candidate = `TOOL CMD ref cand ARGS...`
 * (up to three arguments; the first NULL ends them). */
static int tool_recipe(struct dt_gen *g, const char *tool, const char *cmd, const char *a1,
                       const char *a2, const char *a3)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        dt_gen_tool(g, tool, cmd, ref, P(cand), a1, a2, a3, (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* ---- packaging recipes ----------------------------------------------------------- */

static int pack_copy(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        dt_gen_tool(g, "cp", ref, P(cand), (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Remux the reference with options (a NULL-terminated list). */
static int remux_recipe(struct dt_gen *g, const char *const *opts)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 || dt_gen_remux(g, ref, opts, P(cand)) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

static int pack_pids(struct dt_gen *g)
{
    char sp[16], pp[16], sid[16];
    dt_fmt(sp, sizeof sp, "0x%x", (unsigned)dt_rand_in(g, 0x20, 0x1f00));
    dt_fmt(pp, sizeof pp, "0x%x", (unsigned)dt_rand_in(g, 0x20, 0x0f00));
    dt_fmt(sid, sizeof sid, "%d", (int)dt_rand_in(g, 1, 65535));
    const char *opts[] = {"-mpegts_start_pid", sp, "-mpegts_pmt_start_pid", pp,
                          "-mpegts_service_id", sid, NULL};
    if (strtol(sp, NULL, 0) <= strtol(pp, NULL, 0) + 1)
        dt_fmt(sp, sizeof sp, "0x%lx", strtol(pp, NULL, 0) + 0x10);
    return remux_recipe(g, opts);
}

static int pack_muxrate(struct dt_gen *g)
{
    char rate[16], period[16];
    dt_fmt(rate, sizeof rate, "%dk", (int)dt_rand_in(g, 12, 30) * 100);
    dt_fmt(period, sizeof period, "%d", (int)dt_rand_in(g, 20, 100));
    const char *opts[] = {"-muxrate", rate, "-pcr_period", period, NULL};
    return remux_recipe(g, opts);
}

/* Class 1: the same AAC frames, several per PES (default) or one per PES (-muxdelay 0). */
static int pack_audio_pes(struct dt_gen *g)
{
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], base_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    static const char *const one[] = {"-muxdelay", "0", NULL};
    vary_specs(g, &v, &a);
    if (make_ts(g, &v, &a, NULL, P(base)) != 0)
        return -1;
    bool ref_one = dt_rand_in(g, 0, 1);
    if (dt_gen_remux(g, base_buf, ref_one ? one : NULL, P(ref)) != 0 ||
        dt_gen_remux(g, base_buf, ref_one ? NULL : one, P(cand)) != 0)
        return -1;
    dt_note(g->env, "reference: %s audio PES packing, candidate: the other",
            ref_one ? "one AAC frame per PES (-muxdelay 0)" : "several AAC frames per PES");
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Class 5: AAC (ADTS) with stream_type 0x11 (LATM), as some encoders write it.
 * Issue 18 (class 3) withdrew issue 8's rule that ADTS data is AAC whatever
 * its stream type says: a player's demuxer picks the LATM path (hls.js drops
 * the track), so this is another delivery now, MISMATCH. */
static int pack_latm(struct dt_gen *g)
{
    static const char *const opts[] = {"-mpegts_flags", "latm", NULL};
    return remux_recipe(g, opts);
}

/* Issue 18, class 3: the AAC track announced as another codec (LATM, MPEG-1
 * or MPEG-2 audio, AC-3, a private stream without descriptor), its bytes
 * unchanged: a player decodes it with another decoder, or not at all. */
static int edit_announce(struct dt_gen *g)
{
    static const char *const types[] = {"0x11", "0x03", "0x04", "0x81", "0x06"};
    return tool_recipe(g, "tsrepack", "stype", "257", dt_pick(g, types, 5), NULL);
}

/* Class 4: a program without audio or video announced first in the PAT.
 * (An audio-only program first is no packaging since issue 18: a player
 * plays that one, edit_prog_first_av; SCTE-35 took its place in the draw.) */
static const char *const prog_first_kinds[] = {"scte35", "id3", "scte35", "private"};

static int pack_prog_first(struct dt_gen *g)
{
    return tool_recipe(g, "tsrepack", "addprog", dt_pick(g, prog_first_kinds, 4), NULL, NULL);
}

/* Issue 18, class 4: an audio-only program first in the PAT, the
 * reference's program second: a player plays the first, so what would be
 * compared is not what viewers see. */
static int edit_prog_first_av(struct dt_gen *g)
{
    return tool_recipe(g, "tsrepack", "addprog", "audio", NULL, NULL);
}

static int pack_pcr_pid(struct dt_gen *g)
{
    char pid[16];
    dt_fmt(pid, sizeof pid, "0x%x", (unsigned)dt_rand_in(g, 0x1e0, 0x1ff));
    return tool_recipe(g, "tsrepack", "pcrpid", pid, NULL, NULL);
}

static int pack_nulls(struct dt_gen *g)
{
    char every[16];
    dt_fmt(every, sizeof every, "%d", (int)dt_rand_in(g, 2, 25));
    return tool_recipe(g, "tsedit", "nulls", every, NULL, NULL);
}

/* AUD, SEI or SPS/PPS placement: NAL units removed from the candidate's PES. */
static int pack_nal_strip(struct dt_gen *g)
{
    static const char *const types[] = {"9", "6", "7,8", "9,6"};
    char pid[16];
    const char *t = dt_pick(g, types, 4);
    dt_fmt(pid, sizeof pid, "%u", VPID);
    return tool_recipe(g, "tsrepack", "nalstrip", pid, t, strcmp(t, "7,8") == 0 ? "1" : "0");
}

/* Issue 18, class 12: a non-VCL NAL unit after the slices of every picture,
 * inside the picture's PES (a user-data or display-orientation SEI, filler
 * data, or the SPS and PPS again), on the candidate or on the reference;
 * by seed a mid-stream interval.  FFmpeg decodes every picture the same
 * (its parser loses the times of pictures that follow such an SEI, which
 * the oracle gives back from the PES headers): MATCH. */
static int pack_nal_tail(struct dt_gen *g)
{
    static const char *const kinds[] = {"user", "orient", "filler", "ps"};
    char ref[DT_PATH_MAX], tail_buf[DT_PATH_MAX], pid[16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    dt_fmt(pid, sizeof pid, "%u", VPID);
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        dt_gen_tool(g, "tsrepack", "naltail", ref, P(tail), pid, dt_pick(g, kinds, 4), "0", (char *)NULL) != 0)
        return -1;
    if (dt_rand_in(g, 0, 2) == 0) {
        dt_note(g->env, "the reference carries the NAL units after its slices");
        set_case_ref(g->c, tail_buf);
        set_case_cand(g->c, ref);
    } else {
        set_case_cand(g->c, tail_buf);
    }
    return dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ref) : 0;
}

/* Video PES packing: every access unit in two PES (split before its first
 * slice, or in the middle of a NAL unit; the second PES without PTS). */
static int pack_pes_split(struct dt_gen *g)
{
    /* -pts: the second PES repeats the unit's PTS/DTS, as packagers that
     * stamp every PES do */
    static const char *const at[] = {"nal", "middle", "nal-pts", "middle-pts"};
    char pid[16];
    dt_fmt(pid, sizeof pid, "%u", VPID);
    return tool_recipe(g, "tsrepack", "pessplit", pid, dt_pick(g, at, 4), "0");
}

/* Class 6: an HLS candidate whose segments each restart their counters. */
static int pack_hls_restart(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], seg_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    struct dt_seg segs[DT_MAX_SEGS];
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    int n = dt_gen_segments(g, ref, VPID, (int)dt_rand_in(g, 1, 2), "restart", PX(seg), segs,
                            DT_MAX_SEGS);
    return n > 0 ? hls_candidate(g, segs, (size_t)n, true) : -1;
}

/* Class 6: a reference bound as several segments that restart their counters. */
static int pack_bind_restart(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], rseg_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    int n = dt_gen_segments(g, ref, VPID, 1, "restart", PX(rseg), g->c->ref, DT_MAX_SEGS);
    if (n <= 0)
        return -1;
    g->c->nref = (size_t)n;
    g->c->ref_bind = true;
    set_case_cand(g->c, ref);
    return 0;
}

/* Split ts into byte pieces cut inside video PES (prefix%d.ts), into segs. */
static int pieces_inside_pes(struct dt_gen *g, const char *ts, unsigned vpid, const char *prefix,
                             struct dt_seg *segs, size_t *n)
{
    uint64_t cuts[4];
    size_t k = cuts_inside_pes(g, ts, vpid, cuts, (size_t)dt_rand_in(g, 1, 3));
    if (k == 0)
        return -1;
    struct dt_argv x;
    dt_argv_init(&x);
    dt_argv_addl(&x, g->env->tsedit, "split", ts, prefix, "bytes", NULL);
    for (size_t i = 0; i < k; i++)
        dt_argv_add(&x, "%" PRIu64, cuts[i]);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    if (rc != 0)
        return -1;
    for (size_t i = 0; i <= k; i++) {
        memset(&segs[i], 0, sizeof segs[i]);
        dt_fmt(segs[i].path, sizeof segs[i].path, "%s%zu.ts", prefix, i);
        segs[i].duration = 3.0 / (double)(k + 1);
    }
    *n = k + 1;
    return 0;
}

/* Class 7: HLS segments cut inside a video PES (a byte split). */
static int pack_hls_in_pes(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], piece_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    struct dt_seg segs[8];
    size_t n = 0;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        pieces_inside_pes(g, ref, VPID, PX(piece), segs, &n) != 0)
        return -1;
    return hls_candidate(g, segs, n, true);
}

/* Byte ranges of file covering it whole, cut inside 1..3 PES; into segs. */
static int byteranges_inside_pes(struct dt_gen *g, const char *file, unsigned vpid, struct dt_seg *segs,
                                 size_t *n)
{
    uint64_t cuts[4];
    size_t total = 0, k = cuts_inside_pes(g, file, vpid, cuts, (size_t)dt_rand_in(g, 1, 3));
    free(dt_gen_pes_list(g, file, &(size_t){0}, &total));
    if (k == 0 || total == 0)
        return -1;
    uint64_t prev = 0;
    for (size_t i = 0; i <= k; i++) {
        uint64_t end = i < k ? cuts[i] * 188 : (uint64_t)total * 188;
        memset(&segs[i], 0, sizeof segs[i]);
        dt_fmt(segs[i].path, sizeof segs[i].path, "%s", file);
        segs[i].ranged = true;
        segs[i].off = prev;
        segs[i].len = end - prev;
        segs[i].duration = 3.0 / (double)(k + 1);
        prev = end;
    }
    *n = k + 1;
    return 0;
}

/* Class 7: EXT-X-BYTERANGE segments of one file, split inside PES. */
static int pack_byterange(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    struct dt_seg segs[8];
    size_t n = 0;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        dt_gen_tool(g, "cp", ref, P(cand), (char *)NULL) != 0 ||
        byteranges_inside_pes(g, cand_buf, VPID, segs, &n) != 0)
        return -1;
    return hls_candidate(g, segs, n, true);
}

/* Class 7: a reference bound as byte pieces cut inside a video PES. */
static int pack_bind_in_pes(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], rpiece_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    size_t n = 0;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        pieces_inside_pes(g, ref, VPID, PX(rpiece), g->c->ref, &n) != 0)
        return -1;
    g->c->nref = n;
    g->c->ref_bind = true;
    set_case_cand(g->c, ref);
    return 0;
}

/* Class 3: one bound segment against the live playlist of the whole window. */
static int pack_live_window(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], seg_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    struct dt_seg segs[DT_MAX_SEGS];
    vary_specs(g, &v, &a);
    if (v.keyint > 30)
        v.keyint = 30;           /* 3 s: at least three segments, one inside the window */
    dt_gen_path(g, "ref.ts", ref, sizeof ref);
    if (make_ts(g, &v, &a, NULL, ref) != 0)
        return -1;
    set_case_ref(g->c, ref);
    /* segments written one by one (counters restart) or by one muxer (they continue) */
    static const char *const modes[] = {"restart", "continue"};
    int n = dt_gen_segments(g, ref, VPID, 1, dt_pick(g, modes, 2), PX(seg), segs, DT_MAX_SEGS);
    if (n < 3)
        return -1;
    size_t k = (size_t)dt_rand_in(g, 1, n - 2);
    g->c->ref[0] = segs[k];
    g->c->nref = 1;
    g->c->ref_bind = true;
    dt_note(g->env, "reference: segment %zu of %d, bound alone; candidate: the live playlist", k, n);
    return hls_candidate(g, segs, (size_t)n, false);
}

/* ---- encoder recipes ------------------------------------------------------------- */

/* Self-compare (copy or a PID remux) of a stream made with settings v. */
static int enc_common(struct dt_gen *g, struct dt_video_spec *v, struct dt_audio_spec *a, bool mid)
{
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    static const char *const pids[] = {"-mpegts_start_pid", "0x300", NULL};
    if (make_ts(g, v, a, NULL, P(ref)) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    bool remux = dt_rand_in(g, 0, 1);
    if ((remux ? dt_gen_remux(g, ref_buf, pids, P(cand))
               : dt_gen_tool(g, "cp", ref_buf, P(cand), (char *)NULL)) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return mid ? mid_interval(g, ref_buf) : 0;
}

static int enc_gop(struct dt_gen *g)
{
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.keyint = (int)dt_rand_in(g, 8, 60);
    v.bframes = (int)dt_rand_in(g, 0, 4);
    v.pyramid = v.bframes >= 2 ? (int)dt_rand_in(g, 0, 2) : 0;
    return enc_common(g, &v, &a, dt_rand_in(g, 0, 1));
}

/* Class 8: open GOPs (leading B-frames before START). */
static int enc_open_gop(struct dt_gen *g)
{
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.open_gop = 1;
    v.bframes = (int)dt_rand_in(g, 2, 3);
    return enc_common(g, &v, &a, true);
}

/* Class 8: intra refresh (no IDR after the first frame; recovery points). */
static int enc_intra_refresh(struct dt_gen *g)
{
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.intra_refresh = 1;
    v.bframes = (int)dt_rand_in(g, 0, 2);
    v.pyramid = 0;
    return enc_common(g, &v, &a, true);
}

/* Class 8: SPS/PPS only before the first IDR, interval mid-stream. */
static int enc_sps_once(struct dt_gen *g)
{
    char base_buf[DT_PATH_MAX], ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], pid[16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    dt_fmt(pid, sizeof pid, "%u", VPID);
    if (make_ts(g, &v, &a, NULL, P(base)) != 0 ||
        dt_gen_tool(g, "tsrepack", "nalstrip", base_buf, P(ref), pid, "7,8", "1", (char *)NULL) != 0 ||
        dt_gen_tool(g, "cp", ref_buf, P(cand), (char *)NULL) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    return mid_interval(g, ref_buf);
}

static int enc_slices(struct dt_gen *g)
{
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.slices = (int)dt_rand_in(g, 2, 8);
    return enc_common(g, &v, &a, dt_rand_in(g, 0, 1));
}

static int enc_interlaced(struct dt_gen *g)
{
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.interlaced = 1;
    v.h = 240; /* a multiple of 32: whole macroblock pairs */
    return enc_common(g, &v, &a, dt_rand_in(g, 0, 1));
}

/* Class 9: a reference that starts mid-GOP (its first frames cannot be decoded),
 * the interval starting at its first frame; the candidate's pictures there differ. */
static int enc_ref_mid_gop(struct dt_gen *g)
{
    char base_buf[DT_PATH_MAX], piece_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], cut[24];
    struct dt_video_spec v, ve;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.keyint = 30;
    v.bframes = 0; /* decode order = presentation order: the cut is a clean P frame */
    ve = v;
    dt_fmt(ve.edit, sizeof ve.edit, "drawbox=x=40:y=30:w=64:h=48:color=red@1:t=fill:enable='lt(n,30)'");
    if (make_ts(g, &v, &a, NULL, P(base)) != 0 || make_ts(g, &ve, &a, NULL, P(cand)) != 0)
        return -1;
    size_t n = 0;
    struct dt_pes *p = video_pes(g, base_buf, &n);
    if (p == NULL || n < 40) {
        free(p);
        return -1;
    }
    size_t first = (size_t)dt_rand_in(g, 5, 20); /* frames 5..20 of the first GOP */
    int64_t start = p[first].pts, key = p[30].pts;
    dt_fmt(cut, sizeof cut, "%zu", p[first].packet);
    free(p);
    if (dt_gen_tool(g, "tsedit", "split", base_buf, PX(piece), "restart", cut, (char *)NULL) != 0)
        return -1;
    char ref[DT_PATH_MAX];
    dt_fmt(ref, sizeof ref, "%s1.ts", piece_buf);
    set_case_ref(g->c, ref);
    set_case_cand(g->c, cand_buf);
    g->c->has_interval = true;
    g->c->start = (uint64_t)start;
    g->c->end = (uint64_t)(dt_rand_in(g, 0, 1) ? key - 3000 : key + 30 * 3000);
    dt_note(g->env, "reference starts at frame %zu (a P frame), its first key frame is at %" PRId64,
            first, key);
    return 0;
}

/* ---- edit recipes -------------------------------------------------------------------- */

/* Reference from v/a, candidate from ve/ae (edited specs), same muxing. */
static int edit_specs(struct dt_gen *g, const struct dt_video_spec *v, const struct dt_audio_spec *a,
                      const struct dt_video_spec *ve, const struct dt_audio_spec *ae)
{
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    if (make_ts(g, v, a, NULL, P(ref)) != 0 || make_ts(g, ve, ae, NULL, P(cand)) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* A 4x4 block of one frame inverted: a fixed colour could equal the source
 * there, and a single pixel could be quantised away (both seen: LABEL). */
static int edit_pixel(struct dt_gen *g)
{
    struct dt_video_spec v, ve;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    ve = v;
    dt_fmt(ve.edit, sizeof ve.edit, "drawbox=x=%d:y=%d:w=4:h=4:color=invert:t=fill:enable='eq(n,%d)'",
           (int)dt_rand_in(g, 0, v.w - 4), (int)dt_rand_in(g, 0, v.h - 4),
           (int)dt_rand_in(g, 0, v.fps * v.secs - 1));
    return edit_specs(g, &v, &a, &ve, &a);
}

static int edit_sample(struct dt_gen *g)
{
    struct dt_video_spec v;
    struct dt_audio_spec a, ae;
    vary_specs(g, &v, &a);
    ae = a;
    int ch = (int)dt_rand_in(g, 0, 1);
    int n = (int)dt_rand_in(g, 0, 48000 * a.secs - 1);
    dt_fmt(ae.edit, sizeof ae.edit, "aeval=exprs='%s|%s'",
           ch == 0 ? "if(eq(n,N),val(0)+0.5,val(0))" : "val(0)",
           ch == 1 ? "if(eq(n,N),val(1)+0.5,val(1))" : "val(1)");
    char num[16];
    dt_fmt(num, sizeof num, "%d", n);
    for (char *p; (p = strstr(ae.edit, "n,N")) != NULL;) { /* the sample number */
        char tail[256];
        dt_fmt(tail, sizeof tail, "%s", p + 3);
        dt_fmt(p, sizeof ae.edit - (size_t)(p - ae.edit), "n,%s%s", num, tail);
    }
    return edit_specs(g, &v, &a, &v, &ae);
}

/* A non-reference B-frame's PES removed (counters kept gap-free): one frame less. */
static int edit_frame_drop(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX], pid[16], idx[24];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.bframes = (int)dt_rand_in(g, 1, 3);
    v.pyramid = 0; /* B-frames are never references */
    dt_gen_path(g, "ref.ts", ref, sizeof ref);
    if (make_ts(g, &v, &a, NULL, ref) != 0)
        return -1;
    set_case_ref(g->c, ref);
    size_t n = 0, pick = 0;
    struct dt_pes *p = video_pes(g, ref, &n);
    int64_t maxpts = -1;
    size_t want = (size_t)dt_rand_in(g, 1, 20), seen = 0;
    for (size_t i = 0; p && i < n; i++) {
        if (p[i].pts < maxpts && ++seen == want)
            pick = i;
        if (p[i].pts > maxpts)
            maxpts = p[i].pts;
    }
    free(p);
    if (pick == 0)
        return -1;
    dt_fmt(pid, sizeof pid, "%u", VPID);
    dt_fmt(idx, sizeof idx, "%zu", pick);
    if (dt_gen_tool(g, "tsedit", "droppes", ref, P(cand), pid, idx, (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

static int edit_frame_dup(struct dt_gen *g)
{
    struct dt_video_spec v, ve;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    ve = v;
    int n = (int)dt_rand_in(g, 1, v.fps * v.secs - 1);
    dt_fmt(ve.edit, sizeof ve.edit, "split[a][b];[a][b]freezeframes=first=%d:last=%d:replace=%d", n, n,
           n - 1);
    return edit_specs(g, &v, &a, &ve, &a);
}

/* Shifts of two ticks at least: one tick is packaging (issue 18 class 5, pack_subtick). */
static const int64_t shifts[] = {900000, 3000, 2, -2, -90000, (INT64_C(1) << 33) - 45000};

static int shift_common(struct dt_gen *g, bool declared)
{
    char t[32];
    int64_t s = shifts[dt_rand_in(g, 0, 5)];
    dt_fmt(t, sizeof t, "%" PRId64, s);
    if (tool_recipe(g, "tsedit", "shift", t, NULL, NULL) != 0)
        return -1;
    if (declared)
        g->c->offset = (uint64_t)(((s % (INT64_C(1) << 33)) + (INT64_C(1) << 33)) % (INT64_C(1) << 33));
    return 0;
}

static int edit_shift_declared(struct dt_gen *g)
{
    return shift_common(g, true);
}

static int edit_shift_undeclared(struct dt_gen *g)
{
    return shift_common(g, false);
}

/* Only the audio PES timestamps move (by a sample or more: two ticks, 15,
 * half or one AAC frame; a tick is packaging since issue 18, pack_subtick). */
static int edit_shift_audio(struct dt_gen *g)
{
    static const char *const t[] = {"2", "-2", "15", "960", "1920", "-1920"};
    char pid[16];
    dt_fmt(pid, sizeof pid, "%u", APID);
    return tool_recipe(g, "tsedit", "shift", dt_pick(g, t, 6), pid, NULL);
}

/* Issue 18, class 5: one track's PES timestamps (or both, in opposite
 * directions) moved by one 90 kHz tick, as a muxer that floors where
 * another rounds: packaging, MATCH; by seed a mid-stream interval. */
static int pack_subtick(struct dt_gen *g)
{
    static const char *const t[] = {"1", "-1"};
    char ref[DT_PATH_MAX], mid_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], vpid[16], apid[16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    dt_fmt(vpid, sizeof vpid, "%u", VPID);
    dt_fmt(apid, sizeof apid, "%u", APID);
    int which = (int)dt_rand_in(g, 0, 2);   /* audio, video, both */
    const char *ticks = dt_pick(g, t, 2), *other = ticks[0] == '-' ? "1" : "-1";
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        dt_gen_tool(g, "tsedit", "shift", ref, P(mid), ticks, which == 1 ? vpid : apid, (char *)NULL) != 0 ||
        dt_gen_tool(g, "tsedit", "shift", mid_buf, P(cand), which == 2 ? other : "0", vpid, (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ref) : 0;
}

/* Issue 18, class 9: runs of 2..4 ADTS frames inside each audio PES merged
 * into one ADTS frame of as many raw data blocks (legal AAC-LC, which
 * FFmpeg 5.1 decodes block by block to the same samples), on the candidate
 * or on the reference; by seed a mid-stream interval and several AAC
 * frames per PES or one.  MATCH. */
static int pack_adts_blocks(struct dt_gen *g)
{
    static const char *const n[] = {"2", "3", "4"};
    static const char *const one_per_pes[] = {"-muxdelay", "0", NULL};
    char ref[DT_PATH_MAX], blocks_buf[DT_PATH_MAX], apid[16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    dt_fmt(apid, sizeof apid, "%u", APID);
    vary_specs(g, &v, &a);
    dt_gen_path(g, "ref.ts", ref, sizeof ref);
    /* one AAC frame per PES leaves nothing to merge: several, by default */
    bool several = dt_rand_in(g, 0, 3) != 0;
    if (make_ts(g, &v, &a, several ? NULL : one_per_pes, ref) != 0 ||
        dt_gen_tool(g, "tsrepack", "adtsblocks", ref, P(blocks), apid, dt_pick(g, n, 3), (char *)NULL) != 0)
        return -1;
    set_case_ref(g->c, ref);
    set_case_cand(g->c, blocks_buf);
    if (dt_rand_in(g, 0, 2) == 0) {
        dt_note(g->env, "the reference carries the multi-block ADTS frames");
        set_case_ref(g->c, blocks_buf);
        set_case_cand(g->c, ref);
    }
    return dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ref) : 0;
}

/* The PTS of the first PES with random_access_indicator set (the first key
 * frame, for FFmpeg's and GStreamer's muxers alike, whatever the PID); -1. */
static int64_t first_rai_pts(const struct dt_pes *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++)
        if (p[i].rai && p[i].pts >= 0)
            return p[i].pts;
    return -1;
}

/* Issue 18, class 5: the reference remuxed by GStreamer (tsdemux !
 * mpegtsmux, as hlssink2 packages), which floors nanoseconds to 90 kHz: most
 * AAC PTS (and many video PTS) one tick early against FFmpeg's, the content
 * byte for byte the same; its timeline starts at 3600 s, declared as the
 * offset between the two first video PES.  MATCH. */
static int pack_gst_mux(struct dt_gen *g)
{
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], loc_in[DT_PATH_MAX + 16], loc_out[DT_PATH_MAX + 16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    a.lead_ms = 0;               /* mpegtsmux drops audio before the first video time */
    if (make_ts(g, &v, &a, NULL, P(ref)) != 0 || !P(cand) ||
        !dt_fmt(loc_in, sizeof loc_in, "location=%s", ref_buf) ||
        !dt_fmt(loc_out, sizeof loc_out, "location=%s", cand_buf) ||
        dt_gen_tool(g, "gst-launch-1.0", "-q", "filesrc", loc_in, "!", "tsdemux", "name=d", "d.", "!", "queue",
                    "!", "h264parse", "!", "mpegtsmux", "name=m", "!", "filesink", loc_out, "d.", "!", "queue",
                    "!", "aacparse", "!", "m.", (char *)NULL) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    size_t nr = 0, nc = 0;
    struct dt_pes *pr = dt_gen_pes_list(g, ref_buf, &nr, NULL);
    int64_t r0 = first_rai_pts(pr, nr);
    free(pr);
    struct dt_pes *pc = dt_gen_pes_list(g, cand_buf, &nc, NULL);
    int64_t c0 = first_rai_pts(pc, nc);
    free(pc);
    if (r0 < 0 || c0 < 0)
        return -1;
    g->c->offset = (uint64_t)((c0 - r0) & ((INT64_C(1) << 33) - 1));
    dt_note(g->env, "GStreamer's timeline: --time-offset %" PRIu64, g->c->offset);
    return dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ref_buf) : 0;
}

/* Byte length of the first k ADTS frames of file path; -1 if it has fewer. */
static long adts_prefix(const char *path, size_t k)
{
    size_t len = 0;
    unsigned char *d = (unsigned char *)dt_read_file(path, 64u << 20, &len);
    size_t off = 0;
    for (size_t i = 0; d && i < k; i++) {
        if (off + 7 > len || d[off] != 0xff || (d[off + 1] & 0xf0) != 0xf0) {
            free(d);
            return -1;
        }
        size_t fl = ((size_t)(d[off + 3] & 3) << 11) | ((size_t)d[off + 4] << 3) | (d[off + 5] >> 5);
        if (fl < 7)
            break;
        off += fl;
    }
    free(d);
    return d && off <= len ? (long)off : -1;
}

/* out = ADTS frames [0,k) of a, then [k,m) of b, then [m,end) of a; m == 0:
 * b from frame k to its end.  Three dd commands, so the recipe replays. */
static int adts_splice(struct dt_gen *g, const char *a, const char *b, size_t k, size_t m,
                       const char *out)
{
    long ak = adts_prefix(a, k), bk = adts_prefix(b, k);
    long bm = m ? adts_prefix(b, m) : -2, am = m ? adts_prefix(a, m) : -2;
    if (ak < 0 || bk < 0 || bm == -1 || am == -1)
        return -1;
    char ifa[DT_PATH_MAX + 8], ifb[DT_PATH_MAX + 8], of[DT_PATH_MAX + 8], n1[40], n2[40], n3[40];
    dt_fmt(ifa, sizeof ifa, "if=%s", a);
    dt_fmt(ifb, sizeof ifb, "if=%s", b);
    dt_fmt(of, sizeof of, "of=%s", out);
    dt_fmt(n1, sizeof n1, "count=%ld", ak);
    dt_fmt(n2, sizeof n2, "skip=%ld", bk);
    if (dt_gen_tool(g, "dd", ifa, of, "bs=65536", n1, "iflag=count_bytes", "status=none",
                    (char *)NULL) != 0)
        return -1;
    if (m == 0)
        return dt_gen_tool(g, "dd", ifb, of, "bs=65536", n2, "iflag=skip_bytes", "oflag=append",
                           "conv=notrunc", "status=none", (char *)NULL);
    dt_fmt(n3, sizeof n3, "count=%ld", bm - bk);
    if (dt_gen_tool(g, "dd", ifb, of, "bs=65536", n2, n3, "iflag=skip_bytes,count_bytes",
                    "oflag=append", "conv=notrunc", "status=none", (char *)NULL) != 0)
        return -1;
    dt_fmt(n2, sizeof n2, "skip=%ld", am);
    return dt_gen_tool(g, "dd", ifa, of, "bs=65536", n2, "iflag=skip_bytes", "oflag=append",
                       "conv=notrunc", "status=none", (char *)NULL);
}

/* Class 11: stereo AAC frames, then mono ones from frame k on. */
static int edit_channels(struct dt_gen *g)
{
    char vp[DT_PATH_MAX], ap[DT_PATH_MAX], mp[DT_PATH_MAX], ref_buf[DT_PATH_MAX];
    char mixed_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a, am;
    vary_specs(g, &v, &a);
    am = a;
    am.channels = 1;
    size_t k = (size_t)dt_rand_in(g, 10, 120);
    dt_note(g->env, "ADTS frames 0..%zu stereo, then mono", k - 1);
    if (dt_gen_video(g, &v, vp, sizeof vp) != 0 || dt_gen_audio(g, &a, ap, sizeof ap) != 0 ||
        dt_gen_audio(g, &am, mp, sizeof mp) != 0 ||
        dt_gen_mux(g, vp, ap, NULL, a.lead_ms, NULL, P(ref)) != 0 ||
        adts_splice(g, ap, mp, k, 0, PE(mixed, ".aac")) != 0 ||
        dt_gen_mux(g, vp, mixed_buf, NULL, a.lead_ms, NULL, P(cand)) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Class 12: what gives the planes their meaning, retagged (h264_metadata). */
static int edit_colour(struct dt_gen *g)
{
    static const char *const tags[] = {
        "h264_metadata=colour_primaries=9:transfer_characteristics=16:matrix_coefficients=9",
        "h264_metadata=colour_primaries=1:transfer_characteristics=1:matrix_coefficients=1",
        "h264_metadata=video_full_range_flag=1",
        "h264_metadata=chroma_sample_loc_type=2",
        "h264_metadata=sample_aspect_ratio=4/3",
    };
    const char *opts[] = {"-bsf:v", dt_pick(g, tags, 5), NULL};
    return remux_recipe(g, opts);
}

/* Issue 18, class 8: a VUI default written explicitly (the range flag 0,
 * or a colour description of "unspecified" values, which carries the range
 * flag 0 with it): the same meaning as absent (H.264 E.2.1), MATCH. */
static int edit_vui_default(struct dt_gen *g)
{
    static const char *const tags[] = {
        "h264_metadata=video_full_range_flag=0",
        "h264_metadata=colour_primaries=2:transfer_characteristics=2:matrix_coefficients=2",
        "h264_metadata=video_format=5",
        "h264_metadata=chroma_sample_loc_type=0",
    };
    const char *opts[] = {"-bsf:v", dt_pick(g, tags, 4), NULL};
    return remux_recipe(g, opts);
}

/* Class 13: the candidate carries a second, different audio track. */
static int edit_extra_audio(struct dt_gen *g)
{
    char vp[DT_PATH_MAX], ap[DT_PATH_MAX], a2p[DT_PATH_MAX], ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a, a2;
    vary_specs(g, &v, &a);
    a2 = a;
    dt_fmt(a2.src, sizeof a2.src, "%s", strcmp(a.src, "noise") == 0 ? "tones" : "noise");
    a2.seed = 7;
    if (dt_gen_video(g, &v, vp, sizeof vp) != 0 || dt_gen_audio(g, &a, ap, sizeof ap) != 0 ||
        dt_gen_audio(g, &a2, a2p, sizeof a2p) != 0 ||
        dt_gen_mux(g, vp, ap, NULL, a.lead_ms, NULL, P(ref)) != 0 ||
        dt_gen_mux(g, vp, ap, a2p, a.lead_ms, NULL, P(cand)) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Class 2: an audio difference after START inside the first audio PES, which
 * starts before START (several AAC frames per PES).  One compressed AAC
 * frame k is taken from an encode of an edited source, so the decoded
 * difference is confined to frames k and k+1 (MDCT overlap); both are
 * placed after START and inside the first PES, from the reference's layout. */
static int edit_first_pes_audio(struct dt_gen *g)
{
    char vp[DT_PATH_MAX], ap[DT_PATH_MAX], ep[DT_PATH_MAX];
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], spliced_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a, ae;
    vary_specs(g, &v, &a);
    v.bframes = 0;
    a.lead_ms = 100;
    if (dt_gen_video(g, &v, vp, sizeof vp) != 0 || dt_gen_audio(g, &a, ap, sizeof ap) != 0 ||
        dt_gen_mux(g, vp, ap, NULL, a.lead_ms, NULL, P(ref)) != 0)
        return -1;
    size_t n = 0;
    struct dt_pes *p = dt_gen_pes_list(g, ref_buf, &n, NULL);
    int64_t a0 = -1, a1 = -1, start = -1;
    for (size_t i = 0; p && i < n; i++) {
        if (p[i].pid == APID && a0 < 0)
            a0 = p[i].pts;
        else if (p[i].pid == APID && a1 < 0)
            a1 = p[i].pts;
    }
    for (size_t i = 0; p && i < n && a0 >= 0; i++) /* the first video frame after a0 + 1 AAC frame */
        if (p[i].pid == VPID && p[i].pts > a0 + 1920 && (start < 0 || p[i].pts < start))
            start = p[i].pts;
    free(p);
    int64_t k_lo = start < 0 ? -1 : (start - a0 + 1919) / 1920, k_hi = (a1 - a0) / 1920 - 2;
    if (a0 < 0 || a1 < 0 || start < 0 || k_lo > k_hi) {
        dt_note(g->env, "the first audio PES [%" PRId64 ", %" PRId64 ") leaves no room after START %" PRId64,
                a0, a1, start);
        return -1;
    }
    size_t k = (size_t)dt_rand_in(g, k_lo, k_hi);
    ae = a;
    dt_fmt(ae.edit, sizeof ae.edit,
           "aeval=exprs='if(between(n,%zu,%zu),val(0)+0.5,val(0))|val(1)'", k * 1024 + 500, k * 1024 + 520);
    if (dt_gen_audio(g, &ae, ep, sizeof ep) != 0 || adts_splice(g, ap, ep, k, k + 1, PE(spliced, ".aac")) != 0 ||
        dt_gen_mux(g, vp, spliced_buf, NULL, a.lead_ms, NULL, P(cand)) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    g->c->has_interval = true;
    g->c->start = (uint64_t)start;
    g->c->end = (uint64_t)(start + 90000);
    dt_note(g->env, "the first audio PES holds [%" PRId64 ", %" PRId64 "); START %" PRId64
                    "; AAC frame %zu (pts %" PRId64 ") comes from an edited encode", a0, a1, start, k,
            a0 + 1920 * (int64_t)k);
    return 0;
}

/* Number of TS packets of pid in ts (0 when it cannot be listed). */
static uint64_t pid_packets(struct dt_gen *g, const char *ts, unsigned pid)
{
    size_t all = 0;
    uint64_t n = 0;
    struct dt_pes *pes = dt_gen_pes_list(g, ts, &all, NULL);
    for (size_t i = 0; pes && i < all; i++)
        if (pes[i].pid == pid)
            n += pes[i].npackets;
    free(pes);
    return n;
}

/* Index among pid's packets of a packet inside one of its PES (neither the
 * first, with the PES header, nor the last, with stuffing: a full 184-byte
 * payload), the PES taken between fractions lo and hi of the PID's PES
 * (in 1/100).  -1 when there is none. */
static int64_t inner_packet(struct dt_gen *g, const char *ts, unsigned pid, int lo, int hi)
{
    size_t all = 0, m = 0;
    struct dt_pes *p = dt_gen_pes_list(g, ts, &all, NULL);
    for (size_t i = 0; p && i < all; i++)
        if (p[i].pid == pid)
            p[m++] = p[i];
    int64_t found = -1;
    uint64_t before = 0;
    size_t from = m * (size_t)lo / 100, to = m * (size_t)hi / 100;
    size_t want = (size_t)dt_rand_in(g, (int64_t)from, (int64_t)(to > from ? to - 1 : from));
    for (size_t i = 0; p && i < m && found < 0; i++) {
        if (i >= want && p[i].npackets >= 3)
            found = (int64_t)(before + 1 + (uint64_t)dt_rand_in(g, 0, (int64_t)p[i].npackets - 3));
        before += p[i].npackets;
    }
    free(p);
    return found;
}

/* Damage: one byte of a video or audio payload flipped in the second half. */
static int dmg_flip(struct dt_gen *g, unsigned pid)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX], p[16], n[24], byte[16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    int64_t k = inner_packet(g, ref, pid, 33, 90);
    if (k < 0)
        return -1;
    dt_fmt(p, sizeof p, "%u", pid);
    dt_fmt(n, sizeof n, "%" PRId64, k);
    dt_fmt(byte, sizeof byte, "%" PRId64, dt_rand_in(g, 0, 183));
    if (dt_gen_tool(g, "tsedit", "flip", ref, P(cand), p, n, byte, (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

static int dmg_flip_video(struct dt_gen *g)
{
    return dmg_flip(g, VPID);
}

static int dmg_flip_audio(struct dt_gen *g)
{
    return dmg_flip(g, APID);
}

static int dmg_lost_packet(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX], p[16], n[24];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    unsigned pid = dt_rand_in(g, 0, 1) ? VPID : APID;
    uint64_t pkts = pid_packets(g, ref, pid);
    dt_fmt(p, sizeof p, "%u", pid);
    dt_fmt(n, sizeof n, "%" PRId64, dt_rand_in(g, (int64_t)pkts / 4, (int64_t)pkts * 9 / 10));
    if (pkts < 8 || dt_gen_tool(g, "tsedit", "drop", ref, P(cand), p, n, (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

static int dmg_truncate(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX], off[32];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    size_t total = 0;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    free(dt_gen_pes_list(g, ref, &(size_t){0}, &total));
    int64_t pk = dt_rand_in(g, (int64_t)total * 4 / 10, (int64_t)total * 9 / 10);
    int64_t within = dt_rand_in(g, 0, 1) ? dt_rand_in(g, 1, 187) : 0;
    dt_fmt(off, sizeof off, "%" PRId64, pk * 188 + within);
    if (total < 10 || dt_gen_tool(g, "tsedit", "truncate", ref, P(cand), off, (char *)NULL) != 0)
        return -1;
    /* A cut inside a packet is always seen (truncated_ts_packet).  One at a
     * packet boundary that is also where every open PES ends is a clean,
     * shorter file, as cand_short.ts: MISMATCH (--random 120 --seed 11,
     * dmg_truncate:992163, the oracle and exactav agreeing). */
    if (!within)
        g->c->labels = DT_VSET(DT_UNKNOWN) | DT_VSET(DT_MISMATCH);
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* True when FFmpeg conceals damage in ts's video without an error-level
 * message (only its info-level "concealing" line): the damage a verifier that
 * watches error messages does not see. */
static bool conceals_silently(struct dt_gen *g, const char *ts)
{
    char log_buf[DT_PATH_MAX];
    struct dt_argv x;
    dt_argv_init(&x);
    dt_argv_addl(&x, "ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-loglevel", "level+info",
                 "-threads", "1", "-i", ts, "-map", "0:v", "-f", "null", "-", NULL);
    int rc = dt_run(g->env, &x, NULL, PE(log, ".txt"));
    dt_argv_free(&x);
    char *text = rc == 0 ? dt_read_file(log_buf, 16u << 20, NULL) : NULL;
    bool silent = text && strstr(text, "] [info] concealing ") && !strstr(text, "] [error]");
    free(text);
    return silent;
}

/* One track differs in clean data while the other is damaged: a pixel of one
 * frame and a lost audio packet.  The confirmed video difference decides:
 * MISMATCH (SPEC: any MISMATCH wins over UNKNOWN on the other track). */
static int dmg_audio_edit_video(struct dt_gen *g)
{
    char ref_buf[DT_PATH_MAX], edited_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], p[16], n[24];
    struct dt_video_spec v, ve;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    ve = v;
    dt_fmt(ve.edit, sizeof ve.edit, "drawbox=x=%d:y=%d:w=8:h=8:color=white@1:t=fill:enable='eq(n,%d)'",
           (int)dt_rand_in(g, 0, v.w - 8), (int)dt_rand_in(g, 0, v.h - 8), (int)dt_rand_in(g, 5, 80));
    if (make_ts(g, &v, &a, NULL, P(ref)) != 0 || make_ts(g, &ve, &a, NULL, P(edited)) != 0)
        return -1;
    int64_t k = inner_packet(g, edited_buf, APID, 20, 90);
    dt_fmt(p, sizeof p, "%u", APID);
    dt_fmt(n, sizeof n, "%" PRId64, k);
    if (k < 0 || dt_gen_tool(g, "tsedit", "drop", edited_buf, P(cand), p, n, (char *)NULL) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Damage outside a mid-stream interval: a lost video packet in the first
 * quarter (before the decode boundary) or a lost video or audio packet in the
 * last tenth (after END).  Every frame and sample of I is identical: MATCH,
 * though UNKNOWN is accepted (README rule 9).  Audio damage is only placed
 * after END: before START it would change the AAC history (known limits). */
static int dmg_outside_interval(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX], p[16], n[24];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    bool before = dt_rand_in(g, 0, 1);
    unsigned pid = before || dt_rand_in(g, 0, 1) ? VPID : APID;
    uint64_t pkts = pid_packets(g, ref, pid);
    if (pkts < 20)
        return -1;
    int64_t k = before ? dt_rand_in(g, 1, (int64_t)pkts / 4) : dt_rand_in(g, (int64_t)pkts * 9 / 10, (int64_t)pkts - 2);
    dt_fmt(p, sizeof p, "%u", pid);
    dt_fmt(n, sizeof n, "%" PRId64, k);
    if (dt_gen_tool(g, "tsedit", "drop", ref, P(cand), p, n, (char *)NULL) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    /* I: from a frame after 50 % to one before 80 % of the video */
    size_t nv = 0;
    struct dt_pes *pes = video_pes(g, ref, &nv);
    if (pes == NULL || nv < 20) {
        free(pes);
        return -1;
    }
    int64_t *pts = malloc(nv * sizeof *pts);
    for (size_t i = 0; pts && i < nv; i++)
        pts[i] = pes[i].pts;
    free(pes);
    if (pts == NULL)
        return -1;
    qsort(pts, nv, sizeof *pts, dt_cmp_i64);
    g->c->has_interval = true;
    g->c->start = (uint64_t)pts[dt_rand_in(g, (int64_t)nv / 2, (int64_t)nv * 6 / 10)];
    g->c->end = (uint64_t)pts[dt_rand_in(g, (int64_t)nv * 7 / 10, (int64_t)nv * 8 / 10)];
    free(pts);
    dt_note(g->env, "packet %" PRId64 " of PID %u lost, %s the interval", k, pid, before ? "before" : "after");
    return 0;
}

/* Class 10: damage in an open-GOP I frame whose leading B-frames are output
 * before it.  Flips are tried in the I frame's packets (after its first) until
 * one makes FFmpeg conceal silently (at most 16 tries; otherwise the last). */
static int dmg_open_gop_i(struct dt_gen *g)
{
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], p[16], n[24], byte[16];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    v.open_gop = 1;
    v.bframes = 3;
    v.keyint = 30;
    if (make_ts(g, &v, &a, NULL, P(ref)) != 0)
        return -1;
    set_case_ref(g->c, ref_buf);
    size_t nv = 0;
    struct dt_pes *pes = video_pes(g, ref_buf, &nv);
    /* the video PID's packets of an I frame that is not the first, without its
     * first (PES header) and its last (stuffing): full 184-byte payloads */
    uint64_t first = 0, count = 0, before = 0;
    size_t want = (size_t)dt_rand_in(g, 1, 2), keys = 0;
    for (size_t i = 0; pes && i < nv && count == 0; i++) {
        if (pes[i].rai && keys++ == want && pes[i].npackets >= 3) {
            first = before + 1;
            count = pes[i].npackets - 2;
        }
        before += pes[i].npackets;
    }
    free(pes);
    if (count == 0)
        return -1;
    dt_fmt(p, sizeof p, "%u", VPID);
    for (int attempt = 0; attempt < 16; attempt++) {
        dt_fmt(n, sizeof n, "%" PRIu64, first + (uint64_t)dt_rand_in(g, 0, (int64_t)count - 1));
        dt_fmt(byte, sizeof byte, "%" PRId64, dt_rand_in(g, 0, 183));
        if (dt_gen_tool(g, "tsedit", "flip", ref_buf, P(cand), p, n, byte, (char *)NULL) != 0)
            return -1;
        if (conceals_silently(g, cand_buf)) {
            dt_note(g->env, "this flip is concealed without an error message (try %d)", attempt + 1);
            break;
        }
    }
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Class 14: a binding's scope overridden on the command line: a usage error. */
static int usage_binding_scope(struct dt_gen *g)
{
    static const char *const opts[] = {"--channel", "--rendition", "--program-version"};
    char ref[DT_PATH_MAX], db_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    g->c->ref_bind = true;
    set_case_cand(g->c, ref);
    add_extra(g->c, dt_pick(g, opts, 3), "other");
    add_extra(g->c, "--evidence", PE(db, ".sqlite"));
    return 0;
}

#define L_MATCH DT_VSET(DT_MATCH)
#define L_MISMATCH DT_VSET(DT_MISMATCH)
#define L_UNKNOWN DT_VSET(DT_UNKNOWN)
#define L_USAGE DT_VSET(DT_USAGE)
#define L_ANY 0u /* no intent: a flipped byte may be damage, decode cleanly to other content, or not matter */

/* ---- combinations ------------------------------------------------------------------ */

/* A chain of 0..3 packaging changes applied to the candidate file *path
 * (remuxes first, since a remux would undo the TS-level changes); *vpid
 * follows the PIDs; *remuxed tells whether ffmpeg remuxed it.  Returns 0
 * or -1. */
static int combo_packaging(struct dt_gen *g, char *path, size_t size, unsigned *vpid, bool *remuxed)
{
    static const char *const remux_ops[] = {"pids", "muxdelay0", "resend", "muxrate"};
    static const char *const ts_ops[] = {"addprog", "pcrpid", "nulls", "nalstrip", "pessplit", "stype"};
    static const char *const *const kinds = prog_first_kinds;
    static const char *const nals[] = {"9", "6", "9,6"};
    int n = (int)dt_rand_in(g, 0, 3), nremux = (int)dt_rand_in(g, 0, n), step = 0;
    bool pcr_moved = false;      /* tsrepack refuses a PCR PID already in use */
    bool prog_added = false;
    char out[DT_PATH_MAX], arg[32], pid[16];
    for (int i = 0; i < n; i++) {
        bool remux = i < nremux;
        *remuxed |= remux;
        dt_fmt(out, sizeof out, "%s/pack%d.ts", g->c->dir, step++);
        int rc;
        if (remux) {
            const char *op = dt_pick(g, remux_ops, 4);
            const char *opts[8] = {NULL};
            if (strcmp(op, "pids") == 0) {
                *vpid = (unsigned)dt_rand_in(g, 0x200, 0xe00);
                dt_fmt(arg, sizeof arg, "0x%x", *vpid);
                dt_fmt(pid, sizeof pid, "0x%x", (unsigned)dt_rand_in(g, 0x20, 0x100));
                opts[0] = "-mpegts_start_pid", opts[1] = arg, opts[2] = "-mpegts_pmt_start_pid";
                opts[3] = pid;
            } else if (strcmp(op, "muxdelay0") == 0) {
                opts[0] = "-muxdelay", opts[1] = "0";
            } else if (strcmp(op, "resend") == 0) {
                /* PAT and PMT again before each key frame (was "latm", which
                 * announces another codec since issue 18: not packaging) */
                opts[0] = "-mpegts_flags", opts[1] = "resend_headers";
            } else {
                opts[0] = "-muxrate", opts[1] = "2500k";
            }
            if (strcmp(op, "pids") != 0)
                *vpid = 0x100; /* a remux renumbers from 0x100 */
            rc = dt_gen_remux(g, path, opts, out);
        } else {
            const char *op = dt_pick(g, ts_ops, 6);
            if (strcmp(op, "pcrpid") == 0 && pcr_moved)
                op = "nulls";    /* drawn twice: the second time, null packets */
            /* tsrepack's PMT rewrites read the first program of the PAT, which
             * after addprog is the added one (combo:554320 failed to generate) */
            if ((strcmp(op, "stype") == 0 || strcmp(op, "addprog") == 0) && prog_added)
                op = "nulls";    /* and a second addprog would reuse its PIDs (combo:12652) */
            pcr_moved |= strcmp(op, "pcrpid") == 0;
            prog_added |= strcmp(op, "addprog") == 0;
            dt_fmt(pid, sizeof pid, "%u", *vpid);
            if (strcmp(op, "addprog") == 0)
                rc = dt_gen_tool(g, "tsrepack", "addprog", path, out, dt_pick(g, kinds, 4), (char *)NULL);
            else if (strcmp(op, "pcrpid") == 0)
                rc = dt_gen_tool(g, "tsrepack", "pcrpid", path, out, "0x1ff", (char *)NULL);
            else if (strcmp(op, "nulls") == 0)
                rc = dt_gen_tool(g, "tsedit", "nulls", path, out, "7", (char *)NULL);
            else if (strcmp(op, "pessplit") == 0)
                rc = dt_gen_tool(g, "tsrepack", "pessplit", path, out, pid, "middle", "0", (char *)NULL);
            else if (strcmp(op, "stype") == 0) { /* the PMT rewritten, the audio announced as before */
                char apid[16];
                dt_fmt(apid, sizeof apid, "%u", *vpid + 1);
                rc = dt_gen_tool(g, "tsrepack", "stype", path, out, apid, "0x0f", (char *)NULL);
            }
            else
                rc = dt_gen_tool(g, "tsrepack", "nalstrip", path, out, pid, dt_pick(g, nals, 3), "0",
                                 (char *)NULL);
        }
        if (rc != 0)
            return -1;
        dt_fmt(path, size, "%s", out);
    }
    return 0;
}

/* The candidate file delivered as it is, or as an HLS playlist of segments
 * (cut at key frames: restart, continue or bytes; or inside PES; or as byte
 * ranges of the file). */
static int combo_delivery(struct dt_gen *g, const char *cand, unsigned vpid)
{
    static const char *const modes[] = {"restart", "continue", "bytes"};
    char seg_buf[DT_PATH_MAX], piece_buf[DT_PATH_MAX];
    struct dt_seg segs[DT_MAX_SEGS];
    size_t n = 0;
    switch (dt_rand_in(g, 0, 4)) {
    case 0:
    case 1:
        set_case_cand(g->c, cand);
        return 0;
    case 2: {
        int k = dt_gen_segments(g, cand, vpid, (int)dt_rand_in(g, 1, 2), dt_pick(g, modes, 3), PX(seg),
                                segs, DT_MAX_SEGS);
        if (k <= 0)
            return -1;
        n = (size_t)k;
        break;
    }
    case 3:
        if (pieces_inside_pes(g, cand, vpid, PX(piece), segs, &n) != 0)
            return -1;
        break;
    default:
        if (byteranges_inside_pes(g, cand, vpid, segs, &n) != 0)
            return -1;
    }
    return n ? hls_candidate(g, segs, n, true) : -1;
}

/* Seeded combinations: an optional edit or damage, a chain of packaging
 * changes, a delivery (file or HLS), an optional PTS wrap of both sides, an
 * optional declared shift, and the default interval or an explicit one on
 * frame times or on arbitrary ticks. */
static int combo(struct dt_gen *g)
{
    static const char *const edits[] = {"none", "none", "pixel", "sample", "lost_audio", "pixel+lost_audio"};
    /* (the first three are the ones allowed with an explicit interval) */
    char ref_buf[DT_PATH_MAX], cand_buf[DT_PATH_MAX], cand[DT_PATH_MAX], t[32];
    struct dt_video_spec v, ve;
    struct dt_audio_spec a, ae;
    vary_specs(g, &v, &a);
    ve = v;
    ae = a;
    /* the interval first: audio edits only with the whole stream, since AAC
     * decoding depends on what came before START (README, known limits) */
    int iv = (int)dt_rand_in(g, 0, 2);
    const char *edit = dt_pick(g, edits, iv ? 3 : 6);
    if (strstr(edit, "pixel"))
        dt_fmt(ve.edit, sizeof ve.edit, "drawbox=x=%d:y=%d:w=4:h=4:color=white@1:t=fill:enable='eq(n,%d)'",
               (int)dt_rand_in(g, 0, v.w - 4), (int)dt_rand_in(g, 0, v.h - 4), (int)dt_rand_in(g, 0, 89));
    if (strcmp(edit, "sample") == 0)
        dt_fmt(ae.edit, sizeof ae.edit, "aeval=exprs='if(eq(n,%d),val(0)+0.5,val(0))|val(1)'",
               (int)dt_rand_in(g, 0, 143999));
    dt_note(g->env, "combo: edit %s", edit);
    if (make_ts(g, &v, &a, NULL, P(ref)) != 0 || make_ts(g, &ve, &ae, NULL, P(cand)) != 0)
        return -1;
    dt_fmt(cand, sizeof cand, "%s", cand_buf);
    if (strstr(edit, "lost_audio")) {
        char n[24], pidv[16];
        dt_fmt(pidv, sizeof pidv, "%u", APID);
        dt_fmt(n, sizeof n, "%" PRId64, dt_rand_in(g, 20, (int64_t)pid_packets(g, cand, APID) - 5));
        dt_fmt(cand, sizeof cand, "%s/lost.ts", g->c->dir);
        if (dt_gen_tool(g, "tsedit", "drop", cand_buf, cand, pidv, n, (char *)NULL) != 0)
            return -1;
    }
    unsigned vpid = VPID;
    bool remuxed = false;
    if (combo_packaging(g, cand, sizeof cand, &vpid, &remuxed) != 0)
        return -1;
    /* after the packaging: ffmpeg's remux does not keep wrapped PTS (FACTS.md) */
    if (dt_rand_in(g, 0, 3) == 0) { /* both sides cross 2^33 about a second in */
        char wrapped[DT_PATH_MAX];
        dt_fmt(t, sizeof t, "%" PRId64, (INT64_C(1) << 33) - 132000 - 90000);
        dt_fmt(wrapped, sizeof wrapped, "%s/ref-wrap.ts", g->c->dir);
        if (dt_gen_tool(g, "tsedit", "shift", ref_buf, wrapped, t, (char *)NULL) != 0)
            return -1;
        dt_fmt(ref_buf, sizeof ref_buf, "%s", wrapped);
        dt_fmt(wrapped, sizeof wrapped, "%s/cand-wrap.ts", g->c->dir);
        if (dt_gen_tool(g, "tsedit", "shift", cand, wrapped, t, (char *)NULL) != 0)
            return -1;
        dt_fmt(cand, sizeof cand, "%s", wrapped);
    }
    set_case_ref(g->c, ref_buf);
    if (dt_rand_in(g, 0, 4) == 0) { /* a declared shift */
        static const int64_t offs[] = {900000, 3000, 1, (INT64_C(1) << 33) - 1};
        int64_t off = offs[dt_rand_in(g, 0, 3)];
        char shifted[DT_PATH_MAX];
        dt_fmt(t, sizeof t, "%" PRId64, off);
        dt_fmt(shifted, sizeof shifted, "%s/cand-shift.ts", g->c->dir);
        if (dt_gen_tool(g, "tsedit", "shift", cand, shifted, t, (char *)NULL) != 0)
            return -1;
        dt_fmt(cand, sizeof cand, "%s", shifted);
        g->c->offset = (uint64_t)off;
    }
    if (combo_delivery(g, cand, vpid) != 0)
        return -1;
    if (iv == 1 && mid_interval(g, ref_buf) != 0)
        return -1;
    if (iv == 2) { /* arbitrary ticks, not on frame or sample times */
        size_t n = 0;
        struct dt_pes *p = video_pes(g, ref_buf, &n);
        int64_t first = n ? p[0].pts : -1;
        for (size_t i = 0; i < n; i++)
            if (((p[i].pts - first) & ((INT64_C(1) << 33) - 1)) > (INT64_C(1) << 32))
                first = p[i].pts; /* the earliest PTS (mod 2^33) */
        free(p);
        if (first < 0)
            return -1;
        g->c->has_interval = true;
        g->c->start = (uint64_t)((first + dt_rand_in(g, 1000, 90000)) & ((INT64_C(1) << 33) - 1));
        g->c->end = (g->c->start + (uint64_t)dt_rand_in(g, 30000, 150000)) & ((UINT64_C(1) << 33) - 1);
    }
    /* the intent: a difference inside the whole stream is a MISMATCH, unless
     * damage takes its place; with an explicit interval the oracle alone says.
     * A remux after the loss rewrites the damaged PES into a clean, shorter
     * one: then the loss is content (samples missing from a clean stream). */
    if (strcmp(edit, "none") == 0)
        g->c->labels = DT_VSET(DT_MATCH);
    else if (iv != 0)
        g->c->labels = 0;
    else if (strcmp(edit, "lost_audio") == 0)
        g->c->labels = DT_VSET(DT_UNKNOWN) | (remuxed ? DT_VSET(DT_MISMATCH) : 0);
    else
        g->c->labels = DT_VSET(DT_MISMATCH);
    return 0;
}

/* ---- fMP4/CMAF recipes (issue 20) ---------------------------------------------------- */

/* The same encode in fragmented MP4: a stream copy of the TS keeping every
 * time (-copyts), AAC as AudioSpecificConfig (aac_adtstoasc).  +delay_moov:
 * with an empty moov written before the first packet the esds would carry
 * no AudioSpecificConfig yet (fixtures/generate.sh).  frag_us > 0 also cuts
 * a fragment when it reaches that duration (inside a GOP); vts > 0 sets the
 * video track's timescale.  vbsf: a video bitstream filter (NULL none). */
static int fmp4_from_ts(struct dt_gen *g, const char *ts, int frag_us, int vts, const char *vbsf,
                        const char *out)
{
    struct dt_argv x;
    dt_argv_init(&x);
    dt_argv_addl(&x, "ffmpeg", "-y", "-nostdin", "-hide_banner", "-loglevel", "error", "-copyts",
                 "-i", ts, "-map", "0", "-c", "copy", "-bsf:a", "aac_adtstoasc", "-fflags",
                 "+bitexact", "-map_metadata", "-1", NULL);
    if (vbsf)
        dt_argv_addl(&x, "-bsf:v", vbsf, NULL);
    dt_argv_addl(&x, "-f", "mp4", "-movflags", "+frag_keyframe+empty_moov+default_base_moof+delay_moov", NULL);
    if (frag_us > 0) {
        dt_argv_addl(&x, "-frag_duration", NULL);
        dt_argv_add(&x, "%d", frag_us);
    }
    if (vts > 0) {
        dt_argv_addl(&x, "-video_track_timescale", NULL);
        dt_argv_add(&x, "%d", vts);
    }
    dt_argv_addl(&x, out, NULL);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    if (rc == 0)
        dt_note(g->env, "fMP4 of %s: fragments at key frames%s", ts, frag_us > 0 ? " and by duration" : "");
    return rc == 0 ? 0 : -1;
}

/* Seeded fragmenting of fmp4_from_ts: at key frames only, or every 0.2..1 s too. */
static int seeded_frag(struct dt_gen *g)
{
    static const int us[] = {0, 200000, 500000, 1000000};
    return us[dt_rand_in(g, 0, 3)];
}

/* The first video key frame's PTS of a file (TS or fMP4) in 90 kHz ticks,
 * from ffprobe (the track's time base converted; floored); -1: none. */
static int64_t first_key_ticks(struct dt_gen *g, const char *file)
{
    char out[DT_PATH_MAX];
    struct dt_argv x;
    dt_gen_path(g, "first-key.txt", out, sizeof out);
    dt_argv_init(&x);
    dt_argv_addl(&x, "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                 "stream=time_base:packet=pts,flags", "-of", "compact", file, NULL);
    int rc = dt_run(g->env, &x, out, NULL);
    dt_argv_free(&x);
    char *text = rc == 0 ? dt_read_file(out, 64u << 20, NULL) : NULL;
    long long num = 1, den = 90000, pts = -1;
    const char *tb = text ? strstr(text, "time_base=") : NULL; /* ffprobe prints the stream last */
    if (tb && (sscanf(tb, "time_base=%lld/%lld", &num, &den) != 2 || num <= 0 || den <= 0))
        num = 0;
    for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l && pts < 0 && num > 0;
         l = strtok_r(NULL, "\n", &save)) {
        const char *p = strstr(l, "pts="), *f = strstr(l, "flags=");
        if (strncmp(l, "packet|", 7) == 0 && p && f && f[6] == 'K')
            sscanf(p, "pts=%lld", &pts);
    }
    free(text);
    if (pts < 0)
        return -1;
    return (int64_t)(pts / den * num * 90000 + pts % den * num * 90000 / den);
}

/* --time-offset between the first key frames of reference and candidate. */
static int declare_key_offset(struct dt_gen *g, const char *ref, const char *cand)
{
    int64_t r0 = first_key_ticks(g, ref), c0 = first_key_ticks(g, cand);
    if (r0 < 0 || c0 < 0)
        return -1;
    g->c->offset = (uint64_t)((c0 - r0) & ((INT64_C(1) << 33) - 1));
    dt_note(g->env, "first key frames at %" PRId64 " and %" PRId64 ": --time-offset %" PRIu64, r0, c0,
            g->c->offset);
    return 0;
}

/* Issue 20: the same encode in fragmented MP4, against the TS it was
 * remuxed from.  By seed the fragments (key frames only, or by duration
 * too), the video timescale (FFmpeg's choice or 90 kHz), the side in fMP4
 * (the candidate, the reference, or both with other fragmenting) and a
 * mid-stream interval.  The mp4 muxer may shift both tracks by a few ticks
 * (the fixtures: -60), declared as the offset between the first key frames;
 * each track's start is rounded to a millisecond on its own (the
 * container's quantum, oracle rule 17).  MATCH. */
static int fmp4_pair(struct dt_gen *g, bool declare)
{
    char ts_buf[DT_PATH_MAX], mp4_buf[DT_PATH_MAX], mp4b_buf[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    int vts = dt_rand_in(g, 0, 1) ? 90000 : 0;
    if (make_ts(g, &v, &a, NULL, P(ts)) != 0 || fmp4_from_ts(g, ts_buf, seeded_frag(g), vts, NULL, PE(mp4, ".mp4")) != 0)
        return -1;
    int64_t mode = dt_rand_in(g, 0, 3); /* 0, 1: TS against fMP4; 2: fMP4 against TS; 3: both fMP4 */
    const char *ref = mode == 2 || mode == 3 ? mp4_buf : ts_buf;
    const char *cand = mode == 2 ? ts_buf : mp4_buf;
    if (mode == 3) {
        if (fmp4_from_ts(g, ts_buf, seeded_frag(g), vts ? 0 : 90000, NULL, PE(mp4b, ".mp4")) != 0)
            return -1;
        cand = mp4b_buf;
    }
    dt_note(g->env, "reference %s, candidate %s", mode >= 2 ? "fMP4" : "TS", mode == 2 ? "TS" : "fMP4");
    set_case_ref(g->c, ref);
    set_case_cand(g->c, cand);
    if (declare && declare_key_offset(g, ref, cand) != 0)
        return -1;
    if (!declare)
        dt_note(g->env, "no --time-offset: each track put on the reference's grid under the quantum");
    return mode < 2 && dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ts_buf) : 0;
}

static int pack_fmp4(struct dt_gen *g)
{
    return fmp4_pair(g, true);
}

/* The same with no offset declared: the muxer's shift of each track is
 * under the container's millisecond quantum, taken off video and audio on
 * their own (docs/exact-av-v1.md, oracle rule 17).  MATCH. */
static int pack_fmp4_undeclared(struct dt_gen *g)
{
    return fmp4_pair(g, false);
}

/* An fMP4 media playlist: EXT-X-MAP init (NULL: none), then segs. */
static int fmp4_playlist(struct dt_gen *g, const char *path, const char *init, const struct dt_seg *segs, size_t n)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:3\n#EXT-X-MEDIA-SEQUENCE:0\n");
    if (init)
        fprintf(f, "#EXT-X-MAP:URI=\"%s\"\n", strrchr(init, '/') ? strrchr(init, '/') + 1 : init);
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(segs[i].path, '/');
        fprintf(f, "#EXTINF:%.6f,\n%s\n", segs[i].duration > 0 ? segs[i].duration : 1.0, base ? base + 1 : segs[i].path);
    }
    fprintf(f, "#EXT-X-ENDLIST\n");
    bool ok = fclose(f) == 0;
    dt_note(g->env, "wrote the fMP4 media playlist %s (%s, %zu media segments)", path,
            init ? "EXT-X-MAP" : "no EXT-X-MAP", n);
    return ok ? 0 : -1;
}

/* The bytes exactav fetches for an fMP4 playlist written by FFmpeg's HLS
 * muxer: its EXT-X-MAP, then its segments (relative URIs in its folder). */
static int read_fmp4_playlist(struct dt_gen *g, const char *pl, struct dt_seg *segs, size_t *n,
                              char *init, size_t init_size)
{
    char *text = dt_read_file(pl, 1u << 20, NULL);
    const char *slash = strrchr(pl, '/');
    int dirlen = slash ? (int)(slash - pl) : 0;
    *n = 0;
    init[0] = '\0';
    double dur = 1.0;
    for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l && *n < DT_MAX_SEGS - 1;
         l = strtok_r(NULL, "\n", &save)) {
        const char *uri = strstr(l, "#EXT-X-MAP:URI=\"");
        if (uri) {
            uri += 16;
            dt_fmt(init, init_size, "%.*s/%.*s", dirlen, pl, (int)strcspn(uri, "\""), uri);
        } else if (strncmp(l, "#EXTINF:", 8) == 0) {
            dur = atof(l + 8);
        } else if (l[0] != '#' && l[0] != '\0') {
            memset(&segs[*n], 0, sizeof segs[*n]);
            dt_fmt(segs[*n].path, sizeof segs[*n].path, "%.*s/%s", dirlen, pl, l);
            segs[(*n)++].duration = dur;
        }
    }
    free(text);
    (void)g;
    return *n > 0 && init[0] ? 0 : -1;
}

/* FFmpeg's HLS muxer in fMP4 mode from a stream copy of ts: PREFIX.m3u8,
 * PREFIX-init.mp4, PREFIX-N.m4s.  hls_time seconds a segment. */
static int hls_fmp4_from_ts(struct dt_gen *g, const char *ts, const char *prefix, int hls_time, int vts,
                            const char *vbsf, char *pl, size_t plsize)
{
    char init[DT_PATH_MAX], segname[DT_PATH_MAX];
    const char *base = strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
    if (!dt_fmt(pl, plsize, "%s.m3u8", prefix) || !dt_fmt(init, sizeof init, "%s-init.mp4", base) ||
        !dt_fmt(segname, sizeof segname, "%s-%%d.m4s", prefix))
        return -1;
    struct dt_argv x;
    dt_argv_init(&x);
    dt_argv_addl(&x, "ffmpeg", "-y", "-nostdin", "-hide_banner", "-loglevel", "error", "-copyts",
                 "-i", ts, "-map", "0", "-c", "copy", "-bsf:a", "aac_adtstoasc", "-fflags",
                 "+bitexact", "-map_metadata", "-1", NULL);
    if (vbsf)
        dt_argv_addl(&x, "-bsf:v", vbsf, NULL);
    dt_argv_addl(&x, "-f", "hls", "-hls_segment_type", "fmp4", "-hls_playlist_type", "vod", "-hls_time", NULL);
    dt_argv_add(&x, "%d", hls_time);
    if (vts > 0) {
        dt_argv_addl(&x, "-hls_segment_options", NULL);
        dt_argv_add(&x, "video_track_timescale=%d", vts);
    }
    dt_argv_addl(&x, "-hls_fmp4_init_filename", init, "-hls_segment_filename", segname, pl, NULL);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    return rc == 0 ? 0 : -1;
}

/* The HLS candidate of FFmpeg's fMP4 playlist pl. */
static int hls_fmp4_candidate(struct dt_gen *g, const char *pl)
{
    char init[DT_PATH_MAX];
    struct dt_seg segs[DT_MAX_SEGS];
    size_t n = 0;
    if (read_fmp4_playlist(g, pl, segs + 1, &n, init, sizeof init) != 0)
        return -1;
    memset(&segs[0], 0, sizeof segs[0]);
    dt_fmt(segs[0].path, sizeof segs[0].path, "%s", init);
    memcpy(g->c->cand, segs, (n + 1) * sizeof *segs);
    g->c->ncand = n + 1;
    g->c->cand_kind = DT_CAND_HLS;
    dt_fmt(g->c->playlist, sizeof g->c->playlist, "%s", pl);
    return 0;
}

/* --time-offset from the concatenation of segs (with first before them
 * when not NULL: an init segment), as the oracle joins an fMP4 playlist. */
static int declare_joined_offset(struct dt_gen *g, const char *ref, const char *first, const struct dt_seg *segs,
                                 size_t n)
{
    char joined[DT_PATH_MAX];
    dt_gen_path(g, "joined-for-offset.mp4", joined, sizeof joined);
    struct dt_argv x;
    dt_argv_init(&x);
    dt_argv_addl(&x, "cat", NULL);
    if (first)
        dt_argv_add(&x, "%s", first);
    for (size_t i = 0; i < n; i++)
        dt_argv_add(&x, "%s", segs[i].path);
    int rc = dt_run(g->env, &x, joined, NULL);
    dt_argv_free(&x);
    return rc != 0 ? -1 : declare_key_offset(g, ref, joined);
}

/* Issue 20: an HLS candidate from FFmpeg's HLS muxer (-hls_segment_type
 * fmp4: an init segment, EXT-X-MAP, and media segments of 1..2 s), the
 * same encode as the TS reference, the video on a 90 kHz timescale (MATCH)
 * or the muxer's own (no label, see below). */
static int pack_hls_fmp4(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], hls_buf[DT_PATH_MAX], pl[DT_PATH_MAX];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0)
        return -1;
    int hls_time = (int)dt_rand_in(g, 1, 2), vts = dt_rand_in(g, 0, 1) ? 90000 : 0;
    if (hls_fmp4_from_ts(g, ref, PX(hls), hls_time, vts, NULL, pl, sizeof pl) != 0 || hls_fmp4_candidate(g, pl) != 0)
        return -1;
    if (vts == 0) {
        /* its own video timescale (15360 at 30 fps): the HLS muxer may then
         * move the video about a millisecond plus a unit against the audio,
         * more than the container's quantum (seed 17): the oracle decides */
        g->c->labels = 0;
        dt_note(g->env, "the HLS muxer's video timescale: no label");
    }
    if (declare_joined_offset(g, ref, NULL, g->c->cand, g->c->ncand) != 0)
        return -1;
    return dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ref) : 0;
}

/* Issue 20: GStreamer's mp4mux in fragmented mode (fragment-duration in
 * ms), from tsdemux of the TS reference.  GStreamer restamps the timeline
 * (from 0; declared as the offset between the first key frames) and its
 * own timescales (video: 100 units a frame).  The oracle decides: an
 * audio/video shift relative to each other is a timing difference. */
static int pack_gst_mp4(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], cand_buf[DT_PATH_MAX], loc_in[DT_PATH_MAX + 16], loc_out[DT_PATH_MAX + 16], fd[32];
    struct dt_video_spec v;
    struct dt_audio_spec a;
    vary_specs(g, &v, &a);
    if (dt_rand_in(g, 0, 1))
        a.lead_ms = 0;
    dt_gen_path(g, "ref.ts", ref, sizeof ref);
    dt_fmt(fd, sizeof fd, "fragment-duration=%d", (int)dt_rand_in(g, 2, 10) * 100);
    if (make_ts(g, &v, &a, NULL, ref) != 0 || !PE(cand, ".mp4") ||
        !dt_fmt(loc_in, sizeof loc_in, "location=%s", ref) ||
        !dt_fmt(loc_out, sizeof loc_out, "location=%s", cand_buf) ||
        dt_gen_tool(g, "gst-launch-1.0", "-q", "filesrc", loc_in, "!", "tsdemux", "name=d", "d.", "!", "queue",
                    "!", "h264parse", "!", "mp4mux", "name=m", fd, "!", "filesink", loc_out, "d.", "!", "queue",
                    "!", "aacparse", "!", "m.", (char *)NULL) != 0)
        return -1;
    set_case_ref(g->c, ref);
    set_case_cand(g->c, cand_buf);
    if (declare_key_offset(g, ref, cand_buf) != 0)
        return -1;
    return dt_rand_in(g, 0, 2) == 0 ? mid_interval(g, ref) : 0;
}

/* ---- fMP4 edits and damage ---------------------------------------------------------- */

struct box_count {
    const char *type;
    long n;
};

static bool count_visit(const struct mp4_box *b, void *ctx)
{
    struct box_count *c = ctx;
    c->n += memcmp(b->type, c->type, 4) == 0;
    return true;
}

/* Boxes of type in file (0 when unreadable). */
static long count_boxes(const char *file, const char *type)
{
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(file, 256u << 20, &len);
    struct box_count c = {type, 0};
    if (d)
        mp4_walk(d, 0, len, 0, count_visit, &c);
    free(d);
    return c.n;
}

/* The n-th box of type in file; false when absent. */
static bool box_at(const char *file, const char *type, long n, struct mp4_box *b, uint32_t field[2])
{
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(file, 256u << 20, &len);
    bool ok = d && mp4_find(d, len, type, n, b);
    if (ok && field) /* a trun's sample_count, field[1] its flags */
        for (int i = 0; i < 2; i++)
            field[i] = b->size >= b->hdr + 8 ? mp4_rd32(d + b->off + b->hdr + 4 * (size_t)(1 - i)) & (i ? 0xffffffu : ~0u) : 0;
    free(d);
    return ok;
}

/* The last fragment (0-based moof index) holding a traf of track id, -1: none. */
struct track_frag {
    const uint8_t *d;
    uint32_t id;
    long frag, last;
};

static bool track_frag_visit(const struct mp4_box *b, void *ctx)
{
    struct track_frag *t = ctx;
    if (!memcmp(b->type, "moof", 4))
        t->frag++;
    else if (!memcmp(b->type, "tfhd", 4) && b->size >= b->hdr + 8 && mp4_rd32(t->d + b->off + b->hdr + 4) == t->id)
        t->last = t->frag;
    return true;
}

static long last_fragment_of(const char *file, uint32_t id)
{
    size_t len = 0;
    uint8_t *d = (uint8_t *)dt_read_file(file, 256u << 20, &len);
    struct track_frag t = {d, id, -1, -1};
    if (d)
        mp4_walk(d, 0, len, 0, track_frag_visit, &t);
    free(d);
    return t.last;
}

/* The TS reference from seeded settings and its fMP4 (fmp4_from_ts) as
 * base.mp4, its offset declared; the candidate is set by the caller. */
static int fmp4_base(struct dt_gen *g, int vts, int frag_us, char *ref, char *mp4, size_t size)
{
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, size) != 0)
        return -1;
    dt_gen_path(g, "base.mp4", mp4, size);
    return fmp4_from_ts(g, ref, frag_us, vts, NULL, mp4) != 0 || declare_key_offset(g, ref, mp4) != 0 ? -1 : 0;
}

/* mp4edit OP IN OUT then the numbers (nargs of a1..a3; type, when not
 * NULL, before them). */
static int mp4edit(struct dt_gen *g, const char *op, const char *in, const char *out, const char *type,
                   int nargs, long a1, long a2, long a3)
{
    char s[3][24];
    const long v[3] = {a1, a2, a3};
    const char *arg[5] = {NULL, NULL, NULL, NULL, NULL};
    int k = 0;
    if (type)
        arg[k++] = type;
    for (int i = 0; i < nargs && i < 3; i++) {
        dt_fmt(s[i], sizeof s[i], "%ld", v[i]);
        arg[k++] = s[i];
    }
    return dt_gen_tool(g, "mp4edit", op, in, out, arg[0], arg[1], arg[2], arg[3], (char *)NULL);
}

/* Issue 20: one box's size field changed (a moof, traf, trun, tfhd, tfdt,
 * mdat, trak or the moov; by a byte, a few, or 4 KiB; larger or smaller).
 * What FFmpeg's mov demuxer makes of it decides: a complaint is damage, a
 * clean decode is compared.  No label. */
static int dmg_fmp4_box(struct dt_gen *g)
{
    static const char *const types[] = {"moof", "traf", "trun", "tfhd", "tfdt", "mdat", "trak", "moov"};
    static const long deltas[] = {-8, -1, 1, 8, 4096};
    char ref[DT_PATH_MAX], mp4[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    if (fmp4_base(g, 0, seeded_frag(g), ref, mp4, sizeof mp4) != 0)
        return -1;
    const char *type = dt_pick(g, types, 8);
    long n = count_boxes(mp4, type), delta = deltas[dt_rand_in(g, 0, 4)];
    if (n == 0)
        return -1;
    long k = dt_rand_in(g, 0, n - 1);
    dt_note(g->env, "box %s #%ld of %ld: size %+ld", type, k, n, delta);
    if (mp4edit(g, "size", mp4, PE(cand, ".mp4"), type, 2, k, delta, 0) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Issue 20: a trun's sample_count changed (1..3 more or fewer entries than
 * it holds), or one of its sample sizes (a byte or 100 more or less).  No
 * label: FFmpeg's demuxer decides. */
static int dmg_fmp4_trun(struct dt_gen *g)
{
    static const long size_deltas[] = {-100, -1, 1, 100};
    char ref[DT_PATH_MAX], mp4[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    struct mp4_box b;
    uint32_t tf[2] = {0, 0}, count;
    if (fmp4_base(g, 0, seeded_frag(g), ref, mp4, sizeof mp4) != 0)
        return -1;
    long n = count_boxes(mp4, "trun"), k = dt_rand_in(g, 0, n - 1);
    if (n == 0 || !box_at(mp4, "trun", k, &b, tf) || (count = tf[0]) == 0)
        return -1;
    int rc;
    bool by_count = dt_rand_in(g, 0, 1);
    if (by_count || !(tf[1] & 0x200)) { /* sizes in the tfhd (one sample): the count then */
        long d = dt_rand_in(g, 1, 3) * (dt_rand_in(g, 0, 1) ? 1 : -1);
        if ((long)count + d < 0)
            d = -d;
        dt_note(g->env, "trun #%ld of %ld: sample_count %u%+ld", k, n, count, d);
        rc = mp4edit(g, "trun-count", mp4, PE(cand, ".mp4"), NULL, 2, k, d, 0);
    } else {
        long i = dt_rand_in(g, 0, (int64_t)count - 1), d = size_deltas[dt_rand_in(g, 0, 3)];
        dt_note(g->env, "trun #%ld of %ld: sample %ld of %u, its size %+ld", k, n, i, count, d);
        rc = mp4edit(g, "trun-size", mp4, PE(cand, ".mp4"), NULL, 3, k, i, d);
    }
    if (rc != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    return 0;
}

/* Issue 20: a track's tfdt (baseMediaDecodeTime) shifted from fragment N on
 * (N = 0: the whole track, not declared).  A whole frame (video, 90 kHz
 * timescale: 3000; audio: 1024 samples) earlier or later is a timing
 * difference, MISMATCH.  Less than a tick (video on a 900 kHz timescale,
 * 1..9 units) is the same time (issue 18, class 5), MATCH. */
static int edit_fmp4_tfdt(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], mp4[DT_PATH_MAX], cand_buf[DT_PATH_MAX];
    bool sub = dt_rand_in(g, 0, 2) == 0;
    bool video = sub || dt_rand_in(g, 0, 1);
    if (fmp4_base(g, sub ? 900000 : 90000, seeded_frag(g), ref, mp4, sizeof mp4) != 0)
        return -1;
    long frags = count_boxes(mp4, "moof");
    /* a fragment holding the track: FFmpeg's last one may hold only audio (seed 23) */
    long last = last_fragment_of(mp4, video ? 1 : 2);
    long from = dt_rand_in(g, 0, last > 0 ? last : 0);
    long unit = sub ? dt_rand_in(g, 1, 9) : video ? 3000 : 1024;
    long delta = dt_rand_in(g, 0, 1) ? unit : -unit;
    /* FFmpeg's mp4 muxer: track 1 the video, 2 the audio (stream order) */
    dt_note(g->env, "%s tfdt %+ld from fragment %ld of %ld", video ? "video" : "audio", delta, from, frags);
    if (mp4edit(g, "tfdt", mp4, PE(cand, ".mp4"), NULL, 3, video ? 1 : 2, from, delta) != 0)
        return -1;
    set_case_cand(g->c, cand_buf);
    g->c->labels = sub ? DT_VSET(DT_MATCH) : DT_VSET(DT_MISMATCH);
    return 0;
}

/* Issue 20: an HLS fMP4 candidate whose init segment is another encode's
 * (its avcC's SPS/PPS: another QP, or no 8x8 transform), missing (no
 * EXT-X-MAP), or its own (a control, MATCH).  The media segments carry no
 * SPS/PPS of their own (filter_units), so the init segment's are the ones
 * every decoder uses.  Another init: no label (FFmpeg decides); missing:
 * UNKNOWN.  The video on a 90 kHz timescale: on FFmpeg's own (15360 for
 * 30 fps) the HLS muxer's shifts can move video against audio by more than
 * the container's quantum (seed 10 did: 91 ticks), a timing difference. */
static int dmg_fmp4_init(struct dt_gen *g)
{
    static const char *const modes[] = {"other", "other", "missing", "own"};
    static const char *const strip = "filter_units=remove_types=7|8";
    char ref[DT_PATH_MAX], other_buf[DT_PATH_MAX], hls_buf[DT_PATH_MAX], hlsb_buf[DT_PATH_MAX];
    char pl[DT_PATH_MAX], plb[DT_PATH_MAX], cpl_buf[DT_PATH_MAX], init[DT_PATH_MAX], initb[DT_PATH_MAX];
    struct dt_video_spec v, vb;
    struct dt_audio_spec a;
    struct dt_seg segs[DT_MAX_SEGS];
    size_t n = 0, nb = 0;
    const char *mode = dt_pick(g, modes, 4);
    int hls_time = (int)dt_rand_in(g, 1, 2);
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        hls_fmp4_from_ts(g, ref, PX(hls), hls_time, 90000, strip, pl, sizeof pl) != 0 ||
        read_fmp4_playlist(g, pl, segs, &n, init, sizeof init) != 0)
        return -1;
    const char *map = strcmp(mode, "own") == 0 ? init : NULL;
    if (strcmp(mode, "other") == 0) {
        vb = v;
        if (dt_rand_in(g, 0, 1))
            vb.qp = v.qp + 4;   /* the PPS's pic_init_qp: slices decode, other pictures */
        else
            dt_fmt(vb.x264_extra, sizeof vb.x264_extra, "8x8dct=0"); /* transform_8x8_mode_flag 0 */
        struct dt_seg sb[DT_MAX_SEGS];
        if (make_ts(g, &vb, &a, NULL, P(other)) != 0 ||
            hls_fmp4_from_ts(g, other_buf, PX(hlsb), hls_time, 90000, strip, plb, sizeof plb) != 0 ||
            read_fmp4_playlist(g, plb, sb, &nb, initb, sizeof initb) != 0)
            return -1;
        map = initb;
        dt_note(g->env, "the init segment of another encode (%s)", vb.qp != v.qp ? "QP +4" : "8x8dct=0");
    }
    if (fmp4_playlist(g, PE(cpl, ".m3u8"), map, segs, n) != 0)
        return -1;
    size_t k = 0;
    if (map) {
        memset(&g->c->cand[0], 0, sizeof g->c->cand[0]);
        dt_fmt(g->c->cand[0].path, sizeof g->c->cand[0].path, "%s", map);
        k = 1;
    }
    memcpy(g->c->cand + k, segs, n * sizeof *segs);
    g->c->ncand = n + k;
    g->c->cand_kind = DT_CAND_HLS;
    dt_fmt(g->c->playlist, sizeof g->c->playlist, "%s", cpl_buf);
    if (declare_joined_offset(g, ref, init, segs, n) != 0) /* its own init: the offset */
        return -1;
    g->c->labels = !strcmp(mode, "own") ? DT_VSET(DT_MATCH) : !strcmp(mode, "missing") ? DT_VSET(DT_UNKNOWN) : 0;
    return 0;
}

/* Issue 20: the fMP4 candidate cut: the single file inside a later
 * fragment's moof or mdat, or one media segment of an HLS candidate (not
 * the last; the video on a 90 kHz timescale, see dmg_fmp4_init).  UNKNOWN:
 * lost data. */
static int dmg_fmp4_trunc(struct dt_gen *g)
{
    char ref[DT_PATH_MAX], mp4[DT_PATH_MAX], cand_buf[DT_PATH_MAX], pl[DT_PATH_MAX], len[24];
    char hls_buf[DT_PATH_MAX];
    if (dt_rand_in(g, 0, 1)) {
        if (fmp4_base(g, 0, seeded_frag(g), ref, mp4, sizeof mp4) != 0)
            return -1;
        long frags = count_boxes(mp4, "moof");
        const char *type = dt_rand_in(g, 0, 3) ? "mdat" : "moof";
        struct mp4_box b;
        if (frags < 2 || !box_at(mp4, type, dt_rand_in(g, 1, frags - 1), &b, NULL) || b.size < 16)
            return -1;
        dt_fmt(len, sizeof len, "%zu", b.off + (size_t)dt_rand_in(g, 8, (int64_t)b.size - 1));
        if (dt_gen_tool(g, "cp", mp4, PE(cand, ".mp4"), (char *)NULL) != 0 ||
            dt_gen_tool(g, "truncate", "-s", len, cand_buf, (char *)NULL) != 0)
            return -1;
        dt_note(g->env, "the fMP4 file cut at byte %s, inside a %s", len, type);
        set_case_cand(g->c, cand_buf);
        return 0;
    }
    struct dt_video_spec v;
    struct dt_audio_spec a;
    if (make_ref(g, &v, &a, ref, sizeof ref) != 0 ||
        hls_fmp4_from_ts(g, ref, PX(hls), 1, 90000, NULL, pl, sizeof pl) != 0 || hls_fmp4_candidate(g, pl) != 0 ||
        g->c->ncand < 3)
        return -1;
    if (declare_joined_offset(g, ref, NULL, g->c->cand, g->c->ncand) != 0)
        return -1;
    size_t k = (size_t)dt_rand_in(g, 1, (int64_t)g->c->ncand - 2);
    size_t flen = 0;
    free(dt_read_file(g->c->cand[k].path, 64u << 20, &flen));
    if (flen < 100)
        return -1;
    dt_fmt(len, sizeof len, "%zu", (size_t)dt_rand_in(g, 8, (int64_t)flen - 1));
    if (dt_gen_tool(g, "truncate", "-s", len, g->c->cand[k].path, (char *)NULL) != 0)
        return -1;
    dt_note(g->env, "media segment %zu cut at byte %s of %zu", k - 1, len, flen);
    return 0;
}

/* ---- the table ------------------------------------------------------------------------ */

static const struct dt_recipe recipes[] = {
    {"pack_copy", "packaging", 0, L_MATCH, "byte copy", pack_copy},
    {"pack_pids", "packaging", 0, L_MATCH, "remux with other PIDs, PMT PID, service id", pack_pids},
    {"pack_muxrate", "packaging", 0, L_MATCH, "CBR remux (null packets), other PCR period", pack_muxrate},
    {"pack_audio_pes", "packaging", 1, L_MATCH, "audio PES packing: several AAC frames per PES vs one", pack_audio_pes},
    {"pack_latm", "packaging", 5, L_MISMATCH, "AAC with stream_type 0x11 (-mpegts_flags latm): announced as LATM", pack_latm},
    {"pack_prog_first", "packaging", 4, L_MATCH, "a metadata-only program (ID3, SCTE-35, private data) announced first in the PAT", pack_prog_first},
    {"pack_pcr_pid", "packaging", 0, L_MATCH, "PCR on its own PID", pack_pcr_pid},
    {"pack_nulls", "packaging", 0, L_MATCH, "null packets inserted", pack_nulls},
    {"pack_nal_strip", "packaging", 0, L_MATCH, "AUD, SEI or repeated SPS/PPS removed", pack_nal_strip},
    {"pack_nal_tail", "packaging", 0, L_MATCH, "a user-data or display-orientation SEI, filler or SPS/PPS after the slices of each picture (issue 18 class 12)", pack_nal_tail},
    {"pack_adts_blocks", "packaging", 0, L_MATCH, "ADTS frames of 2..4 raw data blocks (issue 18 class 9)", pack_adts_blocks},
    {"pack_subtick", "packaging", 0, L_MATCH, "one track's timestamps (or both, opposite ways) one 90 kHz tick off (issue 18 class 5)", pack_subtick},
    {"pack_gst_mux", "packaging", 0, L_MATCH, "remuxed by GStreamer mpegtsmux: PTS floored to 90 kHz, one tick early (issue 18 class 5)", pack_gst_mux},
    {"pack_pes_split", "packaging", 0, L_MATCH, "video PES packing: each access unit in two PES, the second timed or not", pack_pes_split},
    {"pack_hls_restart", "packaging", 6, L_MATCH, "HLS candidate, segments restart continuity counters", pack_hls_restart},
    {"pack_bind_restart", "packaging", 6, L_MATCH, "reference bound as segments that restart counters", pack_bind_restart},
    {"pack_hls_in_pes", "packaging", 7, L_MATCH, "HLS candidate cut inside video PES", pack_hls_in_pes},
    {"pack_byterange", "packaging", 7, L_MATCH, "EXT-X-BYTERANGE segments split inside video PES", pack_byterange},
    {"pack_bind_in_pes", "packaging", 7, L_MATCH, "reference bound as pieces cut inside video PES", pack_bind_in_pes},
    {"pack_live_window", "packaging", 3, L_MATCH, "one bound segment vs the whole live playlist", pack_live_window},
    {"pack_fmp4", "packaging", 0, L_MATCH, "fragmented MP4 of the same encode (FFmpeg, -c copy): fragments by key frame or duration; candidate, reference or both", pack_fmp4},
    {"pack_fmp4_undeclared", "packaging", 0, L_MATCH, "pack_fmp4 with no --time-offset: each track under the container's quantum, taken off on its own", pack_fmp4_undeclared},
    {"pack_hls_fmp4", "packaging", 0, L_MATCH, "HLS candidate from FFmpeg's HLS muxer in fMP4 (EXT-X-MAP init segment, media segments)", pack_hls_fmp4},
    {"pack_gst_mp4", "packaging", 0, L_ANY, "fragmented MP4 by GStreamer mp4mux (fragment-duration), its timeline restamped: the oracle decides", pack_gst_mp4},
    {"enc_gop", "encoder", 0, L_MATCH, "GOP length, B-frames, B-pyramid; default or mid-stream interval", enc_gop},
    {"enc_open_gop", "encoder", 8, L_MATCH, "open GOP, interval starting mid-stream", enc_open_gop},
    {"enc_intra_refresh", "encoder", 8, L_MATCH, "intra refresh, interval starting mid-stream", enc_intra_refresh},
    {"enc_sps_once", "encoder", 8, L_MATCH, "SPS/PPS only at the start, interval starting mid-stream", enc_sps_once},
    {"enc_slices", "encoder", 0, L_MATCH, "several slices per picture", enc_slices},
    {"enc_interlaced", "encoder", 0, L_MATCH, "interlaced (top field first)", enc_interlaced},
    {"enc_ref_mid_gop", "encoder", 9, L_UNKNOWN, "reference starts mid-GOP, interval from its first frame, candidate differs there", enc_ref_mid_gop},
    {"edit_pixel", "edit", 0, L_MISMATCH, "one pixel of one frame", edit_pixel},
    {"edit_sample", "edit", 0, L_MISMATCH, "one audio sample", edit_sample},
    {"edit_frame_drop", "edit", 0, L_MISMATCH, "a non-reference B-frame removed", edit_frame_drop},
    {"edit_frame_dup", "edit", 0, L_MISMATCH, "a frame replaced by its predecessor", edit_frame_dup},
    {"edit_shift_declared", "edit", 0, L_MATCH, "every timestamp shifted, shift declared", edit_shift_declared},
    {"edit_shift_undeclared", "edit", 0, L_MISMATCH, "every timestamp shifted, not declared", edit_shift_undeclared},
    {"edit_shift_audio", "edit", 0, L_MISMATCH, "audio timestamps shifted", edit_shift_audio},
    {"edit_channels", "edit", 11, L_MISMATCH, "stereo then mono from some AAC frame on", edit_channels},
    {"edit_prog_first_av", "edit", 4, L_UNKNOWN, "an audio-only program first in the PAT: not the program a player plays", edit_prog_first_av},
    {"edit_vui_default", "edit", 12, L_MATCH, "a VUI default written explicitly (range flag 0, unspecified colour description)", edit_vui_default},
    {"edit_announce", "edit", 0, L_MISMATCH, "the AAC track announced as LATM, MPEG audio, AC-3 or private data", edit_announce},
    {"edit_colour", "edit", 12, L_MISMATCH, "colour primaries/transfer/matrix, range, chroma location or SAR retagged", edit_colour},
    {"edit_extra_audio", "edit", 13, L_MISMATCH, "a second, different audio track", edit_extra_audio},
    {"edit_first_pes_audio", "edit", 2, L_MISMATCH, "audio differs after START inside the first audio PES", edit_first_pes_audio},
    {"dmg_flip_video", "edit", 0, L_ANY, "one video payload byte flipped", dmg_flip_video},
    {"dmg_flip_audio", "edit", 0, L_ANY, "one audio payload byte flipped", dmg_flip_audio},
    {"dmg_lost_packet", "edit", 0, L_UNKNOWN, "one TS packet lost", dmg_lost_packet},
    {"dmg_truncate", "edit", 0, L_UNKNOWN, "truncated candidate", dmg_truncate},
    {"dmg_audio_edit_video", "edit", 0, L_MISMATCH, "a pixel differs in clean video while an audio packet is lost", dmg_audio_edit_video},
    {"dmg_outside_interval", "edit", 0, L_MATCH, "a packet lost before the decode boundary or after END", dmg_outside_interval},
    {"dmg_open_gop_i", "edit", 10, L_UNKNOWN, "byte flipped in an open-GOP I frame", dmg_open_gop_i},
    {"edit_fmp4_tfdt", "edit", 0, L_MISMATCH, "fMP4: a track's tfdt shifted from a fragment on, a whole frame (MISMATCH) or under a tick (MATCH)", edit_fmp4_tfdt},
    {"dmg_fmp4_box", "edit", 0, L_ANY, "fMP4: one box size changed (moof, traf, trun, tfhd, tfdt, mdat, trak, moov)", dmg_fmp4_box},
    {"dmg_fmp4_trun", "edit", 0, L_ANY, "fMP4: a trun's sample count or one sample size changed", dmg_fmp4_trun},
    {"dmg_fmp4_init", "edit", 0, L_ANY, "HLS fMP4: the init segment another encode's (other SPS/PPS), missing, or its own", dmg_fmp4_init},
    {"dmg_fmp4_trunc", "edit", 0, L_UNKNOWN, "fMP4: the file or a media segment truncated", dmg_fmp4_trunc},
    {"usage_binding_scope", "edit", 14, L_USAGE, "binding scope overridden on the command line", usage_binding_scope},
    {"combo", "combined", 0, L_MATCH, "edit or damage, packaging chain, delivery, PTS wrap, declared shift, interval: combined by seed", combo},
};

const struct dt_recipe *dt_recipes(size_t *n)
{
    *n = sizeof recipes / sizeof recipes[0];
    return recipes;
}

const struct dt_recipe *dt_recipe_find(const char *name)
{
    for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
        if (strcmp(recipes[i].name, name) == 0)
            return &recipes[i];
    return NULL;
}

int dt_recipe_build(struct dt_env *env, const struct dt_recipe *r, uint64_t seed, struct dt_case *c)
{
    struct dt_gen g;
    dt_fmt(c->name, sizeof c->name, "%s", r->name);
    dt_fmt(c->kind, sizeof c->kind, "%s", r->kind);
    dt_fmt(c->what, sizeof c->what, "%s", r->what);
    c->seed = seed;
    c->klass = r->klass;
    c->labels = r->labels;
    dt_gen_init(&g, env, c);
    dt_note(env, "recipe %s, seed %" PRIu64 ": %s", r->name, seed, r->what);
    return r->build(&g);
}
