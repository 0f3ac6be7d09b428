/* plan_gen.h - the EUA data set (Melbourne CBD) and instance generators for
 * the reproduction and the scale figures.
 */
#ifndef PLAN_GEN_H
#define PLAN_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "plan_model.h"

#define PLAN_CSV_MAX_BYTES (16u * 1024u * 1024u)
#define PLAN_CSV_MAX_ROWS 200000

typedef struct {
    double *lat, *lon;
    int n;
} plan_points;

/* Zero value = invalid data. */
typedef enum { PLAN_GEN_INVALID = 0, PLAN_GEN_OK, PLAN_GEN_NOFILE, PLAN_GEN_NOMEM } plan_gen_status;

/* dir/site-optus-melbCBD.csv and dir/users-melbcbd-generated.csv. */
plan_gen_status plan_eua_load(const char *dir, plan_points *sites, plan_points *users,
                              char *err, size_t err_len);
plan_gen_status plan_csv_points(const char *path, plan_points *out, char *err, size_t err_len);
void plan_points_free(plan_points *p);

/* How many sites cover each user; shares of <10, 10..20 and >20. */
typedef struct {
    int users, below10, from10to20, above20, uncovered, max_sites;
} plan_coverage;
int plan_coverage_count(const plan_points *sites, const plan_points *users, double radius_m,
                        bool haversine, plan_coverage *out);

typedef struct {
    int users, servers;
    uint64_t seed;
    double demand_lo, demand_hi;    /* I_v uniform in [lo, hi] */
    double a;                       /* QoE weight a */
    double capacity_scale;          /* D_m = 40 s, C_m = 15 s */
    double overload;                /* plan_gen_overload: demand / capacity */
} plan_gen_opts;

void plan_gen_opts_default(plan_gen_opts *o);
/* Servers: the `servers` sites nearest a random site; viewers: users in
 * the overlap of two or more of them (one or more if too few). */
plan_gen_status plan_gen_eua(const plan_points *sites, const plan_points *users,
                             const plan_gen_opts *o, plan_instance *out,
                             char *err, size_t err_len);
/* Uniform servers and viewers in a square sized for ~15 servers per viewer. */
plan_gen_status plan_gen_synthetic(const plan_gen_opts *o, plan_instance *out,
                                   char *err, size_t err_len);

/* Demand over capacity: every viewer needs R (the source rate) of the
 * combined resource D_m + C_m / H whatever its rung (R_r of bandwidth plus
 * (R - R_r) H of CPU), so the ratio V R / sum_m (D_m + C_m / H) > 1 proves
 * that somebody must stay unserved.  +inf when H = 0. */
double plan_demand_ratio(const plan_instance *in);
/* Overloaded instances (issue 23): o->servers servers 350 m apart along a
 * street, so a viewer (uniform along it) is seen by one or two of them;
 * uneven D_m and C_m (each x U(0.5, 1.5), drawn apart so that bandwidth and
 * CPU bind on different servers), scaled so that plan_demand_ratio equals
 * o->overload (> 0). */
plan_gen_status plan_gen_overload(const plan_gen_opts *o, plan_instance *out,
                                  char *err, size_t err_len);

#endif
