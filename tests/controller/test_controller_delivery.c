/* Delivery of an allocation (docs/delivery.md) end to end on loopback: the
 * stepctl binary serving a real control.db with --paths, decisions and
 * grants made by the CLI on real evidence, libcurl clients (cdn_rig.h),
 * and for the signed playlists exactav-cdnd in front of the corpus's live
 * stream, checked with the public key, and `exactav verify` through them.
 *
 * The world: paths A (MISMATCH: excluded), B (no evidence: excluded), and
 * C, D, E (MATCH, equal in cost and QoE; policy order C, D, E): decide
 * chooses C and records D, E as the fallbacks eligible in the same
 * decision. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "test_skip.h"
#include "ctl_test.h"
#include "dlv.h"
#include "serve_rig.h"

#define ROLLOVER CORPUS_DIR "/media/hls-ts-rollover"

/* ---- the world ---------------------------------------------------------------- */

/* ---- HTTP ------------------------------------------------------------------------- */

/* GET path ("/v1/allocations/ID/..." reaches the session of ID: db), as
 * a page of http://player.example asks (the origin of the tests' --cors-origin) */
static long get(const char *db, int port, const char *path, struct cdn_http *h)
{
    char url[512], sp[384];
    serve_session_path(db, path, sp, sizeof sp);
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, sp);
    assert_int_equal(cdn_http_with(NULL, url, NULL, "Origin: http://player.example", NULL, h), 0);
    return h->status;
}

static bool has_line_with(const char *text, const char *needle)
{
    return strstr(text, needle) != NULL;
}

/* ---- tests -------------------------------------------------------------------------- */

static void ctl_66_serve_paths_json_is_strict_and_names_the_key(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    static const struct {
        const char *json, *message;
        int exit;
    } cases[] = {
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"none\"}}}, \"steering_tll_s\": 5}",
         "paths.json.steering_tll_s: unknown key", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"none\"}, \"url_tl_s\": 5}}}",
         "paths.C.url_tl_s: unknown key", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"cloudfront-url\", \"key_file\": \"k.pem\", \"key_pair_id\": \"K\", "
         "\"kee\": 1}}}}",
         "paths.C.auth.kee: unknown key", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": {\"url\": \"http://x/a.m3u8\", "
         "\"bandwith\": 5}}, \"auth\": {\"type\": \"none\"}}}}",
         "paths.C.renditions.r.bandwith: unknown key", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"ftp://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"none\"}}}}",
         "paths.C.renditions.r: an absolute http:// or https:// URL expected", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"akamai\"}}}}",
         "paths.C.auth.type: none, cloudfront-url or cloudfront-cookies expected", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"none\"}, \"url_ttl_s\": 60}}}",
         "paths.C.url_ttl_s: only for a path that signs", 65},
        {"{\"paths\": {\"C/1\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"none\"}}}}",
         "paths.C/1: a path id is 1 to 64 of A-Z a-z 0-9 . _ -", 65},
        {"{\"paths\": {\"C\": {\"renditions\": {\"r\": \"http://x/a.m3u8\"}, \"auth\": "
         "{\"type\": \"cloudfront-url\", \"key_file\": \"absent.pem\", \"key_pair_id\": \"K\"}}}}",
         "paths.C.auth.key_file:", 66},
        {"[1]", "the top level must be an object", 65},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char p[256];
        ctl_write_text(&w.t, "bad.json", cases[i].json, p, sizeof p);
        int rc = ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' --evidence '%s'",
                         w.db, p, w.ev);
        char *err = ctl_out(&w.t, "err");
        if (rc != cases[i].exit || !strstr(err, cases[i].message))
            printf("case %zu: exit %d, stderr: %s\n", i, rc, err);
        assert_int_equal(rc, cases[i].exit);
        assert_non_null(strstr(err, cases[i].message));
        free(err);
    }
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --paths '%s/none.json' "
                             "--evidence '%s'", w.db, w.t.dir, w.ev),
                     66);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --evidence '%s'", w.db,
                             w.ev),
                     64);
    ctl_world_end(&w);
}

