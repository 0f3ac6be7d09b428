/* cli_canary.c - `exactav canary`: the scheduled canary and the pre-flight
 * session (--once); options, exit codes and the session writers.  The work
 * is verifier/canary/ (canary_run.h). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <libavutil/log.h>

#include "avlog.h"
#include "canary_config.h"
#include "canary_metrics.h"
#include "canary_run.h"
#include "canary_sched.h"
#include "cli.h"
#include "evidence.h"
#include "evidence_text.h"
#include "store_key.h"
#include "exitcodes.h"
#include "util.h"

static const char USAGE[] =
    "usage: exactav canary --config canary.json --evidence evidence.db [--once] [--duration S]\n"
    "                      [--metrics-listen ADDR:PORT] [--shard K/N] [--compare auto|full]\n"
    "                      [--diff-dir DIR] [--sign-key FILE] [--store-key-file FILE] [--json]\n"
    "\n"
    "Checks every target of the configuration (a live rendition delivered by one path,\n"
    "against the reference provider's copy) at every segment with Exact-AV v1, and\n"
    "stores MATCH / MISMATCH / UNKNOWN evidence with the media sequence number.\n"
    "\n"
    "  --config FILE          the targets and settings (JSON, docs/canary.md); unknown\n"
    "                         keys and values out of range are refused (exit 64)\n"
    "  --evidence FILE.db     the evidence store (created, or migrated to schema v2)\n"
    "  --once                 a pre-flight session: one check and one probe per target,\n"
    "                         a summary, exit 0 all MATCH, 1 any MISMATCH, else 2\n"
    "  --duration S           stop after S seconds (as on SIGTERM)\n"
    "  --metrics-listen A:P   Prometheus text at /metrics and /healthz (port 0: any)\n"
    "  --shard K/N            only the targets whose key (path_id/channel/rendition, or\n"
    "                         alloc:... for an allocation target) hashes\n"
    "                         to K mod N (SHA-256), for N workers sharing one config\n"
    "  --compare auto|full    auto (default): a candidate whose decoder input is the\n"
    "                         reference's is MATCH without decoding it, and each reference\n"
    "                         segment is decoded at most once; full: decode every check\n"
    "  --diff-dir DIR         for a MISMATCH, pictures of the first difference (as\n"
    "                         `exactav verify --diff-dir`) in DIR/PATH_CHANNEL_RENDITION,\n"
    "                         named in the stored report's \"diff_images\"; overrides\n"
    "                         the configuration's \"diff_dir\"\n"
    "  --sign-key FILE        sign every stored report with this Ed25519 private key\n"
    "                         (PEM, mode 600; as `exactav verify --sign-key`)\n"
    "  --store-key-file FILE  the key of evidence.db's MACs (default $EXACTAV_STORE_KEY_FILE;\n"
    "                         docs/security.md#tamper-evidence): keys an unkeyed store, is\n"
    "                         needed to write a keyed one (its checks and prunes)\n"
    "  --json                 log lines and the session summary as JSON\n"
    "  -h, --help             this help\n"
    "\n"
    "Signals: SIGTERM/SIGINT stop scheduling and drain (exit 0); SIGHUP reloads the\n"
    "configuration (an invalid one is refused and the old one stays).\n"
    "Exit: 0 (or the session's 0/1/2 with --once), 64 usage or configuration, 65 the\n"
    "runtime does not match the profile, 66 a file cannot be opened, 70 internal.\n";

#define MAX_DURATION_S 31536000 /* a year */

