/* cli_report.c - `exactav report`: the evidence store as one static HTML
 * page (htmlreport.h). */
#define _GNU_SOURCE   /* strptime, timegm */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "evidence.h"
#include "exitcodes.h"
#include "htmlreport.h"
#include "util.h"

static const char USAGE[] =
    "usage: exactav report --evidence evidence.db --out report.html [--since WHEN] [--limit N]\n"
    "\n"
    "Writes the evidence as one static HTML file (no network, no script): a timeline\n"
    "per path, channel, rendition and program version (one box per check: MATCH,\n"
    "MISMATCH, UNKNOWN by reason), the checks that were not MATCH with links to the\n"
    "pictures their report names (verify/canary --diff-dir), and the probes.\n"
    "\n"
    "  --evidence FILE.db  the evidence store (opened read-only)\n"
    "  --out FILE.html     the page; written to a temporary file, then renamed over FILE\n"
    "  --since WHEN        only what was observed since WHEN: a duration back from now\n"
    "                      (N, Ns, Nm, Nh, Nd) or a UTC time YYYY-MM-DDTHH:MM:SSZ\n"
    "                      (default: everything)\n"
    "  --limit N           at most N checks and N probes (default 20000, at most 1000000)\n"
    "  -h, --help          this help\n"
    "\n"
    "Exit: 0 written, 64 usage, 66 the store cannot be opened or FILE cannot be written,\n"
    "70 internal error.  See docs/cli.md.\n";

#define DEFAULT_LIMIT 20000
#define MAX_LIMIT 1000000

struct report_opts {
    const char *evidence, *out;
    int64_t since_ms, limit;
};

/* A duration back from now_ms; 0 when parsed. */
static int parse_duration(const char *s, int64_t now_ms, int64_t *since_ms)
{
    char *end;
    long long n = strtoll(s, &end, 10);
    static const struct { char unit; int64_t s; } units[] = {{'\0', 1}, {'s', 1}, {'m', 60}, {'h', 3600},
                                                             {'d', 86400}};
    if (end == s || n < 0 || n > 100LL * 365 * 86400 || (*end && end[1]))
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (*end == units[i].unit) {
            *since_ms = now_ms - (int64_t)n * units[i].s * 1000;
            return 0;
        }
    return -1;
}

/* YYYY-MM-DDTHH:MM:SSZ; 0 when parsed. */
static int parse_utc(const char *s, int64_t *since_ms)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end)
        return -1;
    *since_ms = (int64_t)timegm(&tm) * 1000;
    return 0;
}

static int parse(int argc, char **argv, struct report_opts *o)
{
    static const struct option longopts[] = {
        {"evidence", required_argument, NULL, 'e'}, {"out", required_argument, NULL, 'o'},
        {"since", required_argument, NULL, 's'},    {"limit", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e': o->evidence = optarg; break;
        case 'o': o->out = optarg; break;
        case 's':
            if (parse_utc(optarg, &o->since_ms) && parse_duration(optarg, util_now_ms(), &o->since_ms))
                return cli_fail(EXACTAV_EXIT_USAGE, "report",
                                "--since wants a duration (N, Ns, Nm, Nh, Nd) or YYYY-MM-DDTHH:MM:SSZ, got '%s'",
                                optarg);
            break;
        case 'l':
            if (util_parse_i64(optarg, &o->limit) || o->limit < 1 || o->limit > MAX_LIMIT)
                return cli_fail(EXACTAV_EXIT_USAGE, "report", "--limit wants 1..%d, got '%s'", MAX_LIMIT, optarg);
            break;
        case 'h': fputs(USAGE, stdout); return -1;
        default: fputs(USAGE, stderr); return EXACTAV_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_fail(EXACTAV_EXIT_USAGE, "report", "unexpected argument '%s'", argv[optind]);
    if (!o->evidence || !o->out)
        return cli_fail(EXACTAV_EXIT_USAGE, "report", "--evidence and --out are required (see --help)");
    return 0;
}

/* The page into a temporary file next to out, renamed over it when complete. */
static int write_page(const struct report_opts *o, const json_t *checks, const json_t *probes)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", o->out) >= (int)sizeof tmp)
        return cli_fail(EXACTAV_EXIT_USAGE, "report", "--out: path too long");
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return cli_fail(EXACTAV_EXIT_NOINPUT, "report", "--out %s: cannot create a file there", o->out);
    }
    struct htmlreport_info info = {.evidence_name = o->evidence, .generated_ms = util_now_ms(),
                                   .since_ms = o->since_ms};
    int rc = htmlreport_write(f, &info, checks, probes);
    if (fclose(f) || rc || rename(tmp, o->out)) {
        unlink(tmp);
        return cli_fail(EXACTAV_EXIT_NOINPUT, "report", "--out %s: cannot write", o->out);
    }
    return 0;
}

int exactav_cmd_report(int argc, char **argv)
{
    struct report_opts o = {.limit = DEFAULT_LIMIT};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct evidence_db *db = NULL;
    char err[1024];
    enum evidence_rc erc = evidence_open(o.evidence, EVIDENCE_OPEN_RO, &db, err, sizeof err);
    if (erc != EVIDENCE_OK)
        return cli_fail(erc == EVIDENCE_E_INTERNAL ? EXACTAV_EXIT_INTERNAL : EXACTAV_EXIT_NOINPUT, "report",
                        "--evidence %s: %s", o.evidence, err);
    json_t *checks = NULL, *probes = NULL;
    erc = evidence_timeline(db, o.since_ms, o.limit, &checks, &probes, err, sizeof err);
    evidence_close(db);
    if (erc != EVIDENCE_OK)
        return cli_fail(EXACTAV_EXIT_INTERNAL, "report", "--evidence %s: %s", o.evidence, err);
    rc = write_page(&o, checks, probes);
    if (!rc)
        printf("report: %s (%zu checks, %zu probes)\n", o.out, json_array_size(checks), json_array_size(probes));
    json_decref(checks);
    json_decref(probes);
    return rc;
}
