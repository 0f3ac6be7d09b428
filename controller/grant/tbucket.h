/* tbucket.h - the token bucket that bounds a grant's allocation rate.
 *
 * Rate r tokens per second (max_rate_micro = r x 1e6), capacity b tokens
 * (the burst).  The content is kept in nano-tokens (1e-9): r x dt(ms) adds
 * exactly max_rate_micro x dt nano-tokens, so no fraction is ever lost or
 * invented, whatever the rate.  A clock going backwards adds nothing.
 * Pure arithmetic: the state lives in grants.bucket_tokens_nano/_at_ms.
 */
#ifndef TBUCKET_H
#define TBUCKET_H

#include <stdbool.h>
#include <stdint.h>

#define TB_NANO 1000000000LL /* nano-tokens per token */
#define TB_MAX_BURST 1000000000LL

struct tb_bucket {
    int64_t tokens_nano, at_ms;
};

/* A full bucket at now_ms. */
struct tb_bucket tb_full(int64_t burst, int64_t now_ms);

/* Refills up to now_ms (capacity burst tokens). */
void tb_refill(struct tb_bucket *b, int64_t rate_micro, int64_t burst, int64_t now_ms);

/* Refills, then takes one token: true.  Otherwise false, the bucket is left
 * refilled, and *wait_ms says when one token will be there. */
bool tb_take(struct tb_bucket *b, int64_t rate_micro, int64_t burst, int64_t now_ms,
             int64_t *wait_ms);

#endif
