/* test_controller_clock.c - control.db's clock (docs/security.md#time):
 * the high-water mark every writer acts at, the refusal of a clock behind
 * it, the service's heartbeat, and `release` waiting for the service to
 * confirm an expiry.  Clock steps are real: libfaketime (Debian's
 * `faketime` package, installed by scripts/install-deps --test) preloaded
 * into the stepctl process, its monotonic clock left alone. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "record.h"
#include "serve_rig.h"
#include "test_skip.h"

#define FAKETIME_LIB "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

/* Every process started until faked_off() sees its wall clock moved by
 * offset ("-60", "+3600": libfaketime's relative form, seconds). */
static void faked_on(const char *offset)
{
    if (access(FAKETIME_LIB, R_OK) != 0) {
        printf("SKIPPED: %s is absent (Debian's faketime package: scripts/install-deps --test)\n",
               FAKETIME_LIB);
        exit(TEST_SKIP_EXIT);
    }
    static char asan[512];
    const char *old = getenv("ASAN_OPTIONS");
    /* ASan insists on being the first library; libfaketime goes first. */
    snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", old ? old : "", old ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    setenv("LD_PRELOAD", FAKETIME_LIB, 1);
    setenv("FAKETIME", offset, 1);
    setenv("DONT_FAKE_MONOTONIC", "1", 1);
}

static void faked_off(void)
{
    unsetenv("LD_PRELOAD");
    unsetenv("FAKETIME");
    unsetenv("DONT_FAKE_MONOTONIC");
}

#define q(w, ...) ctl_queryf((w)->db, __VA_ARGS__) /* ctl_test.h */

static long long mark(const struct ctl_world *w, const char *name)
{
    return q(w, "SELECT COALESCE((SELECT at_ms FROM clock_marks WHERE name = '%s'), 0)", name);
}

static bool err_has(const struct ctl_world *w, const char *text)
{
    char *e = ctl_out(&w->t, "err");
    bool has = e && strstr(e, text);
    if (!has)
        printf("stderr: %s\n", e ? e : "(none)");
    free(e);
    return has;
}

/* The world decided and granted with grant ARGS; the grant id into g. */
static void granted(struct ctl_world *w, const char *args, char g[33])
{
    ctl_world_begin(w);
    json_t *sit = ctl_world_situation(w);
    ctl_fast(sit);
    char d[33];
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", sit, w->ev, w->db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, args, g), 0);
}

/* Waits (at most 10 s) until the service's heartbeat reaches at_ms. */
static long long heartbeat_reaches(const struct ctl_world *w, long long at_ms)
{
    long long hb = 0;
    for (int i = 0; i < 200 && (hb = mark(w, "serve_heartbeat")) < at_ms; i++)
        usleep(50000);
    return hb;
}

