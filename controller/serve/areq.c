/* areq.c - the allocation request body (see areq.h). */
#include "areq.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == ':' || c == '-';
}

/* Copies a string member; required, bounded, no NUL. */
static int str(const json_t *o, const char *path, const char *key, char *dst, size_t dlen,
               char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return fail(err, errlen, "%s%s: required string is missing", path, key);
    if (!json_is_string(v))
        return fail(err, errlen, "%s%s: must be a string", path, key);
    size_t n = json_string_length(v);
    if (n == 0 || n >= dlen || n != strlen(json_string_value(v)))
        return fail(err, errlen, "%s%s: must be 1 to %zu bytes without NUL", path, key, dlen - 1);
    memcpy(dst, json_string_value(v), n + 1);
    return 0;
}

/* Refuses any member not in names[]. */
static int only(const json_t *o, const char *path, const char *const *names, size_t n, char *err,
                size_t errlen)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        size_t i = 0;
        while (i < n && strcmp(k, names[i]))
            i++;
        if (i == n)
            return fail(err, errlen, "%s%.64s: unknown member", path, k);
    }
    return 0;
}

static int cohort(const json_t *c, struct sit_cohort *d, char *err, size_t errlen)
{
    static const char *const names[] = {"channel", "region", "isp", "client", "build", "rendition"};
    char *dst[] = {d->channel, d->region, d->isp, d->client, d->build, d->rendition};
    if (!json_is_object(c))
        return fail(err, errlen, "cohort: must be an object");
    if (only(c, "cohort.", names, 6, err, errlen) < 0)
        return -1;
    for (int i = 0; i < 6; i++)
        if (str(c, "cohort.", names[i], dst[i], SIT_STR, err, errlen) < 0)
            return -1;
    return 0;
}

/* "verification": true asks for a verification session (issue 17); false
 * or absent: a viewer. */
static int verification(const json_t *v, struct areq *out, char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return fail(err, errlen, "verification: must be true or false");
    out->verification = json_is_true(v);
    return 0;
}

int areq_parse(const char *body, size_t len, struct areq *out, char *err, size_t errlen)
{
    static const char *const names[] = {"allocation_id", "cohort", "verification"};
    assert(body || len == 0);
    memset(out, 0, sizeof *out);
    if (len > AREQ_MAX_BODY)
        return fail(err, errlen, "(body): larger than %d bytes", AREQ_MAX_BODY);
    json_error_t je;
    json_t *root = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!root)
        return len ? fail(err, errlen, "(json): line %d column %d: %s", je.line, je.column, je.text)
                   : fail(err, errlen, "(body): empty");
    int rc = -1;
    if (!json_is_object(root))
        fail(err, errlen, "(root): must be an object");
    else if (only(root, "", names, 3, err, errlen) == 0 &&
             verification(json_object_get(root, "verification"), out, err, errlen) == 0 &&
             str(root, "", "allocation_id", out->allocation_id, sizeof out->allocation_id, err,
                 errlen) == 0 &&
             cohort(json_object_get(root, "cohort"), &out->cohort, err, errlen) == 0)
        rc = 0;
    for (const char *p = out->allocation_id; rc == 0 && *p; p++)
        if (!id_char(*p))
            rc = fail(err, errlen, "allocation_id: only A-Z a-z 0-9 . _ : - are allowed");
    /* the id is a segment of its playback URLs, which "." and ".." are not:
     * a client or proxy normalizes them away (RFC 3986 5.2.4) */
    if (rc == 0 && (!strcmp(out->allocation_id, ".") || !strcmp(out->allocation_id, "..")))
        rc = fail(err, errlen, "allocation_id: . and .. are not allowed (dot-segments of a URL)");
    json_decref(root);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

int areq_canonical(const struct areq *r, char *buf, size_t len)
{
    json_t *o = json_pack("{s:s,s:{s:s,s:s,s:s,s:s,s:s,s:s}}", "allocation_id", r->allocation_id,
                          "cohort", "channel", r->cohort.channel, "region", r->cohort.region,
                          "isp", r->cohort.isp, "client", r->cohort.client, "build",
                          r->cohort.build, "rendition", r->cohort.rendition);
    /* only when true: a viewer's canonical form (and digest) is as before */
    if (o && r->verification)
        json_object_set_new(o, "verification", json_true());
    /* JSON_PRESERVE_ORDER: the members in the order packed above. */
    char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    int n = t && strlen(t) < len ? (int)strlen(t) : -1;
    if (n >= 0)
        memcpy(buf, t, (size_t)n + 1);
    free(t);
    return n;
}

void areq_digest(const struct areq *r, char hex[65])
{
    char buf[2 * AREQ_MAX_BODY];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int n = areq_canonical(r, buf, sizeof buf);
    assert(n >= 0); /* every member is bounded: the canonical form always fits */
    hex[0] = '\0';
    if (EVP_Digest(buf, (size_t)n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return; /* "" never equals a stored digest: a retry then gets 422, never a wrong 200 */
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}