static void ctl_67_serve_playback_url_master_and_steering_list_admitted_paths_only(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256];
    serve_world_granted(&w, g);
    serve_paths_unsigned(&w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, "--cors-origin",
                           "http://player.example", NULL};
    struct server s;
    server_start_with(&w, &s, extra);

    /* 201 with playback_url; a retry returns the same bytes. */
    json_t *a1 = serve_allocate(s.port, "s-1");
    /* ... under the session id (a capability), never the allocation id */
    char want[512], sp[384];
    serve_session_path(w.db, "/v1/allocations/s-1/master.m3u8", sp, sizeof sp);
    assert_null(strstr(sp, "s-1"));
    snprintf(want, sizeof want, "http://127.0.0.1:%d%s", s.port, sp);
    assert_string_equal(json_string_value(json_object_get(a1, "playback_url")), want);
    const char *sid = json_string_value(json_object_get(json_object_get(a1, "session"), "id"));
    assert_non_null(strstr(want, sid));
    assert_string_equal(json_string_value(json_object_get(a1, "path_id")), "C");
    json_decref(a1);

    /* The multivariant playlist: steering tag, C's variants, then D's and
     * E's; A and B (excluded by the decision) never appear. */
    struct cdn_http h;
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    char line[512];
    serve_session_text(w.db, "s-1", "#EXT-X-CONTENT-STEERING:SERVER-URI=\"/v1/allocations/s-1/"
                                    "steering\",PATHWAY-ID=\"C\"\n", line, sizeof line);
    assert_true(has_line_with(h.body, line));
    assert_true(has_line_with(h.body, "#EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS=\"avc1.4d401e,"
                                      "mp4a.40.2\",RESOLUTION=640x360,STABLE-VARIANT-ID=\"r360\","
                                      "PATHWAY-ID=\"C\"\nhttp://cdn-c.invalid/ch1/r360/live.m3u8\n"));
    assert_true(has_line_with(h.body, "STABLE-VARIANT-ID=\"r720\",PATHWAY-ID=\"E\"\n"
                                      "http://cdn-e.invalid/ch1/r720/live.m3u8\n"));
    assert_null(strstr(h.body, "cdn-a"));
    assert_null(strstr(h.body, "cdn-b"));
    assert_null(strstr(h.body, "\"A\""));
    assert_true(strstr(h.body, "PATHWAY-ID=\"C\"\nhttp") < strstr(h.body, "PATHWAY-ID=\"D\"\nhttp"));
    char *v = cdn_http_header(&h, "Access-Control-Allow-Origin");
    assert_string_equal(v, "http://player.example");
    free(v);
    v = cdn_http_header(&h, "Content-Type");
    assert_string_equal(v, "application/vnd.apple.mpegurl");
    free(v);
    cdn_http_free(&h);

    /* Steering: the allocated path first, then the fallbacks in order. */
    char list[128];
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/steering?_HLS_pathway=C", &h), 200);
    assert_string_equal(h.body, "{\"VERSION\":1,\"TTL\":7,\"PATHWAY-PRIORITY\":[\"C\",\"D\",\"E\"]}");
    v = cdn_http_header(&h, "Access-Control-Allow-Origin");
    assert_string_equal(v, "http://player.example");
    free(v);
    cdn_http_free(&h);
    /* A CORS preflight, and the unknown. */
    char url[512];
    serve_session_path(w.db, "/v1/allocations/s-1/steering", sp, sizeof sp);
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s.port, sp);
    assert_int_equal(cdn_http_with("OPTIONS", url, NULL, "Origin: http://player.example", NULL, &h),
                     0);
    assert_int_equal(h.status, 204);
    v = cdn_http_header(&h, "Access-Control-Allow-Headers");
    assert_string_equal(v, "Authorization, Content-Type");
    free(v);
    cdn_http_free(&h);
    /* ... only for the configured origin: another page reads nothing */
    assert_int_equal(cdn_http_with("OPTIONS", url, NULL, "Origin: http://evil.example", NULL, &h),
                     0);
    assert_int_equal(h.status, 204);
    assert_null(cdn_http_header(&h, "Access-Control-Allow-Origin"));
    assert_null(cdn_http_header(&h, "Access-Control-Allow-Headers"));
    cdn_http_free(&h);
    assert_int_equal(get(w.db, s.port, "/v1/allocations/nobody/steering", &h), 404);
    assert_non_null(strstr(h.body, "no_such_session"));
    cdn_http_free(&h);
    /* The client-chosen allocation id opens nothing (issue 19): only the
     * session id, 128 random bits, reaches the delivery. */
    const char *by_id[] = {"/v1/allocations/s-1/master.m3u8", "/v1/allocations/s-1/steering",
                           "/v1/sessions/s-1/master.m3u8", "/v1/sessions/s-1/steering",
                           "/v1/sessions/s-1/C/r360.m3u8"};
    for (size_t i = 0; i < sizeof by_id / sizeof by_id[0]; i++) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s.port, by_id[i]);
        assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
        assert_int_equal(h.status, 404);
        assert_null(strstr(h.body, "#EXTM3U"));
        cdn_http_free(&h);
    }
    /* No signed playlist for a path that does not sign, none for an
     * excluded path. */
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/D/r360.m3u8", &h), 404);
    assert_non_null(strstr(h.body, "not_signed_here"));
    cdn_http_free(&h);
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/A/r360.m3u8", &h), 403);
    assert_non_null(strstr(h.body, "pathway_not_listed"));
    cdn_http_free(&h);

    /* The grant closes and the rule for new sessions changes (E first):
     * the allocation keeps its list; a new one gets the new rule. */
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason 'new order'", g, w.db), 0);
    static const char *const order_edc[5] = {"E", "D", "C", "A", "B"};
    json_t *sit = serve_situation(&w, order_edc);
    ctl_set(sit, "decision_time_ms", json_integer(ctl_now_ms() - 500));
    char d2[33], g2[33];
    assert_int_equal(ctl_decide_cli(&w.t, "sit2.json", sit, w.ev, w.db, d2), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, "", g2), 0);
    json_t *a2 = serve_allocate(s.port, "s-2");
    assert_string_equal(json_string_value(json_object_get(a2, "path_id")), "E");
    json_decref(a2);
    serve_priority(w.db, s.port, "s-2", list, sizeof list);
    assert_string_equal(list, "E,D,C");
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");

    /* D gets a MISMATCH after both decisions: it leaves every fallback
     * list (within a second: the evidence is read at most once a second),
     * and never comes back; the allocated paths stay first. */
    ctl_world_evidence(&w, "ev-d-bad", "D", "MISMATCH", ctl_now_ms(), true);
    sleep(2);
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,E");
    serve_priority(w.db, s.port, "s-2", list, sizeof list);
    assert_string_equal(list, "E,C");
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    assert_null(strstr(h.body, "PATHWAY-ID=\"D\""));
    assert_non_null(strstr(h.body, "PATHWAY-ID=\"E\""));
    cdn_http_free(&h);
    ctl_world_evidence(&w, "ev-d-good", "D", "MATCH", ctl_now_ms(), true);
    sleep(2);
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,E");

    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* Retention (issue 22): a path a MISMATCH removed is recorded in control.db
 * (delivery_removals), so it stays removed after `exactav evidence prune`
 * deleted that MISMATCH row and serve restarted; a MISMATCH younger than
 * --keep-mismatch is not deleted at all. */
