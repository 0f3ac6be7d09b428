/* Issue 16 end to end with the real player: hls.js 1.7.4 in Debian's
 * headless chromium, one page per session, each loading its allocation
 * through player/exactav-session.js (tests/player/page/session.html), the
 * service (`stepctl serve --paths`) storing what hls.js reported, and
 * `stepctl qoe` / `stepctl next` judging it.
 *
 * Every scenario is its own cohort (ISP) and grant, decided with the
 * scenario's path as the only eligible one (no fallback), and every faulty
 * path is a prefix of its own on the loopback CDN (exactav-cdnd --fault), so
 * a fault touches one session:
 *   clean1, clean2  path C, nothing wrong                     -> success
 *   stall           path S: the 8th segment held 90 s         -> success, rebuffering
 *   stall_loose     path T: the same stall, a looser policy   -> (for `next` only)
 *   notfound        path N: every segment 404                 -> failure
 *   exit            path H: every segment held; the page
 *                   leaves before a frame could be shown      -> exit before start
 *   cut             path C: the page cuts the reports off
 *                   after the first sta=s record              -> unknown
 *   unused          path C: allocated, never played           -> unused
 *   no_playlist     path M: its level playlist 404            -> failure (for the kit's
 *                   fatal-error record: hls.js sends none)
 * The six scenarios of the issue together: 3 successes (the stalled one
 * among them), 1 failure, 1 exit before start, 1 unknown, 1 unused (the
 * two extra sessions, stall_loose and no_playlist, are counted apart).  The
 * stalled session's rebuffering is within 25 % of the 90 s held (and of what the
 * page's own <video> element saw) (the only
 * timing asserted, the tolerance); `next` closes issuance of the
 * strict stall grant with qoe_rebuffer_above_max and proposes the next step
 * for the loose one.  Waits are bounded and generous (a loaded 2-core
 * machine); skipped (77) without chromium, npm or the corpus. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "player_rig.h"
#include "serve_rig.h"
#include "test_named.h"

#define ROLLOVER CORPUS_DIR "/media/hls-ts-rollover"
#define WAIT_S 240       /* bounds every wait; a shared 2-core machine can be slow */
#define STALL_MS_TEXT "90000" /* how long the stalled segment is held, ms */
#define STALL_MS 90000
#define STALL_NTH "8" /* which segment request of the session is held: about 10 s into playing */
#define STRICT_REBUFFER "0.05"
#define LOOSE_REBUFFER "0.95"

enum scenario_id {
    CLEAN1, CLEAN2, STALL, STALL_LOOSE, NOTFOUND, EXIT, CUT, UNUSED, NO_PLAYLIST, N_SCENARIOS
};

struct scenario {
    const char *name, *path, *page_params; /* page_params: NULL, "cut=1" or "leave=1" */
    const char *max_rebuffer;
    char isp[32], grant[33], session[33];
    json_t *alloc;
    struct player_rig rig;
    bool playing; /* its rig runs */
};

static struct scenario scenarios[N_SCENARIOS] = {
    [CLEAN1] = {"clean1", "C", NULL, STRICT_REBUFFER},
    [CLEAN2] = {"clean2", "C", NULL, STRICT_REBUFFER},
    [STALL] = {"stall", "S", NULL, STRICT_REBUFFER},
    [STALL_LOOSE] = {"stall_loose", "T", NULL, LOOSE_REBUFFER},
    [NOTFOUND] = {"notfound", "N", NULL, STRICT_REBUFFER},
    [EXIT] = {"exit", "H", "leave=1", STRICT_REBUFFER},
    [CUT] = {"cut", "C", "cut=1", STRICT_REBUFFER},
    [UNUSED] = {"unused", "C", NULL, STRICT_REBUFFER},
    [NO_PLAYLIST] = {"no_playlist", "M", NULL, STRICT_REBUFFER},
};

/* ---- the world: decisions, grants, the CDN, the service ------------------------------- */

