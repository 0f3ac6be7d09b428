/* fuzz_redact.c - URL redaction on arbitrary bytes.
 * Invariants: no crash; redaction is idempotent; no value of a secret
 * parameter survives (checked for the built-in Signature). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *url = malloc(size + 1);
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    char *once = redact_url_dup(url, NULL, 0);
    if (once) {
        char *twice = redact_url_dup(once, NULL, 0);
        assert(twice && strcmp(once, twice) == 0);
        /* a Signature that opens the query never reaches the output */
        const char *q = strchr(url, '?'), *hash = strchr(url, '#');
        if (q && (!hash || q < hash) && !strncmp(q, "?Signature=CANARY", 17)) {
            const char *qo = strchr(once, '?');
            assert(!qo || strncmp(qo, "?Signature=CANARY", 17) != 0);
        }
        free(twice);
    }
    free(once);
    free(url);
    return 0;
}
