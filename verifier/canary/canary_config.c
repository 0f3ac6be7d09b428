/* canary_config.c - parsing and validating the canary's configuration. */
#include "canary_config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "canary_alloc.h"
#include "credential.h"
#include "evidence.h"
#include "exitcodes.h"
#include "redact.h"
#include "uri.h"

/* Defaults (docs/canary.md). */
#define DEFAULT_CONCURRENCY 2
#define DEFAULT_PERIOD_MS 2000
#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_PROBE_PERIOD_MS 5000
#define DEFAULT_MAX_BACKOFF_MS 30000
#define DEFAULT_COMMAND_TIMEOUT_MS 5000
#define DEFAULT_LAG_SEGMENTS 1
#define DEFAULT_CATCHUP_SEGMENTS 5
#define DEFAULT_RETENTION_EVERY_MS (3600 * 1000)

struct ctx {
    char *err;
    size_t errlen;
};

static int fail(struct ctx *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const char *field, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s", field, why);
    return -1;
}

/* Refuses any key of obj that is not in allowed (NULL-terminated). */
static int only_known_keys(struct ctx *c, const json_t *obj, const char *prefix, const char *const *allowed)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool known = false;
        for (size_t i = 0; allowed[i] && !known; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (!known) {
            char field[300];
            snprintf(field, sizeof field, "%s%.200s", prefix, key);
            return fail(c, field, "unknown key");
        }
    }
    return 0;
}

/* An optional duration in seconds (integer or decimal) into ms; absent keeps *ms. */
static int seconds(struct ctx *c, const json_t *obj, const char *key, const char *field, double lo, double hi,
                   bool zero_ok, int64_t *ms)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_number(v))
        return fail(c, field, "must be a number of seconds");
    double s = json_number_value(v);
    if (!isfinite(s) || !((zero_ok && s == 0) || (s >= lo && s <= hi)))
        return fail(c, field, "must be %s%g..%g seconds", zero_ok ? "0 or " : "", lo, hi);
    *ms = (int64_t)llround(s * 1000.0);
    return 0;
}

static int integer(struct ctx *c, const json_t *obj, const char *key, const char *field, int64_t lo, int64_t hi,
                   int64_t *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return fail(c, field, "must be an integer in %lld..%lld", (long long)lo, (long long)hi);
    *out = json_integer_value(v);
    return 0;
}

/* Identifiers go into keys, logs and metric labels: a small safe alphabet. */
static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > CANARY_MAX_NAME)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("._:@+-", *s)))
            return false;
    return true;
}

static int name(struct ctx *c, const json_t *obj, const char *key, const char *prefix, char **out)
{
    char field[64];
    snprintf(field, sizeof field, "%s%s", prefix, key);
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return fail(c, field, "required");
    if (!json_is_string(v) || !name_ok(json_string_value(v)))
        return fail(c, field, "must be 1-%d characters of [A-Za-z0-9._:@+-]", CANARY_MAX_NAME);
    return (*out = strdup(json_string_value(v))) ? 0 : fail(c, field, "out of memory");
}

static int location(struct ctx *c, const json_t *v, const char *field, char **out)
{
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > CANARY_MAX_LOCATION ||
        strlen(json_string_value(v)) != json_string_length(v))
        return fail(c, field, "must be a non-empty string of at most %d bytes", CANARY_MAX_LOCATION);
    return (*out = strdup(json_string_value(v))) ? 0 : fail(c, field, "out of memory");
}

static int command(struct ctx *c, const json_t *v, const char *field, struct canary_target *t)
{
    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > CANARY_MAX_COMMAND_ARGS)
        return fail(c, field, "must be an array of 1..%d strings (program, arguments)", CANARY_MAX_COMMAND_ARGS);
    t->command = calloc(json_array_size(v) + 1, sizeof *t->command);
    if (!t->command)
        return fail(c, field, "out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        char f[96];
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        if (location(c, json_array_get(v, i), f, &t->command[i]))
            return -1;
    }
    return 0;
}

