/* fb_prom.c - one query_range request to Prometheus (see feedback.h).
 *
 * Prometheus is an outside service: the whole request is bounded by the
 * policy's timeout_ms (connect included) and the answer by FB_MAX_BODY, so
 * a slow or flooding server costs `next` at most that, and an answer cut
 * off is an error (UNKNOWN), never a partial series.  It runs in `stepctl
 * next`, before its write transaction; the admission service never asks.
 */
#include "feedback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

struct sink {
    char *p;
    size_t len, cap;
    bool over;
};

/* Keeps at most FB_MAX_BODY bytes; one more aborts the transfer. */
static size_t sink_write(char *data, size_t size, size_t count, void *arg)
{
    struct sink *k = arg;
    size_t add = size * count;
    if (add > FB_MAX_BODY - k->len) {
        k->over = true;
        return 0;
    }
    if (k->len + add + 1 > k->cap) {
        size_t cap = k->cap ? k->cap : 16384;
        while (cap < k->len + add + 1)
            cap *= 2;
        char *grown = realloc(k->p, cap);
        if (!grown)
            return 0;
        k->p = grown;
        k->cap = cap;
    }
    memcpy(k->p + k->len, data, add);
    k->len += add;
    k->p[k->len] = '\0';
    return add;
}

int64_t fb_step_for(int64_t start_ms, int64_t end_ms, int64_t step_s)
{
    /* points = floor(span / step) + 1 <= FB_MAX_POINTS */
    int64_t span_s = end_ms > start_ms ? (end_ms - start_ms + 999) / 1000 : 0;
    int64_t need = (span_s + FB_MAX_POINTS - 2) / (FB_MAX_POINTS - 1);
    return need > step_s ? need : step_s;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* url/api/v1/query_range?query=<escaped>&start=&end=&step=  NULL when too long. */
static char *request_url(CURL *h, const char *url, const char *promql, int64_t start_ms,
                         int64_t end_ms, int64_t step_s)
{
    char *q = curl_easy_escape(h, promql, 0);
    size_t n = strlen(url) + (q ? strlen(q) : 0) + 160;
    char *out = q ? malloc(n) : NULL;
    if (out)
        snprintf(out, n, "%s%sapi/v1/query_range?query=%s&start=%lld.%03lld&end=%lld.%03lld&step=%lld",
                 url, url[strlen(url) - 1] == '/' ? "" : "/", q, (long long)(start_ms / 1000),
                 (long long)(start_ms % 1000), (long long)(end_ms / 1000),
                 (long long)(end_ms % 1000), (long long)step_s);
    curl_free(q);
    return out;
}

int fb_prom_query(const char *url, const char *promql, int64_t start_ms, int64_t end_ms,
                  int64_t step_s, int64_t timeout_ms, struct fb_answer *out)
{
    memset(out, 0, sizeof *out);
    out->queried_at_ms = wall_ms();
    CURL *h = curl_easy_init();
    char *full = h ? request_url(h, url, promql, start_ms, end_ms, step_s) : NULL;
    if (!full) {
        snprintf(out->error, sizeof out->error, "the request could not be built");
        curl_easy_cleanup(h);
        return -1;
    }
    struct sink k = {0};
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &k);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "stepctl-next");
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->http_status);
    curl_easy_cleanup(h);
    free(full);
    if (k.over)
        snprintf(out->error, sizeof out->error, "the answer is larger than %d bytes", FB_MAX_BODY);
    else if (rc != CURLE_OK)
        snprintf(out->error, sizeof out->error, "%s", curl_easy_strerror(rc));
    if (out->error[0]) {
        free(k.p);
        return -1;
    }
    out->body = k.p ? k.p : calloc(1, 1);
    out->len = k.len;
    return out->body ? 0 : -1;
}

void fb_answer_free(struct fb_answer *a)
{
    free(a->body);
    a->body = NULL;
    a->len = 0;
}
