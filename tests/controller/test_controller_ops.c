/* Operating the loop (issue 17, docs/controller.md "Operating the loop"):
 * `stepctl next --dry-run`, access from probes in `next`, the fallbacks a
 * next decision keeps, paths.json variant attributes, policy.refusal,
 * delivery of admitted renditions only, `stepctl status`.  End to end on
 * loopback: real SQLite files, the stepctl binary, `stepctl serve` as a
 * child process, libcurl clients. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "evidence.h"
#include "serve_rig.h"

/* ---- the world: C granted with D and E eligible beside it ------------------- */

struct ops {
    struct ctl_world w;
    json_t *sit; /* the decided situation */
    char d[33], g[33];
};

static void ops_begin(struct ops *o)
{
    ctl_world_begin(&o->w);
    ctl_world_evidence(&o->w, "ev-d-pre", "D", "MATCH", o->w.now - 300000, true);
    ctl_world_evidence(&o->w, "ev-e-pre", "E", "MATCH", o->w.now - 300000, true);
    o->sit = serve_situation(&o->w, SERVE_ORDER_CDE);
    assert_int_equal(ctl_decide_cli(&o->w.t, "sit.json", o->sit, o->w.ev, o->w.db, o->d), 0);
    assert_int_equal(ctl_grant_cli(&o->w.t, o->w.db, o->d, "", o->g), 0);
}

static void ops_end(struct ops *o)
{
    json_decref(o->sit);
    ctl_world_end(&o->w);
}

/* n allocations through a running `stepctl serve` (no delivery). */
static void allocate(struct ops *o, int n)
{
    struct server s;
    server_start(&o->w, &s);
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "a-%d", i);
        json_decref(serve_allocate(s.port, id));
    }
    assert_int_equal(server_stop(&s, SIGTERM), 0);
}

/* The world granted, n allocations made, then a MATCH of C observed. */
static void ops_step(struct ops *o, int n)
{
    ops_begin(o);
    allocate(o, n);
    usleep(2000);
    ctl_world_evidence(&o->w, "ev-step-1", "C", "MATCH", ctl_now_ms(), true);
}

static void assert_err_has(struct ctl_world *w, const char *needle)
{
    char *e = ctl_out(&w->t, "err");
    if (!strstr(e, needle))
        fail_msg("stderr lacks '%s': %s", needle, e);
    free(e);
}

/* The bytes of a file ("" when absent); caller frees. */
static char *bytes_of(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = calloc(1, 1);
    *n = 0;
    if (!f)
        return b;
    int c;
    size_t cap = 1;
    while ((c = fgetc(f)) != EOF) {
        if (*n + 1 >= cap)
            b = realloc(b, cap *= 2);
        b[(*n)++] = (char)c;
    }
    fclose(f);
    return b;
}

/* control.db and its WAL, byte for byte. */
struct snapshot {
    char *db, *wal;
    size_t ndb, nwal;
};

static void snap(const struct ops *o, struct snapshot *s)
{
    char wal[160];
    snprintf(wal, sizeof wal, "%s-wal", o->w.db);
    s->db = bytes_of(o->w.db, &s->ndb);
    s->wal = bytes_of(wal, &s->nwal);
}

static void assert_same_snapshot(const struct ops *o, struct snapshot *before)
{
    struct snapshot after;
    snap(o, &after);
    assert_int_equal(after.ndb, before->ndb);
    assert_int_equal(after.nwal, before->nwal);
    assert_memory_equal(after.db, before->db, after.ndb);
    assert_memory_equal(after.wal, before->wal, after.nwal);
    free(after.db);
    free(after.wal);
    free(before->db);
    free(before->wal);
}

#define q(o, ...) ctl_queryf((o)->w.db, __VA_ARGS__) /* ctl_test.h */

/* ---- 1: next --dry-run -------------------------------------------------------- */

