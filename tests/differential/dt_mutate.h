/* dt_mutate.h - `difftest mutate`: one-byte mutations of a small
 * reference/candidate pair, each judged by the oracle (dt_oracle.c). */
#ifndef DT_MUTATE_H
#define DT_MUTATE_H

#include "dt_exec.h"
#include "dt_run.h"

int dt_mutate_main(struct dt_env *env, struct dt_run_opts *o);

#endif