static void ctl_71_serve_removed_path_stays_removed_after_its_mismatch_is_pruned(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256], list[128];
    serve_world_granted(&w, g);
    serve_paths_unsigned(&w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");
    ctl_world_evidence(&w, "ev-d-bad", "D", "MISMATCH", ctl_now_ms(), true);
    sleep(2);
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,E");
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM delivery_removals WHERE path_id = 'D' "
                                         "AND evidence_id = 'ev-d-bad'"), 1);
    ctl_world_evidence(&w, "ev-d-good", "D", "MATCH", ctl_now_ms() + 1, true);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* the default --keep-mismatch (30d) keeps the MISMATCH; 0s deletes it */
    assert_int_equal(ctl_run_program(&w.t, CTL_EXACTAV, "evidence prune --evidence '%s' --keep 0s", w.ev), 0);
    assert_int_equal(ctl_query_int(w.ev, "SELECT count(*) FROM evidence WHERE id = 'ev-d-bad'"), 1);
    assert_int_equal(ctl_run_program(&w.t, CTL_EXACTAV,
                                     "evidence prune --evidence '%s' --keep 0s --keep-mismatch 0s", w.ev), 0);
    assert_int_equal(ctl_query_int(w.ev, "SELECT count(*) FROM evidence WHERE id = 'ev-d-bad'"), 0);

    server_start_with(&w, &s, extra); /* a new process: nothing in memory */
    serve_priority(w.db, s.port, "s-1", list, sizeof list);
    assert_string_equal(list, "C,E");
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* ---- signed live playlists through the loopback CDN (corpus) ------------------------ */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}


#define KEY_PAIR_ID "KSIGNEDPAIRID7"

/* rsa.pem and rsa.pub, a fresh RSA-2048 key pair, in the test's folder. */
static void rsa_key(const struct ctl_world *w)
{
    assert_int_equal(sh("cd '%s' && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 "
                        "-out rsa.pem 2>/dev/null && openssl pkey -in rsa.pem -pubout -out rsa.pub",
                        w->t.dir),
                     0);
}

/* The epoch of a live timeline on which media sequence 4 (the corpus's
 * segment 28, bound by bind_reference) has just ended. */
static void live_epoch(char *epoch, size_t n)
{
    snprintf(epoch, n, "%lld", (long long)(ctl_now_ms() - 10300));
}

/* A CDN named name over the live timeline epoch, checking signatures with
 * rsa.pub (KEY_PAIR_ID) when signed. */
static void live_cdn(const struct ctl_world *w, struct cdn_proc *c, const char *name,
                     const char *epoch, bool signed_only)
{
    char pub[256];
    snprintf(pub, sizeof pub, KEY_PAIR_ID "=%s/rsa.pub", w->t.dir);
    const char *args[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360", "--live-window", "10",
                          "--live-epoch-ms", epoch, signed_only ? "--public-key" : NULL, pub, NULL};
    assert_int_equal(cdn_start(c, CDND_BIN, w->t.dir, name, args), 0);
}

/* roll.json: the reference of media sequence 4 (exactav bind). */
static void bind_reference(const struct ctl_world *w)
{
    assert_int_equal(
        sh("cd '%s' && '%s' bind --channel news-1 --program-version pv-42 --rendition 720p "
           "--media-sequence 4 --out roll.json '%s/360p30_h264_48k_160_aac_ts-0000000028.ts' "
           ">/dev/null",
           w->t.dir, CTL_EXACTAV, ROLLOVER),
        0);
}

/* exactav verify of candidate against roll.json into ev2.db (args: more
 * options): MATCH, and no secret (NULL-terminated; their first 40
 * characters) on stdout, stderr or in any file of the evidence store. */
static void verify_match_keeping_secrets(const struct ctl_world *w, const char *candidate,
                                         const char *args, const char *const *secrets)
{
    int rc = ctl_run_program(&w->t, CTL_EXACTAV,
                             "verify --no-progress --json --reference '%s/roll.json' --candidate "
                             "'%s' --evidence '%s/ev2.db' --path-id C%s",
                             w->t.dir, candidate, w->t.dir, args);
    char *out = ctl_out(&w->t, "out"), *err = ctl_out(&w->t, "err");
    if (rc != 0)
        printf("verify %s: exit %d: %s %s\n", candidate, rc, out, err);
    assert_int_equal(rc, 0);
    json_t *r = json_loads(out, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(r, "verdict")), "MATCH");
    json_decref(r);
    for (const char *const *s = secrets; *s; s++) {
        char head[41];
        snprintf(head, sizeof head, "%s", *s);
        assert_true(strlen(head) >= 8);
        assert_null(strstr(out, head));
        assert_null(strstr(err, head));
        assert_int_equal(sh("grep -c -a -F -e '%s' '%s'/ev2.db* >/dev/null", head, w->t.dir), 1);
    }
    free(out);
    free(err);
}

/* CDN C (signatures checked with rsa.pub) and CDN D (open) over one live
 * timeline; paths.json with C signing URLs (rsa.pem) and D unsigned. */
