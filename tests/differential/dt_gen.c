/* dt_gen.c - see dt_gen.h. */
#include "dt_gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIST_MAX (128u << 20)

static const char *const FF[] = {"ffmpeg", "-y", "-nostdin", "-hide_banner", "-loglevel", "error",
                                 NULL};
static const char *const BITEXACT[] = {"-fflags", "+bitexact", "-flags:v", "+bitexact",
                                       "-flags:a", "+bitexact", NULL};

static void add_list(struct dt_argv *a, const char *const *list)
{
    for (; list && *list; list++)
        dt_argv_add(a, "%s", *list);
}

void dt_gen_init(struct dt_gen *g, struct dt_env *env, struct dt_case *c)
{
    g->env = env;
    g->c = c;
    g->rng = c->seed * UINT64_C(0x9E3779B97F4A7C15) + UINT64_C(0x2545F4914F6CDD1D);
    if (g->rng == 0)
        g->rng = 1;
}

uint64_t dt_rand(struct dt_gen *g)
{
    g->rng ^= g->rng >> 12;
    g->rng ^= g->rng << 25;
    g->rng ^= g->rng >> 27;
    return g->rng * UINT64_C(2685821657736338717);
}

int64_t dt_rand_in(struct dt_gen *g, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(dt_rand(g) % (uint64_t)(hi - lo + 1));
}

const char *dt_pick(struct dt_gen *g, const char *const *v, int n)
{
    return v[dt_rand_in(g, 0, n - 1)];
}

const char *dt_gen_path(const struct dt_gen *g, const char *name, char *out, size_t size)
{
    if (!dt_fmt(out, size, "%s/%s", g->c->dir, name))
        out[0] = '\0';
    return out;
}

void dt_video_default(struct dt_video_spec *v)
{
    memset(v, 0, sizeof *v);
    v->w = 320;
    v->h = 180;
    v->fps = 30;
    v->secs = 3;
    dt_fmt(v->src, sizeof v->src, "testsrc2");
    v->keyint = 30;
    v->bframes = 2;
    v->pyramid = 0;
    v->slices = 1;
    v->qp = 30;
}

void dt_audio_default(struct dt_audio_spec *a)
{
    memset(a, 0, sizeof *a);
    a->secs = 3;
    dt_fmt(a->src, sizeof a->src, "tones");
    a->channels = 2;
}

/* FNV-1a over the arguments: the cache key of an encode. */
static uint64_t argv_hash(const struct dt_argv *a)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (int i = 0; i < a->n; i++)
        for (const char *p = a->v[i]; ; p++) {
            h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
            if (*p == '\0')
                break;
        }
    return h;
}

/* Run an encode whose argv lacks only its output; reuse the cached result.
 * The encode writes a name of its own and is renamed into place, so cases
 * running at once (--jobs) never read a half-written file. */
static int cached_encode(struct dt_gen *g, struct dt_argv *a, const char *ext, char *out,
                         size_t size)
{
    uint64_t h = argv_hash(a);
    char tmp[DT_PATH_MAX];
    if (!dt_fmt(out, size, "%s/%016" PRIx64 ".%s", g->env->cache, h, ext) ||
        !dt_fmt(tmp, sizeof tmp, "%s/%016" PRIx64 ".%ld.%s", g->env->cache, h, (long)getpid(), ext))
        return -1;
    if (access(out, R_OK) == 0) { /* logged for the recipe, not run again */
        dt_note(g->env, "made by an earlier case of this run, reused:");
        dt_argv_add(a, "%s", out);
        dt_log_command(g->env, a, NULL, NULL);
        return 0;
    }
    dt_argv_add(a, "%s", tmp);
    int rc = dt_run(g->env, a, NULL, NULL);
    if (rc == 0) {
        struct dt_argv mv;
        dt_argv_init(&mv);
        dt_argv_addl(&mv, "mv", "-f", tmp, out, NULL);
        rc = dt_run(g->env, &mv, NULL, NULL);
        dt_argv_free(&mv);
    }
    if (rc != 0)
        unlink(tmp);
    return rc == 0 ? 0 : -1;
}

int dt_gen_video(struct dt_gen *g, const struct dt_video_spec *v, char *out, size_t size)
{
    struct dt_argv a;
    dt_argv_init(&a);
    add_list(&a, FF);
    dt_argv_addl(&a, "-threads", "1", "-f", "lavfi", "-i", NULL);
    dt_argv_add(&a, "%s=s=%dx%d:r=%d", v->src, v->w, v->h, v->fps);
    dt_argv_addl(&a, "-t", NULL);
    dt_argv_add(&a, "%d", v->secs);
    dt_argv_addl(&a, "-vf", NULL);
    dt_argv_add(&a, "format=yuv420p%s%s", v->edit[0] ? "," : "", v->edit);
    add_list(&a, BITEXACT);
    dt_argv_addl(&a, "-an", "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high",
                 "-pix_fmt", "yuv420p", "-x264-params", NULL);
    dt_argv_add(&a,
                "keyint=%d:min-keyint=%d:scenecut=0:bframes=%d:b-adapt=0:b-pyramid=%d:qp=%d:"
                "rc-lookahead=0:mbtree=0:threads=1:sliced-threads=0:slices=%d%s%s%s%s%s",
                v->keyint, v->keyint, v->bframes, v->pyramid, v->qp, v->slices,
                v->open_gop ? ":open-gop=1" : "", v->intra_refresh ? ":intra-refresh=1" : "",
                v->interlaced ? ":interlaced=1:tff=1" : "", v->x264_extra[0] ? ":" : "",
                v->x264_extra);
    dt_argv_addl(&a, "-threads", "1", "-f", "nut", NULL);
    int rc = cached_encode(g, &a, "nut", out, size);
    dt_argv_free(&a);
    return rc;
}