static int reference(struct ctx *c, const json_t *o, const char *prefix, struct canary_target *t)
{
    char field[64];
    snprintf(field, sizeof field, "%sreference", prefix);
    const json_t *ref = json_object_get(o, "reference");
    if (!ref)
        return fail(c, field, "required");
    return location(c, ref, field, &t->reference);
}

static int target_locations(struct ctx *c, const json_t *o, const char *prefix, struct canary_target *t)
{
    char field[64];
    const json_t *cand = json_object_get(o, "candidate"), *cmd = json_object_get(o, "candidate_command");
    snprintf(field, sizeof field, "%scandidate", prefix);
    if (!cand && !cmd)
        return fail(c, field, "required (or candidate_command, or allocation)");
    if (cand && location(c, cand, field, &t->candidate))
        return -1;
    if (cand && !uri_is_http(t->candidate))
        return fail(c, field, "must be an http(s) URL of a media playlist");
    snprintf(field, sizeof field, "%scandidate_command", prefix);
    if (cmd && command(c, cmd, field, t))
        return -1;
    return reference(c, o, prefix, t);
}

/* One string member of the allocation's cohort. */
static int cohort_member(struct ctx *c, const json_t *cohort, const char *key, const char *prefix, char **out)
{
    char field[96];
    snprintf(field, sizeof field, "%scohort.", prefix);
    return name(c, cohort, key, field, out);
}

/* "allocation" (issue 17): {service, cohort, every_s, token_file} instead of
 * path_id and candidate / candidate_command.  The cohort is the service's
 * (six strings); its channel and rendition are the target's. */
static int parse_allocation(struct ctx *c, const json_t *o, const char *prefix, struct canary_target *t)
{
    static const char *const keys[] = {"service", "cohort", "every_s", "token_file", NULL};
    static const char *const cohort_keys[] = {"channel", "region", "isp", "client", "build", "rendition", NULL};
    static const char *const excluded[] = {"path_id", "candidate", "candidate_command", NULL};
    const json_t *a = json_object_get(o, "allocation");
    char p[64], field[96];
    snprintf(p, sizeof p, "%sallocation.", prefix);
    for (size_t i = 0; excluded[i]; i++)
        if (json_object_get(o, excluded[i])) {
            snprintf(field, sizeof field, "%s%s", prefix, excluded[i]);
            return fail(c, field, "not with allocation (the allocation gives the path and the candidate)");
        }
    if (!json_is_object(a))
        return fail(c, p, "must be an object");
    struct canary_alloc_spec *s = t->alloc = calloc(1, sizeof *t->alloc);
    if (!s)
        return fail(c, p, "out of memory");
    s->every_ms = CANARY_ALLOC_DEFAULT_EVERY_MS;
    if (only_known_keys(c, a, p, keys))
        return -1;
    const json_t *svc = json_object_get(a, "service"), *cohort = json_object_get(a, "cohort");
    snprintf(field, sizeof field, "%sservice", p);
    if (!svc)
        return fail(c, field, "required");
    if (location(c, svc, field, &s->service))
        return -1;
    if (!uri_is_http(s->service) || strpbrk(s->service, "?#"))
        return fail(c, field, "must be an http(s) URL without query or fragment");
    const char *auth = strstr(s->service, "://") + 3;
    if (memchr(auth, '@', strcspn(auth, "/"))) /* the token authenticates; a password would be stored */
        return fail(c, field, "must not hold user:password@ (the bearer token of token_file authenticates)");
    snprintf(field, sizeof field, "%scohort", p);
    if (!json_is_object(cohort))
        return fail(c, field, cohort ? "must be an object" : "required");
    char cp[80], *ch = NULL, *rd = NULL;
    snprintf(cp, sizeof cp, "%scohort.", p);
    int rc = only_known_keys(c, cohort, cp, cohort_keys) || cohort_member(c, cohort, "channel", p, &ch) ||
             cohort_member(c, cohort, "region", p, &s->region) || cohort_member(c, cohort, "isp", p, &s->isp) ||
             cohort_member(c, cohort, "client", p, &s->client) || cohort_member(c, cohort, "build", p, &s->build) ||
             cohort_member(c, cohort, "rendition", p, &rd) ? -1 : 0;
    if (!rc && strcmp(ch, t->channel)) {
        snprintf(field, sizeof field, "%scohort.channel", p);
        rc = fail(c, field, "must be the target's channel (%s)", t->channel);
    } else if (!rc && strcmp(rd, t->rendition)) {
        snprintf(field, sizeof field, "%scohort.rendition", p);
        rc = fail(c, field, "must be the target's rendition (%s)", t->rendition);
    }
    free(ch);
    free(rd);
    if (rc)
        return -1;
    snprintf(field, sizeof field, "%severy_s", p);
    if (integer(c, a, "every_s", field, 1, 86400, &s->every_ms))
        return -1;
    if (json_object_get(a, "every_s"))
        s->every_ms *= 1000;
    snprintf(field, sizeof field, "%stoken_file", p);
    if (!json_object_get(a, "token_file"))
        return fail(c, field, "required");
    if (location(c, json_object_get(a, "token_file"), field, &s->token_file))
        return -1;
    if (!(t->path_id = strdup(CANARY_ALLOC_PATH_ID)))
        return fail(c, p, "out of memory");
    snprintf(t->key, sizeof t->key, "alloc:%s/%s/%s/%s/%s/%s", t->channel, t->rendition, s->region, s->isp,
             s->client, s->build);
    return reference(c, o, prefix, t);
}

