/* canary_run.h - the canary worker: every target of the configuration (or
 * of this worker's shard) checked in cycles, each target on its own thread
 * (so that one bad target never delays another), probes on their own
 * threads, decodes bounded by `concurrency`, the reference shared.
 *
 * Signals (blocked in every thread, taken by the calling thread):
 *   SIGTERM, SIGINT  stop scheduling; checks in flight get timeout_s to
 *                    finish, then are recorded UNKNOWN `interrupted`;
 *   SIGHUP           re-read the configuration; an invalid one is refused
 *                    (logged) and the old one stays.
 * --once is a pre-flight session: one cycle (one record) and one probe per
 * target, then the run ends.
 */
#ifndef CANARY_RUN_H
#define CANARY_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "canary_config.h"

struct store_key;

struct canary_options {
    const char *config_path;
    const char *evidence_path;
    const char *metrics_listen;  /* NULL: no endpoint */
    bool once, json;
    int64_t duration_ms;         /* 0: until a signal */
    bool have_shard;
    unsigned shard_k, shard_n;
    FILE *log;                   /* the structured log (stderr) */
    bool compare_full;           /* --compare full: never the decoder-input fast path */
    const char *diff_dir;        /* --diff-dir: pictures of a MISMATCH (diffpic.h), or NULL */
    const char *store_key_file;  /* --store-key-file, or NULL ($EXACTAV_STORE_KEY_FILE) */
    const char *sign_key;        /* --sign-key: Ed25519 key signing every stored report, or NULL */
    const struct store_key *store_key; /* --store-key-file, loaded: evidence.db's MACs, or NULL */
};

/* One target's answer in a session (the newest record of the run). */
struct canary_outcome {
    char key[6 * CANARY_MAX_NAME + 12];
    char path_id[CANARY_MAX_NAME + 1], channel[CANARY_MAX_NAME + 1], rendition[CANARY_MAX_NAME + 1];
    char program_version[CANARY_MAX_NAME + 1];
    bool recorded;               /* false: no record (stopped before one) */
    bool have_seq;
    uint64_t seq;
    char verdict[16], reason[64], evidence_id[37];
    char detail[320];            /* why an UNKNOWN could not be checked (its delivery_failure), "" else */
    int64_t observed_at_ms;
    uint64_t stored[3];          /* rows this run stored for the target: UNKNOWN, MATCH, MISMATCH */
};

struct canary_session {
    struct canary_outcome *outcomes;   /* the targets of this shard, in config order */
    size_t n;
    int64_t started_at_ms, ended_at_ms;
    bool abandoned;              /* threads were still running at the end: _exit, do not clean up */
};

/* Runs until a signal, --duration, or the end of a --once session.  cfg is
 * the configuration already loaded from o->config_path (taken: freed by the
 * run).  Returns 0, or an exit code (65 profile/runtime or --sign-key, 66
 * evidence store or --sign-key file, 64 --metrics-listen, 70) with err set. */
int canary_run(const struct canary_options *o, struct canary_config *cfg, struct canary_session *out, char *err,
               size_t errlen);
void canary_session_free(struct canary_session *s);

#endif