static void cdns_and_paths(struct ctl_world *w, struct cdn_proc *c, struct cdn_proc *d,
                           char *paths, size_t n)
{
    rsa_key(w);
    char epoch[32];
    live_epoch(epoch, sizeof epoch);
    live_cdn(w, c, "C", epoch, true);
    live_cdn(w, d, "D", epoch, false);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"%s/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-url\", \"key_file\": \"rsa.pem\", "
             "\"key_pair_id\": \"" KEY_PAIR_ID "\"}, \"url_ttl_s\": 120}, "
             "\"D\": {\"renditions\": {\"r360\": \"%s/ch1/r360/live.m3u8\"}, "
             "\"auth\": {\"type\": \"none\"}}}}\n",
             c->base, d->base);
    ctl_write_text(&w->t, "paths.json", text, paths, n);
}

/* The value of query parameter name in url (static buffer, "" if none). */
static const char *param(const char *url, const char *name)
{
    static char v[2048];
    v[0] = '\0';
    size_t nl = strlen(name);
    for (const char *q = strchr(url, '?'); q; q = strchr(q, '&')) {
        q++;
        if (!strncmp(q, name, nl) && q[nl] == '=') {
            snprintf(v, sizeof v, "%.*s", (int)strcspn(q + nl + 1, "&\n"), q + nl + 1);
            break;
        }
    }
    return v;
}

