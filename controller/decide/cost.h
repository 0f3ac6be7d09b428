/* cost.h - incremental cost under a tiered billing contract.
 *
 * F(U) sums, over the non-overlapping billing categories, the tiered price of
 * the usage U.  dCost = F(baseline + step) - F(baseline), computed exactly:
 * usage and unit prices are micro-units (int64), so each tier contributes
 * usage x price in 1e-12 currency units held in a 128-bit integer.  Nothing
 * is rounded before a comparison; output rounds to 1e-6 (half away from 0).
 */
#ifndef COST_H
#define COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "situation.h"

typedef __int128 cost_pico; /* 1e-12 currency units */

#define COST_PICO_PER_MICRO 1000000

/* Price of usage (micro-units) in one category.  Returns 0, or -1 when the
 * usage exceeds the last bounded tier (the contract cannot price it). */
int cost_category_f(const struct sit_category *cat, int64_t usage, cost_pico *out);

/* dCost of the step (high = true: step_usage.high, else .low). 0 or -1. */
int cost_delta(const struct sit_cost *k, bool high, cost_pico *out);

/* Rounds to micro-units, half away from zero (for the JSON reals only). */
int64_t cost_to_micro(cost_pico p);

/* Writes p exactly as a plain decimal ("40.000000000002", "-0.5"). */
void cost_format(cost_pico p, char *buf, size_t len);

#endif
