/* serve_writer.c - group commit of allocations (see serve_writer.h). */
#include "serve_writer.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cliutil.h"
#include "clock.h"
#include "record.h"
#include "smac_keyed.h"
#include "smac_verify.h"
#include "vstore.h"

/* While idle, the writer confirms its clock to control.db this often (the
 * serve_heartbeat mark `stepctl release` waits for, clock.h). */
#define SWR_HEARTBEAT_MS 1000

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
    bool behind_said; /* the clock_behind line was logged (once per episode) */
    unsigned long long batches, jobs;
};

/* Takes up to batch_max jobs, in submission order.  NULL when stopping with
 * nothing left, or (*idle set) when SWR_HEARTBEAT_MS passed with no job. */
static struct swr_job *take(struct swr *w, bool *idle)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += SWR_HEARTBEAT_MS / 1000;
    *idle = false;
    pthread_mutex_lock(&w->mu);
    while (!w->head && !w->stopping && !*idle)
        *idle = pthread_cond_timedwait(&w->cv, &w->mu, &until) == ETIMEDOUT;
    struct swr_job *first = w->head, *last = NULL;
    size_t n = 0;
    for (struct swr_job *j = w->head; j && n < w->batch_max; j = j->next, n++)
        last = j;
    if (last) {
        w->head = last->next;
        if (!w->head)
            w->tail = NULL;
        last->next = NULL;
        *idle = false;
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
                    int64_t acting_ms, struct swr_job *j)
{
    memset(&j->reply, 0, sizeof j->reply);
    j->failed = !exec_cached(db, cache, savepoint_sql);
    if (j->failed)
        return;
    int rc = j->run ? j->run(db, cache, j) : alc_process(db, cache, &j->req, acting_ms, d,
                                                 j->client.subject ? &j->client : NULL, &j->reply);
    if (rc != 0) {
        fprintf(stderr, "stepctl serve: %s %s failed: %s\n", j->run ? "report of" : "allocation",
                j->run ? "a session" : j->req.allocation_id, sqlite3_errmsg(db));
        exec_cached(db, cache, rollback_sql);
        j->failed = true;
    }
    exec_cached(db, cache, release_sql);
}

/* Nothing of the batch was written: every job answers 503. */
static void fail_batch(struct swr *w, struct swr_job *batch)
{
    fprintf(stderr, "stepctl serve: batch not committed: %s\n", sqlite3_errmsg(w->db));
    exec(w->db, "ROLLBACK");
    for (struct swr_job *j = batch; j; j = j->next) {
        alc_reply_free(&j->reply);
        j->failed = true;
    }
}

/* A batch while this clock is behind control.db's high-water mark: nothing
 * is written; allocations get 503 clock_behind with Retry-After, other jobs
 * fail (503). */
static void refuse_behind(struct swr_job *batch, int64_t now, int64_t high_water)
{
    char detail[256];
    clk_behind_text(detail, sizeof detail, now, high_water);
    for (struct swr_job *j = batch; j; j = j->next) {
        memset(&j->reply, 0, sizeof j->reply);
        json_t *o = j->run ? NULL
                           : json_pack("{s:s,s:s,s:I,s:I}", "error", "clock_behind", "detail",
                                       detail, "clock_ms", (json_int_t)now, "high_water_ms",
                                       (json_int_t)high_water);
        j->reply.body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        j->reply.http_status = 503;
        j->reply.retry_after_s = 5;
        j->failed = !j->reply.body;
    }
}

/* The batch's acting time (clock.h): max(now, high_water), the heartbeat
 * raised to it.  false when this clock is behind (the batch is refused). */
static bool enter_clock(struct swr *w, struct swr_job *batch, int64_t *acting)
{
    int64_t now = cli_now_ms();
    enum clk_rc c = clk_enter_cached(w->db, &w->cache, now, acting);
    if (c == CLK_BEHIND) {
        if (!w->behind_said)
            fprintf(stderr, "stepctl serve: refusing to write: clock %lld ms is behind "
                            "control.db's high-water mark %lld ms (by %lld ms)\n",
                    (long long)now, (long long)*acting, (long long)(*acting - now));
        w->behind_said = true;
        refuse_behind(batch, now, *acting);
        return false;
    }
    w->behind_said = false;
    return c == CLK_OK && clk_advance_cached(w->db, &w->cache, CLK_SERVE_HEARTBEAT, *acting) == 0;
}

