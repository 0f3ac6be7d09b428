/* serve_access.c - the access log's lines (see serve_access.h). */
#include "serve_access.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evidence_text.h"

struct sacc {
    char *path;         /* NULL: stderr */
    pthread_mutex_t mu; /* guards fd against a reopen; writes do not wait on each other long */
    int fd;
};

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

struct sacc *sacc_open(const char *path, char *err, size_t errlen)
{
    struct sacc *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->fd = STDERR_FILENO;
    if (strcmp(path, "-")) {
        a->path = strdup(path);
        a->fd = a->path ? open_log(path) : -1;
        if (a->fd < 0) {
            char why[128];
            snprintf(err, errlen, "--access-log %s: %s", path,
                     evidence_text_errno(a->path ? errno : ENOMEM, why, sizeof why));
            free(a->path);
            free(a);
            return NULL;
        }
    }
    pthread_mutex_init(&a->mu, NULL);
    return a;
}

void sacc_close(struct sacc *a)
{
    if (!a)
        return;
    if (a->path)
        close(a->fd);
    pthread_mutex_destroy(&a->mu);
    free(a->path);
    free(a);
}

int sacc_reopen(struct sacc *a)
{
    if (!a || !a->path)
        return 0;
    int fd = open_log(a->path);
    if (fd < 0)
        return -1;
    pthread_mutex_lock(&a->mu);
    int old = a->fd;
    a->fd = fd;
    pthread_mutex_unlock(&a->mu);
    close(old);
    return 0;
}

/* The method when it is one HTTP defines, else "other": the log takes
 * nothing the client chose verbatim. */
static const char *known_method(const char *m)
{
    static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"};
    for (size_t i = 0; m && i < sizeof methods / sizeof methods[0]; i++)
        if (!strcmp(m, methods[i]))
            return methods[i];
    return "other";
}

void sacc_write(struct sacc *a, const struct sacc_entry *e)
{
    if (!a)
        return;
    char when[40], line[512];
    evidence_text_time(e->time_ms, when, sizeof when);
    /* route and client are the service's own text ([a-z_] names, inet_ntop) */
    int n = snprintf(line, sizeof line,
                     "{\"time\":\"%s\",\"method\":\"%s\",\"route\":\"%s\",\"status\":%u,"
                     "\"bytes\":%zu,\"duration_s\":%.6f,\"client\":\"%s\"}\n",
                     when, known_method(e->method), e->route, e->status, e->bytes, e->duration_s,
                     e->client);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    pthread_mutex_lock(&a->mu);
    /* a full disk loses lines, never the answer */
    ssize_t w = write(a->fd, line, (size_t)n);
    pthread_mutex_unlock(&a->mu);
    (void)w;
}