/* headers / cookies of a target: checked as exactav verify checks
 * --header / --cookie; a message names at most the header or cookie name. */
static int credentials(struct ctx *c, const json_t *o, const char *key, const char *prefix, struct canary_target *t)
{
    char field[64];
    snprintf(field, sizeof field, "%s%s", prefix, key);
    const json_t *arr = json_object_get(o, key);
    bool cookie = !strcmp(key, "cookies");
    if (!arr)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > CANARY_MAX_CREDENTIALS)
        return fail(c, field, "must be an array of at most %d strings", CANARY_MAX_CREDENTIALS);
    char **list = cookie ? NULL : (t->headers = calloc(json_array_size(arr) + 1, sizeof *t->headers));
    if (!cookie && !list)
        return fail(c, field, "out of memory");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        char f[96], why[160];
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        if (!json_is_string(v) || json_string_length(v) > CANARY_MAX_LOCATION ||
            strlen(json_string_value(v)) != json_string_length(v))
            return fail(c, f, "must be a string of at most %d bytes", CANARY_MAX_LOCATION);
        if (credential_check(cookie, json_string_value(v), why, sizeof why))
            return fail(c, f, "%s", why);
        if (!cookie) {
            if (!(list[i] = strdup(json_string_value(v))))
                return fail(c, f, "out of memory");
            t->n_headers = i + 1;
            continue;
        }
        size_t have = t->cookie ? strlen(t->cookie) : 0;
        char *joined = realloc(t->cookie, have + json_string_length(v) + 3);
        if (!joined)
            return fail(c, f, "out of memory");
        snprintf(joined + have, json_string_length(v) + 3, "%s%s", have ? "; " : "", json_string_value(v));
        t->cookie = joined;
    }
    return 0;
}

