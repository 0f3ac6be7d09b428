/* canary_metrics.c - Prometheus text and /healthz (see canary_metrics.h). */
#include "canary_metrics.h"

#include <arpa/inet.h>
#include <libavutil/avutil.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "build_commit.h"

#define METRICS_MAX_CONNECTIONS 16
#define METRICS_CONNECTION_TIMEOUT_S 10

static const double BUCKETS[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define NBUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])

static const char *const VERDICTS[3] = {"UNKNOWN", "MATCH", "MISMATCH"};
static const char *const PROBE_STATUS[3] = {"UNKNOWN", "PASS", "VIOLATION"};

/* A latency histogram over BUCKETS. */
struct histogram {
    uint64_t buckets[NBUCKETS + 1]; /* per bucket (not cumulative); last is +Inf */
    double sum;
};

struct series {
    char *key, *path_id, *channel, *rendition;
    uint64_t checks[3], probes[3], skipped;
    struct histogram check_duration, probe_duration;
    bool have_lag;
    int64_t lag;
    int64_t last_match_ms;
    int last_verdict;        /* index in VERDICTS of the newest stored check, -1 none yet */
    int64_t last_verdict_ms; /* its observation time */
    uint64_t unknown_streak; /* UNKNOWN checks stored in a row, up to now */
};

struct canary_metrics {
    pthread_mutex_t mu;
    struct series *s;
    size_t n, cap;
    size_t targets;
    bool up;
    uint64_t by_compare[2];      /* full, decoder-input */
    uint64_t reference_decodes;
    struct MHD_Daemon *daemon;
};

struct canary_metrics *canary_metrics_new(void)
{
    struct canary_metrics *m = calloc(1, sizeof *m);
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void canary_metrics_free(struct canary_metrics *m)
{
    if (!m)
        return;
    if (m->daemon)
        MHD_stop_daemon(m->daemon);
    for (size_t i = 0; i < m->n; i++) {
        free(m->s[i].key);
        free(m->s[i].path_id);
        free(m->s[i].channel);
        free(m->s[i].rendition);
    }
    free(m->s);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* The series of t, created on first use; NULL on out of memory.  Lock held. */
static struct series *series_of(struct canary_metrics *m, const struct canary_target *t)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->s[i].key, t->key))
            return &m->s[i];
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        struct series *s = realloc(m->s, cap * sizeof *s);
        if (!s)
            return NULL;
        m->s = s;
        m->cap = cap;
    }
    struct series *s = &m->s[m->n];
    memset(s, 0, sizeof *s);
    s->last_verdict = -1;
    s->key = strdup(t->key);
    /* an allocation target's pathway changes with its allocations, and two
     * cohorts may share one: its series is labelled by its key */
    s->path_id = strdup(t->alloc ? t->key : t->path_id);
    s->channel = strdup(t->channel);
    s->rendition = strdup(t->rendition);
    if (!s->key || !s->path_id || !s->channel || !s->rendition) {
        free(s->key);
        free(s->path_id);
        free(s->channel);
        free(s->rendition);
        return NULL;
    }
    m->n++;
    return s;
}

void canary_metrics_set_targets(struct canary_metrics *m, size_t n)
{
    pthread_mutex_lock(&m->mu);
    m->targets = n;
    pthread_mutex_unlock(&m->mu);
}

void canary_metrics_compare(struct canary_metrics *m, const char *compare)
{
    pthread_mutex_lock(&m->mu);
    m->by_compare[compare && !strcmp(compare, "decoder-input")]++;
    pthread_mutex_unlock(&m->mu);
}

void canary_metrics_reference_decoded(struct canary_metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->reference_decodes++;
    pthread_mutex_unlock(&m->mu);
}

void canary_metrics_set_up(struct canary_metrics *m, bool up)
{
    pthread_mutex_lock(&m->mu);
    m->up = up;
    pthread_mutex_unlock(&m->mu);
}

static int verdict_index(const char *v, const char *const names[3])
{
    for (int i = 1; i < 3; i++)
        if (v && !strcmp(v, names[i]))
            return i;
    return 0;
}

static void observe(struct histogram *h, int64_t duration_ms)
{
    double d = (double)duration_ms / 1000.0;
    size_t b = 0;
    while (b < NBUCKETS && d > BUCKETS[b])
        b++;
    h->buckets[b]++;
    h->sum += d;
}

