/* xfer.c - bounded queues between sides and comparer (see xfer.h). */
#include "xfer.h"

#include <stdlib.h>
#include <string.h>

static int ring_init(struct ring *r, size_t item_size, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->items = calloc(cap, item_size);
    r->item_size = item_size;
    r->cap = cap;
    return r->items ? 0 : -1;
}

void *ring_peek(const struct ring *r, size_t i)
{
    if (i >= r->count)
        return NULL;
    return (char *)r->items + ((r->head + i) % r->cap) * r->item_size;
}

void ring_drop(struct ring *r)
{
    if (!r->count)
        return;
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

static void ring_push(struct ring *r, const void *it)
{
    memcpy((char *)r->items + ((r->head + r->count) % r->cap) * r->item_size, it, r->item_size);
    r->count++;
}

void vitem_release(struct vitem *it)
{
    av_frame_free(&it->frame);
}

void aitem_release(struct aitem *it)
{
    free(it->pcm);
    it->pcm = NULL;
}

int xfer_init(struct xfer *x, size_t video_cap, size_t audio_cap)
{
    memset(x, 0, sizeof *x);
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    for (int s = 0; s < 2; s++)
        if (ring_init(&x->video[s], sizeof(struct vitem), video_cap) ||
            ring_init(&x->audio[s], sizeof(struct aitem), audio_cap))
            return -1;
    return 0;
}

void xfer_destroy(struct xfer *x)
{
    for (int s = 0; s < 2; s++) {
        struct vitem *v;
        struct aitem *a;
        while ((v = ring_peek(&x->video[s], 0))) {
            vitem_release(v);
            ring_drop(&x->video[s]);
        }
        while ((a = ring_peek(&x->audio[s], 0))) {
            aitem_release(a);
            ring_drop(&x->audio[s]);
        }
        free(x->video[s].items);
        free(x->audio[s].items);
    }
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
}

static bool push(struct xfer *x, int side, struct ring *r, const void *it)
{
    pthread_mutex_lock(&x->mu);
    while (r->count == r->cap && !x->aborted) {
        x->blocked_on[side] = r;
        pthread_cond_broadcast(&x->cv);
        pthread_cond_wait(&x->cv, &x->mu);
    }
    x->blocked_on[side] = NULL;
    bool ok = !x->aborted;
    if (ok)
        ring_push(r, it);
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    return ok;
}

bool xfer_push_video(struct xfer *x, int side, const struct vitem *it)
{
    return push(x, side, &x->video[side], it);
}

bool xfer_push_audio(struct xfer *x, int side, const struct aitem *it)
{
    return push(x, side, &x->audio[side], it);
}

void xfer_close(struct xfer *x, int side)
{
    pthread_mutex_lock(&x->mu);
    x->video[side].closed = true;
    x->audio[side].closed = true;
    x->producer_done[side] = true;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

void xfer_abort(struct xfer *x)
{
    pthread_mutex_lock(&x->mu);
    x->aborted = true;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}
