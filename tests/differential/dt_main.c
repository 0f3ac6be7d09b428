/* difftest - the differential test of exactav against FFmpeg's own decode.
 *
 *   difftest list
 *   difftest run [options] --cases FILE | --case NAME[:SEED]... | --random N [--seed S]
 *   difftest mutate [options] [--mutants FILE] [--count N] [--seconds S] [--seed S]   (dt_mutate.c)
 *
 * For each case: the recipe makes a reference and a candidate, the oracle
 * (dt_oracle.c) computes the expected verdict from FFmpeg's decodes, exactav
 * verify is run on the case, and the two are compared.  Any disagreement is a
 * failure and prints the case's recipe (the commands that reproduce it).
 * See tests/differential/README.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dt_exec.h"
#include "dt_mutate.h"
#include "dt_oracle.h"
#include "dt_recipe.h"
#include "dt_run.h"
#include "dt_verify.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: difftest list\n"
            "       difftest run [options] --cases FILE | --case NAME[:SEED]... | --random N [--seed S]\n"
            "       difftest mutate [options] [--mutants FILE] [--count N] [--seconds S] [--seed S]\n"
            "\n"
            "Generates variations of a stream (encoder settings, packaging, edits), decides\n"
            "the expected verdict of each from FFmpeg's own decode of both sides, runs\n"
            "`exactav verify` on it and compares.  A disagreement fails the run and prints\n"
            "the case's recipe.  Exit: 0 all agree, 1 a disagreement, 2 usage or harness error.\n"
            "\n"
            "options:\n"
            "  --exactav BIN    verifier under test (default: $EXACTAV, else exactav beside difftest)\n"
            "  --testd BIN      exactav-testd (default: $EXACTAV_TESTD, else beside --exactav)\n"
            "  --tools DIR      where tsedit, tsrepack and mp4edit are (default: beside difftest)\n"
            "  --work DIR       scratch folder (default: a new /tmp/exactav-diff-XXXXXX)\n"
            "  --keep           keep the scratch folder (it is kept anyway when a case fails)\n"
            "  --findings FILE  append one Markdown table row per disagreement\n"
            "  --cases FILE     cases to run: lines `NAME SEED GATE [note]`, GATE must|known\n"
            "  --case NAME[:SEED]  one case (repeatable; seed 1 when omitted)\n"
            "  --random N       N random cases, a third of them `combo` (recipes and seeds drawn\n"
            "                   from --seed S, default: the clock; printed)\n"
            "  --jobs N         run N cases at once (default 1; each prints when it ends)\n"
            "  --count N, --seconds S  (mutate) how many mutants, or for how long (default 60 s\n"
            "                   unless --mutants is given)\n"
            "  --mutants FILE   (mutate) first the fixed mutants of FILE: lines `SEED INDEX [note]`\n"
            "                   (mutant INDEX of a run seeded SEED; tests/differential/mutants.tsv)\n"
            "  -v               print each command as it runs (on stderr)\n");
}

/* A whole decimal number for option opt; false (with a message) otherwise. */
static bool parse_num(const char *arg, const char *opt, unsigned long long max, unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (arg[0] == '\0' || arg[0] == '-' || *end != '\0' || errno != 0 || v > max) {
        fprintf(stderr, "difftest: %s needs a whole number (at most %llu), not '%s'\n", opt, max, arg);
        return false;
    }
    *out = v;
    return true;
}

/* Default path: NAME beside `self` (the running difftest). */
static void beside(char *out, size_t size, const char *self, const char *name)
{
    char copy[DT_PATH_MAX];
    dt_fmt(copy, sizeof copy, "%s", self);
    dt_fmt(out, size, "%s/%s", dirname(copy), name);
}

