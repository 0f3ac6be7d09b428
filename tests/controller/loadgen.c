/* loadgen.c - stepctl-loadgen: POST /v1/allocations on loopback, many
 * connections at once (libcurl multi, keep-alive), each request a new
 * allocation id; reports throughput and latency percentiles as one JSON
 * object, and optionally logs every answer (id, status, latency, body) so
 * the database can be checked against what the client saw.
 *
 *   stepctl-loadgen --port P [--connections N] (--duration S | --requests N)
 *                   [--prefix P] [--cohort c,r,i,cl,b,re] [--log FILE]
 *                   [--get PATH --ids N]
 *
 * With --get, each request is instead a GET of PATH with its "%s" replaced
 * by PREFIX-K, K cycling over 0..N-1 (allocations made before with that
 * prefix), or with --sessions too by the session ids in turn: the delivery
 * endpoints (steering manifests, signed playlists: /v1/sessions/%s/...);
 * "ok_per_s" counts the 200 answers.
 *
 * With --sessions FILE (one session id a line), each request instead POSTs
 * one CMCD v2 record (batchSize 1, as hls.js sends them) to
 * /v1/sessions/ID/reports, cycling over the sessions, each record with
 * the next sn of its session: scripts/bench-qoe; "stored_per_s" counts the
 * 204 answers.
 *
 * Used by scripts/bench-allocate; not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#define MAX_CONN 512

struct buf {
    char data[8192];
    size_t len;
};

struct conn {
    CURL *h;
    char id[96], req[1024], url[1200];
    struct buf resp;
    struct timespec t0;
    struct curl_slist *hdr;
};

struct run {
    const char *host, *prefix, *log_path, *get;
    char (*sessions)[72]; /* --sessions */
    long long n_sessions;
    long long ids;
    char cohort[6][128];
    int port, connections;
    long long requests, started, done;
    double duration;
    struct timespec start;
    double *lat;
    long long n_lat, cap_lat;
    long long status[600], errors;
    FILE *log;
};

static double since(const struct timespec *t)
{
    struct timespec n;
    clock_gettime(CLOCK_MONOTONIC, &n);
    return (double)(n.tv_sec - t->tv_sec) + (double)(n.tv_nsec - t->tv_nsec) / 1e9;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    size_t len = size * n;
    if (b->len + len < sizeof b->data) {
        memcpy(b->data + b->len, p, len);
        b->len += len;
    }
    return len;
}

static int more(const struct run *r)
{
    if (r->requests > 0)
        return r->started < r->requests;
    return since(&r->start) < r->duration;
}

/* The next report: one record for the next session in turn. */
static void start_report(struct run *r, CURLM *m, struct conn *c)
{
    long long k = r->started++;
    const char *sid = r->sessions[k % r->n_sessions];
    snprintf(c->url, sizeof c->url, "http://%s:%d/v1/sessions/%s/reports", r->host, r->port, sid);
    snprintf(c->id, sizeof c->id, "%.71s", sid);
    snprintf(c->req, sizeof c->req, "e=t,sn=%lld,sta=p,ts=%lld,v=2",
             k / r->n_sessions + 1, 1764600000000LL + k);
    c->resp.len = 0;
    curl_easy_setopt(c->h, CURLOPT_URL, c->url);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->req);
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    curl_multi_add_handle(m, c->h);
}

static int read_sessions(struct run *r, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[128];
    long long cap = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (r->n_sessions == cap) {
            cap = cap ? 2 * cap : 1024;
            r->sessions = realloc(r->sessions, (size_t)cap * sizeof *r->sessions);
            if (!r->sessions)
                abort();
        }
        snprintf(r->sessions[r->n_sessions++], sizeof r->sessions[0], "%.71s", line);
    }
    if (f)
        fclose(f);
    return r->n_sessions > 0 ? 0 : -1;
}

static void start(struct run *r, CURLM *m, struct conn *c)
{
    if (r->sessions && !r->get) {
        start_report(r, m, c);
        return;
    }
    if (r->get) {
        char id[96];
        long long k = r->started++;
        if (r->sessions) /* the delivery URLs carry the session id */
            snprintf(id, sizeof id, "%s", r->sessions[k % r->n_sessions]);
        else
            snprintf(id, sizeof id, "%s-%lld", r->prefix, k % r->ids);
        int n = snprintf(c->url, sizeof c->url, "http://%s:%d", r->host, r->port);
        snprintf(c->url + n, sizeof c->url - (size_t)n, r->get, id);
        snprintf(c->id, sizeof c->id, "%s", id);
        c->resp.len = 0;
        curl_easy_setopt(c->h, CURLOPT_URL, c->url);
        curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
        clock_gettime(CLOCK_MONOTONIC, &c->t0);
        curl_multi_add_handle(m, c->h);
        return;
    }
    snprintf(c->id, sizeof c->id, "%s-%lld", r->prefix, r->started++);
    snprintf(c->req, sizeof c->req,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"%s\",\"region\":\"%s\","
             "\"isp\":\"%s\",\"client\":\"%s\",\"build\":\"%s\",\"rendition\":\"%s\"}}",
             c->id, r->cohort[0], r->cohort[1], r->cohort[2], r->cohort[3], r->cohort[4],
             r->cohort[5]);
    c->resp.len = 0;
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->req);
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    curl_multi_add_handle(m, c->h);
}