static int parse_target(struct ctx *c, const json_t *o, size_t i, const struct canary_config *cfg,
                        struct canary_target *t)
{
    static const char *const keys[] = {"path_id", "channel", "rendition", "program_version", "candidate",
                                       "candidate_command", "reference", "time_offset", "period_s",
                                       "probe_period_s", "headers", "cookies", "allocation", NULL};
    char prefix[32], field[64];
    snprintf(prefix, sizeof prefix, "targets[%zu].", i);
    if (!json_is_object(o))
        return fail(c, prefix, "must be an object");
    bool alloc = json_object_get(o, "allocation") != NULL;
    if (only_known_keys(c, o, prefix, keys) || (!alloc && name(c, o, "path_id", prefix, &t->path_id)) ||
        name(c, o, "channel", prefix, &t->channel) || name(c, o, "rendition", prefix, &t->rendition) ||
        name(c, o, "program_version", prefix, &t->program_version) ||
        (alloc ? parse_allocation(c, o, prefix, t) : target_locations(c, o, prefix, t)) ||
        credentials(c, o, "headers", prefix, t) || credentials(c, o, "cookies", prefix, t))
        return -1;
    t->period_ms = cfg->period_ms;
    t->probe_period_ms = cfg->probe_period_ms;
    snprintf(field, sizeof field, "%stime_offset", prefix);
    if (integer(c, o, "time_offset", field, -((INT64_C(1) << 33) - 1), (INT64_C(1) << 33) - 1, &t->time_offset))
        return -1;
    snprintf(field, sizeof field, "%speriod_s", prefix);
    if (seconds(c, o, "period_s", field, 0.1, 3600, false, &t->period_ms))
        return -1;
    snprintf(field, sizeof field, "%sprobe_period_s", prefix);
    if (seconds(c, o, "probe_period_s", field, 0.5, 3600, true, &t->probe_period_ms))
        return -1;
    if (alloc)
        t->probe_period_ms = 0; /* probes are of a path: an allocation target has none */
    else
        snprintf(t->key, sizeof t->key, "%s/%s/%s", t->path_id, t->channel, t->rendition);
    return 0;
}

static int parse_targets(struct ctx *c, const json_t *arr, struct canary_config *cfg)
{
    if (!arr)
        return fail(c, "targets", "required");
    if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > CANARY_MAX_TARGETS)
        return fail(c, "targets", "must be an array of 1..%d targets", CANARY_MAX_TARGETS);
    cfg->targets = calloc(json_array_size(arr), sizeof *cfg->targets);
    if (!cfg->targets)
        return fail(c, "targets", "out of memory");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        cfg->n_targets = i + 1;
        if (parse_target(c, json_array_get(arr, i), i, cfg, &cfg->targets[i]))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cfg->targets[j].key, cfg->targets[i].key)) {
                char field[48];
                snprintf(field, sizeof field, "targets[%zu]", i);
                return fail(c, field, "%s %s is already targets[%zu]",
                            cfg->targets[i].alloc ? "the allocation target" : "path_id/channel/rendition",
                            cfg->targets[i].key, j);
            }
    }
    return 0;
}

/* redact_params / keep_params: query parameter names for the redaction
 * policy (redact.h: every value is redacted unless its name is kept; a
 * redacted name wins over a kept one; a credential is never kept). */
static int parse_names(struct ctx *c, const json_t *arr, const char *key, bool keep, char ***out, size_t *n)
{
    if (!arr)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > CANARY_MAX_REDACT_PARAMS)
        return fail(c, key, "must be an array of at most %d names", CANARY_MAX_REDACT_PARAMS);
    *out = calloc(json_array_size(arr) + 1, sizeof **out);
    if (!*out)
        return fail(c, key, "out of memory");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char field[48];
        snprintf(field, sizeof field, "%s[%zu]", key, i);
        if (location(c, json_array_get(arr, i), field, &(*out)[i]))
            return -1;
        *n = i + 1;
        if (keep && redact_is_credential_name((*out)[i]))
            return fail(c, field, "%.64s is a credential: it is always redacted", (*out)[i]);
    }
    return 0;
}

/* An origin as a browser sends it: scheme "://" host [":" port], nothing
 * after (RFC 6454), in lower case. */
