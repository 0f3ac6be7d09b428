/* dt_mutate.c - `difftest mutate`: one-byte mutations of a small pair.
 *
 * The pair is a 1-second 128x72 H.264 (open GOPs of 10 frames, 3 B-frames) +
 * AAC stream (the reference) and a
 * copy of it (the candidate).  Each mutant XORs one byte of the candidate
 * (tsedit xor), taking in turn a video payload byte, an audio payload byte
 * and a header byte (TS header, adaptation field, PES header, PAT/PMT), and
 * is judged by the same oracle as every other case: damaged by `ffmpeg
 * -xerror` must be UNKNOWN, identical decode MATCH, clean other decode
 * MISMATCH.  Bounded by --count and/or --seconds (default 60 s); every
 * mutant's recipe is one tsedit command on top of the pair's recipe.
 *
 * Mutant i of seed S is always the same mutant (the pair is made the same way
 * every time, and the generator takes one step per mutant), so a mutant once
 * found disagreeing is kept as a fixed case: --mutants FILE runs the listed
 * `SEED INDEX` lines alone (tests/differential/mutants.tsv, the CI set). */
#include "dt_mutate.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../fixtures/tools/tspkt.h"
#include "dt_gen.h"
#include "dt_oracle.h"

enum site_class { SITE_VIDEO = 0, SITE_AUDIO, SITE_HEADER, SITE_CLASSES };
static const char *const site_names[SITE_CLASSES] = {"video", "audio", "header"};

struct sites {
    size_t *off[SITE_CLASSES];
    size_t n[SITE_CLASSES], cap[SITE_CLASSES];
};

static void site_add(struct sites *s, enum site_class k, size_t off)
{
    if (s->n[k] == s->cap[k]) {
        size_t cap = s->cap[k] ? s->cap[k] * 2 : 4096;
        size_t *p = realloc(s->off[k], cap * sizeof *p);
        if (p == NULL)
            return;
        s->off[k] = p;
        s->cap[k] = cap;
    }
    s->off[k][s->n[k]++] = off;
}

/* Sort every byte of ts into video payload, audio payload or header. */
static int classify(const char *ts, unsigned vpid, unsigned apid, struct sites *s)
{
    struct ts_file f;
    if (ts_load(ts, &f, "difftest") != TSPKT_OK)
        return -1;
    for (size_t i = 0; i < f.npackets; i++) {
        const uint8_t *p = f.data + i * TS_PACKET_SIZE;
        size_t base = i * TS_PACKET_SIZE;
        struct ts_packet_info info;
        ts_parse_packet(p, &info);
        for (size_t b = 0; b < info.payload_offset; b++)
            site_add(s, SITE_HEADER, base + b); /* TS header and adaptation field */
        size_t pes_hdr = 0;
        if ((info.pid == vpid || info.pid == apid) && info.pusi && info.payload_len >= 9)
            pes_hdr = 9u + p[info.payload_offset + 8];
        for (size_t b = 0; b < info.payload_len; b++) {
            enum site_class k = SITE_HEADER; /* PSI and anything else */
            if ((info.pid == vpid || info.pid == apid) && b >= pes_hdr)
                k = info.pid == vpid ? SITE_VIDEO : SITE_AUDIO;
            site_add(s, k, base + info.payload_offset + b);
        }
    }
    free(f.data);
    return 0;
}

/* The pair: a small reference in work/mutate/ref.ts. */
static int make_pair(struct dt_env *env, struct dt_case *c, char *ref, size_t size)
{
    struct dt_gen g;
    struct dt_video_spec v;
    struct dt_audio_spec a;
    char vp[DT_PATH_MAX], ap[DT_PATH_MAX];
    dt_gen_init(&g, env, c);
    dt_video_default(&v);
    dt_audio_default(&a);
    v.w = 128;
    v.h = 72;
    v.secs = a.secs = 1;
    v.keyint = 10;
    v.bframes = 3;
    v.open_gop = 1; /* leading B-frames: damage in an I frame reaches frames output before it */
    if (!dt_fmt(ref, size, "%s/ref.ts", c->dir) || dt_gen_video(&g, &v, vp, sizeof vp) != 0 ||
        dt_gen_audio(&g, &a, ap, sizeof ap) != 0 ||
        dt_gen_mux(&g, vp, ap, NULL, 20, NULL, ref) != 0)
        return -1;
    return 0;
}

struct mtally {
    unsigned long n, failed, by_oracle[SITE_CLASSES][3];
};

/* One step of the mutants' generator: mutant i of seed S draws from the
 * state after i + 1 steps from S. */
static uint64_t lcg_step(uint64_t x)
{
    return x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
}