static int setup_env(struct dt_env *env, struct dt_run_opts *o, const char *self)
{
    char exe[DT_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        dt_fmt(exe, sizeof exe, "%s", self);
    else
        exe[n] = '\0';
    const char *ev = getenv("EXACTAV");
    if (!env->exactav[0]) {
        if (ev && *ev)
            dt_fmt(env->exactav, sizeof env->exactav, "%s", ev);
        else
            beside(env->exactav, sizeof env->exactav, exe, "exactav");
    }
    const char *tv = getenv("EXACTAV_TESTD");
    if (!env->testd[0]) {
        if (tv && *tv)
            dt_fmt(env->testd, sizeof env->testd, "%s", tv);
        else
            beside(env->testd, sizeof env->testd, env->exactav, "exactav-testd");
    }
    if (!env->tsedit[0]) {
        beside(env->tsedit, sizeof env->tsedit, exe, "tsedit");
        beside(env->tsrepack, sizeof env->tsrepack, exe, "tsrepack");
        beside(env->mp4edit, sizeof env->mp4edit, exe, "mp4edit");
    }
    const char *need[] = {env->exactav, env->testd, env->tsedit, env->tsrepack, env->mp4edit};
    for (size_t i = 0; i < 5; i++)
        if (access(need[i], X_OK) != 0) {
            fprintf(stderr, "difftest: %s is not an executable (see --exactav, --testd, --tools)\n", need[i]);
            return -1;
        }
    if (!env->work[0]) {
        dt_fmt(env->work, sizeof env->work, "/tmp/exactav-diff-XXXXXX");
        if (mkdtemp(env->work) == NULL) {
            perror("difftest: mkdtemp");
            return -1;
        }
        o->made_work = true;
    } else if (dt_mkdirs(env->work) != 0) {
        fprintf(stderr, "difftest: cannot create %s\n", env->work);
        return -1;
    }
    char real[PATH_MAX];
    if (realpath(env->work, real))
        dt_fmt(env->work, sizeof env->work, "%s", real);
    dt_fmt(env->cache, sizeof env->cache, "%s/cache", env->work);
    return dt_mkdirs(env->cache);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"exactav", required_argument, NULL, 'e'}, {"testd", required_argument, NULL, 'T'},
        {"tools", required_argument, NULL, 't'},   {"work", required_argument, NULL, 'w'},
        {"keep", no_argument, NULL, 'k'},          {"findings", required_argument, NULL, 'f'},
        {"cases", required_argument, NULL, 'c'},   {"case", required_argument, NULL, 'C'},
        {"random", required_argument, NULL, 'r'},  {"seed", required_argument, NULL, 's'},
        {"count", required_argument, NULL, 'n'},   {"seconds", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},          {"verbose", no_argument, NULL, 'v'},
        {"jobs", required_argument, NULL, 'j'},    {"mutants", required_argument, NULL, 'M'},
        {NULL, 0, NULL, 0}};
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "list") == 0) {
        size_t n = 0;
        const struct dt_recipe *r = dt_recipes(&n);
        for (size_t i = 0; i < n; i++) {
            char labels[64];
            dt_verdict_set_name(labels, sizeof labels, r[i].labels);
            printf("%-22s %-9s class %2d  label %-16s %s\n", r[i].name, r[i].kind, r[i].klass,
                   labels, r[i].what);
        }
        return 0;
    }
    bool mutate = strcmp(cmd, "mutate") == 0;
    if (!mutate && strcmp(cmd, "run") != 0) {
        usage(stderr);
        return 2;
    }
    struct dt_env env = {0};
    struct dt_run_opts o = {0};
    o.seed = (uint64_t)time(NULL);
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "vhj:", longopts, NULL)) != -1) {
        switch (c) {
        case 'e': dt_fmt(env.exactav, sizeof env.exactav, "%s", optarg); break;
        case 'T': dt_fmt(env.testd, sizeof env.testd, "%s", optarg); break;
        case 't':
            dt_fmt(env.tsedit, sizeof env.tsedit, "%s/tsedit", optarg);
            dt_fmt(env.tsrepack, sizeof env.tsrepack, "%s/tsrepack", optarg);
            dt_fmt(env.mp4edit, sizeof env.mp4edit, "%s/mp4edit", optarg);
            break;
        case 'w': dt_fmt(env.work, sizeof env.work, "%s", optarg); break;
        case 'k': o.keep = true; break;
        case 'f': o.findings = optarg; break;
        case 'c': o.cases_file = optarg; break;
        case 'M': o.mutants_file = optarg; break;
        case 'C':
            if (o.ncase < DT_MAX_CLI_CASES)
                o.cases[o.ncase++] = optarg;
            break;
        case 'r':
        case 's':
        case 'n':
        case 'S':
        case 'j': {
            unsigned long long v = 0;
            static const char *const names[] = {"--random", "--seed", "--count", "--seconds", "--jobs"};
            int k = c == 'r' ? 0 : c == 's' ? 1 : c == 'n' ? 2 : c == 'S' ? 3 : 4;
            if (!parse_num(optarg, names[k], k == 1 ? UINT64_MAX : k == 4 ? 64 : 1000000, &v))
                return 2;
            if (k == 0)
                o.random = (unsigned long)v;
            else if (k == 1)
                o.seed = v;
            else if (k == 2)
                o.count = (unsigned long)v;
            else if (k == 3)
                o.seconds = (unsigned long)v;
            else
                o.jobs = (unsigned)v;
            break;
        }
        case 'v': env.verbose++; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || (!mutate && !o.cases_file && o.ncase == 0 && o.random == 0)) {
        usage(stderr);
        return 2;
    }
    if (setup_env(&env, &o, argv[0]) != 0)
        return 2;
    return mutate ? dt_mutate_main(&env, &o) : dt_run_main(&env, &o);
}
