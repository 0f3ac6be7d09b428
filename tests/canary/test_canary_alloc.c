/* Allocation targets (issue 17, docs/canary.md "Allocation targets"): the
 * canary takes verification sessions from the REAL `stepctl serve` of this
 * build (control.db decided and granted with `stepctl decide` / `grant
 * --verification-allocations N`, `serve --paths --verification-token-file`),
 * follows the master playlist and the steering manifest to the target's
 * rendition on the chosen pathway (exactav-testd's loopback live stream),
 * and stores rows carrying the allocation id and the pathway, which
 * `stepctl next` under content_from step_sessions counts.  A loopback
 * socket answers only what the real service never says (garbage, 10 MB). */
#include "canary_test.h"

#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canary_alloc.h"
#include "canary_config.h"
#include "canary_live.h"
#include "cdn_rig.h"
#include "ctl_test.h"
#include "fetch.h"
#include "serve_rig.h"
#include "test_skip.h"

#define SKIP_WITHOUT_CORPUS() test_skip_unless(LIVE_PLAYLIST)
#define TOKEN "canary-verification-token-0123456789abcdef"

/* The fixtures' cohort (fixtures/controller): news-1 / 720p, pv-42. */
#define COHORT_REST "\"region\": \"eu-west\", \"isp\": \"isp-x\", \"client\": \"web-hlsjs\", \"build\": \"2026.11.3\""

struct rig {
    struct live l;
    struct ctl_world w;
    json_t *sit;
    char d[33], g[33], token_file[160], paths[160];
    struct server s;
};

/* dir/name holding text, mode 0600; its path into out. */
static void secret_file(const struct live *l, const char *name, const char *text, char *out, size_t n)
{
    live_path(l, name, out, n);
    live_write(l, name, text);
    assert_int_equal(chmod(out, 0600), 0);
}

/* The live stream and a world decided (C first, D and E eligible
 * fallbacks) and granted with a verification quota; the token file. */
static void rig_world(struct rig *r, int quota, const char *content_from)
{
    live_start(&r->l, LIVE_PLAYLIST);
    serve_verification_world(&r->w, content_from, quota, &r->sit, r->d, r->g);
    secret_file(&r->l, "verification.token", TOKEN "\n", r->token_file, sizeof r->token_file);
}

/* The service with paths.json holding text, started with the verification token. */
static void rig_serve(struct rig *r, const char *paths_text)
{
    ctl_write_text(&r->w.t, "paths.json", paths_text, r->paths, sizeof r->paths);
    const char *extra[] = {"--paths", r->paths, "--evidence", r->w.ev, "--verification-token-file",
                           r->token_file, NULL};
    server_start_with(&r->w, &r->s, extra);
}

/* rig_world, and paths.json delivering every path with one rendition named
 * delivered (testd's /_live/<path>/), unsigned. */
static void rig_begin(struct rig *r, int quota, const char *delivered, const char *content_from)
{
    rig_world(r, quota, content_from);
    char text[4096];
    int k = snprintf(text, sizeof text, "{\"paths\": {");
    for (char id = 'A'; id <= 'E'; id++)
        k += snprintf(text + k, sizeof text - (size_t)k,
                      "%s\"%c\": {\"renditions\": {\"%s\": \"http://127.0.0.1:%d/_live/%c/playlist.m3u8\"}, "
                      "\"auth\": {\"type\": \"none\"}}", id == 'A' ? "" : ", ", id, delivered, r->l.port, id + 32);
    snprintf(text + k, sizeof text - (size_t)k, "}}\n");
    rig_serve(r, text);
}

static void rig_end(struct rig *r)
{
    assert_int_equal(server_stop(&r->s, SIGTERM), 0);
    json_decref(r->sit);
    ctl_world_end(&r->w);
    live_stop(&r->l);
}

/* The canary's configuration: one allocation target of the fixtures'
 * cohort on service port, with this token file and every_s. */
static void write_config_ref(const struct rig *r, const char *name, const char *reference, int port,
                             const char *token_file, int every_s)
{
    char cfg[4096];
    snprintf(cfg, sizeof cfg,
             "{\"probe_period_s\": 0, \"period_s\": 1, \"targets\": [{\"channel\": \"news-1\", \"rendition\": "
             "\"720p\", \"program_version\": \"pv-42\", \"reference\": "
             "\"%s\", \"allocation\": {\"service\": "
             "\"http://127.0.0.1:%d\", \"cohort\": {\"channel\": \"news-1\", " COHORT_REST
             ", \"rendition\": \"720p\"}, \"every_s\": %d, \"token_file\": \"%s\"}}]}",
             reference, port, every_s, token_file);
    live_write(&r->l, name, cfg);
}