static void ctl_140_next_dry_run_writes_nothing_and_exits_as_next_would(void **state)
{
    (void)state;
    struct ops o;
    ops_step(&o, 2);
    char obs[160];
    ctl_observations(&o.w.t, o.sit, "obs.json", obs, sizeof obs);

    /* Positive: the whole answer, exit 0, the database byte-identical. */
    struct snapshot before;
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run "
                                     "--json", o.g, o.w.db, o.w.ev, obs),
                     0);
    assert_same_snapshot(&o, &before);
    json_t *r = ctl_out_json(&o.w.t);
    assert_true(json_is_true(json_object_get(r, "dry_run")));
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "positive");
    assert_true(json_is_null(json_object_get(r, "next_id")));
    assert_true(json_is_null(json_object_get(r, "next_decision_id")));
    assert_false(json_is_true(json_object_get(r, "issuance_closed")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "proposed_step"),
                                                        "max_allocations")),
                     json_integer_value(json_object_get(json_object_get(r, "growth"),
                                                        "next_max_allocations")));
    json_decref(r);
    /* The human summary says nothing was recorded. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run",
                             o.g, o.w.db, o.w.ev, obs),
                     0);
    assert_same_snapshot(&o, &before);
    char *out = ctl_out(&o.w.t, "out");
    assert_non_null(strstr(out, "dry run of next for grant"));
    assert_non_null(strstr(out, "nothing recorded"));
    free(out);
    assert_int_equal(q(&o, "SELECT count(*) FROM next_decisions"), 0);
    assert_int_equal(q(&o, "SELECT count(*) FROM grants WHERE status = 'active'"), 1);

    /* Negative (no observations: resources missing): exit 4, nothing written. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --dry-run --json", o.g,
                             o.w.db, o.w.ev),
                     4);
    assert_same_snapshot(&o, &before);
    r = ctl_out_json(&o.w.t);
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "negative");
    json_decref(r);

    /* The real review then agrees with the first dry run. */
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --json", o.g,
                             o.w.db, o.w.ev, obs),
                     0);
    r = ctl_out_json(&o.w.t);
    assert_null(json_object_get(r, "dry_run")); /* a new member only where used */
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "positive");
    json_decref(r);
    /* A dry run of a reviewed grant is refused as next refuses it. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --dry-run", o.g, o.w.db,
                             o.w.ev),
                     65);
    assert_same_snapshot(&o, &before);
    assert_err_has(&o.w, "already_reviewed");
    /* Bad input: an unknown grant, a value given to the flag, a missing db. */
    assert_int_equal(ctl_run(&o.w.t, "next nosuch --db '%s' --evidence '%s' --dry-run", o.w.db,
                             o.w.ev),
                     65);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --dry-run=yes", o.g,
                             o.w.db, o.w.ev),
                     64);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s/absent.db' --evidence '%s' --dry-run", o.g,
                             o.w.t.dir, o.w.ev),
                     66);
    char absent[160];
    snprintf(absent, sizeof absent, "%s/absent.db", o.w.t.dir);
    assert_int_equal(access(absent, F_OK), -1);
    ops_end(&o);
}

/* ---- 2: access from probes ------------------------------------------------------- */

static void probe(struct ops *o, const char *id, const char *path, enum evidence_probe_status st,
                  int64_t observed)
{
    struct evidence_db *e = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(o->w.ev, EVIDENCE_OPEN_RW, &e, err, sizeof err), EVIDENCE_OK);
    struct evidence_probe p = {
        .id = id, .path_id = path, .channel = "news-1", .rendition = "720p",
        .object = "https://cdn/x.m3u8", .status = st,
        .reason = st == EVIDENCE_PROBE_PASS ? "ok" : "download_http_error",
        .observed_at_ms = observed, .observed_end_ms = observed + 10,
    };
    assert_int_equal(evidence_probe_insert(e, &p, err, sizeof err), EVIDENCE_OK);
    evidence_close(e);
}

/* The step's observations without access. */
static void observations_without_access(struct ops *o, char *path, size_t n)
{
    ctl_observations(&o->w.t, o->sit, "obs-full.json", path, n);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    json_object_del(j, "access");
    ctl_write_json(&o->w.t, "obs-noaccess.json", j, path, n);
    json_decref(j);
}