static void ctl_68_serve_corpus_signed_live_playlists_verify_match_and_store_no_secret(void **state)
{
    (void)state;
    test_skip_unless(ROLLOVER "/playlist.m3u8");
    struct ctl_world w;
    char g[33], paths[256];
    serve_world_granted(&w, g);
    struct cdn_proc c, d;
    cdns_and_paths(&w, &c, &d, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "s-1"));

    /* The master points C's variant at the service, D's at D itself. */
    struct cdn_http h;
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    char cline[512];
    serve_session_text(w.db, "s-1", "PATHWAY-ID=\"C\"\n/v1/allocations/s-1/C/r360.m3u8\n", cline,
                       sizeof cline);
    assert_non_null(strstr(h.body, cline));
    char dline[256];
    snprintf(dline, sizeof dline, "PATHWAY-ID=\"D\"\n%s/ch1/r360/live.m3u8\n", d.base);
    assert_non_null(strstr(h.body, dline));
    cdn_http_free(&h);

    /* Every segment URI absolute and signed for the allocation: one
     * wildcard policy over the rendition, the same query on each. */
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h), 200);
    char prefix[128], first[4096] = "", sig[1024], policy[2048];
    snprintf(prefix, sizeof prefix, "%s/ch1/r360/", c.base);
    int segs = 0;
    assert_non_null(strstr(h.body, "#EXT-X-MEDIA-SEQUENCE:"));
    long first_seq = strtol(strstr(h.body, "#EXT-X-MEDIA-SEQUENCE:") + 22, NULL, 10);
    for (char *line = strtok(h.body, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        assert_int_equal(strncmp(line, prefix, strlen(prefix)), 0);
        assert_string_equal(param(line, "Key-Pair-Id"), KEY_PAIR_ID);
        if (!segs++) {
            snprintf(first, sizeof first, "%s", line);
            snprintf(sig, sizeof sig, "%s", param(line, "Signature"));
            snprintf(policy, sizeof policy, "%s", param(line, "Policy"));
        }
        assert_string_equal(param(line, "Signature"), sig);
    }
    assert_true(segs >= 5);
    long newest = segs - 1 + first_seq;
    assert_true(strlen(sig) > 100 && strlen(policy) > 50);
    cdn_http_free(&h);
    /* CDN C accepts the segment as signed, refuses it stripped. */
    assert_int_equal(cdn_http(NULL, first, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    cdn_http_free(&h);
    *strchr(first, '?') = '\0';
    assert_int_equal(cdn_http(NULL, first, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 403);
    cdn_http_free(&h);
    /* The signed query is kept for the allocation (not signed again), and
     * the window slides. */
    sleep(3);
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h), 200);
    assert_non_null(strstr(h.body, sig));
    char *seq = strstr(h.body, "#EXT-X-MEDIA-SEQUENCE:");
    assert_non_null(seq);
    int segs2 = 0;
    for (const char *x = h.body; (x = strstr(x, "#EXTINF:")); x++)
        segs2++;
    assert_true(segs2 - 1 + strtol(seq + 22, NULL, 10) > newest);
    cdn_http_free(&h);
    /* No signed playlist of D (unsigned: the player goes to D itself). */
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/D/r360.m3u8", &h), 404);
    cdn_http_free(&h);

    /* exactav verify through the allocation's signed playlist: MATCH, and
     * the evidence holds no signature, policy or key pair id. */
    bind_reference(&w);
    char media[384];
    serve_session_path(w.db, "/v1/allocations/s-1/C/r360.m3u8", media, sizeof media);
    int rc = ctl_run_program(&w.t, CTL_EXACTAV,
                             "verify --no-progress --json --reference '%s/roll.json' --candidate "
                             "'http://127.0.0.1:%d%s' --evidence "
                             "'%s/ev2.db' --path-id C",
                             w.t.dir, s.port, media, w.t.dir);
    char *out = ctl_out(&w.t, "out");
    json_t *r = json_loads(out, 0, NULL);
    if (rc != 0)
        printf("verify exit %d: %s\n", rc, out);
    assert_int_equal(rc, 0);
    assert_string_equal(json_string_value(json_object_get(r, "verdict")), "MATCH");
    assert_null(strstr(out, sig));
    assert_null(strstr(out, policy));
    assert_null(strstr(out, KEY_PAIR_ID));
    json_decref(r);
    free(out);
    assert_int_equal(sh("sqlite3 '%s/ev2.db' .dump | grep -c -e '%.40s' -e '%.40s' -e '" KEY_PAIR_ID
                        "' >/dev/null",
                        w.t.dir, sig, policy),
                     1);
    assert_int_equal(sh("grep -c -a -e '%.40s' -e '" KEY_PAIR_ID "' '%s'/ev2.db* >/dev/null", sig,
                        w.t.dir),
                     1);

    /* Signatures stripped: the playlist itself unsigned (403), or signed
     * alone with its relative segment URIs unsigned (RFC 3986 5.2.2: they
     * do not inherit the query): UNKNOWN http_error, never MISMATCH. */
    char signed_pl[8192];
    assert_int_equal(ctl_run(&w.t, "sign-url --key '%s/rsa.pem' --key-pair-id " KEY_PAIR_ID
                                   " --url '%s/ch1/r360/live.m3u8' --expires %lld",
                             w.t.dir, c.base, (long long)(ctl_now_ms() / 1000 + 600)),
                     0);
    out = ctl_out(&w.t, "out");
    snprintf(signed_pl, sizeof signed_pl, "%.*s", (int)strcspn(out, "\n"), out);
    free(out);
    char unsigned_pl[256];
    snprintf(unsigned_pl, sizeof unsigned_pl, "%s/ch1/r360/live.m3u8", c.base);
    const char *stripped[] = {unsigned_pl, signed_pl};
    for (int i = 0; i < 2; i++) {
        rc = ctl_run_program(&w.t, CTL_EXACTAV,
                             "verify --no-progress --json --reference '%s/roll.json' --candidate "
                             "'%s' --evidence '%s/ev2.db' --path-id C",
                             w.t.dir, stripped[i], w.t.dir);
        out = ctl_out(&w.t, "out");
        r = json_loads(out, 0, NULL);
        if (rc != 2)
            printf("stripped %d: exit %d: %s\n", i, rc, out);
        assert_int_equal(rc, 2);
        assert_string_equal(json_string_value(json_object_get(r, "verdict")), "UNKNOWN");
        assert_string_equal(json_string_value(json_object_get(r, "reason")), "http_error");
        json_decref(r);
        free(out);
    }
    /* The same unsigned URLs with the signed cookies (exactav verify
     * --cookie, repeatable) and a token header: MATCH, and neither the
     * cookie values nor the header's value is printed or stored. */
    assert_int_equal(ctl_run(&w.t, "sign-cookies --key '%s/rsa.pem' --key-pair-id " KEY_PAIR_ID
                                   " --url '%s/ch1/r360/live.m3u8' --resource '%s/ch1/r360/*' "
                                   "--expires %lld",
                             w.t.dir, c.base, c.base, (long long)(ctl_now_ms() / 1000 + 600)),
                     0);
    out = ctl_out(&w.t, "out");
    char cookie_args[8192] = "", csig[1024] = "";
    int ck = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        ck += snprintf(cookie_args + ck, sizeof cookie_args - (size_t)ck, " --cookie '%s'", line);
        if (!strncmp(line, "CloudFront-Signature=", 21))
            snprintf(csig, sizeof csig, "%s", line + 21);
    }
    free(out);
    assert_true(strlen(csig) > 100);
    char extra_args[8400];
    snprintf(extra_args, sizeof extra_args, " --header 'X-Token: SECRETHEADERVALUE'%s", cookie_args);
    const char *secrets[] = {csig, "SECRETHEADERVALUE", NULL};
    verify_match_keeping_secrets(&w, unsigned_pl, extra_args, secrets);
    /* A malformed one is refused without its value. */
    assert_int_equal(ctl_run_program(&w.t, CTL_EXACTAV,
                                     "verify --reference x --candidate y --cookie "
                                     "'CloudFront-Policy=SECRET;VALUE'"),
                     64);
    char *err = ctl_out(&w.t, "err");
    assert_null(strstr(err, "SECRET"));
    assert_non_null(strstr(err, "--cookie CloudFront-Policy"));
    free(err);
    assert_int_equal(ctl_run_program(&w.t, CTL_EXACTAV,
                                     "verify --reference x --candidate y --header "
                                     "'X-Token: SECRET\x01'"),
                     64);
    err = ctl_out(&w.t, "err");
    assert_null(strstr(err, "SECRET"));
    assert_non_null(strstr(err, "--header X-Token: the value has a character"));
    free(err);

    char ev2[160];
    ctl_tmp_path(&w.t, "ev2.db", ev2, sizeof ev2);
    assert_int_equal(ctl_query_int(ev2, "SELECT count(*) FROM evidence WHERE verdict = 'MATCH'"), 2);
    assert_int_equal(ctl_query_int(ev2, "SELECT count(*) FROM evidence WHERE verdict = 'UNKNOWN'"), 2);

    /* CDN C answers 503: once the newest good copy is too old to answer
     * (playlist_cache_ms + DLV_STALE_MS after its fetch), the signed
     * playlist is 502 (the player moves on).  A refresh still under way
     * when asked is 503 upstream_pending: asked again. */
    assert_int_equal(cdn_set_answer(&c, 503), 0);
    sleep((unsigned)(1 + DLV_STALE_MS / 1000 + 1));
    long st = 0;
    for (int i = 0; i < 50; i++) {
        st = get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h);
        if (st != 503 || !strstr(h.body, "upstream_pending"))
            break;
        cdn_http_free(&h);
        usleep(100000);
    }
    assert_int_equal(st, 502);
    assert_non_null(strstr(h.body, "upstream_unavailable"));
    cdn_http_free(&h);

    assert_int_equal(server_stop(&s, SIGTERM), 0);
    cdn_stop(&c);
    cdn_stop(&d);
    ctl_world_end(&w);
}

