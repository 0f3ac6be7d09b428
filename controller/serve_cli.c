/* serve_cli.c - `stepctl serve`: options, signals, then serve.c.
 *
 * Exit codes (docs/cli.md): 0 stopped by SIGTERM or SIGINT after draining;
 * 64 usage; 66 control.db or the listen address cannot be opened; 70
 * internal.
 */
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "cliutil.h"
#include "evidence_text.h"
#include "serve.h"
#include "stepctl.h"

static const char serve_help[] =
    "usage: stepctl serve --db control.db --listen ADDR:PORT [--threads N] [--batch-max N]\n"
    "                     [--port-file F] [--drain-timeout S]\n"
    "\n"
    "The admission service (HTTP/1.1):\n"
    "  POST /v1/allocations  {\"allocation_id\", \"cohort\": {channel, region, isp, client,\n"
    "                        build, rendition}}: 201 allocated under the cohort's active grant,\n"
    "                        200 the same request again (the stored body), 422 the id reused\n"
    "                        for another request, 409 the id still in flight, 403 refused\n"
    "                        ({\"error\": no_active_grant | grant_expired | grant_revoked |\n"
    "                        quota_exhausted | policy_changed | no_eligible_path}), 429 with\n"
    "                        Retry-After for the rate, 400 a malformed body (nothing written)\n"
    "  GET /v1/grants/ID     the grant: used, remaining, rate state\n"
    "  GET /healthz          200 ok, 503 while draining\n"
    "  GET /metrics          Prometheus text\n"
    "Every allocation is committed (synchronous=FULL) before its answer is sent; concurrent\n"
    "requests share one transaction (group commit).  SIGTERM or SIGINT: stop listening, answer\n"
    "what is in flight, exit 0.\n"
    "\n"
    "  --db F             control.db (created when absent)\n"
    "  --listen ADDR:PORT numeric IPv4 address or [IPv6] address, and port (0: any free port)\n"
    "  --threads N        HTTP threads (default 2)\n"
    "  --batch-max N      allocations per transaction at most (default 256)\n"
    "  --port-file F      write the port listened on to F once listening\n"
    "  --drain-timeout S  longest wait for requests in flight at SIGTERM (default 30)\n"
    "exit: 0 stopped after draining, 64 usage, 66 control.db or the address cannot be opened,\n"
    "      70 internal\n";

/* "1.2.3.4:80" or "[::1]:80" into c->addr.  0 or 64. */
static int parse_listen(const char *s, struct srv_config *c)
{
    char host[96], port[16];
    const char *colon = strrchr(s, ':');
    size_t hl = colon ? (size_t)(colon - s) : 0;
    if (hl && s[0] == '[' && s[hl - 1] == ']') {
        s++;
        hl -= 2;
    }
    if (!colon || hl == 0 || hl >= sizeof host || strlen(colon + 1) >= sizeof port ||
        !colon[1]) {
        fprintf(stderr, "stepctl serve: --listen must be ADDR:PORT (e.g. 127.0.0.1:8080)\n");
        return CLI_USAGE;
    }
    memcpy(host, s, hl);
    host[hl] = '\0';
    strcpy(port, colon + 1);
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
                             .ai_socktype = SOCK_STREAM},
                    *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res ||
        res->ai_addrlen > sizeof c->addr) {
        if (res)
            freeaddrinfo(res);
        char shown[256];
        fprintf(stderr, "stepctl serve: --listen %s: not a numeric address and port\n",
                evidence_text_escape(s, false, shown, sizeof shown));
        return CLI_USAGE;
    }
    memcpy(&c->addr, res->ai_addr, res->ai_addrlen);
    c->addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return CLI_OK;
}

int stepctl_cmd_serve(int argc, char **argv)
{
    const char *db = NULL, *listen = NULL, *threads = NULL, *batch = NULL, *port_file = NULL,
               *drain = NULL;
    bool help;
    size_t npos;
    struct cli_opt opts[] = {{"--db", &db, NULL},
                             {"--listen", &listen, NULL},
                             {"--threads", &threads, NULL},
                             {"--batch-max", &batch, NULL},
                             {"--port-file", &port_file, NULL},
                             {"--drain-timeout", &drain, NULL}};
    int rc = cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], &help, NULL, 0, &npos);
    if (rc != CLI_OK || help || !db || !listen) {
        bool ok = rc == CLI_OK && help;
        fputs(serve_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    struct srv_config c;
    memset(&c, 0, sizeof c);
    int64_t n_threads = 2, n_batch = 256, drain_s = 30;
    if ((rc = cli_int("serve", "--threads", threads, 1, 64, &n_threads)) != CLI_OK ||
        (rc = cli_int("serve", "--batch-max", batch, 1, 100000, &n_batch)) != CLI_OK ||
        (rc = cli_int("serve", "--drain-timeout", drain, 0, 3600, &drain_s)) != CLI_OK ||
        (rc = parse_listen(listen, &c)) != CLI_OK)
        return rc;
    c.db_path = db;
    snprintf(c.listen_text, sizeof c.listen_text, "%s", listen);
    c.threads = (unsigned)n_threads;
    c.batch_max = (size_t)n_batch;
    c.port_file = port_file;
    c.drain_s = (unsigned)drain_s;
    /* Every connection is used by one thread only (the writer's, and one per
     * read request): no per-connection mutex, and no global lock around
     * SQLite's allocator for memory statistics nobody reads.  Process-wide,
     * before SQLite's first use. */
    if (sqlite3_config(SQLITE_CONFIG_MULTITHREAD) != SQLITE_OK ||
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK)
        fprintf(stderr, "stepctl serve: SQLite keeps its default locking\n");
    /* Blocked in every thread (they inherit the mask); only sigwait sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    return srv_run(&c, &stop);
}