static void ctl_141_next_takes_access_from_the_newest_probe_and_records_it(void **state)
{
    (void)state;
    struct ops o;
    ops_step(&o, 2);
    char obs[160];
    observations_without_access(&o, obs, sizeof obs);
    /* Without a probe the access is missing: UNKNOWN (dry run). */
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run "
                                     "--json", o.g, o.w.db, o.w.ev, obs),
                     4);
    json_t *r = ctl_out_json(&o.w.t);
    assert_non_null(strstr(json_string_value(json_object_get(r, "reason")), "access_missing"));
    assert_null(json_object_get(r, "access_source"));
    json_decref(r);
    /* A fresh PASS probe of C gives it: positive, and the answer names it. */
    probe(&o, "pc-pass", "C", EVIDENCE_PROBE_PASS, ctl_now_ms() - 1000);
    probe(&o, "pd-viol", "D", EVIDENCE_PROBE_VIOLATION, ctl_now_ms() - 500); /* another path */
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run "
                                     "--json", o.g, o.w.db, o.w.ev, obs),
                     0);
    r = ctl_out_json(&o.w.t);
    const json_t *src = json_object_get(r, "access_source");
    assert_string_equal(json_string_value(json_object_get(src, "probe_id")), "pc-pass");
    assert_string_equal(json_string_value(json_object_get(src, "source")), "probe");
    json_decref(r);
    /* A newer VIOLATION probe, and no observations file at all: next
     * closes issuance with access as the reason. */
    probe(&o, "pc-viol", "C", EVIDENCE_PROBE_VIOLATION, ctl_now_ms() - 100);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --json", o.g, o.w.db,
                             o.w.ev),
                     4);
    r = ctl_out_json(&o.w.t);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "VIOLATION");
    const char *reason = json_string_value(json_object_get(r, "reason"));
    assert_true(!strncmp(reason, "access VIOLATION access_incompatible", 36));
    src = json_object_get(r, "access_source");
    assert_string_equal(json_string_value(json_object_get(src, "probe_id")), "pc-viol");
    json_decref(r);
    assert_int_equal(q(&o, "SELECT count(*) FROM grants WHERE id = '%s' AND status = 'closed' AND "
                           "close_status = 'VIOLATION' AND close_reason LIKE 'access VIOLATION%%'",
                       o.g),
                     1);
    assert_int_equal(q(&o, "SELECT count(*) FROM next_decisions WHERE grant_id = '%s' AND "
                           "observations IS NULL AND result LIKE '%%\"probe_id\":\"pc-viol\"%%'",
                       o.g),
                     1);
    ops_end(&o);
}

/* A positive review whose access came from a probe records it in the new
 * decision's situation, which replays without evidence.db. */
static void ctl_142_next_with_probe_access_proposes_a_decision_that_replays(void **state)
{
    (void)state;
    struct ops o;
    ops_step(&o, 1);
    probe(&o, "pc-pass", "C", EVIDENCE_PROBE_PASS, ctl_now_ms() - 1000);
    char obs[160];
    observations_without_access(&o, obs, sizeof obs);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --json", o.g,
                             o.w.db, o.w.ev, obs),
                     0);
    json_t *r = ctl_out_json(&o.w.t);
    char nd[33];
    snprintf(nd, sizeof nd, "%s", json_string_value(json_object_get(r, "next_decision_id")));
    json_decref(r);
    assert_int_equal(q(&o, "SELECT count(*) FROM decisions WHERE id = '%s' AND situation LIKE "
                           "'%%\"probe_id\":\"pc-pass\"%%'", nd),
                     1);
    assert_int_equal(unlink(o.w.ev), 0); /* replay needs no store */
    assert_int_equal(ctl_run(&o.w.t, "replay %s --db '%s'", nd, o.w.db), 0);
    ops_end(&o);
}

/* ---- 3: paths.json whose pathways offer other variants -------------------------- */

/* paths.json with C's two renditions as given and D's as given. */
static void two_paths(const struct ops *o, const char *c_r, const char *d_r, char *path,
                      size_t n)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"paths\": {\"C\": {\"renditions\": {%s}, \"auth\": {\"type\": \"none\"}}, "
             "\"D\": {\"renditions\": {%s}, \"auth\": {\"type\": \"none\"}}}}",
             c_r, d_r);
    ctl_write_text(&o->w.t, "paths.json", text, path, n);
}

#define V360(host, bw, extra)                                                                       \
    "\"r360\": {\"url\": \"http://" host "/ch1/r360/live.m3u8\", \"bandwidth\": " bw             \
    ", \"codecs\": \"avc1.4d401e,mp4a.40.2\", \"resolution\": \"640x360\"" extra "}"
#define V720(host, bw, extra)                                                                       \
    "\"r720\": {\"url\": \"http://" host "/ch1/r720/live.m3u8\", \"bandwidth\": " bw             \
    ", \"codecs\": \"avc1.64001f,mp4a.40.2\", \"resolution\": \"1280x720\"" extra "}"