void canary_metrics_check(struct canary_metrics *m, const struct canary_target *t, const char *verdict,
                          int64_t duration_ms, int64_t observed_at_ms)
{
    pthread_mutex_lock(&m->mu);
    struct series *s = series_of(m, t);
    if (s) {
        int v = verdict_index(verdict, VERDICTS);
        s->checks[v]++;
        observe(&s->check_duration, duration_ms);
        if (v == 1 && observed_at_ms > s->last_match_ms)
            s->last_match_ms = observed_at_ms;
        /* checks of one target may finish out of order (a catch-up):
         * the newest observation is the target's state */
        if (observed_at_ms >= s->last_verdict_ms) {
            s->last_verdict = v;
            s->last_verdict_ms = observed_at_ms;
        }
        s->unknown_streak = v == 0 ? s->unknown_streak + 1 : 0;
    }
    pthread_mutex_unlock(&m->mu);
}

void canary_metrics_lag(struct canary_metrics *m, const struct canary_target *t, int64_t lag_segments)
{
    pthread_mutex_lock(&m->mu);
    struct series *s = series_of(m, t);
    if (s) {
        s->have_lag = true;
        s->lag = lag_segments;
    }
    pthread_mutex_unlock(&m->mu);
}

void canary_metrics_skipped(struct canary_metrics *m, const struct canary_target *t, uint64_t n)
{
    pthread_mutex_lock(&m->mu);
    struct series *s = series_of(m, t);
    if (s)
        s->skipped += n;
    pthread_mutex_unlock(&m->mu);
}

void canary_metrics_probe(struct canary_metrics *m, const struct canary_target *t, const char *status,
                          int64_t duration_ms)
{
    pthread_mutex_lock(&m->mu);
    struct series *s = series_of(m, t);
    if (s) {
        s->probes[verdict_index(status, PROBE_STATUS)]++;
        observe(&s->probe_duration, duration_ms);
    }
    pthread_mutex_unlock(&m->mu);
}

/* Label values are from the config's safe alphabet; escape anyway. */
static void label(FILE *f, const char *name, const char *v)
{
    fprintf(f, "%s=\"", name);
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            fputc('\\', f);
        if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
    fputc('"', f);
}

static void labels(FILE *f, const struct series *s, const char *extra_name, const char *extra)
{
    fputc('{', f);
    label(f, "path_id", s->path_id);
    fputc(',', f);
    label(f, "channel", s->channel);
    fputc(',', f);
    label(f, "rendition", s->rendition);
    if (extra_name) {
        fputc(',', f);
        label(f, extra_name, extra);
    }
    fputc('}', f);
}

static void render_histogram(FILE *f, const char *name, const struct series *s, const struct histogram *h)
{
    uint64_t cum = 0;
    char le[32];
    for (size_t b = 0; b <= NBUCKETS; b++) {
        cum += h->buckets[b];
        if (b < NBUCKETS)
            snprintf(le, sizeof le, "%g", BUCKETS[b]);
        else
            snprintf(le, sizeof le, "+Inf");
        fprintf(f, "%s_bucket", name);
        labels(f, s, "le", le);
        fprintf(f, " %llu\n", (unsigned long long)cum);
    }
    fprintf(f, "%s_sum", name);
    labels(f, s, NULL, NULL);
    fprintf(f, " %.6f\n", h->sum);
    fprintf(f, "%s_count", name);
    labels(f, s, NULL, NULL);
    fprintf(f, " %llu\n", (unsigned long long)cum);
}

/* The newest verdict as a state set (1 for it, 0 for the two others), its
 * time, and how many UNKNOWN in a row: what alerts ask about a target. */