/* The same with testd's live stream as the reference. */
static void write_config(const struct rig *r, const char *name, int port, const char *token_file, int every_s)
{
    char ref[128];
    snprintf(ref, sizeof ref, "http://127.0.0.1:%d/_live/ref/playlist.m3u8", r->l.port);
    write_config_ref(r, name, ref, port, token_file, every_s);
}

static int run_once(const struct rig *r, const char *cfg)
{
    char args[512];
    snprintf(args, sizeof args, "--once --json --config %s/%s --evidence %s/ev.db", r->l.dir, cfg, r->l.dir);
    return live_canary_run(&r->l, "once", args);
}

/* The one row of a query as JSON text of its first column ("" when none). */
static char *first_text(const struct rig *r, const char *sql)
{
    json_t *rows = live_rows(&r->l, "%s", sql);
    json_t *row = json_array_get(rows, 0);
    const char *key;
    json_t *v;
    char *out = NULL;
    json_object_foreach(row, key, v) {
        out = strdup(json_is_string(v) ? json_string_value(v) : "");
        break;
    }
    json_decref(rows);
    return out ? out : strdup("");
}

/* ---- configuration ---------------------------------------------------------------- */

/* A target of the fixtures' cohort: service, the cohort's members (cohort:
 * between its channel and its closing brace), the allocation's token_file
 * member and more (alloc_tail), the target's other members (target_extra). */
static const char *target_of(const char *service, const char *cohort, const char *alloc_tail,
                             const char *target_extra, char *buf, size_t n)
{
    snprintf(buf, n,
             "{\"channel\": \"news-1\", \"rendition\": \"720p\", \"program_version\": \"pv-42\", "
             "\"reference\": \"/srv/ref\"%s, \"allocation\": {\"service\": \"%s\", "
             "\"cohort\": {%s}%s}}",
             target_extra, service, cohort, alloc_tail);
    return buf;
}

#define COHORT_OF(channel, rendition) "\"channel\": \"" channel "\", " COHORT_REST ", \"rendition\": \"" rendition "\""

static const char *target_with(const char *alloc_extra, const char *target_extra, const char *cohort_channel,
                               char *buf, size_t n)
{
    char cohort[512], tail[256];
    snprintf(cohort, sizeof cohort, "\"channel\": \"%s\", " COHORT_REST ", \"rendition\": \"720p\"",
             cohort_channel);
    snprintf(tail, sizeof tail, ", \"token_file\": \"/nonexistent\"%s", alloc_extra);
    return target_of("http://127.0.0.1:1", cohort, tail, target_extra, buf, n);
}

