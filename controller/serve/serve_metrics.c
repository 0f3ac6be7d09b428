/* serve_metrics.c - counters and histograms (see serve_metrics.h). */
#include "serve_metrics.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "build_commit.h"

/* Refusal codes counted apart (alloc.c's 403 codes). */
static const char *const refusal_codes[] = {"no_active_grant", "grant_expired",   "grant_revoked",
                                            "quota_exhausted", "policy_changed", "no_eligible_path"};
#define N_CODES (sizeof refusal_codes / sizeof refusal_codes[0])

static const char *const result_names[SMET_N] = {
    "created", "replayed", "conflict", "refused", "rate_limited", "in_flight", "bad_request",
    "unavailable"};

/* Upper bounds in seconds (+Inf is implicit). */
static const double bounds[] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1};
#define N_BOUNDS (sizeof bounds / sizeof bounds[0])

/* Answers of one route with one status (status 0: a free slot). */
struct status_count {
    unsigned status;
    unsigned long long n;
};

struct smet {
    pthread_mutex_t mu;
    struct status_count requests[SMET_ROUTE_LABELS][SMET_STATUS_SLOTS];
    unsigned long long other_status[SMET_ROUTE_LABELS];
    unsigned long long results[SMET_N];
    unsigned long long refused[N_CODES + 1]; /* + other */
    unsigned long long hist[SMET_MAX_ROUTES][N_BOUNDS + 1];
    unsigned long long count[SMET_MAX_ROUTES];
    double sum[SMET_MAX_ROUTES];
};

