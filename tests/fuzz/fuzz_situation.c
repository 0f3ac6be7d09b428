/* fuzz_situation.c - the controller's situation parser on arbitrary bytes.
 * Invariant: no crash, no leak; a refused situation says why. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "situation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sit_situation s;
    char err[512] = "";
    memset(&s, 0, sizeof s);
    if (sit_parse((const char *)data, size, &s, err, sizeof err) == 0)
        sit_free(&s);
    else
        assert(err[0] != '\0');
    return 0;
}