/* ---- signed cookies (corpus) ---------------------------------------------------------- */

/* The Set-Cookie headers of an answer, split into name, value and the
 * attributes after the first "; ". */
struct set_cookie {
    char name[64], value[4096], attrs[512];
};

static size_t set_cookies(const struct cdn_http *h, struct set_cookie *c, size_t cap)
{
    size_t n = 0;
    for (const char *l = h->headers; l && *l && n < cap;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncasecmp(l, "Set-Cookie: ", 12))
            continue;
        const char *v = l + 12, *eq = strchr(v, '='), *end = v + strcspn(v, "\r\n");
        assert_non_null(eq);
        size_t vl = strcspn(eq + 1, ";\r\n");
        snprintf(c[n].name, sizeof c[n].name, "%.*s", (int)(eq - v), v);
        snprintf(c[n].value, sizeof c[n].value, "%.*s", (int)vl, eq + 1);
        const char *a = eq + 1 + vl;
        a += *a == ';' ? 2 : 0;
        snprintf(c[n].attrs, sizeof c[n].attrs, "%.*s", (int)(end > a ? end - a : 0), a);
        n++;
    }
    return n;
}

/* The cookies of c[0..n) whose Path attribute is path, as "NAME=VALUE"
 * joined by "; " (a Cookie header) into out; how many. */
static size_t cookies_of(const struct set_cookie *c, size_t n, const char *path, char *out,
                         size_t cap)
{
    char want[128];
    snprintf(want, sizeof want, "Path=%s;", path);
    size_t k = 0, len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!strncmp(c[i].attrs, want, strlen(want)))
            len += (size_t)snprintf(out + len, cap - len, "%s%s=%s", k++ ? "; " : "", c[i].name,
                                    c[i].value);
    return k;
}

static const char *cookie_value(const struct set_cookie *c, size_t n, const char *name,
                                const char *path)
{
    char want[128];
    snprintf(want, sizeof want, "Path=%s;", path);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name) && !strncmp(c[i].attrs, want, strlen(want)))
            return c[i].value;
    fail_msg("no cookie %s with Path=%s", name, path);
    return "";
}

