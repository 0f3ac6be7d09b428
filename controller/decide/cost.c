/* cost.c - tiered contract F and dCost (see cost.h). */
#include "cost.h"

#include <assert.h>
#include <stdio.h>

int cost_category_f(const struct sit_category *cat, int64_t usage, cost_pico *out)
{
    assert(cat && out && usage >= 0);
    cost_pico sum = 0;
    int64_t lower = 0; /* usage already priced by earlier tiers */
    for (size_t i = 0; i < cat->n_tiers && lower < usage; i++) {
        const struct sit_tier *t = &cat->tiers[i];
        int64_t upper = t->bounded && t->up_to < usage ? t->up_to : usage;
        assert(upper >= lower);
        sum += (cost_pico)(upper - lower) * t->unit_price;
        lower = upper;
    }
    if (lower < usage)
        return -1;
    *out = sum;
    return 0;
}

int cost_delta(const struct sit_cost *k, bool high, cost_pico *out)
{
    cost_pico total = 0;
    for (size_t i = 0; i < k->n_categories; i++) {
        const struct sit_category *c = &k->categories[i];
        int64_t step = high ? c->step_high : c->step_low;
        cost_pico before, after;
        /* baseline and step are each <= 1e18 micro; their sum fits int64. */
        if (cost_category_f(c, c->baseline, &before) < 0 ||
            cost_category_f(c, c->baseline + step, &after) < 0)
            return -1;
        total += after - before;
    }
    *out = total;
    return 0;
}

int64_t cost_to_micro(cost_pico p)
{
    cost_pico half = COST_PICO_PER_MICRO / 2;
    return (int64_t)(p >= 0 ? (p + half) / COST_PICO_PER_MICRO : (p - half) / COST_PICO_PER_MICRO);
}

void cost_format(cost_pico p, char *buf, size_t len)
{
    /* Units and 12 decimals each fit 64 bits: the situation's bounds keep a
     * cost below 16 categories x 1e12 units x 1e6 per unit = 1.6e19 units. */
    unsigned __int128 a = p < 0 ? -(unsigned __int128)p : (unsigned __int128)p;
    unsigned long long whole = (unsigned long long)(a / 1000000000000ULL);
    char frac[16];
    snprintf(frac, sizeof frac, "%012llu", (unsigned long long)(a % 1000000000000ULL));
    for (int i = 11; i >= 0 && frac[i] == '0'; i--)
        frac[i] = '\0';
    snprintf(buf, len, "%s%llu%s%s", p < 0 ? "-" : "", whole, frac[0] ? "." : "", frac);
}