int dt_gen_audio(struct dt_gen *g, const struct dt_audio_spec *s, char *out, size_t size)
{
    static const char *const left = "0.30*sin(2*PI*440*t)*(0.6+0.4*sin(2*PI*0.5*t))";
    static const char *const right = "0.25*sin(2*PI*660*t)+0.10*sin(2*PI*1250*t+1)";
    struct dt_argv a;
    dt_argv_init(&a);
    add_list(&a, FF);
    dt_argv_addl(&a, "-threads", "1", "-f", "lavfi", "-i", NULL);
    if (strcmp(s->src, "noise") == 0)
        dt_argv_add(&a, "anoisesrc=r=48000:d=%d:c=pink:seed=%d:a=0.25%s", s->secs, s->seed,
                    s->channels == 2 ? ",pan=stereo|c0=c0|c1=-0.6*c0" : "");
    else if (s->channels == 2)
        dt_argv_add(&a, "aevalsrc=exprs='%s|%s':s=48000:d=%d", left, right, s->secs);
    else
        dt_argv_add(&a, "aevalsrc=exprs='%s':s=48000:d=%d", left, s->secs);
    if (s->edit[0]) {
        dt_argv_addl(&a, "-af", NULL);
        dt_argv_add(&a, "%s", s->edit);
    }
    add_list(&a, BITEXACT);
    dt_argv_addl(&a, "-vn", "-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", NULL);
    dt_argv_add(&a, "%d", s->channels);
    dt_argv_addl(&a, "-threads", "1", "-f", "adts", NULL);
    int rc = cached_encode(g, &a, "aac", out, size);
    dt_argv_free(&a);
    return rc;
}

int dt_gen_mux(struct dt_gen *g, const char *v, const char *a, const char *a2, int lead_ms,
               const char *const *opts, const char *out)
{
    struct dt_argv x;
    dt_argv_init(&x);
    add_list(&x, FF);
    dt_argv_addl(&x, "-i", v, NULL);
    for (int k = 0; k < 2; k++) {
        const char *in = k ? a2 : a;
        if (in == NULL)
            continue;
        if (lead_ms) {
            dt_argv_addl(&x, "-itsoffset", NULL);
            dt_argv_add(&x, "-0.%03d", lead_ms);
        }
        dt_argv_addl(&x, "-i", in, NULL);
    }
    dt_argv_addl(&x, "-map", "0:v", NULL);
    if (a)
        dt_argv_addl(&x, "-map", "1:a", NULL);
    if (a2)
        dt_argv_addl(&x, "-map", "2:a", NULL);
    dt_argv_addl(&x, "-c", "copy", "-fflags", "+bitexact", NULL);
    add_list(&x, opts);
    dt_argv_addl(&x, "-f", "mpegts", out, NULL);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    return rc == 0 ? 0 : -1;
}

int dt_gen_remux(struct dt_gen *g, const char *in, const char *const *opts, const char *out)
{
    struct dt_argv x;
    dt_argv_init(&x);
    add_list(&x, FF);
    dt_argv_addl(&x, "-copyts", "-i", in, "-map", "0", "-c", "copy", "-fflags", "+bitexact",
                 "-mpegts_copyts", "1", NULL);
    add_list(&x, opts);
    dt_argv_addl(&x, "-f", "mpegts", out, NULL);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    return rc == 0 ? 0 : -1;
}

int dt_gen_tool(struct dt_gen *g, const char *tool, ...)
{
    struct dt_argv x;
    dt_argv_init(&x);
    if (strcmp(tool, "tsedit") == 0)
        dt_argv_add(&x, "%s", g->env->tsedit);
    else if (strcmp(tool, "tsrepack") == 0)
        dt_argv_add(&x, "%s", g->env->tsrepack);
    else if (strcmp(tool, "mp4edit") == 0)
        dt_argv_add(&x, "%s", g->env->mp4edit);
    else
        dt_argv_add(&x, "%s", tool);
    va_list ap;
    va_start(ap, tool);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
        dt_argv_add(&x, "%s", s);
    va_end(ap);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    return rc == 0 ? 0 : -1;
}