static void refused_with(const char *targets, const char *want)
{
    char cfg[8192], err[512];
    struct canary_config c;
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s]}", targets);
    assert_int_equal(canary_config_parse(cfg, strlen(cfg), &c, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("got \"%s\", want \"%s\"", err, want);
}

static void canary_43_allocation_config_is_strict_and_named(void **state)
{
    (void)state;
    char t1[2048], t2[2048], cfg[8192], err[512];
    struct canary_config c;
    /* accepted: the key, the default every_s, no probes, no path yet */
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s]}", target_with("", "", "news-1", t1, sizeof t1));
    assert_int_equal(canary_config_parse(cfg, strlen(cfg), &c, err, sizeof err), 0);
    assert_string_equal(c.targets[0].key, "alloc:news-1/720p/eu-west/isp-x/web-hlsjs/2026.11.3");
    assert_string_equal(c.targets[0].path_id, CANARY_ALLOC_PATH_ID);
    assert_int_equal(c.targets[0].alloc->every_ms, 300000);
    assert_int_equal(c.targets[0].probe_period_ms, 0);
    assert_null(c.targets[0].candidate);
    canary_config_free(&c);
    /* an allocation replaces path_id and candidate / candidate_command; the
     * cohort is the target's channel; strict keys and ranges */
    static const struct {
        const char *alloc_extra, *target_extra, *channel, *want;
    } cases[] = {
        {"", ", \"path_id\": \"C\"", "news-1", "targets[0].path_id: not with allocation"},
        {"", ", \"candidate\": \"http://x/a.m3u8\"", "news-1", "targets[0].candidate: not with allocation"},
        {"", ", \"candidate_command\": [\"true\"]", "news-1", "targets[0].candidate_command: not with allocation"},
        {"", "", "news-2", "targets[0].allocation.cohort.channel: must be the target's channel (news-1)"},
        {", \"bogus\": 1", "", "news-1", "targets[0].allocation.bogus: unknown key"},
        {", \"every_s\": 0", "", "news-1", "targets[0].allocation.every_s: must be an integer in 1..86400"},
        {", \"every_s\": 86401", "", "news-1", "targets[0].allocation.every_s: must be an integer in 1..86400"},
        {", \"every_s\": 1.5", "", "news-1", "targets[0].allocation.every_s: must be an integer in 1..86400"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        refused_with(target_with(cases[i].alloc_extra, cases[i].target_extra, cases[i].channel, t1, sizeof t1),
                     cases[i].want);
    target_of("http://127.0.0.1:1", COHORT_OF("news-1", "360p"), ", \"token_file\": \"/t\"", "", t1, sizeof t1);
    refused_with(t1, "targets[0].allocation.cohort.rendition: must be the target's rendition (720p)");
    target_of("http://127.0.0.1:1", "\"channel\": \"news-1\", \"rendition\": \"720p\"",
              ", \"token_file\": \"/t\"", "", t1, sizeof t1);
    refused_with(t1, "targets[0].allocation.cohort.region: required");
    target_of("http://127.0.0.1:1/?x=1", COHORT_OF("news-1", "720p"), ", \"token_file\": \"/t\"", "", t1,
              sizeof t1);
    refused_with(t1, "targets[0].allocation.service: must be an http(s) URL without query or fragment");
    /* a password in the service URL would end up in the evidence of a failed POST */
    target_of("http://user:secret@127.0.0.1:1", COHORT_OF("news-1", "720p"), ", \"token_file\": \"/t\"", "", t1,
              sizeof t1);
    refused_with(t1, "targets[0].allocation.service: must not hold user:password@ (the bearer token of token_file "
                     "authenticates)");
    target_of("http://127.0.0.1:1", COHORT_OF("news-1", "720p") ", \"country\": \"x\"", ", \"token_file\": \"/t\"",
              "", t1, sizeof t1);
    refused_with(t1, "targets[0].allocation.cohort.country: unknown key");
    target_of("http://127.0.0.1:1", COHORT_OF("news-1", "720p"), "", "", t1, sizeof t1);
    refused_with(t1, "targets[0].allocation.token_file: required");
    /* the same cohort twice */
    snprintf(cfg, sizeof cfg, "%s, %s", target_with("", "", "news-1", t1, sizeof t1),
             target_with(", \"every_s\": 60", "", "news-1", t2, sizeof t2));
    refused_with(cfg, "targets[1]: the allocation target alloc:news-1/720p/eu-west/isp-x/web-hlsjs/2026.11.3 is "
                      "already targets[0]");
}

static void canary_44_token_file_is_read_at_start(void **state)
{
    (void)state;
    struct live l;
    live_start(&l, NULL);
    char tok[160], cfgpath[160], cfg[2048], t1[1024], err[512];
    struct canary_config c;
    live_path(&l, "token", tok, sizeof tok);
    live_path(&l, "canary.json", cfgpath, sizeof cfgpath);
    char tail[256];
    snprintf(tail, sizeof tail, ", \"token_file\": \"%s\"", tok);
    target_of("http://127.0.0.1:1", COHORT_OF("news-1", "720p"), tail, "", t1, sizeof t1);
    snprintf(cfg, sizeof cfg, "{\"targets\": [%s]}", t1);
    live_write(&l, "canary.json", cfg);
    /* missing: 66 */
    assert_int_equal(canary_config_load(cfgpath, &c, err, sizeof err), 66);
    assert_non_null(strstr(err, "targets[0].allocation.token_file: "));
    assert_int_equal(live_sh("%s canary --config %s --evidence %s/ev.db --once >/dev/null 2>&1", EXACTAV_BIN, cfgpath,
                             l.dir), 66);
    /* shorter than 16 bytes: 65, the content never shown */
    secret_file(&l, "token", "short-secret\n", tok, sizeof tok);
    assert_int_equal(canary_config_load(cfgpath, &c, err, sizeof err), 65);
    assert_null(strstr(err, "short-secret"));
    assert_non_null(strstr(err, "one line of 16 to 4096 printable bytes expected"));
    /* two lines: 65 */
    secret_file(&l, "token", "0123456789abcdef0123\nsecond-line-here\n", tok, sizeof tok);
    assert_int_equal(canary_config_load(cfgpath, &c, err, sizeof err), 65);
    /* readable by others: 65 naming the mode */
    secret_file(&l, "token", TOKEN "\n", tok, sizeof tok);
    assert_int_equal(chmod(tok, 0644), 0);
    assert_int_equal(canary_config_load(cfgpath, &c, err, sizeof err), 65);
    assert_non_null(strstr(err, "mode 0644"));
    assert_int_equal(live_sh("%s canary --config %s --evidence %s/ev.db --once >/dev/null 2>&1", EXACTAV_BIN, cfgpath,
                             l.dir), 65);
    /* accepted: the token, its newline dropped */
    assert_int_equal(chmod(tok, 0600), 0);
    assert_int_equal(canary_config_load(cfgpath, &c, err, sizeof err), 0);
    assert_string_equal(c.targets[0].alloc->token, TOKEN);
    canary_config_free(&c);
    /* the binary refuses both allocation and path_id with 64, naming it */
    char both[4096];
    snprintf(both, sizeof both, "{\"targets\": [{\"path_id\": \"C\", %s", cfg + strlen("{\"targets\": [{"));
    live_write(&l, "both.json", both);
    assert_int_equal(live_sh("%s canary --config %s/both.json --evidence %s/ev.db --once >/dev/null 2>%s/both.err",
                             EXACTAV_BIN, l.dir, l.dir, l.dir), 64);
    char *e = live_read(&l, "both.err");
    assert_non_null(strstr(e, "targets[0].path_id: not with allocation"));
    free(e);
    live_stop(&l);
}

static void canary_45_pathway_and_variant_as_a_player_picks_them(void **state)
{
    (void)state;
    static const char master[] =
        "#EXTM3U\n#EXT-X-VERSION:3\n"
        "#EXT-X-CONTENT-STEERING:SERVER-URI=\"/v1/sessions/S/steering\",PATHWAY-ID=\"C\"\n"
        "#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.4d401e,mp4a.40.2\",STABLE-VARIANT-ID=\"r360\","
        "PATHWAY-ID=\"C\"\n/v1/sessions/S/C/r360.m3u8\n"
        "#EXT-X-STREAM-INF:BANDWIDTH=900000,STABLE-VARIANT-ID=\"r720\",PATHWAY-ID=\"C\"\r\n"
        "/v1/sessions/S/C/r720.m3u8\r\n"
        "#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.4d401e,mp4a.40.2\",STABLE-VARIANT-ID=\"r360\","
        "PATHWAY-ID=\"D\"\nhttps://cdn-d.example/ch1/r360.m3u8\n";
    char p[128], u[512], why[256], s[256];
    assert_true(canary_alloc_steering_uri(master, s, sizeof s));
    assert_string_equal(s, "/v1/sessions/S/steering");
    /* the first of PATHWAY-PRIORITY that the master lists */
    assert_int_equal(canary_alloc_pick(master, "[\"X\",\"D\",\"C\"]", "r360", p, sizeof p, u, sizeof u, why,
                                       sizeof why), 0);
    assert_string_equal(p, "D");
    assert_string_equal(u, "https://cdn-d.example/ch1/r360.m3u8");
    /* no steering: the master's first pathway */
    assert_int_equal(canary_alloc_pick(master, NULL, "r720", p, sizeof p, u, sizeof u, why, sizeof why), 0);
    assert_string_equal(p, "C");
    assert_string_equal(u, "/v1/sessions/S/C/r720.m3u8");
    /* a rendition the pathway does not carry */
    assert_int_equal(canary_alloc_pick(master, "[\"D\"]", "r720", p, sizeof p, u, sizeof u, why, sizeof why), 1);
    assert_string_equal(p, "D");
    assert_non_null(strstr(why, "no variant of rendition r720 on pathway D"));
    /* without STABLE-VARIANT-ID the URI names the rendition */
    static const char plain[] = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n/a/360p.m3u8\n"
                                "#EXT-X-STREAM-INF:BANDWIDTH=2\n/a/x720p.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=3\n"
                                "/a/720p.m3u8?x=1\n";
    assert_int_equal(canary_alloc_pick(plain, NULL, "720p", p, sizeof p, u, sizeof u, why, sizeof why), 0);
    assert_string_equal(p, ".");
    assert_string_equal(u, "/a/720p.m3u8?x=1");
    assert_int_equal(canary_alloc_pick("#EXTM3U\n", NULL, "720p", p, sizeof p, u, sizeof u, why, sizeof why), -1);
}

/* ---- against the real service --------------------------------------------------------- */

static void canary_46_allocation_target_matches_under_its_verification_session(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    rig_begin(&r, 2, "720p", "step_sessions");
    json_decref(serve_allocate(r.s.port, "a-0")); /* a viewer: the step has begun */
    write_config(&r, "alloc.json", r.s.port, r.token_file, 300);
    assert_int_equal(run_once(&r, "alloc.json"), 0);
    /* the row: MATCH on pathway C, under the service's verification allocation */
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence"), 1);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH' AND path_id = 'C' AND "
                                  "pathway = 'C' AND channel = 'news-1' AND rendition = '720p' AND "
                                  "program_version = 'pv-42' AND allocation_id LIKE 'canary-%%' AND "
                                  "length(allocation_id) = 39 AND "
                                  "json_extract(report, '$.context.allocation_id') = allocation_id"), 1);
    char *id = first_text(&r, "SELECT allocation_id FROM evidence");
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM allocations WHERE id = '%s' AND verification = 1", id);
    assert_int_equal(ctl_query_int(r.w.db, sql), 1);
    /* the candidate was the variant the master named (testd's /_live/c/) */
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE json_extract(report, '$.candidate.object') "
                                  "LIKE '%%/_live/c/%%'"), 1);
    /* the token is nowhere */
    const char *const files[] = {"once.out", "once.err", NULL};
    assert_false(live_anywhere(&r.l, TOKEN, files));
    char *out = live_read(&r.l, "once.out");
    json_t *s = json_loads(out, 0, NULL);
    free(out);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s, "targets"), 0),
                                                          "path_id")), "C");
    json_decref(s);
    /* stepctl next (content_from step_sessions) counts it: the step's own session */
    char obs[160];
    ctl_observations(&r.w.t, r.sit, "obs.json", obs, sizeof obs);
    char ev[160];
    live_path(&r.l, "ev.db", ev, sizeof ev);
    ctl_run(&r.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run --json", r.g, r.w.db, ev, obs);
    json_t *n = ctl_out_json(&r.w.t);
    const json_t *c = json_object_get(n, "content");
    if (!c || strcmp(json_string_value(json_object_get(c, "status")), "PASS"))
        fail_msg("content: %s", c ? json_dumps(c, 0) : "(none)");
    assert_string_equal(json_string_value(json_object_get(c, "content_from")), "step_sessions");
    json_decref(n);
    free(id);
    rig_end(&r);
}