static int parse(int argc, char **argv, struct canary_options *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"evidence", required_argument, NULL, 'e'},
        {"once", no_argument, NULL, 'o'}, {"duration", required_argument, NULL, 'd'},
        {"metrics-listen", required_argument, NULL, 'm'}, {"shard", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
        {"compare", required_argument, NULL, 'C'}, {"diff-dir", required_argument, NULL, 'D'},
        {"sign-key", required_argument, NULL, 'k'}, {"store-key-file", required_argument, NULL, 'K'},
        {NULL, 0, NULL, 0},
    };
    int c;
    int64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o->config_path = optarg; break;
        case 'e': o->evidence_path = optarg; break;
        case 'o': o->once = true; break;
        case 'j': o->json = true; break;
        case 'm': {
            struct sockaddr_storage sa;
            size_t len;
            if (canary_metrics_parse_listen(optarg, &sa, &len))
                return cli_fail(EXACTAV_EXIT_USAGE, "canary",
                                "--metrics-listen wants ADDR:PORT or [IPV6]:PORT, got '%s'", optarg);
            o->metrics_listen = optarg;
            break;
        }
        case 'h': fputs(USAGE, stdout); return -1;
        case 'C':
            if (strcmp(optarg, "auto") && strcmp(optarg, "full"))
                return cli_fail(EXACTAV_EXIT_USAGE, "canary", "--compare wants auto or full, got '%s'", optarg);
            o->compare_full = optarg[0] == 'f';
            break;
        case 'k': o->sign_key = optarg; break;
        case 'K': o->store_key_file = optarg; break;
        case 'D':
            if (!optarg[0])
                return cli_fail(EXACTAV_EXIT_USAGE, "canary", "--diff-dir wants a directory");
            o->diff_dir = optarg;
            break;
        case 'd':
            if (util_parse_i64(optarg, &v) || v < 1 || v > MAX_DURATION_S)
                return cli_fail(EXACTAV_EXIT_USAGE, "canary", "--duration wants whole seconds 1..%d, got '%s'",
                                MAX_DURATION_S, optarg);
            o->duration_ms = v * 1000;
            break;
        case 's':
            if (canary_shard_parse(optarg, &o->shard_k, &o->shard_n))
                return cli_fail(EXACTAV_EXIT_USAGE, "canary", "--shard wants K/N with 0 <= K < N <= 1024, got '%s'",
                                optarg);
            o->have_shard = true;
            break;
        default: fputs(USAGE, stderr); return EXACTAV_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_fail(EXACTAV_EXIT_USAGE, "canary", "unexpected argument '%s'", argv[optind]);
    if (!o->config_path || !o->evidence_path)
        return cli_fail(EXACTAV_EXIT_USAGE, "canary", "--config and --evidence are required (see --help)");
    return 0;
}

/* 0 every target MATCH, 1 any MISMATCH, else 2 (also with no target). */
static int session_exit(const struct canary_session *s)
{
    bool all_match = s->n > 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!strcmp(s->outcomes[i].verdict, "MISMATCH"))
            return EXACTAV_EXIT_MISMATCH;
        all_match = all_match && !strcmp(s->outcomes[i].verdict, "MATCH");
    }
    return all_match ? EXACTAV_EXIT_MATCH : EXACTAV_EXIT_UNKNOWN;
}

static const char *exit_verdict(int code)
{
    return code == EXACTAV_EXIT_MATCH ? "MATCH" : code == EXACTAV_EXIT_MISMATCH ? "MISMATCH" : "UNKNOWN";
}

/* The newest record per target, and what the run stored in all.
 * verdict: the session's (as an exit code); code: the process's. */
static void write_table(FILE *f, const struct canary_session *s, int verdict, int code)
{
    fprintf(f, "%-16s %-12s %-10s %-9s %-9s %-24s %-36s %s\n", "PATH_ID", "CHANNEL", "RENDITION", "MEDIA_SEQ",
            "VERDICT", "REASON", "EVIDENCE_ID", "STORED_M/MM/U");
    uint64_t all[3] = {0};
    for (size_t i = 0; i < s->n; i++) {
        const struct canary_outcome *c = &s->outcomes[i];
        char seq[24] = "-", stored[64];
        if (c->have_seq)
            snprintf(seq, sizeof seq, "%llu", (unsigned long long)c->seq);
        snprintf(stored, sizeof stored, "%llu/%llu/%llu", (unsigned long long)c->stored[1],
                 (unsigned long long)c->stored[2], (unsigned long long)c->stored[0]);
        for (int v = 0; v < 3; v++)
            all[v] += c->stored[v];
        fprintf(f, "%-16s %-12s %-10s %-9s %-9s %-24s %-36s %s\n", c->path_id, c->channel, c->rendition, seq,
                c->verdict, c->reason, c->evidence_id[0] ? c->evidence_id : "-", stored);
    }
    /* the cause of each target not checked, where the evidence has one
     * (a missing reference file is named here, not only in evidence show) */
    for (size_t i = 0; i < s->n; i++)
        if (s->outcomes[i].detail[0]) {
            fprintf(f, "why:     %s: ", s->outcomes[i].key);
            evidence_text_fputs(f, s->outcomes[i].detail);
            fputc('\n', f);
        }
    /* a MISMATCH earlier in a run is news whatever the newest records say */
    if (all[2] && verdict != EXACTAV_EXIT_MISMATCH)
        fprintf(f, "MISMATCH: %llu MISMATCH row(s) were stored during this run, though no newest record is one: "
                   "exactav evidence list --verdict MISMATCH\n", (unsigned long long)all[2]);
    fprintf(f, "session: %zu target(s), newest records %s; stored %llu MATCH, %llu MISMATCH, %llu UNKNOWN (exit %d)\n",
            s->n, exit_verdict(verdict), (unsigned long long)all[1], (unsigned long long)all[2],
            (unsigned long long)all[0], code);
}

