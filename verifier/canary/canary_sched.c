/* canary_sched.c - the canary's scheduling decisions (see canary_sched.h). */
#include "canary_sched.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

enum canary_pl canary_observe(struct canary_seen *s, uint64_t newest, bool endlist, int64_t target_duration_s,
                              int64_t now_ms)
{
    int64_t limit_ms = CANARY_STALL_TARGET_DURATIONS * (target_duration_s > 0 ? target_duration_s : 1) * 1000;
    if (!s->have || newest > s->newest) {
        *s = (struct canary_seen){.have = true, .newest = newest, .last = newest, .advanced_at_ms = now_ms};
        return CANARY_PL_ADVANCING;
    }
    /* moving forward below the highest number (after a regression) is
     * still moving: only a playlist that stands still stalls */
    if (newest > s->last) {
        s->advanced_at_ms = now_ms;
        s->stall_reported = false;
    }
    s->last = newest;
    if (newest < s->newest) {
        if (!s->regressed) {
            s->regressed = true;
            s->regressed_since_ms = now_ms;
            return CANARY_PL_REGRESSED;
        }
        if (now_ms - s->regressed_since_ms < limit_ms)
            return CANARY_PL_SAME;
        /* the lower numbering lasted: a restarted packager, not a stale cache */
        *s = (struct canary_seen){.have = true, .newest = newest, .last = newest, .advanced_at_ms = now_ms};
        return CANARY_PL_REBASED;
    }
    s->regressed = false;
    if (endlist)
        return CANARY_PL_ENDED;
    if (!s->stall_reported && now_ms - s->advanced_at_ms >= limit_ms) {
        s->stall_reported = true;
        return CANARY_PL_STALLED;
    }
    return CANARY_PL_SAME;
}

const char *canary_pl_name(enum canary_pl p)
{
    switch (p) {
    case CANARY_PL_ADVANCING: return "advancing";
    case CANARY_PL_SAME: return "same";
    case CANARY_PL_ENDED: return "ended";
    case CANARY_PL_STALLED: return "stalled";
    case CANARY_PL_REGRESSED: return "regressed";
    case CANARY_PL_REBASED: return "rebased";
    case CANARY_PL_UNSET: break;
    }
    return "unset";
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

struct canary_pick canary_select(bool have_next, uint64_t next, struct canary_range cand, struct canary_range ref,
                                 unsigned lag, unsigned catchup)
{
    struct canary_pick p = {0};
    struct canary_range r;
    if (cand.have && ref.have) {
        r = (struct canary_range){true, max_u64(cand.first, ref.first), min_u64(cand.last, ref.last)};
        p.source = r.first <= r.last ? CANARY_SOURCE_BOTH : CANARY_SOURCE_DISJOINT;
        if (p.source == CANARY_SOURCE_DISJOINT)
            r = cand;
    } else if (cand.have || ref.have) {
        r = cand.have ? cand : ref;
        p.source = cand.have ? CANARY_SOURCE_CANDIDATE : CANARY_SOURCE_REFERENCE;
    } else {
        return p;
    }
    if (r.last < r.first || r.last - r.first < lag) {
        p.source = CANARY_SOURCE_NONE;
        return p;
    }
    uint64_t hi = r.last - lag, from = have_next ? max_u64(next, r.first) : hi;
    p.skip_first = next;
    if (have_next && next < r.first)
        p.window_skipped = p.skipped = r.first - next; /* slid out of the window before they were checked */
    if (from > hi) {
        p.source = CANARY_SOURCE_NONE;
        return p;
    }
    uint64_t limit = catchup ? catchup : 1;
    if (hi - from + 1 > limit) {
        p.skipped += hi - from + 1 - limit;
        from = hi - limit + 1;
    }
    p.first = from;
    p.last = hi;
    p.count = hi - from + 1;
    return p;
}

uint64_t canary_behind_ms(const struct hls_playlist *ref, uint64_t cand_last)
{
    uint64_t ms = 0;
    for (size_t i = 0; i < ref->segment_count; i++)
        if (ref->segments[i].media_sequence > cand_last)
            ms += ref->segments[i].duration_ms;
    return ms;
}

int64_t canary_backoff_ms(int64_t period_ms, int64_t max_ms, unsigned failures)
{
    int64_t wait = period_ms;
    for (unsigned i = 0; i < failures && wait < max_ms; i++)
        wait *= 2;
    if (wait > max_ms)
        wait = max_ms;
    return wait < period_ms ? period_ms : wait;
}

uint64_t canary_shard_hash(const char *key)
{
    char hex[65];
    util_sha256_hex(key, strlen(key), hex);
    uint64_t h = 0;
    for (int i = 0; i < 16; i++) {
        char c = hex[i];
        h = h << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return h;
}

bool canary_in_shard(const char *key, unsigned k, unsigned n)
{
    return n > 0 && canary_shard_hash(key) % n == k;
}

/* Digits only (no sign, no blanks); advances *s. */
static bool digits(const char **s, unsigned long *out)
{
    const char *p = *s;
    unsigned long v = 0;
    for (; *p >= '0' && *p <= '9' && v <= 100000; p++)
        v = v * 10 + (unsigned long)(*p - '0');
    if (p == *s || v > 100000)
        return false;
    *s = p;
    *out = v;
    return true;
}

int canary_shard_parse(const char *s, unsigned *k, unsigned *n)
{
    unsigned long a, b;
    if (!s || !digits(&s, &a) || *s++ != '/' || !digits(&s, &b) || *s || b < 1 || b > 1024 || a >= b)
        return -1;
    *k = (unsigned)a;
    *n = (unsigned)b;
    return 0;
}
