/* fuzz_delivery_paths.c - the paths.json parser of `stepctl serve --paths`
 * (dlv_paths.h) on arbitrary bytes.  Invariants: no crash, no leak; a
 * refusal says why; an accepted configuration keeps every documented
 * bound: 1..DLV_MAX_PATHS paths with distinct valid ids, each with
 * 1..DLV_MAX_RENDITIONS renditions whose URL can be signed and whose
 * wildcard resource is a prefix of it followed by '*', a known auth type,
 * a key pair id for the signing ones.  No key file is ever read. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlv_paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct dlv_paths ps; /* large: not on the stack */
    char err[1024] = "";
    if (dlv_paths_parse((const char *)data, size, "/nonexistent", &ps, err, sizeof err) != 0) {
        assert(err[0] != '\0');
        return 0;
    }
    assert(ps.n >= 1 && ps.n <= DLV_MAX_PATHS);
    assert(ps.steering_ttl_s >= 1 && ps.playlist_cache_ms >= 0);
    for (size_t i = 0; i < ps.n; i++) {
        const struct dlv_path *p = &ps.p[i];
        assert(p->id[0] && dlv_paths_find(&ps, p->id) == p);
        assert(p->n >= 1 && p->n <= DLV_MAX_RENDITIONS);
        assert(p->auth != DLV_AUTH_UNSET && p->key == NULL);
        if (p->auth != DLV_AUTH_NONE)
            assert(cfsign_key_pair_id_ok(p->key_pair_id) && p->url_ttl_s >= 10);
        for (size_t k = 0; k < p->n; k++) {
            const struct dlv_rendition *r = &p->r[k];
            size_t rl = strlen(r->resource);
            assert(cfsign_url_problem(r->url) == NULL && r->bandwidth >= 1);
            assert(rl >= 2 && r->resource[rl - 1] == '*');
            assert(!strncmp(r->resource, r->url, rl - 2));
        }
    }
    return 0;
}