static void canary_47_wrong_token_is_unknown_allocation_failed(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    rig_begin(&r, 2, "720p", NULL);
    char other[160];
    secret_file(&r.l, "other.token", "another-token-of-sixteen-or-more\n", other, sizeof other);
    write_config(&r, "alloc.json", r.s.port, other, 300);
    assert_int_equal(run_once(&r, "alloc.json"), 2);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence"), 1);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND "
                                  "reason = 'allocation_failed' AND allocation_id IS NULL AND pathway IS NULL AND "
                                  "path_id = 'allocation' AND json_extract(report, "
                                  "'$.candidate.delivery_failure.detail') LIKE '%%HTTP 401, error unauthorized%%'"),
                     1);
    assert_int_equal(ctl_query_int(r.w.db, "SELECT count(*) FROM allocations"), 0);
    /* the service is unreachable: allocation_failed too, naming the POST */
    write_config(&r, "gone.json", 1, r.token_file, 300);
    assert_int_equal(run_once(&r, "gone.json"), 2);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE reason = 'allocation_failed' AND "
                                  "json_extract(report, '$.candidate.delivery_failure.detail') LIKE "
                                  "'POST http://127.0.0.1:1/v1/allocations: %%'"), 1);
    rig_end(&r);
}

static void canary_48_quota_exhausted_is_unknown_and_every_s_takes_new_allocations(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    rig_begin(&r, 1, "720p", NULL);
    write_config(&r, "alloc.json", r.s.port, r.token_file, 2);
    /* a port for the metrics: the kernel's choice, freed for the canary */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    char args[512], metrics[128];
    snprintf(args, sizeof args, "--duration 7 --metrics-listen 127.0.0.1:%d --config %s/alloc.json --evidence "
             "%s/ev.db", ntohs(a.sin_port), r.l.dir, r.l.dir);
    snprintf(metrics, sizeof metrics, "http://127.0.0.1:%d/metrics", ntohs(a.sin_port));
    pid_t pid = live_canary_start(&r.l, "run", args);
    live_wait_count(&r.l, 1, 30, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH'");
    long status = 0;
    char *body = live_get(metrics, &status);
    assert_int_equal(status, 200);
    /* the series is the target's, whatever pathway its allocation took */
    if (!strstr(body, "exactav_canary_checks_total{path_id=\"alloc:news-1/720p/eu-west/isp-x/web-hlsjs/2026.11.3\","
                      "channel=\"news-1\",rendition=\"720p\",verdict=\"MATCH\"} "))
        fail_msg("metrics:\n%s", body);
    free(body);
    assert_int_equal(live_canary_wait(pid), 0);
    /* the first allocation's checks MATCH under it ... */
    assert_true(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH' AND allocation_id IS NOT NULL "
                             "AND pathway = 'C'") >= 1);
    assert_int_equal(live_q(&r.l, "SELECT count(DISTINCT allocation_id) FROM evidence"), 1);
    /* ... after every_s the next one is refused: the quota of 1 is used up */
    assert_true(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND reason = "
                             "'allocation_failed' AND json_extract(report, '$.candidate.delivery_failure.detail') "
                             "LIKE '%%HTTP 403, error verification_quota_exhausted%%'") >= 1);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MISMATCH'"), 0);
    assert_int_equal(ctl_query_int(r.w.db, "SELECT verification_allocated FROM grants"), 1);
    rig_end(&r);
}

