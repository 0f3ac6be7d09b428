/* fuzz_cmcd.c - the CMCD v2 report parser (controller/qoe/cmcd.h) on
 * arbitrary bytes, as a body and as the query form.  Invariants: no crash,
 * no read beyond the input; at most CMCD_MAX_RECORDS records kept; every
 * kept record's stored text (its valid pairs as received) parses back to
 * exactly one record with the same facts and nothing invalid (the stored
 * rows are what the outcome is recomputed from). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmcd.h"

static void same_facts(const struct cmcd_record *a, const struct cmcd_record *b)
{
    assert(a->has_v == b->has_v && a->v == b->v);
    assert(a->has_sn == b->has_sn && a->sn == b->sn);
    assert(a->has_ts == b->has_ts && a->ts == b->ts);
    assert(a->has_rvfc == b->has_rvfc && a->rvfc_ms == b->rvfc_ms);
    assert(!strcmp(a->e, b->e) && !strcmp(a->sta, b->sta) && !strcmp(a->cen, b->cen));
    assert(!strcmp(a->sid, b->sid) && !strcmp(a->url, b->url));
}

static void check(const struct cmcd_batch *b, struct cmcd_batch *back)
{
    assert(b->n <= CMCD_MAX_RECORDS);
    for (size_t i = 0; i < b->n; i++) {
        const struct cmcd_record *r = &b->r[i];
        assert(r->text_len == strlen(r->text) && r->text_len <= CMCD_MAX_TEXT);
        assert(!r->has_v || r->v <= 2);
        cmcd_parse_body(r->text, r->text_len, back);
        assert(back->n == 1 && back->invalid == 0 && back->refused == 0);
        same_facts(r, &back->r[0]);
        cmcd_batch_free(back);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cmcd_batch *b = calloc(1, sizeof *b), *back = calloc(1, sizeof *back);
    if (!b || !back)
        return 0;
    cmcd_parse_body((const char *)data, size, b);
    check(b, back);
    cmcd_batch_free(b);
    cmcd_parse_query((const char *)data, size, b);
    assert(b->n <= 1);
    check(b, back);
    cmcd_batch_free(b);
    free(b);
    free(back);
    return 0;
}
