/* serve_writer.c - group commit of allocations (see serve_writer.h). */
#include "serve_writer.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliutil.h"
#include "record.h"

struct swr {
    sqlite3 *db;
    struct stmtcache cache; /* the hot path's statements, prepared once */
    size_t batch_max;
    const struct alc_delivery *delivery;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct swr_job *head, *tail; /* FIFO of submitted jobs */
    size_t pending;              /* submitted, not done */
    bool stopping;
    unsigned long long batches, jobs;
};

/* Takes up to batch_max jobs, in submission order; NULL when stopping with
 * nothing left. */
static struct swr_job *take(struct swr *w)
{
    pthread_mutex_lock(&w->mu);
    while (!w->head && !w->stopping)
        pthread_cond_wait(&w->cv, &w->mu);
    struct swr_job *first = w->head, *last = NULL;
    size_t n = 0;
    for (struct swr_job *j = w->head; j && n < w->batch_max; j = j->next, n++)
        last = j;
    if (last) {
        w->head = last->next;
        if (!w->head)
            w->tail = NULL;
        last->next = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    return first;
}

static bool exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* A job's savepoint statements, prepared once (stmtcache keys them by
 * address): parsing them again for every job was a tenth of a report's cost. */
static const char savepoint_sql[] = "SAVEPOINT job";
static const char rollback_sql[] = "ROLLBACK TO job";
static const char release_sql[] = "RELEASE job";

static bool exec_cached(sqlite3 *db, struct stmtcache *cache, const char *sql)
{
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return false;
    bool ok = sqlite3_step(st) == SQLITE_DONE;
    stmtcache_done(cache, st);
    return ok;
}

/* One job in its own savepoint: a failing job never takes the others down. */
static void run_job(sqlite3 *db, struct stmtcache *cache, const struct alc_delivery *d,
                    struct swr_job *j)
{
    memset(&j->reply, 0, sizeof j->reply);
    j->failed = !exec_cached(db, cache, savepoint_sql);
    if (j->failed)
        return;
    int rc = j->run ? j->run(db, cache, j) : alc_process(db, cache, &j->req, cli_now_ms(), d,
                                                 j->client.subject ? &j->client : NULL, &j->reply);
    if (rc != 0) {
        fprintf(stderr, "stepctl serve: %s %s failed: %s\n", j->run ? "report of" : "allocation",
                j->run ? "a session" : j->req.allocation_id, sqlite3_errmsg(db));
        exec_cached(db, cache, rollback_sql);
        j->failed = true;
    }
    exec_cached(db, cache, release_sql);
}

static void run_batch(struct swr *w, struct swr_job *batch)
{
    bool ok = exec(w->db, "BEGIN IMMEDIATE");
    for (struct swr_job *j = batch; ok && j; j = j->next)
        run_job(w->db, &w->cache, w->delivery, j);
    /* The durability point: COMMIT returns after the WAL is synced. */
    if (!ok || !exec(w->db, "COMMIT")) {
        fprintf(stderr, "stepctl serve: batch not committed: %s\n", sqlite3_errmsg(w->db));
        exec(w->db, "ROLLBACK");
        for (struct swr_job *j = batch; j; j = j->next) {
            alc_reply_free(&j->reply);
            j->failed = true;
        }
    }
    size_t n = 0;
    for (struct swr_job *j = batch, *next; j; j = next, n++) {
        next = j->next; /* done() may free the job */
        j->done(j);
    }
    pthread_mutex_lock(&w->mu);
    w->pending -= n;
    w->batches++;
    w->jobs += n;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void *loop(void *arg)
{
    struct swr *w = arg;
    struct swr_job *batch;
    while ((batch = take(w)))
        run_batch(w, batch);
    return NULL;
}

struct swr *swr_start(const char *db_path, size_t batch_max, const struct alc_delivery *delivery,
                      char *err, size_t errlen)
{
    assert(batch_max >= 1);
    struct swr *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->batch_max = batch_max;
    w->delivery = delivery;
    if (rec_open(db_path, REC_CREATE, &w->db, err, errlen) != REC_OK) {
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, loop, w) != 0) {
        snprintf(err, errlen, "cannot start the writer thread");
        sqlite3_close(w->db);
        free(w);
        return NULL;
    }
    return w;
}

void swr_submit(struct swr *w, struct swr_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&w->mu);
    assert(!w->stopping);
    if (w->tail)
        w->tail->next = job;
    else
        w->head = job;
    w->tail = job;
    w->pending++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

size_t swr_pending(struct swr *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = w->pending;
    pthread_mutex_unlock(&w->mu);
    return n;
}

void swr_stop(struct swr *w)
{
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL); /* take() returns NULL only once the queue is empty */
    assert(w->pending == 0);
    stmtcache_clear(&w->cache);
    sqlite3_close(w->db);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

void swr_stats(struct swr *w, unsigned long long *batches, unsigned long long *jobs)
{
    pthread_mutex_lock(&w->mu);
    *batches = w->batches;
    *jobs = w->jobs;
    pthread_mutex_unlock(&w->mu);
}