static int write_json(FILE *f, const struct canary_session *s, int verdict, int code, bool once)
{
    json_t *targets = json_array();
    for (size_t i = 0; targets && i < s->n; i++) {
        const struct canary_outcome *c = &s->outcomes[i];
        json_array_append_new(
            targets, json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:o, s:o, s:{s:I, s:I, s:I}}", "path_id",
                               c->path_id, "channel", c->channel, "rendition", c->rendition, "program_version",
                               c->program_version, "media_sequence",
                               c->have_seq ? json_integer((json_int_t)c->seq) : json_null(), "verdict", c->verdict,
                               "reason", c->reason, "detail", c->detail[0] ? json_string(c->detail) : json_null(),
                               "evidence_id",
                               c->evidence_id[0] ? json_string(c->evidence_id) : json_null(), "observed_at_ms",
                               c->observed_at_ms ? json_integer(c->observed_at_ms) : json_null(), "stored",
                               "MATCH", (json_int_t)c->stored[1], "MISMATCH", (json_int_t)c->stored[2], "UNKNOWN",
                               (json_int_t)c->stored[0]));
    }
    json_t *doc = json_pack("{s:s, s:b, s:I, s:I, s:s, s:i, s:o}", "kind", "exactav-canary-session", "once", once,
                            "started_at_ms", (json_int_t)s->started_at_ms, "ended_at_ms", (json_int_t)s->ended_at_ms,
                            "verdict", exit_verdict(verdict), "exit", code, "targets", targets);
    int rc = doc ? json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
    fputc('\n', f);
    json_decref(doc);
    return rc;
}

/* The --json error object of a failure exit that printed nothing on
 * stdout.  exactav canary is the one command main() does not run under
 * evidence_text_run (which holds stdout in a file until the command
 * returns): it may leave with _exit while checks still run on other
 * threads, and its summary must still reach stdout; so it prints its own
 * error object, exactly where every other command gets one. */
static int fail_json(bool json, int rc)
{
    if (json && rc != 0)
        evidence_text_json_error(stdout, "exactav", "canary", rc, cli_first_error());
    return rc;
}

int exactav_cmd_canary(int argc, char **argv)
{
    struct canary_options o = {.log = stderr};
    bool json = evidence_text_wants_json(argc, argv);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : fail_json(json, rc);
    avlog_install(AV_LOG_QUIET);
    struct canary_config cfg;
    char err[1024] = "";
    if ((rc = canary_config_load(o.config_path, &cfg, err, sizeof err)))
        return fail_json(json, cli_fail(rc, "canary", "%s: %s", o.config_path, err));
    struct store_key key;
    bool have_key = false;
    if ((rc = evidence_key_load("exactav canary", o.store_key_file, &key, &have_key))) {
        canary_config_free(&cfg);
        return fail_json(json, rc);
    }
    o.store_key = have_key ? &key : NULL;
    struct canary_session s;
    rc = canary_run(&o, &cfg, &s, err, sizeof err);
    store_key_wipe(&key); /* each connection holds its own copy */
    if (rc) {
        canary_session_free(&s);
        return fail_json(json, cli_fail(rc, "canary", "%s", err[0] ? err : "failed"));
    }
    int verdict = session_exit(&s), code = o.once ? verdict : EXACTAV_EXIT_MATCH;
    if (o.json)
        rc = write_json(stdout, &s, verdict, code, o.once);
    else
        write_table(stdout, &s, verdict, code);
    if (rc != 0 || fflush(stdout) != 0)
        code = cli_fail(EXACTAV_EXIT_INTERNAL, "canary", "cannot write the summary");
    bool abandoned = s.abandoned;
    canary_session_free(&s);
    if (abandoned) {
        /* checks still run on other threads: leave without running any
         * clean-up under them (their results are refused by the store) */
        fflush(stdout);
        fflush(stderr);
        _exit(code);
    }
    return code;
}
