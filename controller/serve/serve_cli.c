/* serve_cli.c - `stepctl serve`: options, signals, then serve.c.
 *
 * Exit codes (docs/cli.md): 0 stopped by SIGTERM or SIGINT after draining;
 * 64 usage; 65 paths.json or the --client-auth file refused (the member
 * named) or a key in it not usable; 66 control.db, the listen address, paths.json or a key file
 * cannot be opened; 70 internal.
 */
#include <libgen.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <sqlite3.h>

#include "cauth.h"
#include "cliutil.h"
#include "dlv_paths.h"
#include "evidence.h"
#include "store_key.h"
#include "evidence_text.h"
#include "serve.h"
#include "smac_cli.h"
#include "serve_auth.h"
#include "stepctl.h"

static const char serve_help[] =
    "usage: stepctl serve --db control.db --listen ADDR:PORT [--threads N] [--batch-max N]\n"
    "                     [--port-file F] [--drain-timeout S] [--paths paths.json]\n"
    "                     [--evidence evidence.db] [--cors-origin ORIGIN] [--public-url URL]\n"
    "                     [--access-log FILE] [--request-timeout S]\n"
    "                     [--max-connections-per-ip N] [--client-auth FILE]\n"
    "                     [--admin-token-file F] [--admin-listen ADDR:PORT [--admin-port-file F]]\n"
    "                     [--allow-anonymous] [--verification-token-file F]\n"
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
    "With --paths (the delivery of each path, docs/delivery.md), a 201 carries playback_url\n"
    "and the service answers, per allocation, under its session id SID (session.id of the\n"
    "201: a capability; the client-chosen allocation id opens nothing):\n"
    "  GET /v1/sessions/SID/master.m3u8   one variant set per pathway, with\n"
    "                        #EXT-X-CONTENT-STEERING (until the allocation's expires_at_ms)\n"
    "  GET /v1/sessions/SID/steering      {\"VERSION\":1,\"TTL\":..,\"PATHWAY-PRIORITY\":[..]}:\n"
    "                        the allocated path, then the fallbacks eligible in its decision\n"
    "                        that have no MISMATCH since (read from --evidence)\n"
    "  GET /v1/sessions/SID/PATH/RENDITION.m3u8  the path's live media playlist with every\n"
    "                        segment URL signed for the allocation (auth cloudfront-url)\n"
    "CORS: only for the pages of the --cors-origin origins (none by default); OPTIONS answers\n"
    "a preflight (Authorization and Content-Type allowed) for those origins only.\n"
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
    "  --paths F          the delivery configuration (unknown keys refused)\n"
    "  --evidence F       evidence.db, read-only (needed with --paths; refused at start when\n"
    "                     it is not a readable evidence store): a fallback with a MISMATCH\n"
    "                     observed after the allocation's decision leaves its list for good\n"
    "                     (recorded in control.db); while it cannot be read, no fallback\n"
    "                     is listed\n"
    "  --cors-origin O    a page of origin O (scheme://host[:port]) may read the answers;\n"
    "                     repeatable (at most 16); '*' alone: any page, without credentials;\n"
    "                     default: no CORS header (a browser shows no answer to another\n"
    "                     origin's page)\n"
    "  --public-url URL   the service as players reach it, the start of playback_url\n"
    "                     (default http://ADDR:PORT as listened on); its path, if any, also\n"
    "                     starts the multivariant playlist's SERVER-URI and signed variants\n"
    "  --access-log F     one JSON line per answer (time, method, route, status, bytes,\n"
    "                     duration_s, client; never the URL, query, headers or body) appended\n"
    "                     to F (\"-\": stderr); SIGHUP reopens F (after logrotate)\n"
    "  --request-timeout S  whole-request deadline (default 10): from a connection's\n"
    "                     accept, or the end of its previous request, to the last byte\n"
    "                     of the request's body; a client still sending then is cut off\n"
    "  --max-connections-per-ip N  connections of one client address at once (default 64;\n"
    "                     0: no limit, e.g. behind a reverse proxy); more are closed at once\n"
    "  --client-auth F    JSON {alg HS256|ES256, key_file, audience, max_skew_s, per_subject_cap}:\n"
    "                     every POST /v1/allocations needs Authorization: Bearer <JWT> (sub,\n"
    "                     aud, exp, nbf, cohorts); 401 unauthorized, 403 cohort_not_allowed,\n"
    "                     422 allocation_id_taken (another subject's id), 429\n"
    "                     subject_quota_exceeded (docs/serve.md#client-auth)\n"
    "  --admin-token-file F  the operators' bearer token (one line, at least 16 bytes, a file\n"
    "                     readable by its owner only): GET /v1/grants/ID and /metrics need\n"
    "                     Authorization: Bearer TOKEN, else 401 (WWW-Authenticate: Bearer);\n"
    "                     without it they answer 401 to everyone; /healthz stays open\n"
    "  --admin-listen ADDR:PORT  also serve the operator endpoints and /healthz (only\n"
    "                     those: the rest is 404 there) on a second address, e.g. a private\n"
    "                     network; the token is needed there too\n"
    "  --admin-port-file F  write the --admin-listen port to F (before --port-file)\n"
    "  --verification-token-file F  the canary's bearer token (one line, at least 16 bytes,\n"
    "                     owner-only, like --admin-token-file): a POST /v1/allocations with\n"
    "                     it and \"verification\": true is a verification session, counted in\n"
    "                     the grant's verification quota (stepctl grant\n"
    "                     --verification-allocations), never a viewer; \"verification\": true\n"
    "                     without it 401, the token on a viewer's request 403\n"
    "                     verification_only (docs/serve.md#verification-sessions)\n"
    "  --allow-anonymous  listen on a non-loopback address without --client-auth (refused\n"
    "                     otherwise: 64): anyone who reaches it allocates\n"
    "  --store-key-file F  the key of control.db's MACs (default $STEPCTL_STORE_KEY_FILE;\n"
    "                     docs/security.md#tamper-evidence): keys an unkeyed store; a keyed\n"
    "                     store is served only with it and with every MAC holding (else 66)\n"
    "  --evidence-key-file F  the key of evidence.db's MACs (exactav --store-key-file): at\n"
    "                     start --evidence must pass `exactav evidence verify-store\n"
    "                     --store-key-file F`'s keyed check (another key, a deleted or\n"
    "                     changed row: 66; the key file's mode or length: 65)\n"
    "exit: 0 stopped after draining, 64 usage (also --paths without --evidence, a non-loopback\n"
    "      --listen without --client-auth or --allow-anonymous), 65 paths.json, the --client-auth\n"
    "      file, the admin or verification token file or the store key file refused (mode, length) or a key not\n"
    "      usable, 66 control.db (also keyed without its key, with another key, or tampered),\n"
    "      the address, paths.json, a key file,\n"
    "      the evidence store or the access log cannot be opened, 70 internal\n";

