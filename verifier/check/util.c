/* util.c - small shared helpers (see util.h). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "evidence_fingerprint.h"

void util_sha256_hex(const void *data, size_t len, char out[65])
{
    evidence_sha256_hex(data, len, out); /* one implementation (evidence/fingerprint) */
}

int64_t util_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void util_rfc3339(int64_t ms, char out[32])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char date[24];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%s.%03dZ", date, (int)(ms % 1000));
}

int util_parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int util_parse_range(const char *s, int64_t *a, int64_t *b)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    char first[32];
    if (!colon || (size_t)(colon - s) >= sizeof first)
        return -1;
    memcpy(first, s, (size_t)(colon - s));
    first[colon - s] = '\0';
    return util_parse_i64(first, a) || util_parse_i64(colon + 1, b) ? -1 : 0;
}

int util_parse_seq_range(const char *s, int64_t *first, int64_t *last)
{
    int rc = s && strchr(s, ':') ? util_parse_range(s, first, last) : util_parse_i64(s, first);
    if (rc == 0 && !strchr(s, ':'))
        *last = *first;
    return rc || *first < 0 || *last < *first ? -1 : 0;
}

FILE *util_open_regular(const char *path, unsigned *mode, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* a FIFO must not block here */
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "%s is not a regular file", path);
        return NULL;
    }
    if (mode)
        *mode = (unsigned)st.st_mode;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int util_check_regular_file(const char *path, char *err, size_t errlen)
{
    FILE *f = util_open_regular(path, NULL, err, errlen);
    if (!f)
        return -1;
    fclose(f);
    return 0;
}
