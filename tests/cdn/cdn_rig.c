/* cdn_rig.c - processes, HTTP and logs of the delivery tests (cdn_rig.h). */
#include "cdn_rig.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static unsigned read_port(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned port = 0;
    if (f) {
        if (fscanf(f, "%u", &port) != 1)
            port = 0;
        fclose(f);
    }
    return port;
}

pid_t cdn_spawn(const char *const *argv, const char *out_path, bool own_group)
{
    fflush(NULL); /* the child must not print the parent's buffered output again */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* Never outlive the test (a failed assertion skips the stop), and never
     * hold its stdout/stderr open (ctest waits for them). */
    if (own_group)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent || !freopen(out_path, "w", stderr) || !freopen(out_path, "a", stdout))
        _exit(127);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

int cdn_start(struct cdn_proc *p, const char *cdnd_bin, const char *dir, const char *name,
              const char *const *args)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    char portf[PATH_MAX], errf[PATH_MAX];
    snprintf(portf, sizeof portf, "%s/%s.port", dir, name);
    snprintf(errf, sizeof errf, "%s/%s.stderr", dir, name);
    snprintf(p->log, sizeof p->log, "%s/%s.log", dir, name);
    snprintf(p->report, sizeof p->report, "%s/%s.report", dir, name);
    const char *argv[64];
    size_t n = 0;
    argv[n++] = cdnd_bin;
    for (size_t i = 0; args && args[i] && n < 56; i++)
        argv[n++] = args[i];
    const char *fixed[] = {"--log", p->log, "--report", p->report, "--port-file", portf};
    for (size_t i = 0; i < 6; i++)
        argv[n++] = fixed[i];
    argv[n] = NULL;
    unlink(portf);
    pid_t pid = cdn_spawn(argv, errf, false);
    if (pid < 0)
        return -1;
    p->pid = pid;
    for (int i = 0; i < 400; i++) {
        if ((p->port = read_port(portf)) != 0) {
            snprintf(p->base, sizeof p->base, "http://127.0.0.1:%u", p->port);
            return 0;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            p->pid = 0;
            return -1;
        }
        sleep_ms(50);
    }
    cdn_stop(p);
    return -1;
}

void cdn_stop(struct cdn_proc *p)
{
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGTERM);
    int st;
    for (int i = 0; i < 200; i++) {
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
            p->pid = 0;
            return;
        }
        sleep_ms(25);
    }
    kill(p->pid, SIGKILL);
    waitpid(p->pid, &st, 0);
    p->pid = 0;
}

int cdn_set_answer(const struct cdn_proc *p, int status)
{
    char url[128];
    snprintf(url, sizeof url, "%s/_cdn/answer?status=%d", p->base, status);
    struct cdn_http h;
    int rc = cdn_http(NULL, url, NULL, NULL, &h) == 0 && h.status == 200 ? 0 : -1;
    cdn_http_free(&h);
    return rc;
}

/* ---- HTTP ------------------------------------------------------------------------ */

struct buf {
    char *p;
    size_t n;
};

static size_t collect(char *data, size_t size, size_t nmemb, void *ud)
{
    struct buf *b = ud;
    size_t add = size * nmemb;
    char *q = realloc(b->p, b->n + add + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, data, add);
    b->p = q;
    b->n += add;
    b->p[b->n] = '\0';
    return add;
}

int cdn_http(const char *method, const char *url, const char *cookie, const char *body,
             struct cdn_http *out)
{
    return cdn_http_with(method, url, cookie, NULL, body, out);
}

int cdn_http_with(const char *method, const char *url, const char *cookie, const char *header,
                  const char *body, struct cdn_http *out)
{
    memset(out, 0, sizeof *out);
    CURL *c = curl_easy_init();
    if (!c)
        return -1;
    struct buf b = {0}, h = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (cookie)
        curl_easy_setopt(c, CURLOPT_COOKIE, cookie);
    struct curl_slist *hdr = NULL;
    if (header)
        hdr = curl_slist_append(hdr, header);
    /* a JSON body says so (stepctl serve refuses another type: 415) */
    if (body && body[0] == '{')
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
    if (hdr)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (method)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (method && !strcmp(method, "HEAD"))
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_easy_cleanup(c);
    curl_slist_free_all(hdr);
    out->body = b.p ? b.p : strdup("");
    out->len = b.n;
    out->headers = h.p ? h.p : strdup("");
    return rc == CURLE_OK ? 0 : -1;
}

void cdn_http_free(struct cdn_http *h)
{
    free(h->body);
    free(h->headers);
    memset(h, 0, sizeof *h);
}

char *cdn_http_header(const struct cdn_http *h, const char *name)
{
    size_t nl = strlen(name);
    for (const char *l = h->headers; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!strncasecmp(l, name, nl) && l[nl] == ':') {
            const char *v = l + nl + 1;
            while (*v == ' ')
                v++;
            return strndup(v, strcspn(v, "\r\n"));
        }
    }
    return NULL;
}

/* ---- files ------------------------------------------------------------------------ */

json_t *cdn_jsonl(const char *path)
{
    json_t *arr = json_array();
    FILE *f = fopen(path, "r");
    if (!f)
        return arr;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL);
        if (j)
            json_array_append_new(arr, j);
    }
    free(line);
    fclose(f);
    return arr;
}

int cdn_write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}