struct dt_pes *dt_gen_pes_list(struct dt_gen *g, const char *ts, size_t *n, size_t *npackets)
{
    char out[DT_PATH_MAX];
    struct dt_argv x;
    dt_gen_path(g, "pes-list.tsv", out, sizeof out);
    dt_argv_init(&x);
    dt_argv_addl(&x, g->env->tsedit, "list", ts, NULL);
    int rc = dt_run(g->env, &x, out, NULL);
    dt_argv_free(&x);
    char *text = rc == 0 ? dt_read_file(out, LIST_MAX, NULL) : NULL;
    if (text == NULL)
        return NULL;
    size_t cap = 1024, cnt = 0, total = 0;
    struct dt_pes *v = malloc(cap * sizeof *v);
    static uint64_t pid_pes[8192];
    memset(pid_pes, 0, sizeof pid_pes);
    long long last_start[8192];
    for (size_t p = 0; p < 8192; p++)
        last_start[p] = -1;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && v;
         line = strtok_r(NULL, "\n", &save)) {
        unsigned long long idx, off, pid, pidx, pusi, cc, po, pl;
        long long pts, dts, pcr;
        int rai = 0;
        if (sscanf(line, "%llu %llu %llu %llu %llu %llu %llu %llu %lld %lld %lld %d", &idx, &off,
                   &pid, &pidx, &pusi, &cc, &po, &pl, &pts, &dts, &pcr, &rai) < 11 || pid > 8191)
            continue;
        total++;
        bool starts = pusi && pts >= 0; /* a new PES (with a timestamp) starts here */
        if (!starts) {
            if (last_start[pid] >= 0)
                v[last_start[pid]].npackets++;
            continue;
        }
        if (cnt == cap) {
            struct dt_pes *p = realloc(v, cap * 2 * sizeof *v);
            if (p == NULL) {
                free(v);
                v = NULL;
                break;
            }
            v = p;
            cap *= 2;
        }
        v[cnt] = (struct dt_pes){(size_t)idx, (unsigned)pid, pts, dts, rai, pid_pes[pid]++, 1};
        last_start[pid] = (long long)cnt;
        cnt++;
    }
    free(text);
    *n = cnt;
    if (npackets)
        *npackets = total;
    return v;
}

int dt_gen_segments(struct dt_gen *g, const char *ts, unsigned vpid, int every, const char *mode,
                    const char *prefix, struct dt_seg *segs, size_t max)
{
    size_t n = 0;
    struct dt_pes *pes = dt_gen_pes_list(g, ts, &n, NULL);
    if (pes == NULL)
        return -1;
    struct dt_argv x;
    dt_argv_init(&x);
    dt_argv_addl(&x, g->env->tsedit, "split", ts, prefix, mode, NULL);
    int64_t cut_pts[DT_MAX_SEGS + 1], last_pts = -1;
    size_t nseg = 1, keys = 0;
    cut_pts[0] = -1;
    for (size_t i = 0; i < n; i++) {
        if (pes[i].pid != vpid)
            continue;
        if (cut_pts[0] < 0)
            cut_pts[0] = pes[i].pts;
        if (pes[i].pts > last_pts)
            last_pts = pes[i].pts;
        if (!pes[i].rai || keys++ == 0 || (keys - 1) % (size_t)every != 0 || nseg >= max)
            continue;
        dt_argv_add(&x, "%zu", pes[i].packet);
        cut_pts[nseg++] = pes[i].pts;
    }
    free(pes);
    int rc = dt_run(g->env, &x, NULL, NULL);
    dt_argv_free(&x);
    if (rc != 0)
        return -1;
    for (size_t k = 0; k < nseg; k++) {
        memset(&segs[k], 0, sizeof segs[k]);
        if (!dt_fmt(segs[k].path, sizeof segs[k].path, "%s%zu.ts", prefix, k))
            return -1;
        int64_t end = k + 1 < nseg ? cut_pts[k + 1] : last_pts + 3000;
        segs[k].duration = (double)(end - cut_pts[k]) / 90000.0;
    }
    return (int)nseg;
}

int dt_gen_playlist(struct dt_gen *g, const char *path, const struct dt_seg *segs, size_t n,
                    uint64_t msn, bool endlist)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    double maxd = 1;
    for (size_t i = 0; i < n; i++)
        if (segs[i].duration > maxd)
            maxd = segs[i].duration;
    fprintf(f, "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:%d\n#EXT-X-MEDIA-SEQUENCE:%" PRIu64 "\n",
            (int)(maxd + 0.999), msn);
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(segs[i].path, '/');
        fprintf(f, "#EXTINF:%.6f,\n", segs[i].duration > 0 ? segs[i].duration : 1.0);
        if (segs[i].ranged)
            fprintf(f, "#EXT-X-BYTERANGE:%" PRIu64 "@%" PRIu64 "\n", segs[i].len, segs[i].off);
        fprintf(f, "%s\n", base ? base + 1 : segs[i].path);
    }
    if (endlist)
        fprintf(f, "#EXT-X-ENDLIST\n");
    bool ok = fclose(f) == 0;
    dt_note(g->env, "wrote the media playlist %s (%zu segments%s)", path, n,
            endlist ? "" : ", live: no ENDLIST");
    return ok ? 0 : -1;
}