#define C_SET V360("cdn-c.invalid", "900000", ", \"frame_rate\": \"25\"") ", " \
              V720("cdn-c.invalid", "2500000", ", \"frame_rate\": \"25\"")

static void ctl_143_paths_json_with_other_variants_on_another_pathway_is_refused(void **state)
{
    (void)state;
    struct ops o;
    ctl_world_begin(&o.w);
    static const struct {
        const char *d, *message;
    } cases[] = {
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25\"") ", " \
         V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\", \"codecs\": \"x\""),
         "duplicate object key"}, /* a duplicate member */
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25\"") ", " \
         "\"r720\": {\"url\": \"http://cdn-d.invalid/ch1/r720/live.m3u8\", \"bandwidth\": "
         "2500000, \"codecs\": \"avc1.640028,mp4a.40.2\", \"resolution\": \"1280x720\", "
         "\"frame_rate\": \"25\"}",
         "paths.D.renditions.r720.codecs: \"avc1.640028,mp4a.40.2\" differs from "
         "paths.C.renditions.r720.codecs \"avc1.64001f,mp4a.40.2\""},
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25\"") ", " \
         "\"r720\": {\"url\": \"http://cdn-d.invalid/ch1/r720/live.m3u8\", \"bandwidth\": "
         "2500000, \"codecs\": \"avc1.64001f,mp4a.40.2\", \"resolution\": \"1280x718\", "
         "\"frame_rate\": \"25\"}",
         "paths.D.renditions.r720.resolution: \"1280x718\" differs"},
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"30\"") ", " \
         V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\""),
         "paths.D.renditions.r360.frame_rate: \"30\" differs"},
        {V360("cdn-d.invalid", "900000", "") ", " \
         V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\""),
         "paths.D.renditions.r360.frame_rate: \"\" differs"},
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25\""),
         "paths.D.renditions.r720: missing (paths.C has it)"},
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25\"") ", " \
         V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\"") ", "
         "\"r1080\": \"http://cdn-d.invalid/ch1/r1080/live.m3u8\"",
         "paths.D.renditions.r1080: paths.C has no such rendition"},
        {V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\"") ", " \
         V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25\""),
         "paths.D.renditions.r720: listed where paths.C lists r360"},
        {V360("cdn-d.invalid", "3000000", ", \"frame_rate\": \"25\"") ", " \
         V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\""),
         "paths.D.renditions.r720.bandwidth: orders r360 and r720 otherwise than paths.C"},
        {V360("cdn-d.invalid", "900000", ", \"frame_rate\": \"25 fps\"") ", " \
         V720("cdn-d.invalid", "2500000", ", \"frame_rate\": \"25\""),
         "paths.D.renditions.r360.frame_rate: a decimal string expected"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char p[160];
        two_paths(&o, C_SET, cases[i].d, p, sizeof p);
        int rc = ctl_run(&o.w.t, "serve --db '%s' --listen 127.0.0.1:0 --paths '%s' --evidence '%s'",
                         o.w.db, p, o.w.ev);
        char *err = ctl_out(&o.w.t, "err");
        if (rc != 65 || !strstr(err, cases[i].message))
            fail_msg("case %zu: exit %d, stderr: %s", i, rc, err);
        free(err);
        assert_int_equal(access(o.w.db, F_OK), -1); /* nothing written */
    }
    /* BANDWIDTH may differ when its order does not: accepted. */
    char p[160];
    two_paths(&o, C_SET,
              V360("cdn-d.invalid", "800000", ", \"frame_rate\": \"25\"") ", " \
              V720("cdn-d.invalid", "2000000", ", \"frame_rate\": \"25\""),
              p, sizeof p);
    const char *extra[] = {"--paths", p, "--evidence", o.w.ev, NULL};
    struct server s;
    server_start_with(&o.w, &s, extra);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&o.w);
}

/* ---- 4: the pre-declared refusal answered as declared ------------------------------ */

/* The world's situation with no eligible path, its refusal replaced. */
static json_t *refused_situation(const struct ctl_world *w, json_t *refusal)
{
    json_t *sit = ctl_world_situation(w);
    ctl_set(ctl_cand(sit, "C"), "access.status", json_string("VIOLATION"));
    ctl_set(sit, "policy.refusal", refusal);
    return sit;
}

