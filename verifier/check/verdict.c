/* verdict.c - the verdict lattice (see verdict.h). */
#include "verdict.h"

struct track_verdict verdict_combine(const struct track_verdict *tracks, size_t n)
{
    struct track_verdict out = {VERDICT_UNKNOWN, "no_track"};
    enum verdict order[] = {VERDICT_MISMATCH, VERDICT_UNKNOWN, VERDICT_MATCH};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        for (size_t i = 0; i < n; i++)
            if (tracks[i].verdict == order[k]) {
                out.verdict = order[k];
                out.reason = tracks[i].reason ? tracks[i].reason : "undecided";
                return out;
            }
    return out;
}

const char *verdict_name(enum verdict v)
{
    switch (v) {
    case VERDICT_MATCH: return "MATCH";
    case VERDICT_MISMATCH: return "MISMATCH";
    case VERDICT_UNKNOWN: break;
    }
    return "UNKNOWN";
}

int verdict_exit_code(enum verdict v)
{
    switch (v) {
    case VERDICT_MATCH: return 0;
    case VERDICT_MISMATCH: return 1;
    case VERDICT_UNKNOWN: break;
    }
    return 2;
}
