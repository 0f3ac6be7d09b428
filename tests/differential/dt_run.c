/* dt_run.c - see dt_run.h. */
#include "dt_run.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_recipe.h"

const char *dt_status_name(enum dt_status s)
{
    switch (s) {
    case DT_ST_OK: return "ok";
    case DT_ST_TOLERATED: return "tolerated";
    case DT_ST_DISAGREE: return "DISAGREE";
    case DT_ST_LABEL: return "LABEL";
    case DT_ST_GEN_ERROR: return "GEN-ERROR";
    case DT_ST_ORACLE_ERROR: return "ORACLE-ERROR";
    case DT_ST_RUN_ERROR: return "RUN-ERROR";
    }
    return "?";
}

bool dt_status_failed(enum dt_status s)
{
    return s != DT_ST_OK && s != DT_ST_TOLERATED;
}

static void print_recipe(const struct dt_case *c)
{
    char path[DT_PATH_MAX];
    if (!dt_fmt(path, sizeof path, "%s/recipe.sh", c->dir))
        return;
    char *text = dt_read_file(path, 1u << 20, NULL);
    printf("    ---- recipe (%s):\n", path);
    for (char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save))
        printf("    %s\n", line);
    free(text);
}

/* One Markdown row: | class | case | kind | oracle | exactav | what the oracle saw | */
static void findings_row(FILE *f, const struct dt_case *c, const struct dt_judgement *j)
{
    char allowed[64];
    dt_verdict_set_name(allowed, sizeof allowed, j->exp.allowed);
    fprintf(f, "| %d | `%s:%" PRIu64 "` | %s | %s (%s) | %s %s (%s) | %s |\n", c->klass, c->name,
            c->seed, dt_status_name(j->status), dt_verdict_name(j->exp.primary), allowed,
            j->out.step, dt_verdict_name(j->out.verdict), j->out.reason, j->exp.why);
    fflush(f);
}

void dt_judge_case(struct dt_env *env, const struct dt_case *c, int port, struct dt_judgement *j,
                   const char *gate, FILE *findings, struct dt_oracle_cache *cache)
{
    memset(j, 0, sizeof *j);
    if (c->labels == DT_VSET(DT_USAGE)) {
        /* a command-line contract, not a content verdict: no oracle needed */
        j->exp.primary = DT_USAGE;
        j->exp.allowed = DT_VSET(DT_USAGE);
        dt_fmt(j->exp.why, sizeof j->exp.why, "usage error expected (exit 64)");
    } else if (dt_oracle_judge(env, c, cache, &j->exp) != 0) {
        j->status = DT_ST_ORACLE_ERROR;
    }
    if (j->status == DT_ST_OK && dt_verify_case(env, c, port, &j->out) != 0)
        j->status = DT_ST_RUN_ERROR;
    if (j->status == DT_ST_OK) {
        if (!(j->exp.allowed & DT_VSET(j->out.verdict)))
            j->status = DT_ST_DISAGREE;
        else if (c->labels && !(c->labels & DT_VSET(j->exp.primary)))
            j->status = DT_ST_LABEL;
        else if (j->out.verdict != j->exp.primary)
            j->status = DT_ST_TOLERATED;
    }
    bool known = gate && strcmp(gate, "known") == 0;
    char allowed[64];
    dt_verdict_set_name(allowed, sizeof allowed, j->exp.allowed);
    printf("%-12s %-28s class %2d  oracle %-8s {%s}  exactav %s %s (%s)%s\n",
           dt_status_failed(j->status) && known ? "known" : dt_status_name(j->status),
           c->name[0] ? c->name : "?", c->klass, dt_verdict_name(j->exp.primary), allowed,
           j->out.step, dt_verdict_name(j->out.verdict), j->out.reason[0] ? j->out.reason : "-",
           known && !dt_status_failed(j->status) ? "  [known case agrees now: gate it]" : "");
    if (dt_status_failed(j->status)) {
        printf("    case %s seed %" PRIu64 ": %s\n", c->name, c->seed, c->what);
        char labels[64];
        dt_verdict_set_name(labels, sizeof labels, c->labels);
        printf("    label {%s}; oracle: %s\n", labels, j->exp.why);
        printf("    exactav: exit %d, reason %s, video %s, audio %s %s\n", j->out.exit_code,
               j->out.reason, j->out.vreason, j->out.areason, j->out.first);
        if (!known)
            print_recipe(c);
        if (findings)
            findings_row(findings, c, j);
    }
    fflush(stdout);
}

int dt_case_open(struct dt_env *env, struct dt_case *c, const char *folder)
{
    char log[DT_PATH_MAX];
    if (!dt_fmt(c->dir, sizeof c->dir, "%s/%s", env->work, folder) || dt_mkdirs(c->dir) != 0 ||
        !dt_fmt(log, sizeof log, "%s/recipe.sh", c->dir))
        return -1;
    env->log = fopen(log, "w");
    if (env->log == NULL)
        return -1;
    fprintf(env->log, "#!/bin/sh\n# exactav differential case (tests/differential); paths are absolute\n"
                      "mkdir -p %s %s\n", c->dir, env->cache);
    return 0;
}

