/* dlv_servedby.c - which path served a URL a player fetched (see dlv_paths.h).
 *
 * A path is known by where its renditions are: scheme, host, port and the
 * directory of each rendition's URL (the segments of a rendition live
 * below its playlist's directory; a signed URL's query does not matter).
 * The longest matching directory wins, so nested directories of two
 * paths stay apart; two paths with one same place cannot be told apart
 * and are refused when paths.json is read.  The renditions' places are
 * parsed once, when paths.json is read: a report is attributed on the
 * writer thread, where parsing every rendition URL per record was the
 * larger part of an rr record's cost. */
#include "dlv_paths.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

/* 0 when url is an absolute http(s) URL, its place filled. */
static int place_of(const char *url, struct dlv_place *p)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK && strlen(host) < sizeof p->host &&
        strlen(path) < sizeof p->dir && (!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https"))) {
        snprintf(p->scheme, sizeof p->scheme, "%s", scheme);
        for (char *c = p->scheme; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        snprintf(p->host, sizeof p->host, "%s", host);
        for (char *c = p->host; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        p->port = strtol(port, NULL, 10);
        snprintf(p->dir, sizeof p->dir, "%s", path);
        char *slash = strrchr(p->dir, '/');
        if (slash)
            slash[1] = '\0';
        rc = 0;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_url_cleanup(u);
    return rc;
}

static bool same_origin(const struct dlv_place *a, const struct dlv_place *b)
{
    return !strcmp(a->scheme, b->scheme) && !strcmp(a->host, b->host) && a->port == b->port;
}

const char *dlv_paths_served_by(const struct dlv_paths *ps, const char *url)
{
    struct dlv_place got;
    if (!ps || place_of(url, &got) != 0)
        return NULL;
    const char *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < ps->n; i++)
        for (size_t k = 0; k < ps->p[i].n; k++) {
            const struct dlv_place *r = &ps->p[i].r[k].place;
            if (!r->ok || !same_origin(&got, r))
                continue;
            size_t n = strlen(r->dir);
            if (!strncmp(got.dir, r->dir, n) && n > best_len) {
                best = ps->p[i].id;
                best_len = n;
            }
        }
    return best;
}

int dlv_paths_locate(struct dlv_paths *ps, char *err, size_t errlen)
{
    for (size_t i = 0; i < ps->n; i++)
        for (size_t k = 0; k < ps->p[i].n; k++)
            ps->p[i].r[k].place.ok = place_of(ps->p[i].r[k].url, &ps->p[i].r[k].place) == 0;
    for (size_t i = 0; i < ps->n; i++)
        for (size_t k = 0; k < ps->p[i].n; k++) {
            const struct dlv_place *a = &ps->p[i].r[k].place;
            if (!a->ok)
                continue;
            for (size_t j = i + 1; j < ps->n; j++)
                for (size_t m = 0; m < ps->p[j].n; m++) {
                    const struct dlv_place *b = &ps->p[j].r[m].place;
                    if (b->ok && same_origin(a, b) && !strcmp(a->dir, b->dir)) {
                        snprintf(err, errlen, "paths.%s.renditions.%s and paths.%s.renditions.%s are in the same "
                                 "place (scheme, host, port and directory): what a viewer fetched could not be "
                                 "told apart; give each path its own host or directory", ps->p[i].id,
                                 ps->p[i].r[k].name, ps->p[j].id, ps->p[j].r[m].name);
                        return -1;
                    }
                }
        }
    return 0;
}
