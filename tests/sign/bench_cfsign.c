/* bench-cfsign KEY.pem SECONDS THREADS: how fast controller/sign/cfsign.h signs,
 * as scripts/bench-sign runs it (never a test: timings are not asserted).
 *
 * Two loads on a key loaded once:
 *   sign      one cfsign_make of a wildcard custom policy (one private-key op);
 *   playlist  a signed 10-segment live media playlist: one cfsign_make over the
 *             rendition's path, then the same query appended to 10 absolute
 *             segment URIs inside the playlist text (what stepctl serve will do
 *             per request when nothing is cached).
 * Prints one line per load and hash: operations/s over THREADS threads, and
 * the median and p99 latency of one operation in microseconds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfsign.h"

#define MAX_SAMPLES 2000000

struct job {
    const struct cfsign_key *key;
    enum cfsign_hash hash;
    bool playlist;
    double seconds;
    size_t n;
    double *lat_us; /* MAX_SAMPLES */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void one(const struct job *j, struct cfsign_values *v, char *text, size_t cap)
{
    static const char *const res = "https://d111.cloudfront.net/ch1/r360/*";
    struct cfsign_policy p = {res, 1900000000, 0, NULL};
    char err[256], query[CFSIGN_POLICY_B64_MAX + CFSIGN_SIG_B64_MAX + 64];
    if (!cfsign_make(j->key, "K2JCJMDEHXQW5F", j->hash, &p, false, v, err, sizeof err) ||
        !cfsign_query(v, query, sizeof query)) {
        fprintf(stderr, "bench-cfsign: %s\n", err);
        exit(1);
    }
    if (!j->playlist)
        return;
    size_t w = (size_t)snprintf(text, cap, "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
                                           "#EXT-X-MEDIA-SEQUENCE:1000\n");
    for (int s = 0; s < 10; s++) {
        char seg[128];
        snprintf(seg, sizeof seg, "https://d111.cloudfront.net/ch1/r360/%d.ts", 1000 + s);
        w += (size_t)snprintf(text + w, cap - w, "#EXTINF:2.000,\n");
        w += cfsign_append_query(seg, query, text + w, cap - w);
        text[w++] = '\n';
    }
}

static void *run(void *arg)
{
    struct job *j = arg;
    struct cfsign_values *v = malloc(sizeof *v);
    size_t cap = 64 * 1024;
    char *text = malloc(cap);
    double end = now_s() + j->seconds;
    for (double t = now_s(); t < end && j->n < MAX_SAMPLES;) {
        one(j, v, text, cap);
        double t2 = now_s();
        j->lat_us[j->n++] = (t2 - t) * 1e6;
        t = t2;
    }
    free(v);
    free(text);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench-cfsign KEY.pem SECONDS THREADS\n");
        return 64;
    }
    char err[256];
    struct cfsign_key *k = cfsign_key_load(argv[1], NULL, err, sizeof err);
    if (!k) {
        fprintf(stderr, "bench-cfsign: %s\n", err);
        return 65;
    }
    double seconds = atof(argv[2]);
    int threads = atoi(argv[3]);
    if (threads < 1 || threads > 16 || seconds <= 0)
        return 64;
    for (int load = 0; load < 2; load++) {
        for (int h = 0; h < 2; h++) {
            struct job jobs[16];
            pthread_t tid[16];
            for (int i = 0; i < threads; i++) {
                jobs[i] = (struct job){k, (enum cfsign_hash)h, load == 1, seconds, 0,
                                       malloc(MAX_SAMPLES * sizeof(double))};
                pthread_create(&tid[i], NULL, run, &jobs[i]);
            }
            size_t total = 0;
            for (int i = 0; i < threads; i++) {
                pthread_join(tid[i], NULL);
                total += jobs[i].n;
            }
            double *all = malloc(total * sizeof(double));
            size_t w = 0;
            for (int i = 0; i < threads; i++) {
                memcpy(all + w, jobs[i].lat_us, jobs[i].n * sizeof(double));
                w += jobs[i].n;
                free(jobs[i].lat_us);
            }
            qsort(all, total, sizeof(double), cmp);
            printf("%-8s %-10s %-6s threads=%d  %9.0f /s  median %7.1f us  p99 %7.1f us\n",
                   load ? "playlist" : "sign", cfsign_key_describe(k), h ? "sha256" : "sha1",
                   threads, (double)total / seconds, all[total / 2], all[total * 99 / 100]);
            free(all);
        }
    }
    cfsign_key_free(k);
    return 0;
}