/* "1.2.3.4:80" or "[::1]:80" (the value of option opt) into *addr.  0 or 64. */
static int parse_listen(const char *opt, const char *s, struct sockaddr_storage *addr,
                        socklen_t *addr_len)
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
        fprintf(stderr, "stepctl serve: %s must be ADDR:PORT (e.g. 127.0.0.1:8080)\n", opt);
        return CLI_USAGE;
    }
    memcpy(host, s, hl);
    host[hl] = '\0';
    strcpy(port, colon + 1);
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
                             .ai_socktype = SOCK_STREAM},
                    *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res ||
        res->ai_addrlen > sizeof *addr) {
        if (res)
            freeaddrinfo(res);
        char shown[256];
        fprintf(stderr, "stepctl serve: %s %s: not a numeric address and port\n", opt,
                evidence_text_escape(s, false, shown, sizeof shown));
        return CLI_USAGE;
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return CLI_OK;
}

/* An http(s) origin / URL of printable ASCII: it goes into a header and
 * into every playback_url.  0 or 64. */
static int origin_ok(const char *opt, const char *v)
{
    if (!v)
        return CLI_OK;
    bool ok = (!strncmp(v, "http://", 7) || !strncmp(v, "https://", 8)) && strlen(v) < 200;
    for (const char *c = v; ok && *c; c++)
        ok = (unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f && *c != '"' && *c != '\\';
    if (!ok)
        fprintf(stderr, "stepctl serve: %s: an http:// or https:// URL of printable ASCII expected\n",
                opt);
    return ok ? CLI_OK : CLI_USAGE;
}

/* Every --cors-origin: "*" alone, or up to SRV_MAX_CORS origins, each
 * scheme://host[:port] and nothing after it (a browser's Origin header
 * never carries a path).  0 or 64. */
static int cors_origins(int argc, char **argv, const struct cli_opt *opts, size_t n_opts,
                        struct srv_config *c)
{
    size_t n = cli_values(argc, argv, opts, n_opts, "--cors-origin", c->cors_origins, SRV_MAX_CORS);
    if (n > SRV_MAX_CORS) {
        fprintf(stderr, "stepctl serve: --cors-origin: at most %d origins\n", SRV_MAX_CORS);
        return CLI_USAGE;
    }
    c->n_cors = n;
    for (size_t i = 0; i < n; i++) {
        const char *o = c->cors_origins[i];
        if (!strcmp(o, "*")) {
            if (n == 1)
                continue;
            fprintf(stderr, "stepctl serve: --cors-origin '*' allows every origin: give it alone\n");
            return CLI_USAGE;
        }
        int rc = origin_ok("--cors-origin", o);
        if (rc != CLI_OK)
            return rc;
        if (strchr(strstr(o, "://") + 3, '/')) {
            fprintf(stderr, "stepctl serve: --cors-origin %s: an origin is scheme://host[:port], "
                            "without a path or a final /\n", o);
            return CLI_USAGE;
        }
    }
    return CLI_OK;
}

/* paths.json parsed and its keys loaded into *out (malloc'd).  0, 65, 66. */
static int load_paths(const char *file, struct dlv_paths **out)
{
    char *text = NULL, err[1024], shown[2][1200];
    size_t len = 0;
    int rc = cli_slurp(file, DLV_MAX_FILE, &text, &len);
    if (rc != CLI_OK)
        return rc;
    char *copy = strdup(file);
    struct dlv_paths *ps = calloc(1, sizeof *ps);
    rc = !copy || !ps ? CLI_SOFTWARE
         : dlv_paths_parse(text, len, dirname(copy), ps, err, sizeof err) != 0 ? CLI_DATA
                                                                             : CLI_OK;
    if (rc == CLI_OK)
        rc = dlv_paths_load_keys(ps, err, sizeof err);
    if (rc != CLI_OK) {
        fprintf(stderr, "stepctl serve: %s: %s\n", evidence_text_escape(file, false, shown[0], sizeof shown[0]),
                rc == CLI_SOFTWARE ? "out of memory" : evidence_text_escape(err, false, shown[1], sizeof shown[1]));
        dlv_paths_free(ps);
        free(ps);
        ps = NULL;
    }
    free(copy);
    free(text);
    *out = ps;
    return rc;
}

/* --evidence opened once read-only before listening: a store that is
 * missing, not SQLite or not an evidence store is refused (66) rather than
 * served as if it held no MISMATCH.  With --evidence-key-file, the keyed
 * check of `exactav evidence verify-store --store-key-file` too
 * (evidence_check_macs): a store with another key, or tampered, is refused
 * (66).  0, 65 (the key file's mode or length) or 66. */
static int evidence_usable(const char *file, const char *key_file)
{
    struct evidence_db *db = NULL;
    char err[1024], shown[2][1200];
    struct store_key k;
    int krc = key_file ? store_key_load("stepctl serve", "--evidence-key-file", key_file, &k) : 0;
    if (krc)
        return krc;
    enum evidence_rc rc = evidence_open_keyed(file, EVIDENCE_OPEN_RO, key_file ? &k : NULL, &db,
                                              err, sizeof err);
    if (key_file)
        store_key_wipe(&k); /* the connection holds its own copy */
    struct evidence_mac_check mc;
    if (rc == EVIDENCE_OK && key_file &&
        (rc = evidence_check_macs(db, &mc, err, sizeof err)) == EVIDENCE_OK && mc.tampered) {
        snprintf(err, sizeof err, "store_tampered: %s %s breaks %s: %s (exactav evidence "
                                  "verify-store)", mc.table, mc.row, mc.rule, mc.detail);
        rc = EVIDENCE_E_OPEN;
    }
    evidence_close(db);
    if (rc == EVIDENCE_OK)
        return CLI_OK;
    fprintf(stderr, "stepctl serve: --evidence %s: %s: refusing to start (a fallback could not be "
                    "shown free of MISMATCH)\n",
            evidence_text_escape(file, false, shown[0], sizeof shown[0]),
            evidence_text_escape(err, false, shown[1], sizeof shown[1]));
    return CLI_NOINPUT;
}

/* Who may call what (docs/security.md#who-may-call-what): said loudly at
 * start, and refused where nobody would be asked.  0 or 64. */
static int who_may_call(struct srv_config *c, bool admin_token, bool allow_anonymous)
{
    c->admin_token_set = admin_token;
    c->allow_anonymous = allow_anonymous;
    if (!admin_token)
        fprintf(stderr, "stepctl serve: no --admin-token-file: the operator endpoints "
                        "(/v1/grants/ID, /metrics) answer 401 to everyone\n");
    if (!srv_needs_anonymous_ok(c))
        return CLI_OK;
    if (!allow_anonymous) {
        fprintf(stderr, "stepctl serve: refusing to listen on %s without --client-auth: anyone "
                        "who reaches it could allocate; give --client-auth FILE, or "
                        "--allow-anonymous to accept that\n",
                c->listen_text);
        return CLI_USAGE;
    }
    fprintf(stderr, "stepctl serve: WARNING: --allow-anonymous on %s: anyone who reaches this "
                    "address allocates under any cohort's grant (docs/security.md)\n",
            c->listen_text);
    return CLI_OK;
}

int stepctl_cmd_serve(int argc, char **argv)
{
    const char *db = NULL, *listen = NULL, *threads = NULL, *batch = NULL, *port_file = NULL,
               *drain = NULL, *paths = NULL, *evidence = NULL, *cors = NULL, *public_url = NULL,
               *access_log = NULL, *request_timeout = NULL, *per_ip = NULL, *client_auth = NULL,
               *admin_token = NULL, *admin_listen = NULL, *admin_port_file = NULL,
               *store_key_file = NULL, *verification_token = NULL, *evidence_key_file = NULL;
    bool help, allow_anonymous = false;
    size_t npos;
    struct cli_opt opts[] = {{"--db", &db, NULL},
                             {"--listen", &listen, NULL},
                             {"--threads", &threads, NULL},
                             {"--batch-max", &batch, NULL},
                             {"--port-file", &port_file, NULL},
                             {"--drain-timeout", &drain, NULL},
                             {"--paths", &paths, NULL},
                             {"--evidence", &evidence, NULL},
                             {"--cors-origin", &cors, NULL},
                             {"--public-url", &public_url, NULL},
                             {"--access-log", &access_log, NULL},
                             {"--request-timeout", &request_timeout, NULL},
                             {"--max-connections-per-ip", &per_ip, NULL},
                             {"--client-auth", &client_auth, NULL},
                             {"--admin-token-file", &admin_token, NULL},
                             {"--admin-listen", &admin_listen, NULL},
                             {"--admin-port-file", &admin_port_file, NULL},
                             {"--allow-anonymous", NULL, &allow_anonymous},
                             {"--store-key-file", &store_key_file, NULL},
                             {"--evidence-key-file", &evidence_key_file, NULL},
                             {"--verification-token-file", &verification_token, NULL}};
    int rc = cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], &help, NULL, 0, &npos);
    if (rc != CLI_OK || help || !db || !listen) {
        bool ok = rc == CLI_OK && help;
        fputs(serve_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    struct srv_config c;
    memset(&c, 0, sizeof c);
    struct store_key store_key;
    bool have_key = false;
    memset(&store_key, 0, sizeof store_key);
    int64_t n_threads = 2, n_batch = 256, drain_s = 30, request_s = 10, n_per_ip = 64;
    if ((rc = cli_int("serve", "--threads", threads, 1, 64, &n_threads)) != CLI_OK ||
        (rc = cli_int("serve", "--batch-max", batch, 1, 100000, &n_batch)) != CLI_OK ||
        (rc = cli_int("serve", "--drain-timeout", drain, 0, 3600, &drain_s)) != CLI_OK ||
        (rc = cli_int("serve", "--request-timeout", request_timeout, 1, 3600, &request_s)) != CLI_OK ||
        (rc = cli_int("serve", "--max-connections-per-ip", per_ip, 0, 100000, &n_per_ip)) != CLI_OK ||
        (rc = parse_listen("--listen", listen, &c.addr, &c.addr_len)) != CLI_OK ||
        (admin_listen &&
         (rc = parse_listen("--admin-listen", admin_listen, &c.admin_addr, &c.admin_addr_len)) !=
             CLI_OK))
        return rc;
    c.db_path = db;
    snprintf(c.listen_text, sizeof c.listen_text, "%s", listen);
    snprintf(c.admin_listen_text, sizeof c.admin_listen_text, "%s", admin_listen ? admin_listen : "");
    if (admin_port_file && !admin_listen) {
        fprintf(stderr, "stepctl serve: --admin-port-file needs --admin-listen\n");
        return CLI_USAGE;
    }
    c.admin_port_file = admin_port_file;
    c.threads = (unsigned)n_threads;
    c.batch_max = (size_t)n_batch;
    c.port_file = port_file;
    c.drain_s = (unsigned)drain_s;
    c.request_timeout_s = (unsigned)request_s;
    c.per_ip_limit = (unsigned)n_per_ip;
    if ((rc = cors_origins(argc, argv, opts, sizeof opts / sizeof opts[0], &c)) != CLI_OK ||
        (rc = origin_ok("--public-url", public_url)) != CLI_OK)
        return rc;
    if (public_url && strpbrk(public_url, "?#")) {
        fprintf(stderr, "stepctl serve: --public-url: no query or fragment (the playback URLs "
                        "continue it)\n");
        return CLI_USAGE;
    }
    c.public_url = public_url;
    c.evidence_path = evidence;
    c.access_log = access_log;
    if (evidence && !paths) {
        fprintf(stderr, "stepctl serve: --evidence is read for delivery only: give --paths too\n");
        return CLI_USAGE;
    }
    if (paths && !evidence) { /* fail closed: no evidence, no way to drop a MISMATCHed fallback */
        fprintf(stderr, "stepctl serve: --paths needs --evidence evidence.db: a fallback path is "
                        "listed only while the evidence shows no MISMATCH since the decision\n");
        return CLI_USAGE;
    }
    if (paths && (rc = load_paths(paths, &c.paths)) != CLI_OK)
        return rc;
    c.verification_token_set = verification_token != NULL;
    if (evidence_key_file && !evidence) {
        fprintf(stderr, "stepctl serve: --evidence-key-file needs --evidence\n");
        return CLI_USAGE;
    }
    if ((evidence && (rc = evidence_usable(evidence, evidence_key_file)) != CLI_OK) ||
        (client_auth && (rc = cauth_load(client_auth, &c.client_auth)) != CLI_OK) ||
        (admin_token && (rc = sauth_load_token(admin_token, c.admin_token_sha256)) != CLI_OK) ||
        (verification_token &&
         (rc = sauth_load_token(verification_token, c.verification_token_sha256)) != CLI_OK) ||
        (rc = who_may_call(&c, admin_token != NULL, allow_anonymous)) != CLI_OK ||
        (rc = smac_cli_key("serve", store_key_file, &store_key, &have_key)) != CLI_OK) {
        dlv_paths_free(c.paths);
        free(c.paths);
        cauth_free(c.client_auth);
        return rc;
    }
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
    if (access_log && strcmp(access_log, "-"))
        sigaddset(&stop, SIGHUP); /* reopens the log; without one, SIGHUP keeps its default */
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT); /* before any thread: fetches of live playlists */
    c.store_key = have_key ? &store_key : NULL;
    rc = srv_run(&c, &stop);
    smac_key_wipe(&store_key);
    dlv_paths_free(c.paths);
    free(c.paths);
    cauth_free(c.client_auth);
    curl_global_cleanup();
    return rc;
}
