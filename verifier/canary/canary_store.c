/* canary_store.c - serialised writes to evidence.db (see canary_store.h). */
#include "canary_store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcodes.h"
#include "reportsig.h"

struct canary_store {
    pthread_mutex_t mu;
    struct evidence_db *db;
    struct reportsig_key *key; /* --sign-key, or NULL */
    bool sealed;
};

struct canary_store *canary_store_open(const char *path, const char *sign_key, const struct store_key *store_key,
                                       int *exit_code, char *err, size_t errlen)
{
    struct canary_store *s = calloc(1, sizeof *s);
    if (!s) {
        *exit_code = EXACTAV_EXIT_INTERNAL;
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* the key first: a refused key leaves no new store behind */
    char why[768];
    if (sign_key && (*exit_code = reportsig_key_load(sign_key, &s->key, why, sizeof why))) {
        snprintf(err, errlen, "--sign-key %s", why);
        free(s);
        return NULL;
    }
    enum evidence_rc rc = evidence_open_keyed(path, EVIDENCE_OPEN_RW, store_key, &s->db, err, errlen);
    if (rc != EVIDENCE_OK) {
        *exit_code = rc == EVIDENCE_E_OPEN || rc == EVIDENCE_E_VERSION ? EXACTAV_EXIT_NOINPUT
                     : rc == EVIDENCE_E_KEY                            ? EXACTAV_EXIT_UNUSABLE
                                                                       : EXACTAV_EXIT_INTERNAL;
        reportsig_key_free(s->key);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

void canary_store_close(struct canary_store *s)
{
    if (!s)
        return;
    evidence_close(s->db);
    reportsig_key_free(s->key);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void canary_store_lock(struct canary_store *s)
{
    pthread_mutex_lock(&s->mu);
}

void canary_store_unlock(struct canary_store *s)
{
    pthread_mutex_unlock(&s->mu);
}

/* The stored text: the report, with the signature appended last when a
 * key is set (to a shallow copy: the caller's report is left as it is). */
static char *stored_text(const struct canary_store *s, const json_t *report, char *err, size_t errlen)
{
    if (!s->key)
        return json_dumps(report, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_t *copy = json_copy((json_t *)report);
    char *text = copy && !reportsig_sign(s->key, copy, err, errlen)
                     ? json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(copy);
    return text;
}

int canary_store_report_locked(struct canary_store *s, const json_t *report, char *err, size_t errlen)
{
    if (s->sealed) {
        snprintf(err, errlen, "the canary is stopping: result dropped");
        return -1;
    }
    err[0] = '\0';
    char *text = stored_text(s, report, err, errlen);
    int inserted = 0;
    enum evidence_rc rc = text ? evidence_import_report(s->db, text, strlen(text), &inserted, err, errlen)
                               : EVIDENCE_E_INTERNAL;
    if (!text && !err[0])
        snprintf(err, errlen, "out of memory");
    free(text);
    return rc == EVIDENCE_OK ? 0 : -1;
}

int canary_store_report(struct canary_store *s, const json_t *report, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    int rc = canary_store_report_locked(s, report, err, errlen);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int canary_store_probe(struct canary_store *s, const struct evidence_probe *p, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    int rc = -1;
    if (s->sealed)
        snprintf(err, errlen, "the canary is stopping: probe dropped");
    else
        rc = evidence_probe_insert(s->db, p, err, errlen) == EVIDENCE_OK ? 0 : -1;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void canary_store_seal_locked(struct canary_store *s)
{
    s->sealed = true;
}

static bool decode_load(void *ctx, const struct verify_decode_key *k, int64_t *frames, int64_t *samples,
                        json_t **reference)
{
    struct canary_store *s = ctx;
    struct evidence_decode_key key = {k->digest, k->fingerprint, k->start, k->end};
    struct evidence_decode d;
    canary_store_lock(s);
    enum evidence_rc rc = evidence_decode_get(s->db, &key, &d, NULL, 0);
    canary_store_unlock(s);
    if (rc != EVIDENCE_OK)
        return false;
    *frames = d.frames;
    *samples = d.samples;
    *reference = d.reference;
    return true;
}

static void decode_save(void *ctx, const struct verify_decode_key *k, int64_t frames, int64_t samples,
                        const json_t *reference, const char *evidence_id)
{
    struct canary_store *s = ctx;
    struct evidence_decode_key key = {k->digest, k->fingerprint, k->start, k->end};
    struct evidence_decode d = {.frames = frames, .samples = samples, .reference = (json_t *)reference,
                                .evidence_id = evidence_id};
    canary_store_lock(s);
    if (!s->sealed)
        evidence_decode_put(s->db, &key, &d, NULL, 0);
    canary_store_unlock(s);
}

void canary_store_decodes(struct canary_store *s, struct verify_decode_store *out)
{
    *out = (struct verify_decode_store){s, decode_load, decode_save};
}