static void run_batch(struct swr *w, struct swr_job *batch)
{
    int64_t acting = 0;
    if (!exec(w->db, "BEGIN IMMEDIATE")) {
        fail_batch(w, batch);
    } else if (!enter_clock(w, batch, &acting)) {
        exec(w->db, "ROLLBACK"); /* behind: the replies say clock_behind; else an error */
        for (struct swr_job *j = batch; j; j = j->next)
            j->failed = j->failed || !j->reply.body;
    } else {
        for (struct swr_job *j = batch; j; j = j->next)
            run_job(w->db, &w->cache, w->delivery, acting, j);
        /* The durability point: COMMIT returns after the WAL is synced. */
        if (!exec(w->db, "COMMIT"))
            fail_batch(w, batch);
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

/* An idle second: the heartbeat alone (nothing else is written). */
static void heartbeat(struct swr *w)
{
    int64_t acting;
    if (!exec(w->db, "BEGIN IMMEDIATE"))
        return;
    if (!enter_clock(w, NULL, &acting) || !exec(w->db, "COMMIT"))
        exec(w->db, "ROLLBACK");
}

static void *loop(void *arg)
{
    struct swr *w = arg;
    struct swr_job *batch;
    bool idle;
    while ((batch = take(w, &idle)) || idle) {
        if (batch)
            run_batch(w, batch);
        else
            heartbeat(w);
    }
    return NULL;
}

/* A keyed store is served only with its key and with every MAC holding:
 * 0, or -1 with err set. */
static int check_keyed(sqlite3 *db, const struct store_key *key, char *err, size_t errlen)
{
    int keyed = smac_is_keyed(db);
    struct vst_finding f;
    size_t macs;
    int t = keyed > 0 && key ? smac_verify(db, key, &f, &macs) : 0;
    if (keyed < 0 || t < 0)
        snprintf(err, errlen, "control.db: cannot be checked: %s", sqlite3_errmsg(db));
    else if (keyed > 0 && !key)
        snprintf(err, errlen, "control.db is keyed (docs/security.md#tamper-evidence): "
                              "--store-key-file is needed to serve it; refusing to start");
    else if (t > 0)
        snprintf(err, errlen, "control.db: store_tampered: %s %s breaks %s (%s); refusing to "
                              "start (stepctl verify-store)",
                 f.table, f.row, f.rule, f.detail);
    return keyed < 0 || t != 0 || (keyed > 0 && !key) ? -1 : 0;
}

struct swr *swr_start(const char *db_path, const struct store_key *key, size_t batch_max,
                      const struct alc_delivery *delivery, char *err, size_t errlen)
{
    assert(batch_max >= 1);
    struct swr *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->batch_max = batch_max;
    w->delivery = delivery;
    if (rec_open_keyed(db_path, REC_CREATE, key, &w->db, err, errlen) != REC_OK) {
        free(w);
        return NULL;
    }
    if (check_keyed(w->db, key, err, errlen) != 0) {
        sqlite3_close(w->db);
        free(w);
        return NULL;
    }
    /* A store with a row no stepctl command could have written is not
     * served from (vstore.h; docs/security.md#tamper-evidence). */
    struct vst_finding f;
    size_t rules;
    int t = vst_check(w->db, &f, &rules);
    if (t != 0) {
        if (t > 0)
            snprintf(err, errlen, "control.db: store_tampered: %s %s breaks %s (%s); refusing to "
                                  "start (stepctl verify-store)",
                     f.table, f.row, f.rule, f.detail);
        else
            snprintf(err, errlen, "control.db: cannot be checked: %s", sqlite3_errmsg(w->db));
        sqlite3_close(w->db);
        free(w);
        return NULL;
    }
    /* The writer's statement journals (one per job's savepoint) stay in
     * memory: as temporary files they cost a write() for every page a job
     * changed. */
    if (!exec(w->db, "PRAGMA temp_store = MEMORY")) {
        snprintf(err, errlen, "control.db: %s", sqlite3_errmsg(w->db));
        sqlite3_close(w->db);
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    /* The heartbeat's wait is timed on the monotonic clock: a wall clock
     * stepped back must not stop the heartbeat. */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
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
