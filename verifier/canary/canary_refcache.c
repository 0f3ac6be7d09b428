/* canary_refcache.c - shared reference reads (see canary_refcache.h).
 *
 * Invariants (under mu):
 *  - at most one entry per (reference, kind, seq) is in the table;
 *  - an entry is FETCHING until its reader stores the value, then DONE;
 *  - an entry leaves the table only when DONE and nobody waits on it;
 *  - the table holds one reference to each DONE value. */
#include "canary_refcache.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum kind { KIND_PLAYLIST, KIND_SEGMENT };

struct entry {
    char *reference;
    enum kind kind;
    uint64_t seq;
    bool done;
    int waiters;
    void *value;                 /* struct canary_playlist * or struct canary_segment * */
    int64_t started_at_ms, last_used_ms;
};

struct canary_refcache {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fetch_options fo;
    int64_t ttl_ms, keep_ms;
    struct entry **e;
    size_t n, cap;
    uint64_t segment_reads;
};

struct canary_refcache *canary_refcache_new(const struct fetch_options *fo, int64_t ttl_ms, int64_t keep_ms)
{
    struct canary_refcache *rc = calloc(1, sizeof *rc);
    if (!rc)
        return NULL;
    pthread_mutex_init(&rc->mu, NULL);
    pthread_cond_init(&rc->cv, NULL);
    rc->fo = *fo;
    rc->ttl_ms = ttl_ms;
    rc->keep_ms = keep_ms;
    return rc;
}

static void value_release(enum kind k, void *v)
{
    if (k == KIND_PLAYLIST)
        canary_playlist_release(v);
    else
        canary_segment_release(v);
}

static void *value_ref(enum kind k, void *v)
{
    return k == KIND_PLAYLIST ? (void *)canary_playlist_ref(v) : (void *)canary_segment_ref(v);
}

static bool value_ok(enum kind k, const void *v)
{
    return k == KIND_PLAYLIST ? ((const struct canary_playlist *)v)->ok : ((const struct canary_segment *)v)->ok;
}

static void entry_free(struct entry *e)
{
    if (e->value)
        value_release(e->kind, e->value);
    free(e->reference);
    free(e);
}

static void remove_at(struct canary_refcache *rc, size_t i)
{
    assert(rc->e[i]->done && rc->e[i]->waiters == 0);
    entry_free(rc->e[i]);
    rc->e[i] = rc->e[--rc->n];
}

void canary_refcache_free(struct canary_refcache *rc)
{
    if (!rc)
        return;
    for (size_t i = 0; i < rc->n; i++)
        entry_free(rc->e[i]);
    free(rc->e);
    pthread_cond_destroy(&rc->cv);
    pthread_mutex_destroy(&rc->mu);
    free(rc);
}

/* Is this DONE entry still worth handing out? */
static bool fresh(const struct canary_refcache *rc, const struct entry *e, int64_t now)
{
    if (!e->value || !value_ok(e->kind, e->value))
        return false; /* failures are shared only with those who waited */
    return e->kind == KIND_SEGMENT || now - e->started_at_ms < rc->ttl_ms;
}

static void evict(struct canary_refcache *rc, int64_t now)
{
    for (size_t i = rc->n; i-- > 0;) {
        struct entry *e = rc->e[i];
        if (e->done && e->waiters == 0 && (!fresh(rc, e, now) || now - e->last_used_ms > rc->keep_ms))
            remove_at(rc, i);
    }
}

static struct entry *find(struct canary_refcache *rc, const char *reference, enum kind k, uint64_t seq)
{
    for (size_t i = 0; i < rc->n; i++) {
        struct entry *e = rc->e[i];
        if (e->kind == k && e->seq == seq && !strcmp(e->reference, reference))
            return e;
    }
    return NULL;
}

static struct entry *insert(struct canary_refcache *rc, const char *reference, enum kind k, uint64_t seq, int64_t now)
{
    if (rc->n == rc->cap) {
        size_t cap = rc->cap ? rc->cap * 2 : 16;
        struct entry **e = realloc(rc->e, cap * sizeof *e);
        if (!e)
            return NULL;
        rc->e = e;
        rc->cap = cap;
    }
    struct entry *e = calloc(1, sizeof *e);
    if (!e || !(e->reference = strdup(reference))) {
        free(e);
        return NULL;
    }
    e->kind = k;
    e->seq = seq;
    e->started_at_ms = e->last_used_ms = now;
    rc->e[rc->n++] = e;
    return e;
}

struct read_args {
    const char *reference;
    const struct canary_playlist *pl;
    uint64_t seq;
    int64_t deadline_ms;
};

/* Called without the lock. */
static void *do_read(struct canary_refcache *rc, enum kind k, const struct read_args *a)
{
    if (k == KIND_PLAYLIST)
        return canary_playlist_read(a->reference, &rc->fo, a->deadline_ms);
    return canary_segment_read(a->pl, a->seq, &rc->fo, a->deadline_ms);
}

static void *lookup(struct canary_refcache *rc, enum kind k, const struct read_args *a)
{
    pthread_mutex_lock(&rc->mu);
    int64_t now = util_now_ms();
    evict(rc, now);
    struct entry *e = find(rc, a->reference, k, a->seq);
    if (e && !e->done) {
        /* a read is in progress: join it (it is bounded by its own deadline) */
        e->waiters++;
        while (!e->done)
            pthread_cond_wait(&rc->cv, &rc->mu);
        e->waiters--;
        void *v = value_ref(k, e->value);
        e->last_used_ms = util_now_ms();
        pthread_mutex_unlock(&rc->mu);
        return v;
    }
    if (e) { /* done: fresh, or just finished and still being picked up by its waiters */
        e->last_used_ms = now;
        void *v = value_ref(k, e->value);
        pthread_mutex_unlock(&rc->mu);
        return v;
    }
    e = insert(rc, a->reference, k, a->seq, now);
    if (k == KIND_SEGMENT && e)
        rc->segment_reads++;
    pthread_mutex_unlock(&rc->mu);
    void *v = do_read(rc, k, a);
    if (!e)
        return v;
    pthread_mutex_lock(&rc->mu);
    if (!v) { /* out of memory: nobody can use this entry */
        e->done = true;
        e->value = NULL;
        pthread_cond_broadcast(&rc->cv);
        pthread_mutex_unlock(&rc->mu);
        return NULL;
    }
    e->value = value_ref(k, v);
    e->done = true;
    pthread_cond_broadcast(&rc->cv);
    pthread_mutex_unlock(&rc->mu);
    return v;
}

struct canary_playlist *canary_refcache_playlist(struct canary_refcache *rc, const char *reference,
                                                 int64_t deadline_ms)
{
    struct read_args a = {reference, NULL, 0, deadline_ms};
    return lookup(rc, KIND_PLAYLIST, &a);
}

struct canary_segment *canary_refcache_segment(struct canary_refcache *rc, const char *reference,
                                               const struct canary_playlist *pl, uint64_t seq,
                                               int64_t deadline_ms)
{
    struct read_args a = {reference, pl, seq, deadline_ms};
    return lookup(rc, KIND_SEGMENT, &a);
}

uint64_t canary_refcache_segment_reads(struct canary_refcache *rc)
{
    pthread_mutex_lock(&rc->mu);
    uint64_t n = rc->segment_reads;
    pthread_mutex_unlock(&rc->mu);
    return n;
}