struct smet *smet_new(void)
{
    struct smet *m = calloc(1, sizeof *m);
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void smet_free(struct smet *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void smet_result(struct smet *m, enum smet_result r, const char *error)
{
    size_t c = 0;
    while (error && c < N_CODES && strcmp(error, refusal_codes[c]))
        c++;
    pthread_mutex_lock(&m->mu);
    m->results[r]++;
    if (r == SMET_REFUSED)
        m->refused[c]++;
    pthread_mutex_unlock(&m->mu);
}

void smet_latency(struct smet *m, size_t route, double seconds)
{
    if (route >= SMET_MAX_ROUTES)
        return;
    size_t b = 0;
    while (b < N_BOUNDS && seconds > bounds[b])
        b++;
    pthread_mutex_lock(&m->mu);
    m->hist[route][b]++;
    m->count[route]++;
    m->sum[route] += seconds;
    pthread_mutex_unlock(&m->mu);
}

void smet_request(struct smet *m, size_t route, unsigned status)
{
    if (route >= SMET_ROUTE_LABELS)
        return;
    pthread_mutex_lock(&m->mu);
    struct status_count *slots = m->requests[route];
    size_t i = 0;
    while (i < SMET_STATUS_SLOTS && slots[i].status && slots[i].status != status)
        i++;
    if (i == SMET_STATUS_SLOTS) {
        m->other_status[route]++;
    } else {
        slots[i].status = status;
        slots[i].n++;
    }
    pthread_mutex_unlock(&m->mu);
}

/* Grant and path ids are [A-Za-z0-9._:-] or SIT_STR free text: escape what
 * Prometheus label values cannot hold raw. */
static void label(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void remaining(FILE *f, sqlite3 *db, int64_t now_ms)
{
    static const char sql[] = "SELECT id, path_id, max_allocations - allocated FROM grants "
                              "WHERE status = 'active' AND valid_until_ms > ?1 ORDER BY id";
    fputs("# HELP stepctl_grant_remaining Allocations left under each active, unexpired grant.\n"
          "# TYPE stepctl_grant_remaining gauge\n",
          f);
    sqlite3_stmt *st = NULL;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, now_ms);
    while (sqlite3_step(st) == SQLITE_ROW) {
        fputs("stepctl_grant_remaining{grant_id=\"", f);
        label(f, (const char *)sqlite3_column_text(st, 0));
        fputs("\",path_id=\"", f);
        label(f, (const char *)sqlite3_column_text(st, 1));
        fprintf(f, "\"} %lld\n", (long long)sqlite3_column_int64(st, 2));
    }
    sqlite3_finalize(st);
}

static void counters(FILE *f, const struct smet *m)
{
    fputs("# HELP stepctl_allocations_total Allocation requests by result (and refusal code).\n"
          "# TYPE stepctl_allocations_total counter\n",
          f);
    for (int r = 0; r < SMET_N; r++) {
        if (r != SMET_REFUSED) {
            fprintf(f, "stepctl_allocations_total{result=\"%s\"} %llu\n", result_names[r],
                    m->results[r]);
            continue;
        }
        for (size_t c = 0; c <= N_CODES; c++)
            fprintf(f, "stepctl_allocations_total{result=\"refused\",error=\"%s\"} %llu\n",
                    c < N_CODES ? refusal_codes[c] : "other", m->refused[c]);
    }
}

static void histograms(FILE *f, const struct smet *m, const char *const *routes, size_t n)
{
    fputs("# HELP stepctl_request_duration_seconds Time from request headers to response.\n"
          "# TYPE stepctl_request_duration_seconds histogram\n",
          f);
    for (size_t r = 0; r < n && r < SMET_MAX_ROUTES; r++) {
        unsigned long long cum = 0;
        for (size_t b = 0; b <= N_BOUNDS; b++) {
            cum += m->hist[r][b];
            fprintf(f, "stepctl_request_duration_seconds_bucket{route=\"%s\",le=\"", routes[r]);
            if (b < N_BOUNDS)
                fprintf(f, "%g\"} %llu\n", bounds[b], cum);
            else
                fprintf(f, "+Inf\"} %llu\n", cum);
        }
        fprintf(f, "stepctl_request_duration_seconds_sum{route=\"%s\"} %.6f\n", routes[r],
                m->sum[r]);
        fprintf(f, "stepctl_request_duration_seconds_count{route=\"%s\"} %llu\n", routes[r],
                m->count[r]);
    }
}

static const char *route_label(size_t r, const char *const *routes, size_t n)
{
    if (r == SMET_ROUTE_PREFLIGHT)
        return "preflight";
    if (r == SMET_ROUTE_UNMATCHED)
        return "unmatched";
    return r < n ? routes[r] : NULL;
}

/* Series appear with a route's first answer of a status (a counter that
 * starts at its first increment, as Prometheus clients do for labels). */
static void requests(FILE *f, const struct smet *m, const char *const *routes, size_t n)
{
    fputs("# HELP stepctl_requests_total Answers sent, by route and HTTP status.\n"
          "# TYPE stepctl_requests_total counter\n",
          f);
    for (size_t r = 0; r < SMET_ROUTE_LABELS; r++) {
        const char *name = route_label(r, routes, n);
        for (size_t i = 0; name && i < SMET_STATUS_SLOTS && m->requests[r][i].status; i++)
            fprintf(f, "stepctl_requests_total{route=\"%s\",status=\"%u\"} %llu\n", name,
                    m->requests[r][i].status, m->requests[r][i].n);
        if (name && m->other_status[r])
            fprintf(f, "stepctl_requests_total{route=\"%s\",status=\"other\"} %llu\n", name,
                    m->other_status[r]);
    }
}

/* Which build answers (the libraries as loaded, not as compiled). */
static void build_info(FILE *f)
{
    fprintf(f,
            "# HELP stepctl_build_info The stepctl build: version, commit, and the SQLite and "
            "libmicrohttpd it runs with.\n"
            "# TYPE stepctl_build_info gauge\n"
            "stepctl_build_info{version=\"");
    label(f, STEPCTL_VERSION);
    fputs("\",commit=\"", f);
    label(f, EXACTAV_COMMIT);
    fputs("\",sqlite=\"", f);
    label(f, sqlite3_libversion());
    fputs("\",libmicrohttpd=\"", f);
    label(f, MHD_get_version());
    fputs("\"} 1\n", f);
}

char *smet_render(struct smet *m, sqlite3 *db, int64_t now_ms, const char *const *routes,
                  size_t n_routes, const struct smet_extra *extra)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    struct smet copy;
    pthread_mutex_lock(&m->mu);
    memcpy(&copy, m, sizeof copy);
    pthread_mutex_unlock(&m->mu);
    build_info(f);
    counters(f, &copy);
    remaining(f, db, now_ms);
    histograms(f, &copy, routes, n_routes);
    requests(f, &copy, routes, n_routes);
    fprintf(f, "# HELP stepctl_batches_total Write transactions committed by the group commit.\n"
               "# TYPE stepctl_batches_total counter\nstepctl_batches_total %llu\n"
               "# HELP stepctl_batched_allocations_total Allocation requests carried by them.\n"
               "# TYPE stepctl_batched_allocations_total counter\n"
               "stepctl_batched_allocations_total %llu\n"
               "# HELP stepctl_connections_cut_total Connections shut down because their request "
               "had not fully arrived by --request-timeout.\n"
               "# TYPE stepctl_connections_cut_total counter\n"
               "stepctl_connections_cut_total %llu\n",
            extra->batches, extra->jobs, extra->cut);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