static void ctl_144_serve_answers_the_refusal_as_the_policy_declares_it(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char d[33];
    /* Bad declarations: exit 65 naming the field, nothing written. */
    static const char *const bad[][2] = {
        {"{\"id\": \"r\", \"http_status\": 200}", "policy.refusal.http_status: must be an integer in [400, 599]"},
        {"{\"id\": \"r\", \"http_status\": 600}", "policy.refusal.http_status: must be an integer in [0, 599]"},
        {"{\"id\": \"r\", \"http_status\": \"503\"}", "policy.refusal.http_status: must be an integer"},
        {"{\"id\": \"r\", \"http_status\": 403, \"retry_after_s\": 5}", "policy.refusal.retry_after_s: only with an http_status of 429 or 503"},
        {"{\"id\": \"r\", \"retry_after_s\": 5}", "policy.refusal.retry_after_s: only with"},
        {"{\"id\": \"r\", \"http_status\": 503, \"retry_after_s\": 86401}", "policy.refusal.retry_after_s: must be an integer in [0, 86400]"},
        {"{\"id\": \"r\", \"http_status\": 503, \"retry_after_s\": 1.5}", "policy.refusal.retry_after_s: must be an integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *sit = refused_situation(&w, json_loads(bad[i][0], 0, NULL));
        int rc = ctl_decide_cli(&w.t, "bad.json", sit, w.ev, w.db, d);
        json_decref(sit);
        char *err = ctl_out(&w.t, "err");
        if (rc != 65 || !strstr(err, bad[i][1]))
            fail_msg("case %zu: exit %d: %s", i, rc, err);
        free(err);
        assert_int_equal(access(w.db, F_OK), -1);
    }
    /* Declared 503 with Retry-After: 30: the service answers exactly that. */
    json_t *sit = refused_situation(
        &w, json_pack("{s:s,s:s,s:i,s:i}", "id", "refuse-503", "description",
                      "new sessions get HTTP 503 with Retry-After: 30", "http_status", 503,
                      "retry_after_s", 30));
    assert_int_equal(ctl_decide_cli(&w.t, "none.json", sit, w.ev, w.db, d), 4);
    json_decref(sit);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM decisions WHERE json_extract(result,"
                                         " '$.refusal.http_status') = 503"),
                     1);
    struct server s;
    server_start(&w, &s);
    struct cdn_http h;
    serve_post_allocation(s.port, "r-1", &h);
    assert_int_equal(h.status, 503);
    char *v = cdn_http_header(&h, "Retry-After");
    assert_non_null(v);
    assert_string_equal(v, "30");
    free(v);
    json_t *b = json_loads(h.body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(b, "error")), "no_eligible_path");
    json_t *rf = json_object_get(b, "refusal");
    assert_string_equal(json_string_value(json_object_get(rf, "id")), "refuse-503");
    assert_int_equal(json_integer_value(json_object_get(rf, "http_status")), 503);
    assert_int_equal(json_integer_value(json_object_get(rf, "retry_after_s")), 30);
    json_decref(b);
    cdn_http_free(&h);
    /* Nothing declared: 403 as before, no Retry-After, and the decision's
     * refusal object has no new member (records replay as they were). */
    sit = refused_situation(&w, json_pack("{s:s}", "id", "refuse-plain"));
    usleep(2000);
    assert_int_equal(ctl_decide_cli(&w.t, "none2.json", sit, w.ev, w.db, d), 4);
    json_decref(sit);
    serve_post_allocation(s.port, "r-2", &h);
    assert_int_equal(h.status, 403);
    v = cdn_http_header(&h, "Retry-After");
    assert_null(v);
    assert_non_null(strstr(h.body, "refuse-plain"));
    assert_null(strstr(h.body, "http_status"));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM decisions WHERE result LIKE "
                                         "'%refuse-plain%' AND result NOT LIKE '%http_status%'"),
                     1);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d, w.db), 0);
    ctl_world_end(&w);
}

/* ---- 5: the next decision keeps its eligible fallbacks ------------------------------ */

/* The step's observations of C, with paths.D a copy of them (D's
 * startup_p90_ms set to p90 when p90 > 0); extra: more members of paths
 * (JSON text inside the object, or ""). */