static void canary_49_rendition_not_delivered_is_unknown(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    rig_begin(&r, 2, "360p", NULL); /* every path delivers 360p only; the cohort asks for 720p */
    write_config(&r, "alloc.json", r.s.port, r.token_file, 300);
    assert_int_equal(run_once(&r, "alloc.json"), 2);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND "
                                  "reason = 'allocation_rendition_not_delivered' AND pathway = 'C' AND "
                                  "path_id = 'C' AND allocation_id LIKE 'canary-%%' AND json_extract(report, "
                                  "'$.candidate.delivery_failure.detail') LIKE '%%rendition 720p on pathway C%%'"),
                     1);
    rig_end(&r);
}

/* The media playlist of the session answers 410 (its session ended): the
 * next cycle takes a new allocation before every_s, and checks go on
 * under it. */
static void canary_52_a_playlist_answering_410_takes_a_new_allocation(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    rig_begin(&r, 5, "720p", NULL);
    write_config(&r, "alloc.json", r.s.port, r.token_file, 300);
    char args[512];
    snprintf(args, sizeof args, "--duration 12 --config %s/alloc.json --evidence %s/ev.db", r.l.dir, r.l.dir);
    pid_t pid = live_canary_start(&r.l, "run", args);
    live_wait_count(&r.l, 1, 30, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH'");
    json_decref(live_get_json(&r.l, "_control/outage?path=c&ms=1500&status=410"));
    live_wait_count(&r.l, 2, 30, "SELECT count(DISTINCT allocation_id) FROM evidence WHERE verdict = 'MATCH'");
    assert_int_equal(live_canary_wait(pid), 0);
    /* the 410 is on record under the first allocation, never MATCH */
    assert_true(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND reason = 'http_error' "
                             "AND allocation_id IS NOT NULL") >= 1);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MISMATCH'"), 0);
    assert_true(ctl_query_int(r.w.db, "SELECT verification_allocated FROM grants") >= 2);
    rig_end(&r);
}

