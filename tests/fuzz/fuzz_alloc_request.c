/* fuzz_alloc_request.c - the body parser of POST /v1/allocations on
 * arbitrary bytes.  Invariants: no crash, no leak; a refusal says why; an
 * accepted body has a valid id and cohort, and its canonical form parses
 * back to the same request with the same canonical bytes and digest (the
 * idempotency check compares exactly these). */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "areq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct areq r, back;
    char err[256] = "", c1[2 * AREQ_MAX_BODY], c2[2 * AREQ_MAX_BODY], d1[65], d2[65];
    if (areq_parse((const char *)data, size, &r, err, sizeof err) != 0) {
        assert(err[0] != '\0');
        return 0;
    }
    assert(size <= AREQ_MAX_BODY);
    assert(r.allocation_id[0] && strlen(r.allocation_id) <= AREQ_ID_MAX);
    assert(r.cohort.channel[0] && r.cohort.rendition[0]);
    int n = areq_canonical(&r, c1, sizeof c1);
    assert(n > 0);
    assert(areq_parse(c1, (size_t)n, &back, err, sizeof err) == 0);
    assert(!memcmp(&r, &back, sizeof r));
    assert(areq_canonical(&back, c2, sizeof c2) == n && !memcmp(c1, c2, (size_t)n));
    areq_digest(&r, d1);
    areq_digest(&back, d2);
    assert(strlen(d1) == 64 && !strcmp(d1, d2));
    return 0;
}
