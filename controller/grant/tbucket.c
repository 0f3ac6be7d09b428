/* tbucket.c - token bucket arithmetic (see tbucket.h). */
#include "tbucket.h"

#include <assert.h>

struct tb_bucket tb_full(int64_t burst, int64_t now_ms)
{
    assert(burst >= 1 && burst <= TB_MAX_BURST);
    return (struct tb_bucket){burst * TB_NANO, now_ms};
}

void tb_refill(struct tb_bucket *b, int64_t rate_micro, int64_t burst, int64_t now_ms)
{
    assert(rate_micro > 0 && burst >= 1 && burst <= TB_MAX_BURST);
    int64_t cap = burst * TB_NANO;
    if (now_ms <= b->at_ms)
        return; /* never refill for a clock that went backwards */
    __int128 t = (__int128)b->tokens_nano + (__int128)rate_micro * (now_ms - b->at_ms);
    b->tokens_nano = t > cap ? cap : (int64_t)t;
    b->at_ms = now_ms;
}

bool tb_take(struct tb_bucket *b, int64_t rate_micro, int64_t burst, int64_t now_ms,
             int64_t *wait_ms)
{
    tb_refill(b, rate_micro, burst, now_ms);
    if (b->tokens_nano >= TB_NANO) {
        b->tokens_nano -= TB_NANO;
        return true;
    }
    int64_t need = TB_NANO - b->tokens_nano;
    *wait_ms = (need + rate_micro - 1) / rate_micro;
    return false;
}