/* As a player reloads steering at its TTL, the session moves: C, the
 * allocated path, is found MISMATCH (the service's evidence), the service
 * steers its sessions away (steer_away), and the same allocation's checks
 * go on along D, the first fallback; no new allocation is taken. */
static void canary_53_steering_moves_the_session_as_a_player_moves(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    rig_world(&r, 3, NULL);
    char text[4096];
    int k = snprintf(text, sizeof text, "{\"steering_ttl_s\": 1, \"paths\": {");
    for (char id = 'A'; id <= 'E'; id++)
        k += snprintf(text + k, sizeof text - (size_t)k,
                      "%s\"%c\": {\"renditions\": {\"720p\": \"http://127.0.0.1:%d/_live/%c/playlist.m3u8\"}, "
                      "\"auth\": {\"type\": \"none\"}}", id == 'A' ? "" : ", ", id, r.l.port, id + 32);
    snprintf(text + k, sizeof text - (size_t)k, "}}\n");
    rig_serve(&r, text);
    write_config(&r, "alloc.json", r.s.port, r.token_file, 300);
    char args[512];
    snprintf(args, sizeof args, "--duration 16 --config %s/alloc.json --evidence %s/ev.db", r.l.dir, r.l.dir);
    pid_t pid = live_canary_start(&r.l, "run", args);
    live_wait_count(&r.l, 1, 30, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH' AND pathway = 'C'");
    ctl_world_evidence(&r.w, "ev-c-bad", "C", "MISMATCH", ctl_now_ms(), true);
    live_wait_count(&r.l, 1, 30, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH' AND pathway = 'D' AND "
                                 "path_id = 'D'");
    assert_int_equal(live_canary_wait(pid), 0);
    assert_int_equal(live_q(&r.l, "SELECT count(DISTINCT allocation_id) FROM evidence"), 1);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MISMATCH'"), 0);
    assert_int_equal(ctl_query_int(r.w.db, "SELECT verification_allocated FROM grants"), 1);
    rig_end(&r);
}

#define KEY_PAIR_ID "KSIGNEDPAIRID7"

/* A CloudFront key pair, exactav-cdnd C checking every signature with its
 * public key and an open REF, the service with path C signed by `auth`
 * (cloudfront-url or cloudfront-cookies), then one --once run of an
 * allocation target against them (exit 0). */
static void signed_path_once(struct rig *r, struct cdn_proc *c, struct cdn_proc *ref, const char *auth)
{
    rig_world(r, 2, NULL);
    assert_int_equal(live_sh("cd '%s' && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem "
                             "2>/dev/null && openssl pkey -in rsa.pem -pubout -out rsa.pub && chmod 600 rsa.pem",
                             r->w.t.dir), 0);
    char epoch[32], pub[256];
    snprintf(epoch, sizeof epoch, "%lld", (long long)(ctl_now_ms() - 10300));
    snprintf(pub, sizeof pub, KEY_PAIR_ID "=%s/rsa.pub", r->w.t.dir);
    const char *signed_args[] = {"--live", LIVE_SOURCE, "--live-prefix", "/ch1/r720", "--live-window", "10",
                                 "--live-epoch-ms", epoch, "--public-key", pub, NULL};
    const char *open_args[] = {"--live", LIVE_SOURCE, "--live-prefix", "/ch1/r720", "--live-window", "10",
                               "--live-epoch-ms", epoch, NULL};
    assert_int_equal(cdn_start(c, CDND_BIN, r->w.t.dir, "C", signed_args), 0);
    assert_int_equal(cdn_start(ref, CDND_BIN, r->w.t.dir, "REF", open_args), 0);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"720p\": \"%s/ch1/r720/live.m3u8\"}, \"auth\": {\"type\": "
             "\"%s\", \"key_file\": \"rsa.pem\", \"key_pair_id\": \"" KEY_PAIR_ID "\"}, "
             "\"url_ttl_s\": 120}}}\n", c->base, auth);
    rig_serve(r, text);
    char reference[128];
    snprintf(reference, sizeof reference, "%s/ch1/r720/live.m3u8", ref->base);
    write_config_ref(r, "alloc.json", reference, r->s.port, r->token_file, 300);
    assert_int_equal(run_once(r, "alloc.json"), 0);
}