void dt_case_close(struct dt_env *env, const struct dt_case *c, bool keep)
{
    if (env->log) {
        fclose(env->log);
        env->log = NULL;
    }
    if (!keep) {
        struct dt_argv a;
        dt_argv_init(&a);
        dt_argv_addl(&a, "rm", "-rf", c->dir, NULL);
        dt_run(env, &a, NULL, NULL);
        dt_argv_free(&a);
    }
}

/* One case: build from recipe and seed, judge, clean up. */
static enum dt_status run_one(struct dt_env *env, struct dt_run_opts *o, const char *name,
                              uint64_t seed, const char *gate, size_t index, int port, FILE *findings)
{
    const struct dt_recipe *r = dt_recipe_find(name);
    if (r == NULL) {
        printf("%-12s %s: no such recipe (difftest list)\n", "GEN-ERROR", name);
        return DT_ST_GEN_ERROR;
    }
    struct dt_case *c = calloc(1, sizeof *c);
    struct dt_judgement *j = calloc(1, sizeof *j);
    char folder[128];
    dt_fmt(folder, sizeof folder, "cases/%04zu-%s-%" PRIu64, index, name, seed);
    enum dt_status st = DT_ST_GEN_ERROR;
    if (c && j && dt_case_open(env, c, folder) == 0) {
        if (dt_recipe_build(env, r, seed, c) != 0) {
            printf("%-12s %-28s seed %" PRIu64 ": the recipe failed\n", "GEN-ERROR", name, seed);
            print_recipe(c);
        } else {
            dt_judge_case(env, c, port, j, gate, findings, NULL);
            st = j->status;
        }
        bool known = gate && strcmp(gate, "known") == 0;
        dt_case_close(env, c, o->keep || (dt_status_failed(st) && !known));
    }
    free(c);
    free(j);
    return st;
}

struct tally {
    unsigned long n, ok, tolerated, failed, known;
};

static void count(struct tally *t, enum dt_status st, const char *gate)
{
    t->n++;
    if (st == DT_ST_OK)
        t->ok++;
    else if (st == DT_ST_TOLERATED)
        t->tolerated++;
    else if (gate && strcmp(gate, "known") == 0)
        t->known++;
    else
        t->failed++;
}

static int run_cases_file(struct dt_env *env, struct dt_run_opts *o, int port, FILE *findings,
                          struct tally *t)
{
    char *text = dt_read_file(o->cases_file, 1u << 20, NULL);
    if (text == NULL) {
        fprintf(stderr, "difftest: cannot read %s\n", o->cases_file);
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char name[64], gate[16] = "must";
        unsigned long long seed = 0;
        if (line[0] == '#' || sscanf(line, "%63s %llu %15s", name, &seed, gate) < 2)
            continue;
        if (strcmp(gate, "must") != 0 && strcmp(gate, "known") != 0) {
            fprintf(stderr, "difftest: %s: gate must be must or known: %s\n", o->cases_file, line);
            free(text);
            return -1;
        }
        count(t, run_one(env, o, name, seed, gate, t->n, port, findings), gate);
    }
    free(text);
    return 0;
}

int dt_run_main(struct dt_env *env, struct dt_run_opts *o)
{
    int port = 0;
    pid_t testd = dt_testd_start(env, &port);
    if (testd <= 0) {
        fprintf(stderr, "difftest: cannot start %s\n", env->testd);
        return 2;
    }
    FILE *findings = o->findings ? fopen(o->findings, "a") : NULL;
    printf("difftest: exactav %s, work %s\n", env->exactav, env->work);
    struct tally t = {0};
    int rc = 0;
    if (o->cases_file && run_cases_file(env, o, port, findings, &t) != 0)
        rc = 2;
    for (size_t i = 0; i < o->ncase; i++) {
        char name[64];
        uint64_t seed = 1;
        dt_fmt(name, sizeof name, "%s", o->cases[i]);
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = '\0';
            seed = strtoull(colon + 1, NULL, 0);
        }
        count(&t, run_one(env, o, name, seed, NULL, t.n, port, findings), NULL);
    }
    if (o->random) {
        size_t nr = 0;
        const struct dt_recipe *r = dt_recipes(&nr);
        printf("difftest: %lu random cases from --seed %" PRIu64 "\n", o->random, o->seed);
        uint64_t s = o->seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
        for (unsigned long i = 0; i < o->random; i++) {
            s = s * UINT64_C(6364136223846793005) + 1442695040888963407u;
            const char *name = r[(s >> 33) % nr].name;
            uint64_t seed = (s >> 16) % 1000000;
            count(&t, run_one(env, o, name, seed, NULL, t.n, port, findings), NULL);
        }
    }
    dt_testd_stop(testd);
    if (findings)
        fclose(findings);
    printf("difftest: %lu cases: %lu ok, %lu tolerated, %lu known failures, %lu FAILED\n", t.n,
           t.ok, t.tolerated, t.known, t.failed);
    if (t.failed || o->keep)
        printf("difftest: cases kept in %s\n", env->work);
    else if (o->made_work) {
        struct dt_argv a;
        dt_argv_init(&a);
        dt_argv_addl(&a, "rm", "-rf", env->work, NULL);
        dt_run(env, &a, NULL, NULL);
        dt_argv_free(&a);
    }
    if (rc)
        return rc;
    return t.failed ? 1 : 0;
}
