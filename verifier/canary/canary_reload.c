/* canary_reload.c - blocking playlist reload (see canary_reload.h). */
#include "canary_reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *canary_reload_url(const char *url, uint64_t msn)
{
    size_t n = strcspn(url, "#");
    bool has_query = memchr(url, '?', n) != NULL;
    size_t len = n + 48;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%.*s%c_HLS_msn=%llu", (int)n, url, has_query ? '&' : '?', (unsigned long long)msn);
    return out;
}

struct canary_playlist *canary_reload_read(const char *url, bool block, uint64_t msn, const struct fetch_options *fo,
                                           int64_t deadline_ms, struct canary_reload *r)
{
    memset(r, 0, sizeof *r);
    char *blocking = block ? canary_reload_url(url, msn) : NULL;
    if (blocking) {
        int64_t now = util_now_ms();
        int64_t left = deadline_ms - now;
        r->used = true;
        r->msn = msn;
        struct canary_playlist *p = canary_playlist_read(blocking, fo, now + (left > 2 ? left / 2 : 1));
        free(blocking);
        if (!p)
            return NULL;
        r->held_ms = p->ended_at_ms - p->started_at_ms;
        r->http_status = p->http_status;
        if (p->ok) {
            r->outcome = "answered";
            return p;
        }
        /* held past our own limit, or refused: not the candidate's failure */
        r->outcome = p->failure && !strcmp(p->failure, "timeout") ? "held" : "refused";
        canary_playlist_release(p);
    }
    return canary_playlist_read(url, fo, deadline_ms);
}

json_t *canary_reload_json(const struct canary_reload *r)
{
    if (!r->used)
        return NULL;
    return json_pack("{s:I, s:s, s:I, s:i}", "_HLS_msn", (json_int_t)r->msn, "outcome", r->outcome ? r->outcome : "",
                     "held_ms", (json_int_t)r->held_ms, "http_status", (int)r->http_status);
}