/* A cloudfront-url path: the service signs the media playlist of the
 * session, and exactav-cdnd, which checks every signature with the public
 * key, serves the segments only to requests carrying it. */
static void canary_51_signed_media_playlist_of_the_session(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    struct cdn_proc c, ref;
    signed_path_once(&r, &c, &ref, "cloudfront-url");
    /* MATCH under the allocation, through the service's signed playlist:
     * the segment request carried the signature (redacted in the store) */
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH' AND path_id = 'C' AND "
                                  "pathway = 'C' AND allocation_id LIKE 'canary-%%' AND json_extract(report, "
                                  "'$.candidate.object') LIKE '%%/v1/sessions/%%/C/720p.m3u8'"), 1);
    assert_true(live_q(&r.l, "SELECT count(*) FROM fetches WHERE url LIKE '%%/ch1/r720/%%Signature=REDACTED%%' "
                             "AND http_status = 200") >= 1);
    /* the session id, the capability of its playback URLs, is redacted in
     * every URL stored (docs/fetch.md) */
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE allocation_id IS NOT NULL AND json_extract("
                                  "report, '$.candidate.object') NOT LIKE '%%/v1/sessions/REDACTED/C/720p.m3u8'"), 0);
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE report LIKE '%%/v1/sessions/%%' AND report "
                                  "NOT LIKE '%%/v1/sessions/REDACTED/%%'"), 0);
    cdn_stop(&c);
    cdn_stop(&ref);
    rig_end(&r);
}

/* A cloudfront-cookies path: the service's master playlist sets the
 * session's CloudFront cookies (Path the renditions' directory, host-only),
 * the variant URIs are the CDN's own, and exactav-cdnd serves only requests
 * carrying valid cookies.  The canary sends them on as a browser does:
 * before, every check of such a path was UNKNOWN (the CDN's 403). */
static void canary_55_signed_cookies_of_the_session(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r;
    struct cdn_proc c, ref;
    signed_path_once(&r, &c, &ref, "cloudfront-cookies");
    /* MATCH under the allocation, the CDN's own media playlist and segments
     * answered 200 to the session's cookies */
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH' AND path_id = 'C' AND "
                                  "pathway = 'C' AND allocation_id LIKE 'canary-%%' AND json_extract(report, "
                                  "'$.candidate.object') LIKE '%%/ch1/r720/live.m3u8'"), 1);
    assert_true(live_q(&r.l, "SELECT count(*) FROM fetches WHERE url LIKE '%%/ch1/r720/%%.ts' AND http_status = "
                             "200") >= 1);
    /* the cookies (a credential) are nowhere in the store or the output */
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE report LIKE '%%CloudFront-%%' OR report "
                                  "LIKE '%%" KEY_PAIR_ID "%%'"), 0);
    cdn_stop(&c);
    cdn_stop(&ref);
    rig_end(&r);
}