static bool origin_ok(const char *s)
{
    const char *h = !strncmp(s, "https://", 8) ? s + 8 : !strncmp(s, "http://", 7) ? s + 7 : NULL;
    if (!h || !*h || strlen(s) > 255)
        return false;
    for (; *h; h++)
        if (!((*h >= 'a' && *h <= 'z') || (*h >= '0' && *h <= '9') || strchr(".-:[]", *h)))
            return false;
    return true;
}

static int parse_origins(struct ctx *c, const json_t *arr, struct canary_config *cfg)
{
    if (!arr)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > CANARY_MAX_ORIGINS)
        return fail(c, "player_origins", "must be an array of at most %d origins", CANARY_MAX_ORIGINS);
    cfg->player_origins = calloc(json_array_size(arr) + 1, sizeof *cfg->player_origins);
    if (!cfg->player_origins)
        return fail(c, "player_origins", "out of memory");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char field[48];
        snprintf(field, sizeof field, "player_origins[%zu]", i);
        const char *v = json_string_value(json_array_get(arr, i));
        if (!v || !origin_ok(v))
            return fail(c, field, "must be an origin: http(s)://host[:port] in lower case, no path");
        if (!(cfg->player_origins[i] = strdup(v)))
            return fail(c, field, "out of memory");
        cfg->n_player_origins = i + 1;
    }
    return 0;
}

/* A duration string of evidence_duration_parse ("7d", "12h"). */
static int duration(struct ctx *c, const json_t *obj, const char *key, const char *field, int64_t *ms)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_string(v) || !evidence_duration_parse(json_string_value(v), ms))
        return fail(c, field, "must be a duration such as \"7d\", \"12h\" or \"30m\"");
    return 0;
}

static int parse_retention(struct ctx *c, const json_t *o, struct canary_retention *r)
{
    static const char *const keys[] = {"keep", "keep_mismatch", "every_s", NULL};
    *r = (struct canary_retention){.keep_ms = -1, .keep_mismatch_ms = EVIDENCE_PRUNE_KEEP_MISMATCH_MS,
                                   .every_ms = DEFAULT_RETENTION_EVERY_MS};
    if (!o)
        return 0;
    if (!json_is_object(o))
        return fail(c, "retention", "must be an object");
    if (only_known_keys(c, o, "retention.", keys) || duration(c, o, "keep", "retention.keep", &r->keep_ms) ||
        duration(c, o, "keep_mismatch", "retention.keep_mismatch", &r->keep_mismatch_ms) ||
        seconds(c, o, "every_s", "retention.every_s", 1, 7 * 86400, false, &r->every_ms))
        return -1;
    if (r->keep_ms < 0)
        return fail(c, "retention.keep", "required");
    r->on = true;
    return 0;
}