static void finish(struct run *r, struct conn *c, CURLcode res)
{
    double lat = since(&c->t0);
    long code = 0;
    if (res == CURLE_OK)
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
    if (code > 0 && code < 600)
        r->status[code]++;
    else
        r->errors++;
    if (r->n_lat == r->cap_lat) {
        r->cap_lat = r->cap_lat ? 2 * r->cap_lat : 65536;
        r->lat = realloc(r->lat, (size_t)r->cap_lat * sizeof *r->lat);
        if (!r->lat)
            abort();
    }
    r->lat[r->n_lat++] = lat;
    r->done++;
    if (r->log) {
        c->resp.data[c->resp.len] = '\0';
        fprintf(r->log, "%s %ld %.0f %s\n", c->id, code, lat * 1e6,
                c->resp.len ? c->resp.data : "-");
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const struct run *r, double p)
{
    if (!r->n_lat)
        return 0;
    long long i = (long long)(p * (double)(r->n_lat - 1) + 0.5);
    return r->lat[i] * 1e3;
}

static void report(struct run *r, double elapsed)
{
    qsort(r->lat, (size_t)r->n_lat, sizeof *r->lat, cmp);
    printf("{\"requests\": %lld, \"elapsed_s\": %.3f, \"created_per_s\": %.1f, "
           "\"ok_per_s\": %.1f, \"stored_per_s\": %.1f, \"answers_per_s\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
           "\"max_ms\": %.3f, \"connections\": %d, \"errors\": %lld, \"status\": {",
           r->done, elapsed, (double)r->status[201] / elapsed, (double)r->status[200] / elapsed,
           (double)r->status[204] / elapsed, (double)r->done / elapsed, pct(r, 0.5), pct(r, 0.99), pct(r, 1.0), r->connections,
           r->errors);
    const char *sep = "";
    for (int s = 0; s < 600; s++)
        if (r->status[s]) {
            printf("%s\"%d\": %lld", sep, s, r->status[s]);
            sep = ", ";
        }
    printf("}}\n");
}

static int usage(void)
{
    fprintf(stderr, "usage: stepctl-loadgen --port P [--host H] [--connections N] "
                    "(--duration S | --requests N) [--prefix P] [--cohort c,r,i,cl,b,re] "
                    "[--log FILE] [--get PATH-with-%%s --ids N] [--sessions FILE]\n");
    return 64;
}

static int args(int argc, char **argv, struct run *r)
{
    const char *cohort = "news-1,eu-west,isp-x,web-hlsjs,2026.11.3,720p";
    r->host = "127.0.0.1";
    r->prefix = "load";
    r->connections = 32;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "--port"))
            r->port = atoi(v);
        else if (!strcmp(o, "--host"))
            r->host = v;
        else if (!strcmp(o, "--connections"))
            r->connections = atoi(v);
        else if (!strcmp(o, "--duration"))
            r->duration = atof(v);
        else if (!strcmp(o, "--requests"))
            r->requests = atoll(v);
        else if (!strcmp(o, "--prefix"))
            r->prefix = v;
        else if (!strcmp(o, "--cohort"))
            cohort = v;
        else if (!strcmp(o, "--log"))
            r->log_path = v;
        else if (!strcmp(o, "--get"))
            r->get = v;
        else if (!strcmp(o, "--ids"))
            r->ids = atoll(v);
        else if (!strcmp(o, "--sessions")) {
            if (read_sessions(r, v) != 0)
                return -1;
        }
        else
            return -1;
    }
    if (argc % 2 == 0 || r->port <= 0 || r->connections < 1 || r->connections > MAX_CONN ||
        (r->duration <= 0 && r->requests <= 0))
        return -1;
    if (r->get && ((r->ids < 1 && !r->sessions) || !strstr(r->get, "%s") || strchr(strstr(r->get, "%s") + 2, '%') ||
                   strchr(r->get, '%') != strstr(r->get, "%s")))
        return -1;
    if (sscanf(cohort, "%127[^,],%127[^,],%127[^,],%127[^,],%127[^,],%127s", r->cohort[0],
               r->cohort[1], r->cohort[2], r->cohort[3], r->cohort[4], r->cohort[5]) != 6)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    static struct run r;
    static struct conn conns[MAX_CONN];
    if (args(argc, argv, &r) != 0)
        return usage();
    if (r.log_path && !(r.log = fopen(r.log_path, "w"))) {
        perror(r.log_path);
        return 66;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *m = curl_multi_init();
    char url[256];
    snprintf(url, sizeof url, "http://%s:%d/v1/allocations", r.host, r.port);
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    for (int i = 0; i < r.connections; i++) {
        struct conn *c = &conns[i];
        c->h = curl_easy_init();
        c->hdr = curl_slist_append(NULL, "Content-Type: application/json");
        curl_easy_setopt(c->h, CURLOPT_URL, url);
        curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdr);
        curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->resp);
        curl_easy_setopt(c->h, CURLOPT_PRIVATE, c);
        curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
        if (more(&r))
            start(&r, m, c);
    }
    int running = 1;
    while (running) {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct conn *c;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&c);
            CURLcode res = msg->data.result;
            curl_multi_remove_handle(m, c->h);
            finish(&r, c, res);
            if (more(&r)) {
                start(&r, m, c);
                running = 1;
            }
        }
        if (running)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    report(&r, since(&r.start));
    for (int i = 0; i < r.connections; i++) {
        curl_easy_cleanup(conns[i].h);
        curl_slist_free_all(conns[i].hdr);
    }
    curl_multi_cleanup(m);
    curl_global_cleanup();
    free(r.lat);
    if (r.log)
        fclose(r.log);
    return r.errors ? 1 : 0;
}