/* The policy a CloudFront-Policy value carries (URL-safe base64 decoded). */
static void decoded_policy(const struct ctl_world *w, const char *b64, char *out, size_t cap)
{
    assert_int_equal(sh("printf %%s '%s' | tr -- '-_~' '+=/' | openssl base64 -d -A >'%s/pol.json'",
                        b64, w->t.dir),
                     0);
    char path[256];
    ctl_tmp_path(&w->t, "pol.json", path, sizeof path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t k = fread(out, 1, cap - 1, f);
    out[k] = '\0';
    fclose(f);
}

static long get_with_cookie(const char *url, const char *cookie, struct cdn_http *h)
{
    assert_int_equal(cdn_http(NULL, url, cookie, NULL, h), 0);
    return h->status;
}

static void ctl_69_serve_corpus_signed_cookies_open_the_cdn_and_verify_keeps_them_secret(
    void **state)
{
    (void)state;
    test_skip_unless(ROLLOVER "/playlist.m3u8");
    struct ctl_world w;
    char g[33], paths[256], epoch[32];
    serve_world_granted(&w, g);
    rsa_key(&w);
    live_epoch(epoch, sizeof epoch);
    struct cdn_proc c;
    live_cdn(&w, &c, "C", epoch, true);
    /* C: cookies for the CDN that checks them, sha1, a Domain (its second
     * rendition in the same directory, so the cookies' Path stays r360's);
     * D: open; E: cookies, sha256, no Domain (never fetched); two renditions
     * each. */
    char text[4096];
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {\"r360\": \"%s/ch1/r360/live.m3u8\", "
             "\"r720\": \"%s/ch1/r360/hd.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-cookies\", \"key_file\": \"rsa.pem\", "
             "\"key_pair_id\": \"" KEY_PAIR_ID "\", \"cookie_domain\": \"example.test\"}, "
             "\"url_ttl_s\": 120}, "
             "\"D\": {\"renditions\": {\"r360\": \"http://cdn-d.invalid/ch1/r360/live.m3u8\", "
             "\"r720\": \"http://cdn-d.invalid/ch1/r720/live.m3u8\"}, "
             "\"auth\": {\"type\": \"none\"}}, "
             "\"E\": {\"renditions\": {\"r360\": \"http://cdn-e.invalid/ch1/r360/live.m3u8\", "
             "\"r720\": \"http://cdn-e.invalid/ch1/r720/live.m3u8\"}, "
             "\"auth\": {\"type\": \"cloudfront-cookies\", \"key_file\": \"rsa.pem\", "
             "\"key_pair_id\": \"" KEY_PAIR_ID "\", \"hash\": \"sha256\"}}}}\n",
             c.base, c.base); /* every pathway carries the same renditions (dlv_variants.c) */
    ctl_write_text(&w.t, "paths.json", text, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, "--cors-origin",
                           "http://player.example", NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_t *a = serve_allocate(s.port, "s-1");
    int64_t commit_s = (json_integer_value(json_object_get(a, "expires_at_ms")) +
                        1000 * json_integer_value(json_object_get(a, "expected_play_s")) + 999) /
                       1000;
    json_decref(a);

    /* The master playlist sets C's three cookies and E's four; the
     * variants point at the paths themselves; credentials are allowed
     * for the named origin. */
    struct cdn_http h;
    int64_t t0 = ctl_now_ms() / 1000;
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    int64_t t1 = (ctl_now_ms() + 999) / 1000;
    char line[256];
    snprintf(line, sizeof line, "PATHWAY-ID=\"C\"\n%s/ch1/r360/live.m3u8\n", c.base);
    assert_non_null(strstr(h.body, line));
    assert_non_null(strstr(h.body, "PATHWAY-ID=\"E\"\nhttp://cdn-e.invalid/ch1/r720/live.m3u8\n"));
    char *v = cdn_http_header(&h, "Access-Control-Allow-Credentials");
    assert_string_equal(v, "true");
    free(v);
    struct set_cookie ck[16];
    size_t n = set_cookies(&h, ck, 16);
    cdn_http_free(&h);
    assert_int_equal(n, 7);
    /* C's: exactly the three names, each with Path = the rendition's
     * directory, the configured Domain, HttpOnly; no Secure or SameSite on
     * http, no Expires or Max-Age (session cookies, as CloudFront
     * recommends: the policy bounds them). */
    char cookie[8192];
    assert_int_equal(cookies_of(ck, n, "/ch1/r360/", cookie, sizeof cookie), 3);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(ck[i].attrs, "Path=/ch1/r360/;", 16))
            continue;
        assert_true(!strcmp(ck[i].name, "CloudFront-Policy") ||
                    !strcmp(ck[i].name, "CloudFront-Signature") ||
                    !strcmp(ck[i].name, "CloudFront-Key-Pair-Id"));
        assert_string_equal(ck[i].attrs, "Path=/ch1/r360/; Domain=example.test; HttpOnly");
    }
    assert_string_equal(cookie_value(ck, n, "CloudFront-Key-Pair-Id", "/ch1/r360/"), KEY_PAIR_ID);
    char policy[4096], sig[4096], pjson[1024], want[1024];
    snprintf(policy, sizeof policy, "%s", cookie_value(ck, n, "CloudFront-Policy", "/ch1/r360/"));
    snprintf(sig, sizeof sig, "%s", cookie_value(ck, n, "CloudFront-Signature", "/ch1/r360/"));
    assert_true(strlen(sig) > 100);
    /* The policy: a wildcard over the rendition, DateLessThan = the time
     * of the answer + url_ttl_s (120), never beyond the commitment. */
    decoded_policy(&w, policy, pjson, sizeof pjson);
    const char *at = strstr(pjson, "\"AWS:EpochTime\":");
    assert_non_null(at);
    long long dlt = strtoll(at + 16, NULL, 10);
    snprintf(want, sizeof want,
             "{\"Statement\":[{\"Resource\":\"%s/ch1/r360/*\",\"Condition\":{\"DateLessThan\":"
             "{\"AWS:EpochTime\":%lld}}}]}",
             c.base, dlt);
    assert_string_equal(pjson, want);
    assert_true(dlt <= commit_s && dlt <= t1 + 120);
    assert_true(dlt >= (t0 + 120 < commit_s ? t0 + 120 : commit_s));
    /* E's: the four (sha256), over the wildcard shared by its renditions. */
    char e_cookie[8192];
    assert_int_equal(cookies_of(ck, n, "/ch1/", e_cookie, sizeof e_cookie), 4);
    assert_string_equal(cookie_value(ck, n, "CloudFront-Hash-Algorithm", "/ch1/"), "SHA256");
    for (size_t i = 0; i < n; i++)
        if (!strncmp(ck[i].attrs, "Path=/ch1/;", 11))
            assert_string_equal(ck[i].attrs, "Path=/ch1/; HttpOnly");
    decoded_policy(&w, cookie_value(ck, n, "CloudFront-Policy", "/ch1/"), pjson, sizeof pjson);
    assert_non_null(strstr(pjson, "\"Resource\":\"http://cdn-e.invalid/ch1/*\""));

    /* Asked again, the same cookies (signed once per allocation and path
     * until half of their validity is used). */
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/master.m3u8", &h), 200);
    struct set_cookie again[16];
    assert_int_equal(set_cookies(&h, again, 16), 7);
    assert_string_equal(cookie_value(again, 7, "CloudFront-Signature", "/ch1/r360/"), sig);
    cdn_http_free(&h);
    /* The service signs no media playlist of a cookies path. */
    assert_int_equal(get(w.db, s.port, "/v1/allocations/s-1/C/r360.m3u8", &h), 404);
    assert_non_null(strstr(h.body, "not_signed_here"));
    cdn_http_free(&h);

    /* With exactly those cookies CDN C serves the live playlist and a
     * segment of it; without them, or outside the wildcard, 403. */
    char url[512], seg[512] = "";
    snprintf(url, sizeof url, "%s/ch1/r360/live.m3u8", c.base);
    assert_int_equal(get_with_cookie(url, cookie, &h), 200);
    for (char *l = strtok(h.body, "\n"); l && !seg[0]; l = strtok(NULL, "\n"))
        if (l[0] != '#')
            snprintf(seg, sizeof seg, "%s/ch1/r360/%s", c.base, l);
    cdn_http_free(&h);
    assert_non_null(strstr(seg, ".ts"));
    assert_int_equal(get_with_cookie(seg, cookie, &h), 200);
    assert_true(h.len > 1000);
    cdn_http_free(&h);
    assert_int_equal(get_with_cookie(url, NULL, &h), 403);
    assert_non_null(strstr(h.body, "signature_missing"));
    cdn_http_free(&h);
    assert_int_equal(get_with_cookie(seg, NULL, &h), 403);
    cdn_http_free(&h);
    snprintf(url, sizeof url, "%s/ch1/r720/live.m3u8", c.base);
    assert_int_equal(get_with_cookie(url, cookie, &h), 403);
    assert_non_null(strstr(h.body, "resource_mismatch"));
    cdn_http_free(&h);
    /* The CDN saw them as cookies. */
    json_t *log = cdn_jsonl(c.log), *e;
    size_t i, by_cookie = 0;
    json_array_foreach(log, i, e)
        by_cookie += json_integer_value(json_object_get(e, "status")) == 200 &&
                     !strcmp(json_string_value(json_object_get(e, "auth")), "cookie");
    json_decref(log);
    assert_int_equal(by_cookie, 2);

    /* exactav verify of the CDN's playlist with those cookies: MATCH, and
     * no cookie value printed or stored. */
    bind_reference(&w);
    char args[9000];
    snprintf(args, sizeof args,
             " --cookie 'CloudFront-Policy=%s' --cookie 'CloudFront-Signature=%s' "
             "--cookie 'CloudFront-Key-Pair-Id=" KEY_PAIR_ID "'",
             policy, sig);
    snprintf(url, sizeof url, "%s/ch1/r360/live.m3u8", c.base);
    const char *secrets[] = {policy, sig, KEY_PAIR_ID, NULL};
    verify_match_keeping_secrets(&w, url, args, secrets);

    assert_int_equal(server_stop(&s, SIGTERM), 0);
    cdn_stop(&c);
    ctl_world_end(&w);
}