static void render_last_verdict(FILE *f, const struct canary_metrics *m)
{
    fputs("# HELP exactav_canary_last_verdict 1 for the verdict of the newest check stored, 0 for the others.\n"
          "# TYPE exactav_canary_last_verdict gauge\n", f);
    for (size_t i = 0; i < m->n; i++)
        for (int v = 0; v < 3 && m->s[i].last_verdict >= 0; v++) {
            fputs("exactav_canary_last_verdict", f);
            labels(f, &m->s[i], "verdict", VERDICTS[v]);
            fprintf(f, " %d\n", v == m->s[i].last_verdict);
        }
    fputs("# HELP exactav_canary_last_verdict_timestamp_seconds Observation time of the newest check stored.\n"
          "# TYPE exactav_canary_last_verdict_timestamp_seconds gauge\n", f);
    for (size_t i = 0; i < m->n; i++)
        if (m->s[i].last_verdict >= 0) {
            fputs("exactav_canary_last_verdict_timestamp_seconds", f);
            labels(f, &m->s[i], NULL, NULL);
            fprintf(f, " %.3f\n", (double)m->s[i].last_verdict_ms / 1000.0);
        }
    fputs("# HELP exactav_canary_unknown_streak Checks stored UNKNOWN in a row, up to the newest (0 after a MATCH or MISMATCH).\n"
          "# TYPE exactav_canary_unknown_streak gauge\n", f);
    for (size_t i = 0; i < m->n; i++)
        if (m->s[i].last_verdict >= 0) {
            fputs("exactav_canary_unknown_streak", f);
            labels(f, &m->s[i], NULL, NULL);
            fprintf(f, " %llu\n", (unsigned long long)m->s[i].unknown_streak);
        }
}

static void render_series(FILE *f, const struct canary_metrics *m)
{
    fputs("# HELP exactav_canary_checks_total Checks stored, by target and verdict.\n"
          "# TYPE exactav_canary_checks_total counter\n", f);
    for (size_t i = 0; i < m->n; i++)
        for (int v = 0; v < 3; v++) {
            fputs("exactav_canary_checks_total", f);
            labels(f, &m->s[i], "verdict", VERDICTS[v]);
            fprintf(f, " %llu\n", (unsigned long long)m->s[i].checks[v]);
        }
    fputs("# HELP exactav_canary_check_duration_seconds Wall time of one check, fetches included.\n"
          "# TYPE exactav_canary_check_duration_seconds histogram\n", f);
    for (size_t i = 0; i < m->n; i++)
        render_histogram(f, "exactav_canary_check_duration_seconds", &m->s[i], &m->s[i].check_duration);
    render_last_verdict(f, m);
    fputs("# HELP exactav_canary_lag_segments Newest media sequence in both playlists minus the newest checked.\n"
          "# TYPE exactav_canary_lag_segments gauge\n", f);
    for (size_t i = 0; i < m->n; i++)
        if (m->s[i].have_lag) {
            fputs("exactav_canary_lag_segments", f);
            labels(f, &m->s[i], NULL, NULL);
            fprintf(f, " %lld\n", (long long)m->s[i].lag);
        }
    fputs("# HELP exactav_canary_last_match_timestamp_seconds Observation time of the newest MATCH.\n"
          "# TYPE exactav_canary_last_match_timestamp_seconds gauge\n", f);
    for (size_t i = 0; i < m->n; i++)
        if (m->s[i].last_match_ms) {
            fputs("exactav_canary_last_match_timestamp_seconds", f);
            labels(f, &m->s[i], NULL, NULL);
            fprintf(f, " %.3f\n", (double)m->s[i].last_match_ms / 1000.0);
        }
    fputs("# HELP exactav_canary_skipped_segments_total Due segments given up (out of the window, catch-up limit).\n"
          "# TYPE exactav_canary_skipped_segments_total counter\n", f);
    for (size_t i = 0; i < m->n; i++) {
        fputs("exactav_canary_skipped_segments_total", f);
        labels(f, &m->s[i], NULL, NULL);
        fprintf(f, " %llu\n", (unsigned long long)m->s[i].skipped);
    }
    fputs("# HELP exactav_canary_probes_total Availability probes stored, by status.\n"
          "# TYPE exactav_canary_probes_total counter\n", f);
    for (size_t i = 0; i < m->n; i++)
        for (int v = 0; v < 3; v++) {
            fputs("exactav_canary_probes_total", f);
            labels(f, &m->s[i], "status", PROBE_STATUS[v]);
            fprintf(f, " %llu\n", (unsigned long long)m->s[i].probes[v]);
        }
    fputs("# HELP exactav_canary_probe_duration_seconds Wall time of one availability probe.\n"
          "# TYPE exactav_canary_probe_duration_seconds histogram\n", f);
    for (size_t i = 0; i < m->n; i++)
        render_histogram(f, "exactav_canary_probe_duration_seconds", &m->s[i], &m->s[i].probe_duration);
}

