/* dlv_cache.c - a bounded cache of byte strings by key (see dlv_internal.h).
 *
 * Direct-mapped: the key's FNV-1a hash picks one slot; a different key in
 * that slot is replaced.  Memory is bounded by the number of slots times
 * the largest value stored; lookups copy under one mutex (the values are
 * small: an allocation, a signed query).  Nothing in it is ever stale by
 * construction: callers store only immutable facts, or facts with their
 * own time inside the value.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlv_internal.h"

struct slot {
    char *key, *val;
    size_t len;
};

struct dcache {
    pthread_mutex_t mu;
    size_t n;
    struct slot *s;
};

struct dcache *dcache_new(size_t slots)
{
    struct dcache *c = calloc(1, sizeof *c);
    if (!c || !(c->s = calloc(slots, sizeof *c->s))) {
        free(c);
        return NULL;
    }
    c->n = slots;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void dcache_free(struct dcache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->s[i].key);
        free(c->s[i].val);
    }
    pthread_mutex_destroy(&c->mu);
    free(c->s);
    free(c);
}

static struct slot *slot_of(struct dcache *c, const char *key)
{
    uint32_t h = 2166136261u;
    for (const char *k = key; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    return &c->s[h % c->n];
}

char *dcache_get(struct dcache *c, const char *key, size_t *len)
{
    char *copy = NULL;
    pthread_mutex_lock(&c->mu);
    struct slot *s = slot_of(c, key);
    if (s->key && !strcmp(s->key, key) && (copy = malloc(s->len + 1))) {
        memcpy(copy, s->val, s->len);
        copy[s->len] = '\0';
        if (len)
            *len = s->len;
    }
    pthread_mutex_unlock(&c->mu);
    return copy;
}

int dcache_put(struct dcache *c, const char *key, const void *val, size_t len)
{
    char *k = strdup(key), *v = malloc(len + 1);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    memcpy(v, val, len);
    v[len] = '\0';
    pthread_mutex_lock(&c->mu);
    struct slot *s = slot_of(c, key);
    char *old_k = s->key, *old_v = s->val;
    *s = (struct slot){k, v, len};
    pthread_mutex_unlock(&c->mu);
    free(old_k);
    free(old_v);
    return 0;
}