/* The main situation for one scenario: its cohort (ISP), candidate C
 * renamed to the scenario's path (A is excluded by its MISMATCH, B has no
 * evidence: the path is the only eligible one), and a policy that judges a
 * step of one session by the rules of issue 16. */
static json_t *scenario_situation(const struct ctl_world *w, const struct scenario *sc)
{
    json_t *sit = ctl_world_situation(w);
    ctl_fast(sit);
    ctl_other_isp(sit, sc->isp);
    json_object_set_new(ctl_cand(sit, "C"), "path_id", json_string(sc->path));
    json_t *order = json_object_get(json_object_get(sit, "policy"), "order"), *o;
    size_t i;
    json_array_foreach(order, i, o)
        if (!strcmp(json_string_value(o), "C"))
            json_array_set_new(order, i, json_string(sc->path));
    ctl_set(sit, "policy.qoe.classes", json_pack("{s:s,s:s}", "exit_before_start", "excluded",
                                                 "autoplay_refused", "excluded"));
    ctl_set(sit, "policy.qoe.min_completeness", json_string("0.9"));
    ctl_set(sit, "policy.qoe.min_samples", json_integer(1));
    ctl_set(sit, "policy.qoe.min_start_success_ratio", json_string("0.5"));
    ctl_set(sit, "policy.qoe.max_startup_p90_ms", json_integer(60000)); /* a loaded machine */
    ctl_set(sit, "policy.qoe.max_rebuffer_ratio", json_string(sc->max_rebuffer));
    ctl_set(sit, "policy.qoe.max_age_s", json_integer(3600));
    ctl_set(sit, "policy.steps", json_pack("{s:i,s:i,s:s}", "factor", 3, "max_allocations", 50,
                                           "max_rate_per_s", "150000"));
    return sit;
}

static void decide_and_grant(struct ctl_world *w, struct scenario *sc)
{
    snprintf(sc->isp, sizeof sc->isp, "isp-%s", sc->name);
    if (strcmp(sc->path, "C") != 0) {
        char id[64];
        snprintf(id, sizeof id, "ev-%s-pre", sc->name);
        ctl_world_evidence(w, id, sc->path, "MATCH", w->now - 300000, true);
    }
    json_t *sit = scenario_situation(w, sc);
    char d[33], name[64];
    snprintf(name, sizeof name, "sit-%s.json", sc->name);
    assert_int_equal(ctl_decide_cli(&w->t, name, sit, w->ev, w->db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "", sc->grant), 0);
}

/* One CDN: the live channel at /ch1/r360, and each faulty path under a
 * prefix of its own. */
static void start_cdn(struct ctl_world *w, struct cdn_proc *cdn)
{
    char epoch[32];
    snprintf(epoch, sizeof epoch, "%lld", (long long)(ctl_now_ms() - 12000));
    const char *args[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360", "--live-epoch-ms", epoch,
                          "--live-window", "60", /* 2 min: the stalled player is far behind */
                          "--fault", "/stall=stall:" STALL_NTH ":" STALL_MS_TEXT,
                          "--fault", "/stall2=stall:" STALL_NTH ":" STALL_MS_TEXT,
                          "--fault", "/nf=404", "--fault", "/hold=hold", NULL};
    assert_int_equal(cdn_start(cdn, CDND_BIN, w->t.dir, "cdn", args), 0);
}

static void start_service(struct ctl_world *w, const struct cdn_proc *cdn, struct server *s)
{
    static const char *const dirs[][2] = {
        {"C", ""}, {"S", "/stall"}, {"T", "/stall2"}, {"N", "/nf"}, {"H", "/hold"}, {"M", "/missing"}};
    char paths[4096], file[256];
    int n = snprintf(paths, sizeof paths, "{\"paths\": {");
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        n += snprintf(paths + n, sizeof paths - (size_t)n,
                      "%s\"%s\": {\"renditions\": {\"r360\": {\"url\": \"%s%s/ch1/r360/live.m3u8\", "
                      "\"bandwidth\": 900000, \"codecs\": \"avc1.4d401e,mp4a.40.2\", "
                      "\"resolution\": \"640x360\"}}, \"auth\": {\"type\": \"none\"}}",
                      i ? ", " : "", dirs[i][0], cdn->base, dirs[i][1]);
    snprintf(paths + n, sizeof paths - (size_t)n, "}}\n");
    ctl_tmp_path(&w->t, "paths.json", file, sizeof file);
    assert_int_equal(cdn_write_file(w->t.dir, "paths.json", paths), 0);
    /* Each session's page has an origin of its own, started after the
     * service: '*' lets them all read (they send no credentials); the
     * named-origin case is player_02's, the refused one player_05's. */
    const char *extra[] = {"--paths", file, "--evidence", w->ev, "--cors-origin", "*", NULL};
    server_start_with(w, s, extra);
}