/* Which build answers: joined with the other series in dashboards, and a
 * fleet running two versions is visible.  Label values escaped like the
 * others (the FFmpeg version string is the library's own). */
static void render_build_info(FILE *f)
{
    fputs("# HELP exactav_build_info The exactav build: version, commit and the FFmpeg libraries it runs with.\n"
          "# TYPE exactav_build_info gauge\nexactav_build_info{", f);
    label(f, "version", EXACTAV_VERSION);
    fputc(',', f);
    label(f, "commit", EXACTAV_COMMIT);
    fputc(',', f);
    label(f, "ffmpeg", av_version_info());
    fputs("} 1\n", f);
}

char *canary_metrics_render(struct canary_metrics *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    render_build_info(f);
    pthread_mutex_lock(&m->mu);
    fprintf(f, "# HELP exactav_canary_up 1 while the canary schedules checks.\n# TYPE exactav_canary_up gauge\n"
               "exactav_canary_up %d\n", m->up ? 1 : 0);
    fprintf(f, "# HELP exactav_canary_targets Targets this worker checks.\n# TYPE exactav_canary_targets gauge\n"
               "exactav_canary_targets %zu\n", m->targets);
    fprintf(f, "# HELP exactav_canary_checks_by_compare_total Checks by how they compared.\n"
               "# TYPE exactav_canary_checks_by_compare_total counter\n"
               "exactav_canary_checks_by_compare_total{compare=\"full\"} %llu\n"
               "exactav_canary_checks_by_compare_total{compare=\"decoder-input\"} %llu\n",
            (unsigned long long)m->by_compare[0], (unsigned long long)m->by_compare[1]);
    fprintf(f, "# HELP exactav_canary_reference_decodes_total Reference segments decoded for the fast path.\n"
               "# TYPE exactav_canary_reference_decodes_total counter\n"
               "exactav_canary_reference_decodes_total %llu\n", (unsigned long long)m->reference_decodes);
    render_series(f, m);
    pthread_mutex_unlock(&m->mu);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- HTTP ---- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, char *body, const char *type)
{
    if (!body)
        return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
    struct canary_metrics *m = cls;
    (void)version;
    (void)upload_data;
    (void)req_cls;
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET only\n"), "text/plain");
    if (!strcmp(url, "/metrics"))
        return answer(c, MHD_HTTP_OK, canary_metrics_render(m), "text/plain; version=0.0.4; charset=utf-8");
    if (!strcmp(url, "/healthz")) {
        pthread_mutex_lock(&m->mu);
        bool up = m->up;
        pthread_mutex_unlock(&m->mu);
        return answer(c, up ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, strdup(up ? "ok\n" : "stopping\n"),
                      "text/plain");
    }
    return answer(c, MHD_HTTP_NOT_FOUND, strdup("not found: /metrics or /healthz\n"), "text/plain");
}

int canary_metrics_parse_listen(const char *listen, void *storage, size_t *len)
{
    char host[128];
    const char *colon = listen ? strrchr(listen, ':') : NULL;
    if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host)
        return -1;
    char *end = NULL;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || port > 65535)
        return -1;
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        struct sockaddr_in6 *a = storage;
        memset(a, 0, sizeof *a);
        host[hl - 1] = '\0';
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        *len = sizeof *a;
        return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *a = storage;
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    *len = sizeof *a;
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

int canary_metrics_serve(struct canary_metrics *m, const char *listen, char *bound, size_t boundlen, char *err,
                         size_t errlen)
{
    struct sockaddr_storage sa;
    size_t salen = 0;
    if (canary_metrics_parse_listen(listen, &sa, &salen) != 0) {
        snprintf(err, errlen, "--metrics-listen wants ADDR:PORT (IPv4) or [ADDR]:PORT (IPv6), got '%s'", listen);
        return -1;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    m->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_MAX_CONNECTIONS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_CONNECTION_TIMEOUT_S,
                                 MHD_OPTION_END);
    if (!m->daemon) {
        snprintf(err, errlen, "cannot listen on %s", listen);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_BIND_PORT);
    char host[128];
    snprintf(host, sizeof host, "%.*s", (int)(strrchr(listen, ':') - listen), listen);
    snprintf(bound, boundlen, "%s:%u", host, info ? (unsigned)info->port : 0u);
    return 0;
}
