/* ts33.h - arithmetic on 33-bit MPEG presentation timestamps (90 kHz).
 *
 * MPEG-TS timestamps wrap at 2^33 ticks (about 26.5 hours).  Wrap-around is
 * normal in live streams, so every comparison in the verifier goes through
 * these functions and never through plain integer ordering.
 */
#ifndef TS33_H
#define TS33_H

#include <stdbool.h>
#include <stdint.h>

#define TS33_MOD ((int64_t)1 << 33)
#define TS33_MASK (TS33_MOD - 1)

/* t reduced into [0, 2^33).  Accepts negative and > 2^33 values, which
 * libavformat produces when it unwraps timestamps itself. */
int64_t ts33_norm(int64_t t);

/* (a - b) mod 2^33, in [0, 2^33). */
int64_t ts33_sub(int64_t a, int64_t b);

/* (a + b) mod 2^33, in [0, 2^33). */
int64_t ts33_add(int64_t a, int64_t b);

/* The signed distance from b to a, in [-2^32, 2^32): the shortest way round
 * the circle.  Used to order nearby timestamps across a wrap. */
int64_t ts33_diff(int64_t a, int64_t b);

/* The membership rule of the contract: t is in the half-open interval
 * [start, end) iff (t - start) mod 2^33 < (end - start) mod 2^33. */
bool ts33_in_interval(int64_t t, int64_t start, int64_t end);

/* The interval's length in ticks, (end - start) mod 2^33. */
int64_t ts33_interval_len(int64_t start, int64_t end);

#endif
