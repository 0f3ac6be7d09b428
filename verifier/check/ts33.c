/* ts33.c - 33-bit timestamp arithmetic (see ts33.h). */
#include "ts33.h"

int64_t ts33_norm(int64_t t)
{
    int64_t r = t % TS33_MOD;
    return r < 0 ? r + TS33_MOD : r;
}

int64_t ts33_sub(int64_t a, int64_t b)
{
    return ts33_norm(ts33_norm(a) - ts33_norm(b));
}

int64_t ts33_add(int64_t a, int64_t b)
{
    return ts33_norm(ts33_norm(a) + ts33_norm(b));
}

int64_t ts33_diff(int64_t a, int64_t b)
{
    int64_t d = ts33_sub(a, b);
    return d >= TS33_MOD / 2 ? d - TS33_MOD : d;
}

int64_t ts33_interval_len(int64_t start, int64_t end)
{
    return ts33_sub(end, start);
}

bool ts33_in_interval(int64_t t, int64_t start, int64_t end)
{
    return ts33_sub(t, start) < ts33_interval_len(start, end);
}