/* Issue 19, item 10: after a MISMATCH of the allocated path, existing
 * allocations kept it first in steering and kept receiving its freshly
 * signed playlists.  policy.active_sessions.on_content_violation decides:
 * steer_away (the default) drops it at the next reload, keep keeps it. */
static void ctl_185_serve_steer_away_drops_the_allocated_path_after_its_mismatch(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], paths[256], list[128];
    serve_world_granted(&w, g);
    /* A second cohort whose decision keeps existing sessions. */
    json_t *sit = serve_situation(&w, SERVE_ORDER_CDE);
    ctl_other_isp(sit, "isp-keep");
    ctl_set(sit, "policy.active_sessions.on_content_violation", json_string("drop"));
    char d2[33], g2[33];
    assert_int_equal(ctl_decide_cli(&w.t, "bad.json", sit, w.ev, w.db, d2), 65);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "policy.active_sessions.on_content_violation"));
    free(err);
    ctl_set(sit, "policy.active_sessions.on_content_violation", json_string("keep"));
    assert_int_equal(ctl_decide_cli(&w.t, "keep.json", sit, w.ev, w.db, d2), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, "", g2), 0);

    serve_paths_unsigned(&w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", w.ev, NULL};
    struct server s;
    server_start_with(&w, &s, extra);
    json_decref(serve_allocate(s.port, "away-1"));
    json_decref(serve_allocate_isp(s.port, "keep-1", "isp-keep"));
    serve_priority(w.db, s.port, "away-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");

    /* C, the allocated path, is found MISMATCH after both decisions. */
    ctl_world_evidence(&w, "ev-c-bad", "C", "MISMATCH", ctl_now_ms(), true);
    sleep(2);
    serve_priority(w.db, s.port, "away-1", list, sizeof list);
    assert_string_equal(list, "D,E");
    serve_priority(w.db, s.port, "keep-1", list, sizeof list);
    assert_string_equal(list, "C,D,E");
    struct cdn_http h;
    assert_int_equal(get(w.db, s.port, "/v1/allocations/away-1/master.m3u8", &h), 200);
    assert_null(strstr(h.body, "PATHWAY-ID=\"C\""));
    assert_non_null(strstr(h.body, "/steering\",PATHWAY-ID=\"D\"\n"));
    cdn_http_free(&h);
    /* its playlists on C are not answered any more */
    assert_int_equal(get(w.db, s.port, "/v1/allocations/away-1/C/r360.m3u8", &h), 403);
    assert_non_null(strstr(h.body, "pathway_not_listed"));
    cdn_http_free(&h);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM delivery_removals WHERE path_id = "
                                         "'C' AND evidence_id = 'ev-c-bad'"),
                     1); /* the steer_away decision's (keep never looks) */

    /* Nowhere left to steer to: 410 path_withdrawn, never C again. */
    ctl_world_evidence(&w, "ev-d-bad", "D", "MISMATCH", ctl_now_ms(), true);
    ctl_world_evidence(&w, "ev-e-bad", "E", "MISMATCH", ctl_now_ms(), true);
    sleep(2);
    assert_int_equal(get(w.db, s.port, "/v1/allocations/away-1/steering", &h), 410);
    assert_non_null(strstr(h.body, "path_withdrawn"));
    cdn_http_free(&h);
    assert_int_equal(get(w.db, s.port, "/v1/allocations/away-1/master.m3u8", &h), 410);
    cdn_http_free(&h);
    serve_priority(w.db, s.port, "keep-1", list, sizeof list);
    assert_string_equal(list, "C");
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_66_serve_paths_json_is_strict_and_names_the_key,
                                  kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_67_serve_playback_url_master_and_steering_list_admitted_paths_only,
            kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_68_serve_corpus_signed_live_playlists_verify_match_and_store_no_secret,
            kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_69_serve_corpus_signed_cookies_open_the_cdn_and_verify_keeps_them_secret,
            kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_71_serve_removed_path_stays_removed_after_its_mismatch_is_pruned, kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_185_serve_steer_away_drops_the_allocated_path_after_its_mismatch, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
