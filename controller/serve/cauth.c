/* cauth.c - the --client-auth configuration and its checks (see cauth.h). */
#include "cauth.h"

#include <assert.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cliutil.h"
#include "evidence_text.h"
#include "jwt_key.h"

static int refuse(char *err, size_t errlen, const char *member, const char *what)
{
    snprintf(err, errlen, "%s: %s", member, what);
    return CLI_DATA;
}

static int members(const json_t *o, char *err, size_t errlen)
{
    static const char *const names[] = {"alg", "key_file", "audience", "max_skew_s",
                                        "per_subject_cap"};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        size_t i = 0;
        while (i < 5 && strcmp(k, names[i]))
            i++;
        if (i == 5)
            return refuse(err, errlen, k, "unknown member");
    }
    return CLI_OK;
}

static int integer(const json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *out,
                   char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v && *out >= lo) /* a default was given */
        return CLI_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        char what[96];
        snprintf(what, sizeof what, "an integer from %lld to %lld expected", (long long)lo,
                 (long long)hi);
        return refuse(err, errlen, key, what);
    }
    *out = json_integer_value(v);
    return CLI_OK;
}

static int fields(const json_t *o, const char *dir, struct cauth *out, char *err, size_t errlen)
{
    const char *alg = json_string_value(json_object_get(o, "alg"));
    const char *key = json_string_value(json_object_get(o, "key_file"));
    const char *aud = json_string_value(json_object_get(o, "audience"));
    if (!alg || (strcmp(alg, "HS256") && strcmp(alg, "ES256")))
        return refuse(err, errlen, "alg", "\"HS256\" or \"ES256\" expected");
    if (!key || !key[0])
        return refuse(err, errlen, "key_file", "a file name expected");
    if (!aud || !aud[0] || strlen(aud) >= sizeof out->audience)
        return refuse(err, errlen, "audience", "a string of 1 to 127 bytes expected");
    snprintf(out->audience, sizeof out->audience, "%s", aud);
    out->max_skew_s = 30;
    out->per_subject_cap = -1;
    int rc = integer(o, "max_skew_s", 0, 300, &out->max_skew_s, err, errlen);
    if (rc == CLI_OK)
        rc = integer(o, "per_subject_cap", 1, 1000000, &out->per_subject_cap, err, errlen);
    if (rc != CLI_OK)
        return rc;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", key[0] == '/' ? "" : dir, key) >= (int)sizeof path)
        return refuse(err, errlen, "key_file", "path too long");
    char kerr[1024];
    rc = jwt_key_load(!strcmp(alg, "HS256") ? JWT_HS256 : JWT_ES256, key[0] == '/' ? key : path,
                      &out->key, kerr, sizeof kerr);
    if (rc != CLI_OK)
        snprintf(err, errlen, "key_file: %s", kerr);
    return rc;
}

int cauth_parse(const char *text, size_t len, const char *dir, struct cauth *out, char *err,
                size_t errlen)
{
    assert(text && dir && out);
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    int rc = !o                 ? refuse(err, errlen, "(json)", je.text)
             : !json_is_object(o) ? refuse(err, errlen, "(root)", "must be an object")
                                  : members(o, err, errlen);
    if (rc == CLI_OK)
        rc = fields(o, dir, out, err, errlen);
    json_decref(o);
    return rc;
}

int cauth_load(const char *file, struct cauth **out)
{
    char *text = NULL, err[1200], shown[2][1400];
    size_t len = 0;
    *out = NULL;
    int rc = cli_slurp(file, CAUTH_MAX_FILE, &text, &len);
    if (rc != CLI_OK)
        return rc;
    char *copy = strdup(file);
    struct cauth *c = calloc(1, sizeof *c);
    rc = !copy || !c ? CLI_SOFTWARE : cauth_parse(text, len, dirname(copy), c, err, sizeof err);
    if (rc != CLI_OK) {
        fprintf(stderr, "stepctl serve: --client-auth %s: %s\n",
                evidence_text_escape(file, false, shown[0], sizeof shown[0]),
                rc == CLI_SOFTWARE ? "out of memory"
                                   : evidence_text_escape(err, false, shown[1], sizeof shown[1]));
        cauth_free(c);
        c = NULL;
    }
    free(copy);
    free(text);
    *out = c;
    return rc;
}

void cauth_free(struct cauth *c)
{
    if (!c)
        return;
    jwt_key_free(&c->key);
    free(c);
}

bool cauth_covers(const struct jwt_claims *cl, const struct sit_cohort *c)
{
    const char *want[6] = {c->channel, c->region, c->isp, c->client, c->build, c->rendition};
    for (size_t i = 0; i < cl->n_cohorts; i++) {
        int f = 0;
        while (f < 6 && (!strcmp(cl->cohorts[i].f[f], "*") || !strcmp(cl->cohorts[i].f[f], want[f])))
            f++;
        if (f == 6)
            return true;
    }
    return false;
}

int cauth_check(const struct cauth *a, const char *authorization, int64_t now_ms,
                struct jwt_claims *out, char *err, size_t errlen)
{
    assert(a && out);
    /* RFC 6750 2.1: the scheme is case-insensitive, then one space */
    if (!authorization || strncasecmp(authorization, "Bearer ", 7)) {
        snprintf(err, errlen, "no bearer token");
        return -1;
    }
    const char *tok = authorization + 7;
    return jwt_verify(tok, strlen(tok), &a->key, a->audience, now_ms / 1000, a->max_skew_s, out,
                      err, errlen);
}