static void ctl_180_control_db_keeps_a_high_water_mark_that_never_goes_back(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    granted(&w, "", g);
    assert_int_equal(q(&w, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    long long hw = mark(&w, "high_water");
    assert_true(hw >= q(&w, "SELECT MAX(at_ms) FROM grant_events"));
    assert_true(hw >= q(&w, "SELECT created_at_ms FROM grants"));
    /* The triggers hold against anyone with sqlite3: no going back, no
     * deleting, no other mark. */
    assert_int_not_equal(ctl_sql(w.db, "UPDATE clock_marks SET at_ms = at_ms - 1"), 0);
    assert_int_not_equal(ctl_sql(w.db, "DELETE FROM clock_marks"), 0);
    assert_int_not_equal(ctl_sql(w.db, "INSERT INTO clock_marks VALUES ('other', 1)"), 0);
    assert_int_equal(mark(&w, "high_water"), hw);
    /* A schema 4 file (before the marks) is migrated with its high-water
     * mark at the latest time it recorded. */
    assert_int_equal(ctl_sql(w.db, CTL_V9_UNDONE CTL_V8_UNDONE "DROP TABLE clock_marks; DROP INDEX allocations_subject; "
                                   "ALTER TABLE allocations DROP COLUMN subject; "
                                   "PRAGMA user_version = 4"),
                     0); /* (schema 6's column undone too: it is added again) */
    long long recorded = q(&w, "SELECT MAX(at_ms) FROM grant_events");
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0);
    assert_int_equal(q(&w, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_true(mark(&w, "high_water") >= recorded);
    assert_true(mark(&w, "high_water") >= q(&w, "SELECT MAX(at_ms) FROM grant_events"));
    ctl_world_end(&w);
}

/* Issue 19, item 7: after the clock stepped back 60 s, a grant recorded
 * `expired` allocated again. */
static void ctl_181_a_clock_stepped_back_never_allocates_under_an_expired_grant(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    granted(&w, "--valid-for 2", g);
    struct server s;
    server_start(&w, &s);
    json_t *a = serve_allocate(s.port, "clock-a1");
    json_decref(a);
    long long until = q(&w, "SELECT valid_until_ms FROM grants");
    while (ctl_now_ms() < until + 200)
        usleep(50000);
    struct cdn_http h;
    serve_post_allocation(s.port, "clock-a2", &h);
    assert_int_equal(h.status, 403);
    assert_non_null(strstr(h.body, "grant_expired"));
    cdn_http_free(&h);
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE kind = 'expired'"), 1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* The same service with its clock 60 s back: 503 clock_behind, with
     * Retry-After and both times, and nothing written. */
    faked_on("-60");
    server_start(&w, &s);
    faked_off();
    serve_post_allocation(s.port, "clock-a3", &h);
    assert_int_equal(h.status, 503);
    json_t *body = json_loads(h.body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(body, "error")), "clock_behind");
    long long clock = json_integer_value(json_object_get(body, "clock_ms"));
    long long hw = json_integer_value(json_object_get(body, "high_water_ms"));
    assert_true(hw - clock > 55000 && hw - clock < 70000);
    json_decref(body);
    char *retry = cdn_http_header(&h, "Retry-After");
    assert_non_null(retry);
    free(retry);
    cdn_http_free(&h);
    assert_int_equal(q(&w, "SELECT count(*) FROM allocations"), 1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* Behind within the skew: the service acts at the high-water mark, so
     * the expired grant stays expired (403), never 201. */
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE clock_marks SET at_ms = %lld WHERE name = 'high_water'",
             (long long)ctl_now_ms() + 1000);
    assert_int_equal(ctl_sql(w.db, sql), 0);
    faked_on("-1");
    server_start(&w, &s);
    faked_off();
    serve_post_allocation(s.port, "clock-a4", &h);
    assert_int_equal(h.status, 403);
    assert_non_null(strstr(h.body, "grant_expired"));
    cdn_http_free(&h);
    assert_int_equal(server_stop(&s, SIGTERM), 0);

    /* The operator's commands refuse the stepped-back clock too. */
    faked_on("-60");
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 65);
    faked_off();
    assert_true(err_has(&w, "clock_behind"));
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE kind = 'revoked'"), 0);
    ctl_world_end(&w);
}

/* Issue 19, item 7: `stepctl release` with a clock an hour ahead voided a
 * reservation the service still honoured. */
static void ctl_182_release_with_a_clock_ahead_cannot_free_what_the_service_honours(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    granted(&w, "", g); /* valid for the step's window */
    struct server s;
    server_start(&w, &s);
    assert_true(heartbeat_reaches(&w, ctl_now_ms() - 1000) > 0);
    faked_on("+3600");
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason early", g, w.db), 65);
    faked_off();
    assert_true(err_has(&w, "expiry_unconfirmed"));
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations WHERE state <> 'pending'"), 0);
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE kind = 'expired'"), 0);
    /* The refused release wrote nothing, not even a high-water mark an
     * hour ahead: the service still allocates. */
    assert_true(mark(&w, "high_water") < ctl_now_ms() + 60000);
    json_t *a = serve_allocate(s.port, "ahead-a1");
    json_decref(a);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* The service confirms its clock while idle; release follows it. */
static void ctl_183_release_waits_for_the_service_heartbeat_past_validity(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    granted(&w, "--valid-for 2", g);
    long long until = q(&w, "SELECT valid_until_ms FROM grants");
    while (ctl_now_ms() < until + 200)
        usleep(50000);
    /* Expired by this clock, but no service has said so. */
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason done", g, w.db), 65);
    assert_true(err_has(&w, "expiry_unconfirmed"));
    struct server s;
    server_start(&w, &s);
    long long hb = heartbeat_reaches(&w, until);
    assert_true(hb >= until);
    /* Idle, it goes on confirming (once a second). */
    assert_true(heartbeat_reaches(&w, hb + 900) >= hb + 900);
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason done", g, w.db), 0);
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations WHERE state = 'pending'"), 0);
    assert_true(q(&w, "SELECT count(*) FROM reservations WHERE state = 'voided'") > 0);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

/* Every writer refuses a clock behind the high-water mark, naming both
 * times; a dry run of next refuses as next would, writing nothing. */
static void ctl_184_every_writer_refuses_a_clock_behind_the_high_water_mark(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    granted(&w, "", g);
    json_t *sit = ctl_world_situation(&w);
    char d2[33], obs[160];
    ctl_other_isp(sit, "isp-clock");
    assert_int_equal(ctl_decide_cli(&w.t, "sit2.json", sit, w.ev, w.db, d2), 0);
    ctl_observations(&w.t, sit, "obs.json", obs, sizeof obs);
    json_decref(sit);
    long long ahead = (long long)ctl_now_ms() + 60000;
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE clock_marks SET at_ms = %lld WHERE name = 'high_water'",
             ahead);
    assert_int_equal(ctl_sql(w.db, sql), 0);
    long long events = q(&w, "SELECT count(*) FROM grant_events");
    char expect[64];
    snprintf(expect, sizeof expect, "control.db has acted at %lld ms", ahead);
    char g2[33];
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, "", g2), 65);
    assert_true(err_has(&w, "clock_behind") && err_has(&w, expect));
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 65);
    assert_true(err_has(&w, "clock_behind"));
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason r", g, w.db), 65);
    assert_true(err_has(&w, "clock_behind"));
    assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run", g,
                             w.db, w.ev, obs),
                     65);
    assert_true(err_has(&w, "clock_behind"));
    assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s'", g, w.db,
                             w.ev, obs),
                     65);
    assert_true(err_has(&w, "clock_behind"));
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events"), events);
    assert_int_equal(q(&w, "SELECT count(*) FROM grants"), 1);
    assert_int_equal(mark(&w, "high_water"), ahead);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_180_control_db_keeps_a_high_water_mark_that_never_goes_back, kill_leftovers),
        cmocka_unit_test_teardown(ctl_181_a_clock_stepped_back_never_allocates_under_an_expired_grant, kill_leftovers),
        cmocka_unit_test_teardown(ctl_182_release_with_a_clock_ahead_cannot_free_what_the_service_honours, kill_leftovers),
        cmocka_unit_test_teardown(ctl_183_release_waits_for_the_service_heartbeat_past_validity, kill_leftovers),
        cmocka_unit_test_teardown(ctl_184_every_writer_refuses_a_clock_behind_the_high_water_mark, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