static void observations_with_d(struct ops *o, int p90, const char *extra, char *path, size_t n)
{
    ctl_observations(&o->w.t, o->sit, "obs-c.json", path, n);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    json_t *d = json_deep_copy(j);
    if (p90 > 0)
        ctl_set(d, "qoe.startup_p90_ms", json_integer(p90));
    char text[256];
    snprintf(text, sizeof text, "{%s}", extra);
    json_t *paths = json_loads(text, 0, NULL);
    assert_non_null(paths);
    json_object_set_new(paths, "D", d);
    json_object_set_new(j, "paths", paths);
    ctl_write_json(&o->w.t, "obs-cd.json", j, path, n);
    json_decref(j);
}

static long get(int port, const char *path, struct cdn_http *h)
{
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, h), 0);
    return h->status;
}

/* stepctl serve delivering paths A..E, reading the world's evidence. */
static void serve_delivering(struct ops *o, struct server *s)
{
    char paths[160];
    serve_paths_unsigned(&o->w, paths, sizeof paths);
    const char *extra[] = {"--paths", paths, "--evidence", o->w.ev, NULL};
    server_start_with(&o->w, s, extra);
}

/* The master playlist of allocation id, allocated first when new (caller frees). */
static char *master_of(const char *db, int port, const char *id, bool allocate_first)
{
    if (allocate_first)
        json_decref(serve_allocate(port, id));
    char path[384], by_alloc[128];
    snprintf(by_alloc, sizeof by_alloc, "/v1/allocations/%s/master.m3u8", id);
    serve_session_path(db, by_alloc, path, sizeof path); /* its session's URL */
    struct cdn_http h;
    assert_int_equal(get(port, path, &h), 200);
    char *body = strdup(h.body);
    cdn_http_free(&h);
    return body;
}

static void ctl_145_next_keeps_the_eligible_fallbacks_into_the_next_grant(void **state)
{
    (void)state;
    struct ops o;
    ops_step(&o, 2);
    char obs[160];
    /* Bad "paths": refused naming the member, nothing written. */
    static const struct {
        const char *extra, *message;
    } bad[] = {
        {"\"Z\": {}", "invalid_observations: paths.Z: not a candidate of the grant's decision"},
        {"\"C\": {}", "invalid_observations: paths.C: the granted path's observations are"},
        {"\"E\": {\"latency\": {}}", "invalid_observations: paths.E.latency: unknown member"},
        {"\"E\": {\"qoe\": 3}", "invalid_observations: paths.E.qoe: must be an object"},
        {"\"E\": []", "invalid_observations: paths.E: must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        observations_with_d(&o, 0, bad[i].extra, obs, sizeof obs);
        int rc = ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s'", o.g, o.w.db,
                         o.w.ev, obs);
        char *err = ctl_out(&o.w.t, "err");
        if (rc != 65 || !strstr(err, bad[i].message))
            fail_msg("case %zu: exit %d: %s", i, rc, err);
        free(err);
    }
    assert_int_equal(q(&o, "SELECT count(*) FROM next_decisions"), 0);
    assert_int_equal(q(&o, "SELECT count(*) FROM grants WHERE status = 'active'"), 1);

    /* D observed better (startup p90 1000 ms against C's 1200, tie 150):
     * the rule prefers D now; that is no fallback but a new decision. */
    observations_with_d(&o, 1000, "", obs, sizeof obs);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run "
                                     "--json", o.g, o.w.db, o.w.ev, obs),
                     4);
    json_t *r = ctl_out_json(&o.w.t);
    assert_non_null(strstr(json_string_value(json_object_get(r, "reason")),
                           "preference UNKNOWN preferred_other_path"));
    json_decref(r);

    /* D observed like C, E not observed at all (no probe: access missing):
     * the next decision has C chosen and D eligible beside it. */
    observations_with_d(&o, 0, "", obs, sizeof obs);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --json",
                             o.g, o.w.db, o.w.ev, obs),
                     0);
    r = ctl_out_json(&o.w.t);
    char nd[33];
    snprintf(nd, sizeof nd, "%s", json_string_value(json_object_get(r, "next_decision_id")));
    const json_t *ev = json_object_get(r, "evaluation");
    assert_string_equal(json_string_value(json_object_get(ev, "chosen")), "C");
    const json_t *elig = json_object_get(ev, "eligible");
    assert_int_equal(json_array_size(elig), 2);
    assert_string_equal(json_string_value(json_array_get(elig, 1)), "D");
    json_decref(r);
    assert_int_equal(ctl_run(&o.w.t, "replay %s --db '%s'", nd, o.w.db), 0);
    char g2[33];
    assert_int_equal(ctl_grant_cli(&o.w.t, o.w.db, nd, NULL, g2), 0);
    assert_int_equal(q(&o, "SELECT count(*) FROM grants WHERE id = '%s' AND fallback_path_ids = "
                           "'[\"D\"]'", g2),
                     1);
    /* The next step's master playlist still has the fallback (and not E). */
    struct server s;
    serve_delivering(&o, &s);
    char *m = master_of(o.w.db, s.port, "next-1", true);
    assert_non_null(strstr(m, "PATHWAY-ID=\"C\"\nhttp://cdn-c.invalid/ch1/r720/"));
    assert_non_null(strstr(m, "PATHWAY-ID=\"D\"\nhttp://cdn-d.invalid/ch1/r720/"));
    assert_null(strstr(m, "cdn-e"));
    free(m);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ops_end(&o);
}

