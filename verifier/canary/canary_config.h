/* canary_config.h - the canary's configuration file (docs/canary.md).
 *
 * One JSON object: run-wide settings and the targets, each a rendition of a
 * channel delivered by one path, with the reference provider's independent
 * copy of the same rendition.  Parsing is strict: an unknown key, a value of
 * the wrong type or out of range, or a duplicate target is refused with the
 * field named (e.g. "targets[2].lag_segment: unknown key").  Everything is
 * copied out of the JSON: the struct owns its strings.
 */
#ifndef CANARY_CONFIG_H
#define CANARY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CANARY_MAX_CONFIG_BYTES ((size_t)4 * 1024 * 1024)
#define CANARY_MAX_TARGETS 1024
#define CANARY_MAX_COMMAND_ARGS 64
#define CANARY_MAX_REDACT_PARAMS 32
#define CANARY_MAX_CREDENTIALS 32      /* headers, cookies of one target */
#define CANARY_MAX_ORIGINS 8
#define CANARY_MAX_NAME 127          /* path_id, channel, rendition, program_version */
#define CANARY_MAX_LOCATION 8192     /* candidate, reference, command arguments */

/* "allocation" (issue 17, docs/canary.md "Allocation targets"): the target
 * takes verification sessions from the admission service and checks what
 * each one delivers; canary_alloc.h does it. */
#define CANARY_ALLOC_DEFAULT_EVERY_MS (300 * 1000)
#define CANARY_ALLOC_PATH_ID "allocation" /* path_id until a pathway is chosen */
struct canary_alloc_spec {
    char *service;               /* http(s) base URL; POST <service>/v1/allocations */
    char *region, *isp, *client, *build; /* the cohort (its channel, rendition: the target's) */
    int64_t every_ms;            /* a new allocation this often */
    char *token_file;            /* the bearer token's file */
    char *token;                 /* read by canary_config_load: a secret, never logged or stored */
};

struct canary_target {
    char *path_id, *channel, *rendition, *program_version;
    char *candidate;             /* media playlist URL as the CDN delivers it, or NULL */
    char **command;              /* candidate_command argv, NULL-terminated, or NULL */
    char *reference;             /* media playlist URL, playlist file or directory */
    int64_t time_offset;         /* declared: candidate_pts = reference_pts + offset (mod 2^33) */
    int64_t period_ms;           /* this target's own period, or the run's */
    int64_t probe_period_ms;     /* 0: no probes */
    /* Request headers ("Name: value") and the Cookie value ("a=b; c=d", or
     * NULL) for the candidate's host (checks and probes; never the
     * reference): credentials, never stored, logged or printed. */
    char **headers;              /* n_headers of them, or NULL */
    size_t n_headers;
    char *cookie;
    struct canary_alloc_spec *alloc; /* an allocation target, or NULL */
    /* The allocation a cycle follows (set on the cycle's own copy of an
     * allocation target, never in the configuration): context.allocation_id
     * and context.pathway of its reports.  NULL: none. */
    const char *allocation_id, *pathway;
    /* "path_id/channel/rendition", or for an allocation target
     * "alloc:channel/rendition/region/isp/client/build": identity, shard key */
    char key[6 * CANARY_MAX_NAME + 12];
};

/* "retention": the canary runs `exactav evidence prune` on its own store
 * (docs/canary.md#retention): at the start and every every_ms. */
struct canary_retention {
    bool on;                     /* the key is present */
    int64_t keep_ms;             /* "keep": required duration ("7d") */
    int64_t keep_mismatch_ms;    /* "keep_mismatch": default 30d */
    int64_t every_ms;            /* "every_s": default 3600 s */
};

struct canary_config {
    int concurrency;             /* checks (decodes) at once */
    int64_t period_ms;           /* default cycle period of a target */
    int64_t timeout_ms;          /* per-target deadline of one cycle */
    int64_t probe_period_ms;     /* default probe period, 0: none */
    int64_t max_backoff_ms;      /* longest wait after failed cycles */
    int64_t command_timeout_ms;  /* candidate_command's time limit */
    unsigned lag_segments;       /* stay this many segments behind the newest common one */
    unsigned catchup_segments;   /* most segments checked in one cycle when behind */
    int64_t max_behind_ms;       /* candidate behind the reference's live edge by more: UNKNOWN
                                  * candidate_behind_live_edge; 0: one target duration (the reference's) */
    /* What stays visible of a URL (redact.h): every query value is
     * redacted unless keep_params names it (never a credential), and
     * redact_params wins over keep_params.  NULL-terminated, or NULL. */
    char **redact_params;        /* --redact-param of exactav verify */
    size_t n_redact;
    char **keep_params;          /* --keep-param of exactav verify */
    size_t n_keep;
    /* The origins of the pages that play the targets ("https://player.example"):
     * probes check what a browser there would be allowed (CORS).  NULL: none. */
    char **player_origins;
    char *diff_dir;              /* "diff_dir": pictures of a MISMATCH (as --diff-dir, which wins), or NULL */
    size_t n_player_origins;
    struct canary_target *targets;
    size_t n_targets;
    struct canary_retention retention;
};

/* Parses len bytes of JSON.  0, or -1 with the field named in err. */
int canary_config_parse(const char *text, size_t len, struct canary_config *out, char *err, size_t errlen);

/* Reads and parses a file, then the token_file of every allocation target
 * (canary_alloc_read_token).  0; 66 when it (or a token file) cannot be
 * read; 64 when it is not a valid configuration (err names the field); 65
 * when a token file's content or mode is refused. */
int canary_config_load(const char *path, struct canary_config *out, char *err, size_t errlen);

void canary_config_free(struct canary_config *c);

#endif
