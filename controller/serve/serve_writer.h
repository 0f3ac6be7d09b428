/* serve_writer.h - group commit: the one thread that writes allocations.
 *
 * Request threads submit jobs; the writer takes every job waiting (up to
 * batch_max), runs each in its own savepoint inside ONE write transaction
 * (BEGIN IMMEDIATE ... COMMIT, synchronous=FULL: one fsync for the batch),
 * and only after the COMMIT returned calls each job's done() — so no answer
 * ever leaves the process before its allocation is durable.  A job whose
 * own step fails is rolled back alone (503); a failed COMMIT fails the whole
 * batch (503, nothing of it was written: a retry is safe).  Batches form by
 * themselves: while one commits, the next requests queue up; no request
 * ever waits for a timer.
 */
#ifndef SERVE_WRITER_H
#define SERVE_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "areq.h"
#include "jwt.h"

struct swr_job {
    /* Another kind of write (a session report, serve_reports.c): run
     * instead of the allocation, in the job's savepoint; 0, or -1 to roll
     * the job back (failed).  NULL: an allocation of req. */
    int (*run)(sqlite3 *db, struct stmtcache *cache, struct swr_job *job);
    struct areq req;
    struct alc_client client; /* subject NULL: no --client-auth (subject points into sub) */
    char sub[JWT_SUB_MAX + 1];
    struct alc_reply reply; /* valid when !failed */
    bool failed;            /* nothing was written for this job: answer 503 */
    void (*done)(struct swr_job *job); /* called by the writer thread, after the commit */
    void *arg;
    struct swr_job *next; /* queue link (the writer's) */
};

struct swr;
struct store_key;

/* Opens control.db (created and migrated when needed) for the writer thread
 * with key (--store-key-file, NULL: none; smac.h), checks it (vstore.h,
 * and a keyed store's MACs: smac_verify.h; a keyed store without its key is
 * refused) and starts it; delivery (may be NULL) is handed to every
 * alc_process and must outlive the writer.  NULL with err set on failure. */
struct swr *swr_start(const char *db_path, const struct store_key *key, size_t batch_max,
                      const struct alc_delivery *delivery, char *err, size_t errlen);

void swr_submit(struct swr *w, struct swr_job *job);

/* Jobs submitted and not done yet. */
size_t swr_pending(struct swr *w);

/* Finishes every job already submitted, then stops the thread and closes
 * the database. */
void swr_stop(struct swr *w);

/* Batches committed and jobs they carried (for the logs and the benchmark). */
void swr_stats(struct swr *w, unsigned long long *batches, unsigned long long *jobs);

#endif