static void allocate(const struct server *s, struct scenario *sc)
{
    char id[64];
    snprintf(id, sizeof id, "viewer-%s", sc->name);
    sc->alloc = serve_allocate_isp(s->port, id, sc->isp);
    assert_string_equal(json_string_value(json_object_get(sc->alloc, "path_id")), sc->path);
    const char *sid =
        json_string_value(json_object_get(json_object_get(sc->alloc, "session"), "id"));
    assert_non_null(sid);
    snprintf(sc->session, sizeof sc->session, "%s", sid);
}

/* ---- one page per session ----------------------------------------------------------------- */

static void open_page(struct ctl_world *w, struct scenario *sc)
{
    char dir[PATH_MAX], cmd[4 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", w->t.dir, sc->name);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(player_rig_start(&sc->rig, dir), 0);
    snprintf(cmd, sizeof cmd,
             "cp '%s/node_modules/hls.js/dist/hls.mjs' '%s/hls-esm.js' && "
             "cp '%s/../../player/exactav-session.js' '%s/page/session.html' '%s/'",
             PLAYER_NODE_DIR, sc->rig.page_root, PLAYER_SOURCE_DIR, PLAYER_SOURCE_DIR,
             sc->rig.page_root);
    assert_int_equal(system(cmd), 0);
    char *body = json_dumps(sc->alloc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_int_equal(cdn_write_file(sc->rig.page_root, "body.json", body), 0);
    free(body);
    /* player_rig_open opens player.html: this test's page is the kit's */
    snprintf(cmd, sizeof cmd, "cp '%s/session.html' '%s/player.html'", sc->rig.page_root,
             sc->rig.page_root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(player_rig_open(&sc->rig, "kit", sc->page_params), 0);
    sc->playing = true;
    printf("%s: session %s, grant %s, page %s\n", sc->name, sc->session, sc->grant,
           sc->rig.page_url);
}

static void close_page(struct scenario *sc)
{
    if (sc->playing)
        player_rig_stop(&sc->rig);
    sc->playing = false;
}

/* ---- what the service stored, what stepctl says -------------------------------------------- */

static long long session_count(const struct ctl_world *w, const struct scenario *sc,
                               const char *where)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM session_reports WHERE session_id = '%s'%s%s",
             sc->session, where ? " AND " : "", where ? where : "");
    return ctl_query_int(w->db, sql);
}

/* `stepctl qoe --grant G --json` (caller decrefs), NULL when it fails. */
static json_t *qoe_of(struct ctl_world *w, const struct scenario *sc)
{
    char out[256];
    ctl_tmp_path(&w->t, "out.txt", out, sizeof out);
    bool ok = ctl_run(&w->t, "qoe --db '%s' --grant %s --json", w->db, sc->grant) == 0;
    return ok ? json_load_file(out, 0, NULL) : NULL;
}

/* The value at "a.b.c" inside o (NULL when absent). */
static const json_t *at(const json_t *o, const char *dotted)
{
    const char *dot = strchr(dotted, '.');
    if (!dot)
        return json_object_get(o, dotted);
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(dot - dotted), dotted);
    return at(json_object_get(o, head), dot + 1);
}