/* ---- what the real service never answers -------------------------------------------- */

struct fake {
    int fd, port;
    const char *head;            /* status line and headers */
    const char *body;            /* NULL: 10 MB of 'x' */
    pthread_t th;
};

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    int c = accept(f->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    char buf[8192];
    (void)!recv(c, buf, sizeof buf, 0);
    (void)!send(c, f->head, strlen(f->head), MSG_NOSIGNAL);
    if (f->body) {
        (void)!send(c, f->body, strlen(f->body), MSG_NOSIGNAL);
    } else {
        memset(buf, 'x', sizeof buf);
        for (size_t sent = 0; sent < (size_t)10 << 20; sent += sizeof buf)
            if (send(c, buf, sizeof buf, MSG_NOSIGNAL) < 0)
                break;
    }
    close(c);
    return NULL;
}

static void fake_start(struct fake *f, const char *head, const char *body)
{
    f->head = head;
    f->body = body;
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->fd, 4), 0);
    assert_int_equal(getsockname(f->fd, (struct sockaddr *)&a, &len), 0);
    f->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
    shutdown(f->fd, SHUT_RDWR);
    pthread_join(f->th, NULL);
    close(f->fd);
}

static void canary_50_garbage_and_oversized_answers_are_unknown(void **state)
{
    (void)state;
    SKIP_WITHOUT_CORPUS();
    struct rig r = {0};
    live_start(&r.l, LIVE_PLAYLIST);
    secret_file(&r.l, "verification.token", TOKEN "\n", r.token_file, sizeof r.token_file);
    static const struct {
        const char *head, *body, *want;
    } cases[] = {
        {"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 9\r\nConnection: close\r\n\r\n",
         "{\"allo\":[", "is not a JSON object"},
        {"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n"
         "Connection: close\r\n\r\n", NULL, "an answer larger than 65536 bytes"},
        {"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 20\r\nConnection: close\r\n\r\n",
         "{\"path_id\": \"C\"}    ", "no playback_url"},
        {"HTTP/1.1 500 Oops\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", "oops!",
         "HTTP 500, error the answer is not JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fake f;
        fake_start(&f, cases[i].head, cases[i].body);
        write_config(&r, "fake.json", f.port, r.token_file, 300);
        assert_int_equal(run_once(&r, "fake.json"), 2);
        fake_stop(&f);
        char sql[512];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN' AND reason = "
                 "'allocation_failed' AND json_extract(report, '$.candidate.delivery_failure.detail') LIKE '%%%s%%'",
                 cases[i].want);
        if (live_q(&r.l, "%s", sql) != 1)
            fail_msg("case %zu: no row with \"%s\"", i, cases[i].want);
    }
    assert_int_equal(live_q(&r.l, "SELECT count(*) FROM evidence WHERE verdict != 'UNKNOWN'"), 0);
    live_stop(&r.l);
}

int main(int argc, char **argv)
{
    fetch_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canary_43_allocation_config_is_strict_and_named),
        cmocka_unit_test_teardown(canary_44_token_file_is_read_at_start, live_teardown),
        cmocka_unit_test(canary_45_pathway_and_variant_as_a_player_picks_them),
        cmocka_unit_test_teardown(canary_46_allocation_target_matches_under_its_verification_session,
                                  live_teardown),
        cmocka_unit_test_teardown(canary_47_wrong_token_is_unknown_allocation_failed, live_teardown),
        cmocka_unit_test_teardown(canary_48_quota_exhausted_is_unknown_and_every_s_takes_new_allocations,
                                  live_teardown),
        cmocka_unit_test_teardown(canary_49_rendition_not_delivered_is_unknown, live_teardown),
        cmocka_unit_test_teardown(canary_50_garbage_and_oversized_answers_are_unknown, live_teardown),
        cmocka_unit_test_teardown(canary_51_signed_media_playlist_of_the_session, live_teardown),
        cmocka_unit_test_teardown(canary_52_a_playlist_answering_410_takes_a_new_allocation, live_teardown),
        cmocka_unit_test_teardown(canary_53_steering_moves_the_session_as_a_player_moves, live_teardown),
        cmocka_unit_test_teardown(canary_55_signed_cookies_of_the_session, live_teardown),
    };
    int rc = canary_test_main("canary_alloc", tests, sizeof tests / sizeof tests[0], argc, argv);
    kill_leftovers(NULL);
    fetch_global_cleanup();
    return rc;
}
