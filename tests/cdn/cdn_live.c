/* cdn_live.c - the sliding live window (cdn_live.h). */
#include "cdn_live.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PLAYLIST_MAX (64 * 1024)

static int bad(char *err, size_t errsz, const char *msg, const char *what)
{
    snprintf(err, errsz, "%s: %s", what, msg);
    return -1;
}

int cdn_live_load(struct cdn_live *l, const char *dir, unsigned window, int64_t epoch_ms,
                  char *err, size_t errsz)
{
    char path[PATH_MAX];
    memset(l, 0, sizeof *l);
    if (snprintf(path, sizeof path, "%s/playlist.m3u8", dir) >= (int)sizeof path)
        return bad(err, errsz, "path too long", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return bad(err, errsz, "cannot open", path);
    char line[1024];
    double pending = -1;
    size_t total = 0;
    while (fgets(line, sizeof line, f) && (total += strlen(line)) < PLAYLIST_MAX) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncmp(line, "#EXTINF:", 8)) {
            pending = strtod(line + 8, NULL);
            continue;
        }
        if (!line[0] || line[0] == '#' || pending <= 0)
            continue;
        if (l->n == CDN_LIVE_MAX_SEGMENTS || strchr(line, '/') || strstr(line, "..") ||
            snprintf(l->file[l->n], PATH_MAX, "%s/%s", dir, line) >= PATH_MAX) {
            fclose(f);
            return bad(err, errsz, "more than 64 segments, or a name outside the folder", path);
        }
        l->dur_ms[l->n] = (int64_t)llround(pending * 1000.0);
        l->start_ms[l->n + 1] = l->start_ms[l->n] + l->dur_ms[l->n];
        int64_t t = (int64_t)ceil(pending - 0.0005);
        if (t > l->target_s)
            l->target_s = t;
        l->n++;
        pending = -1;
    }
    fclose(f);
    if (l->n == 0)
        return bad(err, errsz, "no segment", path);
    l->window = window ? window : 6;
    l->epoch_ms = epoch_ms;
    return 0;
}

static int64_t seg_start(const struct cdn_live *l, int64_t s)
{
    return l->epoch_ms + (s / (int64_t)l->n) * l->start_ms[l->n] + l->start_ms[s % (int64_t)l->n];
}

int64_t cdn_live_last(const struct cdn_live *l, int64_t now_ms)
{
    int64_t e = now_ms - l->epoch_ms, cycle = l->start_ms[l->n];
    if (e < l->dur_ms[0])
        return -1;
    int64_t k = e / cycle, r = e % cycle, i = -1;
    while (i + 1 < (int64_t)l->n && l->start_ms[i + 2] <= r)
        i++;
    return k * (int64_t)l->n + i; /* i = -1: the last segment of the previous cycle */
}

static void iso_time(int64_t ms, char *out, size_t cap)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

size_t cdn_live_playlist(const struct cdn_live *l, int64_t now_ms, char *out, size_t cap)
{
    int64_t last = cdn_live_last(l, now_ms);
    if (last < 0)
        return 0;
    int64_t first = last - (int64_t)l->window + 1 < 0 ? 0 : last - (int64_t)l->window + 1;
    size_t w = 0;
    int n = snprintf(out, cap,
                     "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:%" PRId64
                     "\n#EXT-X-MEDIA-SEQUENCE:%" PRId64 "\n#EXT-X-DISCONTINUITY-SEQUENCE:%" PRId64
                     "\n",
                     l->target_s, first, first / (int64_t)l->n);
    for (int64_t s = first; n > 0 && (size_t)n < cap - w && s <= last; s++) {
        w += (size_t)n;
        char pdt[40];
        iso_time(seg_start(l, s), pdt, sizeof pdt);
        int64_t d = l->dur_ms[s % (int64_t)l->n];
        n = snprintf(out + w, cap - w,
                     "%s#EXT-X-PROGRAM-DATE-TIME:%s\n#EXTINF:%" PRId64 ".%03" PRId64 ",\n%" PRId64
                     ".ts\n",
                     s % (int64_t)l->n == 0 && s != first ? "#EXT-X-DISCONTINUITY\n" : "", pdt,
                     d / 1000, d % 1000, s);
    }
    if (n <= 0 || (size_t)n >= cap - w)
        return 0;
    return w + (size_t)n;
}

const char *cdn_live_segment(const struct cdn_live *l, int64_t seq, int64_t now_ms)
{
    int64_t last = cdn_live_last(l, now_ms);
    if (seq < 0 || seq > last || seq < last - 2 * (int64_t)l->window + 1)
        return NULL;
    return l->file[seq % (int64_t)l->n];
}
