/* serve_deadline.c - the whole-request deadline (see serve_deadline.h). */
#include "serve_deadline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#define SDL_TICK_MS 100

struct sdl_conn {
    struct sdl_conn *prev, *next;
    int fd;
    int64_t deadline_ms; /* monotonic; 0: disarmed */
    bool cut;            /* shut down once already */
};

struct sdl {
    pthread_mutex_t mu; /* guards the list, stop and cut */
    pthread_cond_t wake;
    pthread_t thread;
    struct sdl_conn *head;
    unsigned timeout_ms;
    bool stop;
    uint64_t cut;
};

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Shuts down every connection past its deadline; d->mu held. */
static void cut_late(struct sdl *d, int64_t now)
{
    for (struct sdl_conn *c = d->head; c; c = c->next)
        if (c->deadline_ms && now >= c->deadline_ms && !c->cut) {
            shutdown(c->fd, SHUT_RDWR);
            c->cut = true;
            d->cut++;
        }
}

static void *watch(void *arg)
{
    struct sdl *d = arg;
    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += SDL_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&d->wake, &d->mu, &until);
        cut_late(d, mono_ms());
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

struct sdl *sdl_start(unsigned timeout_ms)
{
    struct sdl *d = calloc(1, sizeof *d);
    pthread_condattr_t ca;
    if (!d)
        return NULL;
    d->timeout_ms = timeout_ms;
    pthread_mutex_init(&d->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* a clock step changes no deadline */
    pthread_cond_init(&d->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&d->thread, NULL, watch, d) != 0) {
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return NULL;
    }
    return d;
}

void sdl_stop(struct sdl *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    while (d->head) { /* none are left after MHD_stop_daemon; freed anyway */
        struct sdl_conn *c = d->head;
        d->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

struct sdl_conn *sdl_open(struct sdl *d, int fd)
{
    struct sdl_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    pthread_mutex_lock(&d->mu);
    c->deadline_ms = mono_ms() + d->timeout_ms;
    c->next = d->head;
    if (d->head)
        d->head->prev = c;
    d->head = c;
    pthread_mutex_unlock(&d->mu);
    return c;
}

void sdl_close(struct sdl *d, struct sdl_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        d->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&d->mu);
    free(c);
}

void sdl_disarm(struct sdl *d, struct sdl_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->mu);
    c->deadline_ms = 0;
    pthread_mutex_unlock(&d->mu);
}

void sdl_arm(struct sdl *d, struct sdl_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->mu);
    c->deadline_ms = mono_ms() + d->timeout_ms;
    pthread_mutex_unlock(&d->mu);
}

uint64_t sdl_cut_total(struct sdl *d)
{
    pthread_mutex_lock(&d->mu);
    uint64_t n = d->cut;
    pthread_mutex_unlock(&d->mu);
    return n;
}