/* The integer at "a.b.c", -1 when there is none. */
static long long member(const json_t *o, const char *dotted)
{
    const json_t *v = at(o, dotted);
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* Waits (1 s polls, bounded) until the grant's QoE has `key` >= 1; the QoE. */
static json_t *wait_qoe(struct ctl_world *w, const struct scenario *sc, const char *key)
{
    for (int i = 0; i < WAIT_S; i++) {
        json_t *q = qoe_of(w, sc);
        if (q && member(q, key) >= 1)
            return q;
        json_decref(q);
        sleep(1);
    }
    printf("%s: no %s after %d s; records stored: %lld\n", sc->name, key, WAIT_S,
           session_count(w, sc, NULL));
    fail();
    return NULL;
}

/* The page's own record of the <video> element: is there an event `name`? */
static bool page_saw(const struct scenario *sc, const char *name)
{
    json_t *all = player_rig_reports(&sc->rig), *r;
    size_t i;
    bool seen = false;
    json_array_foreach(all, i, r)
        {
        const char *e = json_string_value(json_object_get(r, "event"));
        seen = seen || (e && !strcmp(e, name));
    }
    json_decref(all);
    return seen;
}

/* The page's rebuffering: each waiting after the first playing, to the next
 * playing, in ms (what the <video> element saw, on the browser's clock). */
static long long page_rebuffer_ms(const struct scenario *sc)
{
    json_t *all = player_rig_reports(&sc->rig), *r;
    size_t i;
    long long total = 0, waiting_at = -1;
    bool played = false;
    json_array_foreach(all, i, r)
    {
        const char *e = json_string_value(json_object_get(r, "event"));
        long long t = json_integer_value(json_object_get(r, "t_ms"));
        if (e && !strcmp(e, "playing")) {
            if (played && waiting_at >= 0)
                total += t - waiting_at;
            played = true;
            waiting_at = -1;
        } else if (e && !strcmp(e, "waiting") && played && waiting_at < 0) {
            waiting_at = t;
        }
    }
    json_decref(all);
    return total;
}

/* ---- the scenarios ----------------------------------------------------------------------- */

/* A page played until its grant's QoE counts it under `counted`: one
 * attempt, none under `other`.  The QoE (caller decrefs). */
static json_t *play_one(struct ctl_world *w, struct scenario *sc, const char *counted,
                        const char *other)
{
    open_page(w, sc);
    json_t *q = wait_qoe(w, sc, counted);
    close_page(sc);
    assert_int_equal(member(q, "attempts"), 1);
    assert_int_equal(member(q, other), 0);
    return q;
}

/* Every segment 404 (or the level playlist 404) and no fallback: hls.js
 * gives up (a fatal error, reported by the kit), one failure. */
static void play_notfound(struct ctl_world *w, struct scenario *sc)
{
    json_decref(play_one(w, sc, "failures", "successes"));
    assert_false(page_saw(sc, "playing"));
    /* hls.js's records carry no sid (not in the target's keys); the kit's does */
    printf("%s: fatal records (sta=f or e=e): %lld, of them sent by the kit: %lld\n", sc->name,
           session_count(w, sc, "(sta = 'f' OR event = 'e')"),
           session_count(w, sc, "event = 'e' AND record LIKE '%sid=%'"));
}

/* Every segment held: no frame can come; once the service has the
 * session's start the page leaves, and its beacon says so. */
static void play_exit(struct ctl_world *w, struct scenario *sc)
{
    open_page(w, sc);
    for (int i = 0; i < WAIT_S && session_count(w, sc, "sta = 's'") < 1; i++)
        sleep(1);
    assert_true(session_count(w, sc, "sta = 's'") >= 1);
    assert_int_equal(cdn_write_file(sc->rig.page_root, "leave.txt", "leave\n"), 0);
    json_t *q = wait_qoe(w, sc, "provenance.classes.exit_before_start");
    close_page(sc);
    assert_false(page_saw(sc, "playing"));
    assert_int_equal(member(q, "attempts"), 0); /* the policy excludes it */
    assert_int_equal(session_count(w, sc, "form = 'query'"), 1); /* the beacon */
    json_decref(q);
}

/* The page plays, but its reports stop after the first sta=s record: the
 * service cannot know the outcome, one unknown. */
static void play_cut(struct ctl_world *w, struct scenario *sc)
{
    open_page(w, sc);
    for (int i = 0; i < WAIT_S && !page_saw(sc, "playing"); i++)
        sleep(1);
    assert_true(page_saw(sc, "playing")); /* it did play: the telemetry was lost */
    sleep(5); /* what the page would have sent by now never arrives */
    close_page(sc);
    json_t *q = qoe_of(w, sc);
    assert_non_null(q);
    assert_int_equal(member(q, "unknown"), 1);
    assert_int_equal(member(q, "attempts"), 1);
    assert_int_equal(member(q, "successes"), 0);
    assert_int_equal(session_count(w, sc, "sta IS NOT 's'"), 0);
    json_decref(q);
}

/* Waits until the stalled session has played again after rebuffering
 * (a p record after an r one, and a few seconds more); its QoE. */
static json_t *finish_stall(struct ctl_world *w, struct scenario *sc)
{
    char after[256];
    snprintf(after, sizeof after,
             "sta = 'p' AND sn > (SELECT min(sn) FROM session_reports WHERE session_id = '%s' "
             "AND sta = 'r')",
             sc->session);
    for (int i = 0; i < WAIT_S + STALL_MS / 1000 && session_count(w, sc, after) < 3; i++)
        sleep(1);
    close_page(sc);
    assert_true(session_count(w, sc, after) >= 3);
    json_t *q = qoe_of(w, sc);
    assert_non_null(q);
    long long rebuf = member(q, "provenance.rebuffer.rebuffering_ms");
    char *rb = json_dumps(json_object_get(json_object_get(q, "provenance"), "rebuffer"),
                          JSON_COMPACT);
    printf("%s: rebuffering %lld ms by the service (the page's own <video>: %lld ms), held %d "
           "ms; %s\n", sc->name, rebuf, page_rebuffer_ms(sc), STALL_MS, rb ? rb : "?");
    free(rb);
    assert_int_equal(member(q, "successes"), 1);
    assert_int_equal(member(q, "attempts"), 1);
    assert_true(json_is_true(json_object_get(q, "complete")));
    /* the tolerance: within 25 % of the injected stall (the player
     * first plays out what it had buffered: 7 to 9 s here) */
    assert_true(rebuf * 4 >= STALL_MS * 3 && rebuf * 4 <= STALL_MS * 5);
    /* and of what the <video> element itself saw */
    long long seen = page_rebuffer_ms(sc);
    assert_true(rebuf * 4 >= seen * 3 && rebuf * 4 <= seen * 5);
    return q;
}

/* `stepctl next` on a stall grant: the step's own evidence and access. */
static json_t *next_of(struct ctl_world *w, const struct scenario *sc, int want_rc)
{
    char id[64];
    snprintf(id, sizeof id, "ev-%s-step", sc->name);
    ctl_world_evidence(w, id, sc->path, "MATCH", ctl_now_ms(), true);
    json_t *sit = scenario_situation(w, sc), *c = ctl_cand(sit, sc->path);
    json_t *obs = json_pack("{s:O,s:O}", "access", json_object_get(c, "access"), "resources",
                            json_object_get(c, "resources"));
    ctl_shift_ms(obs, ctl_now_ms() - 10 -
                          json_integer_value(json_object_get(json_object_get(obs, "access"),
                                                             "observed_at_ms")));
    char path[256], name[64];
    snprintf(name, sizeof name, "obs-%s.json", sc->name);
    ctl_write_json(&w->t, name, obs, path, sizeof path);
    json_decref(obs);
    json_decref(sit);
    int rc = ctl_run(&w->t, "next %s --db '%s' --evidence '%s' --input '%s' --json", sc->grant,
                     w->db, w->ev, path);
    char *out = ctl_out(&w->t, "out");
    if (rc != want_rc)
        fail_msg("next %s: exit %d: %s", sc->name, rc, out);
    json_t *r = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "qoe_source"),
                                                          "source")),
                        "sessions");
    return r;
}

