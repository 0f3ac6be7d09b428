/* dt_run.c - see dt_run.h. */
#include "dt_run.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    char id[96];
    dt_fmt(id, sizeof id, "%s:%" PRIu64, c->name[0] ? c->name : "?", c->seed);
    printf("%-12s %-28s class %2d  oracle %-8s {%s}  exactav %s %s (%s)%s\n",
           dt_status_failed(j->status) && known ? "known" : dt_status_name(j->status),
           id, c->klass, dt_verdict_name(j->exp.primary), allowed,
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
        dt_case_close(env, c, o->keep || (dt_status_failed(st) && strcmp(gate, "known") != 0));
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
    else if (strcmp(gate, "known") == 0)
        t->known++;
    else
        t->failed++;
}

/* One case to run: from a cases file, --case or --random. */
struct case_ref {
    char name[64];
    uint64_t seed;
    char gate[8]; /* must | known */
};

struct case_list {
    struct case_ref *v;
    size_t n, cap;
};

static int list_add(struct case_list *l, const char *name, uint64_t seed, const char *gate)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct case_ref *p = realloc(l->v, cap * sizeof *p);
        if (p == NULL)
            return -1;
        l->v = p;
        l->cap = cap;
    }
    struct case_ref *c = &l->v[l->n++];
    dt_fmt(c->name, sizeof c->name, "%s", name);
    c->seed = seed;
    dt_fmt(c->gate, sizeof c->gate, "%s", gate);
    return 0;
}

static int read_cases_file(const char *path, struct case_list *l)
{
    char *text = dt_read_file(path, 1u << 20, NULL);
    if (text == NULL) {
        fprintf(stderr, "difftest: cannot read %s\n", path);
        return -1;
    }
    int rc = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && rc == 0;
         line = strtok_r(NULL, "\n", &save)) {
        char name[64], gate[16] = "must";
        unsigned long long seed = 0;
        if (line[0] == '#' || sscanf(line, "%63s %llu %15s", name, &seed, gate) < 2)
            continue;
        if (strcmp(gate, "must") != 0 && strcmp(gate, "known") != 0) {
            fprintf(stderr, "difftest: %s: gate must be must or known: %s\n", path, line);
            rc = -1;
        } else {
            rc = list_add(l, name, seed, gate);
        }
    }
    free(text);
    return rc;
}

/* Every case the options ask for, in order. */
static int collect(struct dt_run_opts *o, struct case_list *l)
{
    if (o->cases_file && read_cases_file(o->cases_file, l) != 0)
        return -1;
    for (size_t i = 0; i < o->ncase; i++) {
        char name[64];
        uint64_t seed = 1;
        dt_fmt(name, sizeof name, "%s", o->cases[i]);
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = '\0';
            seed = strtoull(colon + 1, NULL, 0);
        }
        if (list_add(l, name, seed, "must") != 0)
            return -1;
    }
    /* random cases: a third are combinations (they reach the most), the rest
     * spread evenly over every recipe */
    size_t nr = 0;
    const struct dt_recipe *r = dt_recipes(&nr);
    uint64_t s = o->seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    for (unsigned long i = 0; i < o->random; i++) {
        s = s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        const char *name = (s >> 60) % 3 == 0 ? "combo" : r[(s >> 33) % nr].name;
        if (list_add(l, name, (s >> 16) % 1000000, "must") != 0)
            return -1;
    }
    return 0;
}

/* Run the cases, o->jobs at a time: each in a child whose output is
 * collected in a file and printed whole when it ends. */
static void run_list(struct dt_env *env, struct dt_run_opts *o, const struct case_list *l, int port,
                     FILE *findings, struct tally *t)
{
    unsigned jobs = o->jobs ? o->jobs : 1;
    pid_t *pid = calloc(jobs, sizeof *pid);
    size_t *which = calloc(jobs, sizeof *which);
    size_t next = 0, running = 0;
    while (pid && which && (next < l->n || running > 0)) {
        if (jobs == 1) {
            const struct case_ref *c = &l->v[next];
            count(t, run_one(env, o, c->name, c->seed, c->gate, next, port, findings), c->gate);
            next++;
            continue;
        }
        if (next < l->n && running < jobs) {
            unsigned slot = 0;
            while (pid[slot])
                slot++;
            char out[DT_PATH_MAX];
            dt_fmt(out, sizeof out, "%s/out-%04zu.txt", env->work, next);
            fflush(NULL);
            pid_t p = fork();
            if (p == 0) {
                if (freopen(out, "w", stdout) == NULL)
                    _exit(DT_ST_RUN_ERROR);
                const struct case_ref *c = &l->v[next];
                enum dt_status st = run_one(env, o, c->name, c->seed, c->gate, next, port, findings);
                fflush(NULL);
                _exit((int)st);
            }
            if (p > 0) {
                pid[slot] = p;
                which[slot] = next;
                running++;
            }
            next++;
            continue;
        }
        int st = 0;
        pid_t done = wait(&st);
        for (unsigned slot = 0; slot < jobs && done > 0; slot++) {
            if (pid[slot] != done)
                continue;
            char out[DT_PATH_MAX];
            dt_fmt(out, sizeof out, "%s/out-%04zu.txt", env->work, which[slot]);
            char *text = dt_read_file(out, 64u << 20, NULL);
            fputs(text ? text : "", stdout);
            fflush(stdout);
            free(text);
            unlink(out);
            enum dt_status s = WIFEXITED(st) ? (enum dt_status)WEXITSTATUS(st) : DT_ST_RUN_ERROR;
            count(t, s > DT_ST_RUN_ERROR ? DT_ST_RUN_ERROR : s, l->v[which[slot]].gate);
            pid[slot] = 0;
            running--;
        }
    }
    free(pid);
    free(which);
}

int dt_run_main(struct dt_env *env, struct dt_run_opts *o)
{
    struct case_list l = {0};
    if (collect(o, &l) != 0) {
        free(l.v);
        return 2;
    }
    int port = 0;
    pid_t testd = dt_testd_start(env, &port);
    if (testd <= 0) {
        fprintf(stderr, "difftest: cannot start %s\n", env->testd);
        free(l.v);
        return 2;
    }
    FILE *findings = o->findings ? fopen(o->findings, "a") : NULL;
    printf("difftest: exactav %s, work %s, %zu cases\n", env->exactav, env->work, l.n);
    if (o->random)
        printf("difftest: %lu random cases from --seed %" PRIu64 "\n", o->random, o->seed);
    struct tally t = {0};
    run_list(env, o, &l, port, findings, &t);
    free(l.v);
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
    return t.failed ? 1 : 0;
}
