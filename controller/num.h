/* num.h - exact decimal numbers for money, usage, ratios and milliseconds.
 *
 * Every decimal of the situation is parsed into an int64 count of micro-units
 * (1e-6).  Tier boundaries, budgets and limits are then compared exactly: no
 * binary floating point ever decides a comparison.  JSON strings ("0.085")
 * are parsed digit by digit; JSON numbers are read by jansson as double and
 * rounded to the nearest micro-unit (exact for every value with at most six
 * decimals and magnitude <= NUM_MAX_UNITS).
 */
#ifndef NUM_H
#define NUM_H

#include <stdint.h>
#include <jansson.h>

#define NUM_MICRO 1000000LL
/* Largest accepted magnitude in whole units: 1e12 units = 1e18 micro-units,
 * so a sum of four such values still fits in int64. */
#define NUM_MAX_UNITS 1000000000000LL

/* Parses an integer, real or decimal string into micro-units, rejecting
 * magnitudes above max_units, more than six decimals, NaN and infinities.
 * Returns 0 on success, -1 otherwise (*out untouched). */
int num_from_json(const json_t *v, int64_t max_units, int64_t *out);

/* Parses a decimal string ("-12.5", "3", "0.000001"). Same contract. */
int num_from_string(const char *s, int64_t max_units, int64_t *out);

/* A JSON real for micro-units (for output only; never compared again). */
json_t *num_to_json(int64_t micro);

/* Writes micro-units as a plain decimal ("12.5", "-0.000001") into buf. */
void num_format(int64_t micro, char *buf, size_t len);

#endif
