/* util.c - small shared helpers (see util.h). */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

void util_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
        snprintf(out, 65, "%s", "unavailable");
        return;
    }
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
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

void util_new_id(char out[37])
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1) {
        /* No randomness: an id that cannot collide with a real one. */
        snprintf(out, 37, "00000000-0000-4000-8000-%012llx", (unsigned long long)util_now_ms());
        return;
    }
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}