static int parse_run(struct ctx *c, const json_t *root, struct canary_config *cfg)
{
    static const char *const keys[] = {"concurrency", "period_s", "timeout_s", "lag_segments", "catchup_segments",
                                       "probe_period_s", "max_backoff_s", "command_timeout_s", "redact_params",
                                       "keep_params", "max_behind_s", "player_origins", "targets", "retention",
                                       "diff_dir", NULL};
    int64_t conc = DEFAULT_CONCURRENCY, lag = DEFAULT_LAG_SEGMENTS, catchup = DEFAULT_CATCHUP_SEGMENTS;
    cfg->period_ms = DEFAULT_PERIOD_MS;
    cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
    cfg->probe_period_ms = DEFAULT_PROBE_PERIOD_MS;
    cfg->max_backoff_ms = DEFAULT_MAX_BACKOFF_MS;
    cfg->command_timeout_ms = DEFAULT_COMMAND_TIMEOUT_MS;
    if (only_known_keys(c, root, "", keys) ||
        integer(c, root, "concurrency", "concurrency", 1, 64, &conc) ||
        seconds(c, root, "period_s", "period_s", 0.1, 3600, false, &cfg->period_ms) ||
        seconds(c, root, "timeout_s", "timeout_s", 1, 3600, false, &cfg->timeout_ms) ||
        integer(c, root, "lag_segments", "lag_segments", 0, 100, &lag) ||
        integer(c, root, "catchup_segments", "catchup_segments", 1, 1000, &catchup) ||
        seconds(c, root, "probe_period_s", "probe_period_s", 0.5, 3600, true, &cfg->probe_period_ms) ||
        seconds(c, root, "max_backoff_s", "max_backoff_s", 0.1, 86400, false, &cfg->max_backoff_ms) ||
        seconds(c, root, "command_timeout_s", "command_timeout_s", 0.1, 600, false, &cfg->command_timeout_ms) ||
        seconds(c, root, "max_behind_s", "max_behind_s", 0.1, 3600, false, &cfg->max_behind_ms) ||
        parse_names(c, json_object_get(root, "redact_params"), "redact_params", false, &cfg->redact_params,
                    &cfg->n_redact) ||
        parse_names(c, json_object_get(root, "keep_params"), "keep_params", true, &cfg->keep_params,
                    &cfg->n_keep) ||
        parse_origins(c, json_object_get(root, "player_origins"), cfg) ||
        parse_retention(c, json_object_get(root, "retention"), &cfg->retention) ||
        (json_object_get(root, "diff_dir") &&
         location(c, json_object_get(root, "diff_dir"), "diff_dir", &cfg->diff_dir)))
        return -1;
    cfg->concurrency = (int)conc;
    cfg->lag_segments = (unsigned)lag;
    cfg->catchup_segments = (unsigned)catchup;
    return parse_targets(c, json_object_get(root, "targets"), cfg);
}

int canary_config_parse(const char *text, size_t len, struct canary_config *out, char *err, size_t errlen)
{
    struct ctx c = {err, errlen};
    memset(out, 0, sizeof *out);
    err[0] = '\0';
    if (len > CANARY_MAX_CONFIG_BYTES)
        return fail(&c, "config", "larger than %zu bytes", CANARY_MAX_CONFIG_BYTES);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    int rc;
    if (!root)
        rc = fail(&c, "config", "not JSON: %s (line %d)", jerr.text, jerr.line);
    else if (!json_is_object(root))
        rc = fail(&c, "config", "must be a JSON object");
    else
        rc = parse_run(&c, root, out);
    json_decref(root);
    if (rc)
        canary_config_free(out);
    return rc;
}

int canary_config_load(const char *path, struct canary_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s", path);
        return EXACTAV_EXIT_NOINPUT;
    }
    char *buf = malloc(CANARY_MAX_CONFIG_BYTES + 1);
    size_t n = buf ? fread(buf, 1, CANARY_MAX_CONFIG_BYTES + 1, f) : 0;
    bool bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errlen, "cannot read %s", path);
        return EXACTAV_EXIT_NOINPUT;
    }
    int rc = canary_config_parse(buf, n, out, err, errlen) ? EXACTAV_EXIT_USAGE : 0;
    free(buf);
    for (size_t i = 0; rc == 0 && i < out->n_targets; i++) {
        struct canary_target *t = &out->targets[i];
        char why[512];
        if (t->alloc && (rc = canary_alloc_read_token(t->alloc->token_file, &t->alloc->token, why, sizeof why)))
            snprintf(err, errlen, "targets[%zu].allocation.token_file: %s", i, why);
    }
    if (rc)
        canary_config_free(out);
    return rc;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

void canary_config_free(struct canary_config *c)
{
    for (size_t i = 0; c->targets && i < c->n_targets; i++) {
        struct canary_target *t = &c->targets[i];
        free(t->path_id);
        free(t->channel);
        free(t->rendition);
        free(t->program_version);
        free(t->candidate);
        free(t->reference);
        free_strv(t->command);
        free_strv(t->headers);
        free(t->cookie);
        canary_alloc_spec_free(t->alloc);
    }
    free(c->targets);
    free_strv(c->redact_params);
    free_strv(c->keep_params);
    free_strv(c->player_origins);
    free(c->diff_dir);
    memset(c, 0, sizeof *c);
}
