/* fuzz_tscheck.c - the TS integrity scanner on arbitrary bytes.
 * Invariants: no crash; feeding in arbitrary chunk sizes gives the same
 * result as feeding at once; a stream with any issue is never complete. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "tscheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = 1 + data[0] % 200;
    data++, size--;
    struct tscheck *a = tscheck_new(), *b = tscheck_new();
    if (!a || !b) {
        tscheck_free(a);
        tscheck_free(b);
        return 0;
    }
    tscheck_feed(a, data, size);
    for (size_t off = 0; off < size; off += chunk)
        tscheck_feed(b, data + off, size - off < chunk ? size - off : chunk);
    tscheck_finish(a);
    tscheck_finish(b);
    assert(a->issue == b->issue && a->issue_offset == b->issue_offset && a->packets == b->packets);
    assert(!tscheck_complete(a) || a->issue == TS_ISSUE_NONE);
    assert(size % TS_PACKET_SIZE == 0 || !tscheck_complete(a));
    tscheck_free(a);
    tscheck_free(b);
    return 0;
}