static enum dt_status one_mutant(struct dt_env *env, const char *ref, const struct sites *s,
                                 unsigned long i, uint64_t *rng, int port,
                                 struct dt_oracle_cache *cache, struct mtally *t)
{
    enum site_class k = (enum site_class)(i % SITE_CLASSES);
    *rng = lcg_step(*rng);
    size_t off = s->off[k][(*rng >> 33) % s->n[k]];
    unsigned mask = (*rng >> 20) & 1 ? 1u << ((*rng >> 8) % 8) : 1 + (unsigned)((*rng >> 12) % 255);
    struct dt_case *c = calloc(1, sizeof *c);
    struct dt_judgement *j = calloc(1, sizeof *j);
    char folder[96], off_s[32], mask_s[16];
    enum dt_status st = DT_ST_GEN_ERROR;
    dt_fmt(folder, sizeof folder, "mutants/%06lu", i);
    if (c && j && dt_case_open(env, c, folder) == 0) {
        dt_fmt(c->name, sizeof c->name, "mutate-%s", site_names[k]);
        dt_fmt(c->kind, sizeof c->kind, "mutation");
        dt_fmt(c->what, sizeof c->what, "byte %zu (%s) XOR 0x%02x", off, site_names[k], mask);
        c->seed = i;
        dt_fmt(c->ref[0].path, sizeof c->ref[0].path, "%s", ref);
        c->nref = 1;
        c->ncand = 1;
        dt_fmt(c->cand[0].path, sizeof c->cand[0].path, "%s/cand.ts", c->dir);
        dt_fmt(off_s, sizeof off_s, "%zu", off);
        dt_fmt(mask_s, sizeof mask_s, "0x%02x", mask);
        dt_note(env, "mutant %lu of the pair in %s (its recipe: ../../pair/recipe.sh): %s", i,
                ref, c->what);
        struct dt_gen g;
        dt_gen_init(&g, env, c);
        if (dt_gen_tool(&g, "tsedit", "xor", ref, c->cand[0].path, off_s, mask_s, (char *)NULL) == 0) {
            dt_judge_case(env, c, port, j, NULL, NULL, cache);
            st = j->status;
            if (j->exp.primary <= DT_MISMATCH)
                t->by_oracle[k][j->exp.primary]++;
        }
        dt_case_close(env, c, dt_status_failed(st));
    }
    t->n++;
    if (dt_status_failed(st))
        t->failed++;
    free(c);
    free(j);
    return st;
}

/* The fixed mutants of a file: lines `SEED INDEX [note]`, '#' comments.
 * Each is run alone (its generator state derived from SEED and INDEX).
 * -1 when the file cannot be read or a line is not of that form. */
static int fixed_mutants(struct dt_env *env, const char *file, const char *ref, const struct sites *s,
                         int port, struct dt_oracle_cache *cache, struct mtally *t)
{
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        fprintf(stderr, "difftest mutate: cannot read %s\n", file);
        return -1;
    }
    char line[512];
    int rc = 0;
    for (unsigned lineno = 1; rc == 0 && fgets(line, sizeof line, f); lineno++) {
        uint64_t seed;
        unsigned long index;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        if (sscanf(p, "%" SCNu64 " %lu", &seed, &index) != 2 || index > 1000000) {
            fprintf(stderr, "difftest mutate: %s:%u: not `SEED INDEX [note]`\n", file, lineno);
            rc = -1;
            break;
        }
        uint64_t rng = seed;
        for (unsigned long i = 0; i < index; i++)
            rng = lcg_step(rng);
        printf("difftest mutate: fixed mutant %lu of seed %" PRIu64 "\n", index, seed);
        one_mutant(env, ref, s, index, &rng, port, cache, t);
    }
    fclose(f);
    return rc;
}

int dt_mutate_main(struct dt_env *env, struct dt_run_opts *o)
{
    struct dt_case *pair = calloc(1, sizeof *pair);
    struct sites s = {0};
    char ref[DT_PATH_MAX];
    int port = 0;
    if (o->count == 0 && o->seconds == 0 && o->mutants_file == NULL)
        o->seconds = 60;
    if (o->count || o->seconds)
        printf("difftest mutate: exactav %s, work %s, seed %" PRIu64 "\n", env->exactav, env->work, o->seed);
    else
        printf("difftest mutate: exactav %s, work %s, fixed mutants of %s\n", env->exactav, env->work,
               o->mutants_file);
    if (pair == NULL || dt_case_open(env, pair, "pair") != 0 || make_pair(env, pair, ref, sizeof ref) != 0 ||
        classify(ref, 0x100, 0x101, &s) != 0 || s.n[SITE_VIDEO] == 0 || s.n[SITE_AUDIO] == 0) {
        fprintf(stderr, "difftest mutate: cannot make the pair\n");
        free(pair);
        return 2;
    }
    dt_case_close(env, pair, true);
    pid_t testd = dt_testd_start(env, &port);
    struct dt_oracle_cache *cache = dt_oracle_cache_new();
    struct mtally t = {0};
    uint64_t rng = o->seed;
    int fixed_rc = 0;
    if (o->mutants_file && cache && testd > 0)
        fixed_rc = fixed_mutants(env, o->mutants_file, ref, &s, port, cache, &t);
    time_t t0 = time(NULL);
    for (unsigned long i = 0; cache && testd > 0 && (o->count || o->seconds); i++) {
        if ((o->count && i >= o->count) || (o->seconds && time(NULL) - t0 >= (time_t)o->seconds))
            break;
        one_mutant(env, ref, &s, i, &rng, port, cache, &t);
    }
    dt_oracle_cache_free(cache);
    dt_testd_stop(testd);
    for (int k = 0; k < SITE_CLASSES; k++) {
        printf("difftest mutate: %-6s bytes: oracle MATCH %lu, MISMATCH %lu, UNKNOWN %lu\n",
               site_names[k], t.by_oracle[k][DT_MATCH], t.by_oracle[k][DT_MISMATCH],
               t.by_oracle[k][DT_UNKNOWN]);
        free(s.off[k]);
    }
    if (o->count || o->seconds)
        printf("difftest mutate: %lu mutants, %lu FAILED (seed %" PRIu64 "%s)\n", t.n, t.failed, o->seed,
               o->mutants_file ? ", after the fixed ones" : "");
    else                         /* only the fixed mutants: each names its own seed above */
        printf("difftest mutate: %lu mutants, %lu FAILED (the fixed mutants of %s)\n", t.n, t.failed,
               o->mutants_file);
    if (t.failed)
        printf("difftest mutate: failing mutants kept in %s/mutants\n", env->work);
    free(pair);
    return testd <= 0 || fixed_rc != 0 ? 2 : t.failed ? 1 : 0;
}
