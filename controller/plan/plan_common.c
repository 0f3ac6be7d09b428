/* plan_common.c - helpers shared by the algorithms and the dispatcher. */
#include "plan_algo.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const struct { plan_algo a; const char *name; } algo_names[] = {
    {PLAN_ALGO_LUA, "lua"},         {PLAN_ALGO_DF, "df"},
    {PLAN_ALGO_MHCP, "mhcp"},       {PLAN_ALGO_RANDOM, "random"},
    {PLAN_ALGO_OPTIMAL, "optimal"}, {PLAN_ALGO_LUA_LS, "lua-ls"},
};

plan_algo plan_algo_parse(const char *name)
{
    for (size_t i = 0; i < sizeof algo_names / sizeof algo_names[0]; i++)
        if (name && strcmp(name, algo_names[i].name) == 0)
            return algo_names[i].a;
    return PLAN_ALGO_NONE;
}

const char *plan_algo_name(plan_algo a)
{
    for (size_t i = 0; i < sizeof algo_names / sizeof algo_names[0]; i++)
        if (algo_names[i].a == a)
            return algo_names[i].name;
    return "none";
}

void plan_choices_clear(plan_choice *ch, int n)
{
    for (int v = 0; v < n; v++) {
        ch[v].server = PLAN_UNSERVED;
        ch[v].rung = 0;
    }
}

static int rung_at_most(const plan_instance *in, double want)
{
    int r = 0;
    while (r + 1 < in->n_rungs && in->ladder[r + 1] <= want + PLAN_EPS)
        r++;
    return r;
}

int plan_initial_rung(const plan_instance *in, int v)
{
    const plan_viewer *w = &in->viewers[v];
    return rung_at_most(in, w->expected_mbps > w->prev_mbps ? w->expected_mbps : w->prev_mbps);
}

int plan_expected_rung(const plan_instance *in, int v)
{
    return rung_at_most(in, in->viewers[v].expected_mbps);
}

int plan_best_rung(const plan_instance *in, int v, int link, int lo, int hi)
{
    assert(lo <= hi);
    int best = lo;
    double bq = plan_qoe(in, v, link, lo);
    for (int r = lo + 1; r <= hi; r++) {
        double q = plan_qoe(in, v, link, r);
        if (q > bq) {
            bq = q;
            best = r;
        }
    }
    return best;
}

plan_status plan_run(const plan_instance *in, plan_algo a, uint64_t seed,
                     plan_choice *out, char *err, size_t err_len)
{
    plan_choices_clear(out, in->n_viewers);
    switch (a) {
    case PLAN_ALGO_LUA: return plan_lua(in, out);
    case PLAN_ALGO_DF: return plan_df(in, out);
    case PLAN_ALGO_MHCP: return plan_mhcp(in, out);
    case PLAN_ALGO_RANDOM: return plan_random(in, seed, out);
    case PLAN_ALGO_OPTIMAL: return plan_optimal(in, PLAN_OPTIMAL_TIME_LIMIT_MS, out, err, err_len);
    case PLAN_ALGO_LUA_LS: return plan_lua_ls(in, out);
    case PLAN_ALGO_NONE: break;
    }
    snprintf(err, err_len, "no algorithm selected");
    return PLAN_STATUS_INTERNAL;
}

/* splitmix64 spreads small seeds (1, 2, 3 ...) over the whole state. */
void plan_rng_seed(plan_rng *r, uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    r->s = z ? z : 0x2545F4914F6CDD1Dull; /* xorshift must not start at 0 */
}

uint64_t plan_rng_next(plan_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

double plan_rng_uniform(plan_rng *r)
{
    return (double)(plan_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

int plan_rng_below(plan_rng *r, int n)
{
    assert(n > 0);
    return (int)(plan_rng_next(r) % (uint64_t)n);
}
