/* plan_algo.h - allocation algorithms: LUA, its baselines, an exact solver
 * and our improved LUA.  Every algorithm fills one plan_choice per viewer and
 * never assigns a masked server, an uncovering server, or beyond D_m / C_m.
 */
#ifndef PLAN_ALGO_H
#define PLAN_ALGO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_model.h"

/* Zero value = no algorithm (a parse failure never selects one). */
typedef enum {
    PLAN_ALGO_NONE = 0,
    PLAN_ALGO_LUA,
    PLAN_ALGO_DF,
    PLAN_ALGO_MHCP,
    PLAN_ALGO_RANDOM,
    PLAN_ALGO_OPTIMAL,
    PLAN_ALGO_LUA_LS
} plan_algo;

/* Zero value = internal failure, so a forgotten assignment never reads OK. */
typedef enum {
    PLAN_STATUS_INTERNAL = 0,
    PLAN_STATUS_OK,
    PLAN_STATUS_TOO_LARGE,  /* optimal: instance beyond the size limit */
    PLAN_STATUS_TIME_LIMIT  /* optimal: optimality not proven within the time limit */
} plan_status;

/* The exact solver's limits: decision variables (viewer x server x rung
 * triples) and GLPK's default wall-clock budget (`--time-limit-ms`). */
#define PLAN_OPTIMAL_MAX_VARS 20000
#define PLAN_OPTIMAL_TIME_LIMIT_MS 30000
#define PLAN_OPTIMAL_TIME_LIMIT_MAX_MS 3600000

plan_algo plan_algo_parse(const char *name);
const char *plan_algo_name(plan_algo a);

plan_status plan_run(const plan_instance *in, plan_algo a, uint64_t seed,
                     plan_choice *out, char *err, size_t err_len);

/* Individual algorithms (out has n_viewers entries). */
plan_status plan_lua(const plan_instance *in, plan_choice *out);
plan_status plan_df(const plan_instance *in, plan_choice *out);
plan_status plan_mhcp(const plan_instance *in, plan_choice *out);
plan_status plan_random(const plan_instance *in, uint64_t seed, plan_choice *out);
/* time_limit_ms: GLPK's budget (plan_run uses PLAN_OPTIMAL_TIME_LIMIT_MS);
 * PLAN_STATUS_TIME_LIMIT when optimality was not proven within it. */
plan_status plan_optimal(const plan_instance *in, int time_limit_ms, plan_choice *out,
                         char *err, size_t err_len);
plan_status plan_lua_ls(const plan_instance *in, plan_choice *out);

/* The exact model of plan_optimal on a sub-problem: the listed viewers (all
 * when viewers is NULL) choose a covering admitted server and rung, or
 * unserved, against the capacities bw/cpu per server (D_m, C_m when NULL);
 * everybody else is left out (their load belongs in bw/cpu). */
typedef struct {
    const int *viewers;         /* instance indices; NULL = 0..n_viewers-1 */
    int n_viewers;
    const double *bw, *cpu;     /* n_servers capacities, or NULL */
    const plan_choice *start;   /* incumbent indexed by instance viewer, or NULL */
    int time_limit_ms;          /* 0 = none; reached -> PLAN_STATUS_TIME_LIMIT */
    long node_limit;            /* 0 = none; reached -> best found, *proven false */
    bool presolve;              /* GLPK's MIP presolver (then no incumbent) */
} plan_ilp_spec;
/* Writes out[v] for the listed viewers only; *proven says whether the
 * result is optimal for the sub-problem (false only at the node limit). */
plan_status plan_ilp(const plan_instance *in, const plan_ilp_spec *s, plan_choice *out,
                     bool *proven, char *err, size_t err_len);
/* Decision variables of the sub-problem (triples that fit, plus unserved). */
long plan_ilp_vars(const plan_instance *in, const plan_ilp_spec *s);
/* Lagrangian heuristic: best repaired allocation; *upper_bound (may be
 * NULL) receives the best dual bound on the optimal objective. */
plan_status plan_lagrange(const plan_instance *in, plan_choice *out, double *upper_bound);
/* lua-ls's last phase (plan_repair.c): ejection chains and a bounded exact
 * repair of each unserved viewer's neighbourhood; only moves that raise the
 * objective and keep every constraint.  ch must be feasible. */
plan_status plan_repair(const plan_instance *in, plan_choice *ch);
/* Local search from any feasible allocation; returns the number of moves. */
long plan_local_search(const plan_instance *in, plan_choice *ch, int max_passes);

/* Shared helpers. */
/* The paper's starting bitrate: the ladder rung of max(R*_v, R_prev). */
int plan_initial_rung(const plan_instance *in, int v);
/* The ladder rung of R*_v (highest rung not above it, else the lowest). */
int plan_expected_rung(const plan_instance *in, int v);
/* Best-QoE rung of [lo, hi] on link (QoE rises with R_v, so hi unless the
 * model is changed; computed rather than assumed). */
int plan_best_rung(const plan_instance *in, int v, int link, int lo, int hi);
void plan_choices_clear(plan_choice *ch, int n);
/* Viewer indices by descending Y_v, ties in input order (malloc'd). */
int *plan_order_by_weight(const plan_instance *in);
/* MHCP's remaining-space score RS_m of server m under load l. */
double plan_mhcp_rs(const plan_instance *in, const plan_load *l, int m);

/* A small seeded PRNG (xorshift64*), state owned by the caller. */
typedef struct { uint64_t s; } plan_rng;
void plan_rng_seed(plan_rng *r, uint64_t seed);
uint64_t plan_rng_next(plan_rng *r);
double plan_rng_uniform(plan_rng *r);           /* [0, 1) */
int plan_rng_below(plan_rng *r, int n);         /* [0, n), n > 0 */

#endif
