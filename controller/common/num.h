/* num.h - exact decimal numbers for money, usage, ratios and milliseconds.
 *
 * Every decimal of the situation is read into an int64 count of micro-units
 * (1e-6), exactly or not at all: a value that micro-units cannot hold
 * exactly (0.0200004, 2500.0000004) is refused, never rounded, so no
 * comparison can ever be decided by a rounding step.  Tier boundaries,
 * budgets and limits are then compared in integers.
 *
 * JSON numbers keep their source text: num_json_loadb hands every number
 * that has a fraction or an exponent to the caller as text (jansson would
 * make it a binary double, which has already lost the digits), and
 * num_from_json reads that text digit by digit.  Integers stay jansson
 * integers (exact).  Decimal strings ("0.085") are read the same way.
 */
#ifndef NUM_H
#define NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define NUM_MICRO 1000000LL
/* Largest accepted magnitude in whole units: 1e12 units = 1e18 micro-units,
 * so a sum of four such values still fits in int64. */
#define NUM_MAX_UNITS 1000000000000LL

/* Like json_loadb(text, len, flags, err), except that a number with a
 * fraction or an exponent comes back as a string holding a NUL byte and
 * then the number's text exactly as written (num_json_is_number).  A string
 * of the input that contains \u0000 is refused as jansson refuses it, so
 * the marker cannot be forged. */
json_t *num_json_loadb(const char *text, size_t len, size_t flags, json_error_t *err);

/* json_dumps(root, flags), writing every number kept as text by
 * num_json_loadb back as that number, exactly as it was written (a JSON
 * text read with num_json_loadb, changed, and written out again keeps the
 * digits of each decimal).  NULL on error; free() the result. */
char *num_json_dumps(const json_t *root, size_t flags);

/* True for a number kept as text by num_json_loadb. */
bool num_json_is_number(const json_t *v);

/* Reads an integer, a number kept by num_json_loadb or a decimal string
 * ("-12.5", "3", "0.000001", "0.0200000": trailing zeros are exact) into
 * micro-units.  Refuses magnitudes above max_units, any non-zero digit below
 * the micro-unit, a jansson real (its digits are gone), NaN and infinities.
 * Returns 0 on success, -1 otherwise (*out untouched). */
int num_from_json(const json_t *v, int64_t max_units, int64_t *out);

/* Reads a decimal string (no exponent). Same contract. */
int num_from_string(const char *s, int64_t max_units, int64_t *out);

/* A JSON real for micro-units (for output only; never compared again). */
json_t *num_to_json(int64_t micro);

/* Writes micro-units as a plain decimal ("12.5", "-0.000001") into buf. */
void num_format(int64_t micro, char *buf, size_t len);

#endif