static void player_04_six_sessions_qoe_counts_each_scenario_and_next_decides(void **state)
{
    (void)state;
    const char *need[] = {ROLLOVER "/playlist.m3u8", NULL};
    player_rig_need(need);
    struct ctl_world w;
    ctl_world_begin(&w);
    printf("work dir: %s\n", w.t.dir);
    for (int i = 0; i < N_SCENARIOS; i++)
        decide_and_grant(&w, &scenarios[i]);
    struct cdn_proc cdn;
    start_cdn(&w, &cdn);
    struct server s;
    start_service(&w, &cdn, &s);
    for (int i = 0; i < N_SCENARIOS; i++)
        allocate(&s, &scenarios[i]);

    /* The two stalls run while the others play one after another. */
    open_page(&w, &scenarios[STALL]);
    open_page(&w, &scenarios[STALL_LOOSE]);
    json_decref(play_one(&w, &scenarios[CLEAN1], "successes", "failures"));
    json_decref(play_one(&w, &scenarios[CLEAN2], "successes", "failures"));
    play_notfound(&w, &scenarios[NOTFOUND]);
    play_exit(&w, &scenarios[EXIT]);
    play_cut(&w, &scenarios[CUT]);
    play_notfound(&w, &scenarios[NO_PLAYLIST]);
    json_t *stall = finish_stall(&w, &scenarios[STALL]);
    json_decref(finish_stall(&w, &scenarios[STALL_LOOSE]));

    /* The six scenarios of the issue together. */
    long long total[6] = {0};
    static const char *const keys[6] = {"successes", "failures", "unknown", "unused",
                                        "provenance.classes.exit_before_start", "out_of_context"};
    for (int i = 0; i < N_SCENARIOS; i++) {
        if (i == STALL_LOOSE || i == NO_PLAYLIST)
            continue;
        json_t *q = qoe_of(&w, &scenarios[i]);
        assert_non_null(q);
        for (int k = 0; k < 6; k++)
            total[k] += member(q, keys[k]);
        json_decref(q);
    }
    printf("together: %lld successes, %lld failures, %lld unknown, %lld unused, %lld exit before "
           "start, %lld out of context\n",
           total[0], total[1], total[2], total[3], total[4], total[5]);
    assert_int_equal(total[0], 3);
    assert_int_equal(total[1], 1);
    assert_int_equal(total[2], 1);
    assert_int_equal(total[3], 1);
    assert_int_equal(total[4], 1);
    assert_int_equal(total[5], 0);
    json_t *q = qoe_of(&w, &scenarios[UNUSED]);
    assert_int_equal(member(q, "unused"), 1);
    assert_int_equal(member(q, "attempts"), 0);
    json_decref(q);
    json_decref(stall);

    /* `next` from the step's own sessions. */
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    json_t *r = next_of(&w, &scenarios[STALL], 4);
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "negative");
    assert_non_null(strstr(json_string_value(json_object_get(r, "reason")),
                           "qoe_rebuffer_above_max"));
    json_decref(r);
    r = next_of(&w, &scenarios[STALL_LOOSE], 0);
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "positive");
    assert_true(json_is_string(json_object_get(r, "next_decision_id")));
    json_decref(r);

    for (int i = 0; i < N_SCENARIOS; i++)
        json_decref(scenarios[i].alloc);
    cdn_stop(&cdn);
    ctl_world_end(&w);
}

/* A failing assertion leaves the test early: no chromium is left behind. */
static int stop_pages(void **state)
{
    for (int i = 0; i < N_SCENARIOS; i++)
        close_page(&scenarios[i]);
    return kill_leftovers(state);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(player_04_six_sessions_qoe_counts_each_scenario_and_next_decides,
                                  stop_pages),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = test_run_named("player_sessions", tests, sizeof tests / sizeof tests[0], argc, argv);
    curl_global_cleanup();
    return rc;
}