/* ---- 6: delivery of admitted renditions only ----------------------------------------- */

static void ctl_147_a_rendition_mismatch_removes_it_from_new_master_playlists(void **state)
{
    (void)state;
    struct ops o;
    ops_begin(&o);
    struct server s;
    serve_delivering(&o, &s);
    char *m = master_of(o.w.db, s.port, "m-1", true);
    assert_non_null(strstr(m, "PATHWAY-ID=\"C\"\nhttp://cdn-c.invalid/ch1/r720/"));
    free(m);
    /* A MISMATCH of C's r720 after the decision (and a MATCH of C's r360). */
    ctl_world_evidence_of(&o.w, "ev-c-r720", "C", "r720", "MISMATCH", ctl_now_ms(), true);
    ctl_world_evidence_of(&o.w, "ev-c-r360", "C", "r360", "MATCH", ctl_now_ms(), true);
    usleep(1100 * 1000); /* evidence.db is read at most once a second */
    m = master_of(o.w.db, s.port, "m-2", true);
    assert_null(strstr(m, "http://cdn-c.invalid/ch1/r720/"));
    assert_non_null(strstr(m, "PATHWAY-ID=\"C\"\nhttp://cdn-c.invalid/ch1/r360/"));
    assert_non_null(strstr(m, "PATHWAY-ID=\"D\"\nhttp://cdn-d.invalid/ch1/r720/"));
    free(m);
    /* A later MATCH brings nothing back under this decision. */
    ctl_world_evidence_of(&o.w, "ev-c-r720-ok", "C", "r720", "MATCH", ctl_now_ms() + 1, true);
    usleep(1100 * 1000);
    m = master_of(o.w.db, s.port, "m-2", false);
    assert_null(strstr(m, "http://cdn-c.invalid/ch1/r720/"));
    free(m);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ops_end(&o);
}

/* ---- 7: stepctl status -------------------------------------------------------------- */

static const json_t *only_cohort(const json_t *st)
{
    const json_t *cs = json_object_get(st, "cohorts");
    assert_int_equal(json_array_size(cs), 1);
    return json_array_get(cs, 0);
}

