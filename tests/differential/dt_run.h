/* dt_run.h - the case loop of `difftest run` and the judging of one case
 * (oracle, exactav, comparison, report), shared with `difftest mutate`. */
#ifndef DT_RUN_H
#define DT_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dt_case.h"
#include "dt_oracle.h"
#include "dt_verify.h"

#define DT_MAX_CLI_CASES 256

struct dt_run_opts {
    const char *cases_file;
    const char *cases[DT_MAX_CLI_CASES];
    size_t ncase;
    unsigned long random;
    uint64_t seed;
    unsigned long count, seconds;   /* mutate */
    const char *mutants_file;       /* mutate: fixed `SEED INDEX` mutants */
    unsigned jobs;                  /* cases run at once (run), default 1 */
    bool keep, made_work;
    const char *findings;
};

enum dt_status {
    DT_ST_OK = 0,        /* exactav gave the oracle's preferred verdict */
    DT_ST_TOLERATED,     /* another acceptable verdict (e.g. UNKNOWN where damage follows a difference) */
    DT_ST_DISAGREE,      /* exactav's verdict is not acceptable */
    DT_ST_LABEL,         /* exactav agrees with the oracle, but the recipe's label does not */
    DT_ST_GEN_ERROR,     /* the recipe could not make the case */
    DT_ST_ORACLE_ERROR,  /* FFmpeg's runs could not be read */
    DT_ST_RUN_ERROR,     /* exactav could not be run */
};

const char *dt_status_name(enum dt_status s);
bool dt_status_failed(enum dt_status s);

struct dt_judgement {
    enum dt_status status;
    struct dt_expect exp;
    struct dt_outcome out;
};

/* Judge case c (already generated, its recipe log open in env->log): oracle,
 * exactav, comparison.  Prints one line; on failure also the recipe, and a
 * Markdown row to findings when given.  cache (may be NULL): dt_oracle.h. */
void dt_judge_case(struct dt_env *env, const struct dt_case *c, int port, struct dt_judgement *j,
                   const char *gate, FILE *findings, struct dt_oracle_cache *cache);

/* Create the case folder work/NAME and open its recipe log; 0 or -1. */
int dt_case_open(struct dt_env *env, struct dt_case *c, const char *folder);
void dt_case_close(struct dt_env *env, const struct dt_case *c, bool keep);

int dt_run_main(struct dt_env *env, struct dt_run_opts *o);

#endif
