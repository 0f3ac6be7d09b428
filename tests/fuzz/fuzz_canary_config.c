/* fuzz_canary_config.c - the canary's configuration parser on arbitrary
 * bytes.  Invariants: no crash, no leak; a refused configuration names a
 * field; an accepted one is within every documented bound, with unique
 * target keys. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "canary_config.h"

static void check(const struct canary_config *c)
{
    assert(c->n_targets >= 1 && c->n_targets <= CANARY_MAX_TARGETS);
    assert(c->concurrency >= 1 && c->concurrency <= 64);
    assert(c->period_ms >= 100 && c->timeout_ms >= 1000 && c->lag_segments <= 100);
    assert(c->catchup_segments >= 1 && c->n_redact <= CANARY_MAX_REDACT_PARAMS);
    for (size_t i = 0; i < c->n_targets; i++) {
        const struct canary_target *t = &c->targets[i];
        assert(t->path_id && t->channel && t->rendition && t->program_version && t->reference);
        assert(t->candidate || t->command || t->alloc);
        /* an allocation target (issue 17): no candidate, its own key, no probes,
         * no token read by the parser */
        assert(!t->alloc || (!t->candidate && !t->command && !strncmp(t->key, "alloc:", 6) &&
                             t->alloc->every_ms >= 1000 && t->alloc->every_ms <= 86400000 &&
                             t->probe_period_ms == 0 && !t->alloc->token && t->alloc->service &&
                             t->alloc->token_file));
        assert(!strchr(t->path_id, '/') && !strchr(t->channel, '/') && !strchr(t->rendition, '/'));
        assert(t->period_ms >= 100 && t->probe_period_ms >= 0);
        for (size_t j = 0; j < i; j++)
            assert(strcmp(c->targets[j].key, t->key) != 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct canary_config c;
    char err[512] = "";
    if (canary_config_parse((const char *)data, size, &c, err, sizeof err) == 0) {
        check(&c);
        canary_config_free(&c);
    } else {
        assert(err[0] != '\0' && strchr(err, ':'));
    }
    return 0;
}