static void ctl_146_status_shows_decision_grant_evidence_and_what_next_would_do(void **state)
{
    (void)state;
    struct ops o;
    ops_step(&o, 2);
    struct snapshot before;
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --evidence '%s' --json", o.w.db, o.w.ev),
                     0);
    assert_same_snapshot(&o, &before);
    json_t *st = ctl_out_json(&o.w.t);
    const json_t *c = only_cohort(st);
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "cohort"), "isp")),
                        "isp-x");
    const json_t *d = json_object_get(c, "decision"), *g = json_object_get(c, "grant");
    assert_string_equal(json_string_value(json_object_get(d, "id")), o.d);
    assert_string_equal(json_string_value(json_object_get(d, "chosen")), "C");
    assert_string_equal(json_string_value(json_object_get(g, "id")), o.g);
    assert_string_equal(json_string_value(json_object_get(g, "state")), "active");
    assert_int_equal(json_integer_value(json_object_get(g, "allocated")), 2);
    assert_int_equal(json_integer_value(json_object_get(g, "remaining")),
                     json_integer_value(json_object_get(g, "max_allocations")) - 2);
    const json_t *n = json_object_get(g, "next");
    assert_string_equal(json_string_value(json_object_get(n, "review")), "dry_run");
    assert_string_equal(json_string_value(json_object_get(n, "branch")), "negative");
    size_t i;
    const json_t *e;
    int seen_c = 0;
    json_array_foreach(json_object_get(c, "evidence"), i, e) if (
        !strcmp(json_string_value(json_object_get(e, "path_id")), "C"))
    {
        assert_string_equal(json_string_value(json_object_get(e, "id")), "ev-step-1");
        assert_string_equal(json_string_value(json_object_get(e, "verdict")), "MATCH");
        seen_c++;
    }
    assert_int_equal(seen_c, 1);
    assert_int_equal(json_array_size(json_object_get(c, "evidence")), 4); /* B has none */
    json_decref(st);
    /* The human view. */
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --evidence '%s'", o.w.db, o.w.ev), 0);
    char *out = ctl_out(&o.w.t, "out");
    assert_non_null(strstr(out, "cohort news-1/eu-west/isp-x/web-hlsjs/2026.11.3/720p\n"));
    assert_non_null(strstr(out, ": active, 2 of "));
    assert_non_null(strstr(out, "next now (dry run): negative (UNKNOWN): "));
    assert_non_null(strstr(out, "evidence C: MATCH (720p, pv-42)"));
    free(out);
    /* Without evidence.db: no evidence and no dry run. */
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --json", o.w.db), 0);
    st = ctl_out_json(&o.w.t);
    c = only_cohort(st);
    assert_null(json_object_get(c, "evidence"));
    assert_true(json_is_null(json_object_get(json_object_get(c, "grant"), "next")));
    json_decref(st);
    /* After the review: the proposed decision is the cohort's newest, the
     * reviewed grant is closed and its review is shown as recorded. */
    char obs[160];
    ctl_observations(&o.w.t, o.sit, "obs.json", obs, sizeof obs);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s'", o.g,
                             o.w.db, o.w.ev, obs),
                     0);
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --evidence '%s' --json", o.w.db, o.w.ev),
                     0);
    st = ctl_out_json(&o.w.t);
    c = only_cohort(st);
    assert_string_not_equal(json_string_value(json_object_get(json_object_get(c, "decision"),
                                                              "id")),
                            o.d);
    g = json_object_get(c, "grant");
    assert_string_equal(json_string_value(json_object_get(g, "state")), "closed");
    n = json_object_get(g, "next");
    assert_string_equal(json_string_value(json_object_get(n, "review")), "recorded");
    assert_string_equal(json_string_value(json_object_get(n, "branch")), "positive");
    json_decref(st);
    /* Bad input: a clear error, nothing written. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "status"), 64);
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' extra", o.w.db), 64);
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --evidnce x", o.w.db), 64);
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s/absent.db'", o.w.t.dir), 66);
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --evidence '%s'", o.w.db, o.w.db), 66);
    assert_err_has(&o.w, "evidence.db --evidence");
    assert_int_equal(ctl_run(&o.w.t, "status --db '%s' --evidence '%s/none.db'", o.w.db,
                             o.w.t.dir),
                     66);
    assert_same_snapshot(&o, &before);
    char absent[160];
    snprintf(absent, sizeof absent, "%s/none.db", o.w.t.dir);
    assert_int_equal(access(absent, F_OK), -1);
    ops_end(&o);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_140_next_dry_run_writes_nothing_and_exits_as_next_would,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_141_next_takes_access_from_the_newest_probe_and_records_it,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_142_next_with_probe_access_proposes_a_decision_that_replays,
                                  kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_143_paths_json_with_other_variants_on_another_pathway_is_refused, kill_leftovers),
        cmocka_unit_test_teardown(ctl_144_serve_answers_the_refusal_as_the_policy_declares_it,
                                  kill_leftovers),
        cmocka_unit_test_teardown(ctl_145_next_keeps_the_eligible_fallbacks_into_the_next_grant,
                                  kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_147_a_rendition_mismatch_removes_it_from_new_master_playlists, kill_leftovers),
        cmocka_unit_test_teardown(
            ctl_146_status_shows_decision_grant_evidence_and_what_next_would_do, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
