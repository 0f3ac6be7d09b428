/* fuzz_canary_master.c - an allocation target's reading of a master
 * playlist (canary_alloc.h, issue 17) on arbitrary bytes: the steering
 * SERVER-URI, and the pathway and variant a player picks, with and without
 * a PATHWAY-PRIORITY.  Invariants: no crash, no leak; a pick names a
 * pathway the master lists, and a found variant has a URI. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "canary_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *master = malloc(size + 1);
    if (!master)
        return 0;
    memcpy(master, data, size);
    master[size] = '\0';
    char s[256], p[CANARY_MAX_NAME + 1], u[CANARY_MAX_LOCATION + 1], why[256];
    (void)canary_alloc_steering_uri(master, s, sizeof s);
    static const char *const prios[] = {NULL, "[\"C\",\"D\"]", "[1, \"x\", null]", "not json"};
    for (size_t i = 0; i < sizeof prios / sizeof prios[0]; i++) {
        int k = canary_alloc_pick(master, prios[i], "720p", p, sizeof p, u, sizeof u, why, sizeof why);
        assert(k >= -1 && k <= 1);
        if (k >= 0)
            assert(p[0] != '\0');
        if (k == 0)
            assert(u[0] != '\0' && u[0] != '#');
        else
            assert(why[0] != '\0');
    }
    free(master);
    return 0;
}
