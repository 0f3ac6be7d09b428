/* Controller tests in process: the fixtures, each condition's three states,
 * freshness and applicability, tiered cost, the preference rule, the record
 * in control.db and replay.  Real SQLite files in private temp dirs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cond.h"
#include "cost.h"
#include "ctl_test.h"
#include "decision.h"
#include "evidence_scope.h"
#include "num.h"
#include "output.h"
#include "record.h"
#include "replay.h"

/* Decides on the fixture with the given rows, then runs check. */
struct run {
    json_t *sit;
    struct evidence_rows rows;
    struct sit_situation s;
    struct dcn_result r;
};

static void run_begin(struct run *x, const char *fixture)
{
    memset(x, 0, sizeof *x);
    x->sit = ctl_fixture_json(fixture);
}

static void run_decide(struct run *x)
{
    ctl_decide(x->sit, &x->rows, &x->s, &x->r);
}

static void run_end(struct run *x)
{
    dcn_free(&x->r);
    sit_free(&x->s);
    evidence_rows_free(&x->rows);
    json_decref(x->sit);
}

/* Reads the fixture's evidence (real reports, imported) through a real
 * evidence.db and evs_read. */
static void rows_from_fixture_db(struct run *x, const char *dir, struct ctl_tmp *t)
{
    char db[128], err[512];
    ctl_tmp_path(t, "evidence.db", db, sizeof db);
    ctl_evidence_store(db, dir);
    char *text = json_dumps(x->sit, 0);
    struct sit_situation s;
    assert_int_equal(sit_parse(text, strlen(text), &s, err, sizeof err), 0);
    free(text);
    if (evs_read(db, &s, &x->rows, err, sizeof err) != EVIDENCE_OK)
        fail_msg("evs_read: %s", err);
    sit_free(&s);
}

static void ctl_01_main_scenario_only_c_eligible(void **state)
{
    (void)state;
    struct ctl_tmp t;
    struct run x;
    assert_int_equal(ctl_tmp_make(&t), 0);
    run_begin(&x, "main_situation.json");
    rows_from_fixture_db(&x, "main_evidence", &t);
    run_decide(&x);
    assert_int_equal(x.r.outcome, DCN_STEP_PROPOSED);
    assert_string_equal(x.r.c[x.r.chosen].path_id, "C");
    assert_int_equal(x.r.pref.rule, PREF_COST);
    assert_false(x.r.c[ctl_idx(&x.r, "A")].eligible);
    assert_false(x.r.c[ctl_idx(&x.r, "B")].eligible);
    /* A and B are excluded for DIFFERENT reasons, and only by content. */
    assert_int_equal(ctl_status(&x.r, "A", COND_CONTENT), COND_VIOLATION);
    assert_string_equal(ctl_reason(&x.r, "A", COND_CONTENT), "mismatch");
    assert_int_equal(ctl_status(&x.r, "B", COND_CONTENT), COND_UNKNOWN);
    assert_string_equal(ctl_reason(&x.r, "B", COND_CONTENT), "no_evidence");
    for (int k = COND_ACCESS; k < COND_N; k++) {
        assert_int_equal(ctl_status(&x.r, "A", k), COND_PASS);
        assert_int_equal(ctl_status(&x.r, "B", k), COND_PASS);
    }
    /* A is the cheapest: the price did not compensate the violation. */
    assert_true(x.r.c[ctl_idx(&x.r, "A")].cost.high < x.r.c[ctl_idx(&x.r, "C")].cost.low);
    run_end(&x);
    ctl_tmp_remove(&t);
}

static void ctl_02_cd_comparison_c_chosen_by_cost(void **state)
{
    (void)state;
    struct ctl_tmp t;
    struct run x;
    assert_int_equal(ctl_tmp_make(&t), 0);
    run_begin(&x, "cd_situation.json");
    rows_from_fixture_db(&x, "cd_evidence", &t);
    run_decide(&x);
    assert_true(x.r.c[0].eligible && x.r.c[1].eligible);
    assert_string_equal(x.r.c[x.r.chosen].path_id, "C");
    assert_int_equal(x.r.pref.rule, PREF_COST);
    /* D starts faster: the QoE step never ran. */
    assert_int_equal(json_array_size(x.r.pref.trace), 1);
    run_end(&x);
    ctl_tmp_remove(&t);
}

/* Main fixture, evidence rows in memory: C gets rows given here. */
static enum cond_status content_of_c(const char *verdict, int64_t observed, const char **reason)
{
    struct run x;
    run_begin(&x, "main_situation.json");
    if (verdict)
        ctl_row(&x.rows, "ev-c", "C", verdict, observed);
    run_decide(&x);
    enum cond_status st = ctl_status(&x.r, "C", COND_CONTENT);
    static char buf[64];
    snprintf(buf, sizeof buf, "%s", ctl_reason(&x.r, "C", COND_CONTENT));
    *reason = buf;
    run_end(&x);
    return st;
}

static void ctl_03_content_three_states(void **state)
{
    (void)state;
    const char *why;
    assert_int_equal(content_of_c("MATCH", CTL_T - 1000, &why), COND_PASS);
    assert_string_equal(why, "match");
    assert_int_equal(content_of_c("MISMATCH", CTL_T - 1000, &why), COND_VIOLATION);
    assert_string_equal(why, "mismatch");
    assert_int_equal(content_of_c("UNKNOWN", CTL_T - 1000, &why), COND_UNKNOWN);
    assert_string_equal(why, "evidence_unknown");
    assert_int_equal(content_of_c(NULL, 0, &why), COND_UNKNOWN);
    assert_string_equal(why, "no_evidence");
}

static void ctl_04_content_stale_and_future_evidence_is_unknown(void **state)
{
    (void)state;
    const char *why;
    /* max_evidence_age_s = 900: exactly 900 s old still applies, 1 ms more does not. */
    assert_int_equal(content_of_c("MATCH", CTL_T - 900000, &why), COND_PASS);
    assert_int_equal(content_of_c("MATCH", CTL_T - 900001, &why), COND_UNKNOWN);
    assert_string_equal(why, "evidence_stale");
    /* A stale MISMATCH is not a confirmed violation any more either. */
    assert_int_equal(content_of_c("MISMATCH", CTL_T - 3600000, &why), COND_UNKNOWN);
    assert_string_equal(why, "evidence_stale");
    assert_int_equal(content_of_c("MATCH", CTL_T + 1, &why), COND_UNKNOWN);
    assert_string_equal(why, "evidence_after_decision_time");
}

static void ctl_05_content_inapplicable_version_rendition_profile(void **state)
{
    (void)state;
    const char *reasons[] = {"evidence_other_program_version", "evidence_other_rendition",
                             "evidence_other_profile"};
    for (int f = 0; f < 3; f++) {
        struct run x;
        run_begin(&x, "main_situation.json");
        ctl_row(&x.rows, "ev-c", "C", "MATCH", CTL_T - 1000);
        struct evidence_row *r = &x.rows.rows[0];
        char *dst = f == 0 ? r->program_version : f == 1 ? r->rendition : r->profile_id;
        strcpy(dst, "other");
        run_decide(&x);
        assert_int_equal(ctl_status(&x.r, "C", COND_CONTENT), COND_UNKNOWN);
        assert_string_equal(ctl_reason(&x.r, "C", COND_CONTENT), reasons[f]);
        assert_false(x.r.c[ctl_idx(&x.r, "C")].eligible);
        run_end(&x);
    }
}

static void ctl_06_old_report_imported_again_stays_stale(void **state)
{
    (void)state;
    /* A real report observed 2 h before T, imported now (recorded_at_ms is
     * fresh): its age counts from the observation. */
    struct ctl_tmp t;
    char db[128], err[512];
    assert_int_equal(ctl_tmp_make(&t), 0);
    ctl_tmp_path(&t, "evidence.db", db, sizeof db);
    json_t *rep = ctl_report("main_evidence/c.json");
    json_object_set_new(rep, "observed_at_ms", json_integer(CTL_T - 7200000));
    json_object_set_new(rep, "observed_end_ms", json_integer(CTL_T - 7196000));
    ctl_import(db, rep);
    ctl_import(db, rep); /* again: unchanged, still old */
    json_decref(rep);
    struct run x;
    run_begin(&x, "main_situation.json");
    char *text = json_dumps(x.sit, 0);
    struct sit_situation s;
    assert_int_equal(sit_parse(text, strlen(text), &s, err, sizeof err), 0);
    free(text);
    assert_int_equal(evs_read(db, &s, &x.rows, err, sizeof err), EVIDENCE_OK);
    sit_free(&s);
    run_decide(&x);
    assert_int_equal(ctl_status(&x.r, "C", COND_CONTENT), COND_UNKNOWN);
    assert_string_equal(ctl_reason(&x.r, "C", COND_CONTENT), "evidence_stale");
    run_end(&x);
    ctl_tmp_remove(&t);
}

static void ctl_07_content_newest_observation_decides(void **state)
{
    (void)state;
    struct run x;
    run_begin(&x, "main_situation.json");
    ctl_row(&x.rows, "ev-1", "C", "MATCH", CTL_T - 5000);
    ctl_row(&x.rows, "ev-2", "C", "UNKNOWN", CTL_T - 2000); /* newer: decides */
    ctl_row(&x.rows, "ev-0", "C", "MATCH", CTL_T - 9000);
    run_decide(&x);
    assert_int_equal(ctl_status(&x.r, "C", COND_CONTENT), COND_UNKNOWN);
    assert_string_equal(ctl_reason(&x.r, "C", COND_CONTENT), "evidence_unknown");
    run_end(&x);
}

/* Two observations at the same instant: a MATCH never hides the other. */
static void ctl_31_content_tie_never_lets_a_match_hide_a_mismatch(void **state)
{
    (void)state;
    const char *orders[2][2] = {{"ev-a", "ev-b"}, {"ev-b", "ev-a"}};
    for (int k = 0; k < 2; k++) {
        struct run x;
        run_begin(&x, "main_situation.json");
        ctl_row(&x.rows, orders[k][0], "C", "MATCH", CTL_T - 3000);
        ctl_row(&x.rows, orders[k][1], "C", "MISMATCH", CTL_T - 3000);
        run_decide(&x);
        assert_int_equal(ctl_status(&x.r, "C", COND_CONTENT), COND_VIOLATION);
        run_end(&x);
    }
}

/* Runs the main fixture after edit(C) and returns C's status for cond k. */
static enum cond_status cond_of_c(void (*edit)(json_t *c, json_t *sit), enum cond_kind k,
                                  char *reason, size_t rlen)
{
    struct run x;
    run_begin(&x, "main_situation.json");
    ctl_row(&x.rows, "ev-c", "C", "MATCH", CTL_T - 1000);
    edit(ctl_cand(x.sit, "C"), x.sit);
    run_decide(&x);
    enum cond_status st = ctl_status(&x.r, "C", k);
    snprintf(reason, rlen, "%s", ctl_reason(&x.r, "C", k));
    if (st != COND_PASS)
        assert_false(x.r.c[ctl_idx(&x.r, "C")].eligible);
    run_end(&x);
    return st;
}

#define EXPECT(edit, kind, status, why)                                                       \
    do {                                                                                      \
        char r_[64];                                                                          \
        assert_int_equal(cond_of_c(edit, kind, r_, sizeof r_), status);                       \
        assert_string_equal(r_, why);                                                         \
    } while (0)

static void e_none(json_t *c, json_t *s) { (void)c, (void)s; }
static void e_acc_viol(json_t *c, json_t *s) { (void)s, ctl_set(c, "access.status", json_string("VIOLATION")); }
static void e_acc_unk(json_t *c, json_t *s) { (void)s, ctl_set(c, "access.status", json_string("UNKNOWN")); }
static void e_acc_missing(json_t *c, json_t *s) { (void)s, ctl_set(c, "access", NULL); }
static void e_acc_stale(json_t *c, json_t *s) { (void)s, ctl_set(c, "access.observed_at_ms", json_integer(CTL_T - 600001)); }

static void ctl_08_access_three_states_and_stale(void **state)
{
    (void)state;
    EXPECT(e_none, COND_ACCESS, COND_PASS, "access_compatible");
    EXPECT(e_acc_viol, COND_ACCESS, COND_VIOLATION, "access_incompatible");
    EXPECT(e_acc_unk, COND_ACCESS, COND_UNKNOWN, "access_unknown");
    EXPECT(e_acc_missing, COND_ACCESS, COND_UNKNOWN, "access_missing");
    EXPECT(e_acc_stale, COND_ACCESS, COND_UNKNOWN, "access_stale");
}

static void e_q_p90(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe.startup_p90_ms", json_integer(2501)); }
static void e_q_rebuf(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe.rebuffer_ratio", json_string("0.020001")); }
static void e_q_fail(json_t *c, json_t *s)
{
    (void)s;
    ctl_set(c, "qoe.successes", json_integer(970));
    ctl_set(c, "qoe.failures", json_integer(25));
}
static void e_q_stale(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe.observed_at_ms", json_integer(CTL_T - 900001)); }
static void e_q_cohort(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe.cohort.isp", json_string("isp-y")); }
static void e_q_incomplete(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe.complete", json_false()); }
static void e_q_samples(json_t *c, json_t *s)
{
    (void)s;
    ctl_set(c, "qoe.attempts", json_integer(150));
    ctl_set(c, "qoe.successes", json_integer(149));
    ctl_set(c, "qoe.failures", json_integer(1));
    ctl_set(c, "qoe.unknown", json_integer(0));
}
static void e_q_metric(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe.startup_p90_ms", NULL); }
static void e_q_missing(json_t *c, json_t *s) { (void)s, ctl_set(c, "qoe", NULL); }

static void ctl_09_qoe_three_states(void **state)
{
    (void)state;
    EXPECT(e_none, COND_QOE, COND_PASS, "qoe_meets_minimum");
    EXPECT(e_q_p90, COND_QOE, COND_VIOLATION, "qoe_startup_p90_above_max");
    EXPECT(e_q_rebuf, COND_QOE, COND_VIOLATION, "qoe_rebuffer_above_max");
    EXPECT(e_q_fail, COND_QOE, COND_VIOLATION, "qoe_start_success_below_min");
    EXPECT(e_q_stale, COND_QOE, COND_UNKNOWN, "qoe_stale");
    EXPECT(e_q_cohort, COND_QOE, COND_UNKNOWN, "qoe_other_cohort");
    EXPECT(e_q_incomplete, COND_QOE, COND_UNKNOWN, "qoe_incomplete");
    EXPECT(e_q_samples, COND_QOE, COND_UNKNOWN, "qoe_insufficient_samples");
    EXPECT(e_q_metric, COND_QOE, COND_UNKNOWN, "qoe_missing_metric");
    EXPECT(e_q_missing, COND_QOE, COND_UNKNOWN, "qoe_missing");
}

/* 975 successes + 5 failures + 20 unknown of 1000: the lower bound 0.975 is
 * under 0.98, the upper 0.995 above: unknown attempts decide -> UNKNOWN. */
static void e_q_unknowns(json_t *c, json_t *s)
{
    (void)s;
    ctl_set(c, "qoe.successes", json_integer(975));
    ctl_set(c, "qoe.failures", json_integer(5));
    ctl_set(c, "qoe.unknown", json_integer(20));
}
/* 980 + 20 unknown: the unknown ones are not needed -> PASS at exactly 0.98. */
static void e_q_exact(json_t *c, json_t *s)
{
    (void)s;
    ctl_set(c, "qoe.successes", json_integer(980));
    ctl_set(c, "qoe.failures", json_integer(0));
    ctl_set(c, "qoe.unknown", json_integer(20));
}

static void ctl_10_qoe_unknown_attempts_never_count_as_successes(void **state)
{
    (void)state;
    EXPECT(e_q_unknowns, COND_QOE, COND_UNKNOWN, "qoe_unknown_attempts_decide");
    EXPECT(e_q_exact, COND_QOE, COND_PASS, "qoe_meets_minimum");
}

static json_t *first_item(json_t *c, int window, int item)
{
    json_t *w = json_array_get(json_object_get(json_object_get(c, "resources"), "windows"), window);
    return json_array_get(json_object_get(w, "items"), item);
}
/* origin/rps in window 1: 400 + 100 + 50 + 100 = 650; a limit of 649 breaks it. */
static void e_r_viol(json_t *c, json_t *s) { (void)s, json_object_set_new(first_item(c, 1, 0), "limit", json_integer(649)); }
static void e_r_edge(json_t *c, json_t *s) { (void)s, json_object_set_new(first_item(c, 1, 0), "limit", json_integer(650)); }
static void e_r_stale(json_t *c, json_t *s) { (void)s, ctl_set(c, "resources.observed_at_ms", json_integer(CTL_T - 300001)); }
static void e_r_model(json_t *c, json_t *s) { (void)s, ctl_set(c, "resources.model_valid", json_false()); }
static void e_r_gap(json_t *c, json_t *s)
{
    (void)s;
    json_t *w = json_array_get(json_object_get(json_object_get(c, "resources"), "windows"), 1);
    json_object_set_new(w, "end_ms", json_integer(CTL_T + 599999)); /* horizon ends at T+600000 */
}
static void e_r_item(json_t *c, json_t *s)
{
    (void)s;
    json_t *w = json_array_get(json_object_get(json_object_get(c, "resources"), "windows"), 0);
    json_array_remove(json_object_get(w, "items"), 4); /* cdn/bytes_per_s */
}
static void e_r_stale_viol(json_t *c, json_t *s) { e_r_viol(c, s), e_r_stale(c, s); }

static void ctl_11_resources_three_states(void **state)
{
    (void)state;
    EXPECT(e_none, COND_RESOURCES, COND_PASS, "resources_fit");
    EXPECT(e_r_edge, COND_RESOURCES, COND_PASS, "resources_fit");
    EXPECT(e_r_viol, COND_RESOURCES, COND_VIOLATION, "resources_limit_exceeded");
    EXPECT(e_r_stale, COND_RESOURCES, COND_UNKNOWN, "resources_stale");
    EXPECT(e_r_stale_viol, COND_RESOURCES, COND_UNKNOWN, "resources_stale");
    EXPECT(e_r_model, COND_RESOURCES, COND_UNKNOWN, "resources_model_invalid");
    EXPECT(e_r_gap, COND_RESOURCES, COND_UNKNOWN, "resources_horizon_not_covered");
    EXPECT(e_r_item, COND_RESOURCES, COND_UNKNOWN, "resources_item_missing");
}

static void ctl_12_resources_violation_names_window_and_item(void **state)
{
    (void)state;
    struct run x;
    run_begin(&x, "main_situation.json");
    e_r_viol(ctl_cand(x.sit, "C"), x.sit);
    run_decide(&x);
    const char *d = x.r.c[ctl_idx(&x.r, "C")].cond[COND_RESOURCES].detail;
    assert_non_null(strstr(d, "[1764410300000, 1764410660000)"));
    assert_non_null(strstr(d, "origin/rps"));
    run_end(&x);
}

static void ctl_13_cost_tier_boundary_is_exact(void **state)
{
    (void)state;
    struct sit_tier tiers[] = {{true, 10000 * NUM_MICRO, 30000}, /* 0.03 up to 10000 */
                               {true, 50000 * NUM_MICRO, 20000},
                               {false, 0, 15000}};
    struct sit_category cat = {"egress", tiers, 3, 0, 0, 0};
    cost_pico f;
    /* 10000 units at 0.03 = 300 exactly; one micro-unit more is priced at 0.02. */
    assert_int_equal(cost_category_f(&cat, 10000 * NUM_MICRO, &f), 0);
    assert_true(f == (cost_pico)300 * NUM_MICRO * COST_PICO_PER_MICRO);
    assert_int_equal(cost_category_f(&cat, 10000 * NUM_MICRO + 1, &f), 0);
    assert_true(f == (cost_pico)300 * NUM_MICRO * COST_PICO_PER_MICRO + 20000);
    /* dCost of 9800 + 400: 200 at 0.03 + 200 at 0.02 = 10 (not 400 x any single price). */
    struct sit_category c2 = cat;
    c2.baseline = 9800 * NUM_MICRO;
    c2.step_low = 400 * NUM_MICRO;
    c2.step_high = 500 * NUM_MICRO;
    struct sit_cost k = {true, true, "EUR", &c2, 1, ""};
    cost_pico lo, hi;
    assert_int_equal(cost_delta(&k, false, &lo), 0);
    assert_int_equal(cost_delta(&k, true, &hi), 0);
    assert_int_equal(cost_to_micro(lo), 10 * NUM_MICRO);
    assert_int_equal(cost_to_micro(hi), 12 * NUM_MICRO);
    /* Beyond the last bounded tier the contract cannot price: refused. */
    struct sit_category c3 = {"x", tiers, 2, 0, 0, 0};
    assert_int_equal(cost_category_f(&c3, 50000 * NUM_MICRO + 1, &f), -1);
    /* Decimal parsing: 0.1 + 0.2 is exactly 0.3 in micro-units. */
    int64_t a, b, c;
    assert_int_equal(num_from_string("0.1", 10, &a), 0);
    assert_int_equal(num_from_string("0.2", 10, &b), 0);
    assert_int_equal(num_from_string("0.3", 10, &c), 0);
    assert_int_equal(a + b, c);
    assert_int_equal(num_from_string("0.0000001", 10, &a), -1);
}

static void e_c_budget(json_t *c, json_t *s) { (void)c, ctl_set(s, "policy.cost.budget_per_step", json_string("11.999999")); }
static void e_c_budget_edge(json_t *c, json_t *s) { (void)c, ctl_set(s, "policy.cost.budget_per_step", json_integer(12)); }
static void e_c_currency(json_t *c, json_t *s) { (void)s, ctl_set(c, "cost.currency", json_string("USD")); }
static void e_c_missing(json_t *c, json_t *s) { (void)s, ctl_set(c, "cost", NULL); }
static void e_c_unpriced(json_t *c, json_t *s) { (void)s, ctl_set(c, "cost.step_usage.high.fill_gb", json_integer(3)); }

static void ctl_14_cost_three_states(void **state)
{
    (void)state;
    EXPECT(e_none, COND_COST, COND_PASS, "cost_within_budget");
    EXPECT(e_c_budget_edge, COND_COST, COND_PASS, "cost_within_budget");
    EXPECT(e_c_budget, COND_COST, COND_VIOLATION, "cost_over_budget");
    EXPECT(e_c_currency, COND_COST, COND_UNKNOWN, "cost_currency_mismatch");
    EXPECT(e_c_missing, COND_COST, COND_UNKNOWN, "cost_missing");
    EXPECT(e_c_unpriced, COND_COST, COND_UNKNOWN, "cost_unpriced_category");
}

/* C/D with D's cost made to overlap C's range (within tie_abs). */
static void cd_overlapping(struct run *x, int d_p90)
{
    run_begin(x, "cd_situation.json");
    ctl_row(&x->rows, "ev-c", "C", "MATCH", CTL_T - 1000);
    ctl_row(&x->rows, "ev-d", "D", "MATCH", CTL_T - 1000);
    json_t *d = ctl_cand(x->sit, "D");
    /* D: 250..250.5 GB at 0.05 = 12.5..12.525, C: 10..12; 12.5 <= 12 + 0.5. */
    ctl_set(d, "cost.step_usage.low.egress_gb", json_integer(250));
    ctl_set(d, "cost.step_usage.high.egress_gb", json_string("250.5"));
    ctl_set(d, "qoe.startup_p90_ms", json_integer(d_p90));
    run_decide(x);
    assert_true(x->r.c[0].eligible && x->r.c[1].eligible);
}

static void ctl_15_overlapping_cost_falls_through_to_qoe(void **state)
{
    (void)state;
    struct run x;
    cd_overlapping(&x, 900); /* C 1400 ms, D 900 ms: beyond the 150 ms tie */
    assert_string_equal(x.r.c[x.r.chosen].path_id, "D");
    assert_int_equal(x.r.pref.rule, PREF_QOE);
    run_end(&x);
}

static void ctl_16_qoe_tie_falls_through_to_order(void **state)
{
    (void)state;
    struct run x;
    cd_overlapping(&x, 1250); /* 1400 - 1250 = 150: within startup_tie_ms */
    assert_int_equal(x.r.pref.rule, PREF_ORDER);
    assert_string_equal(x.r.c[x.r.chosen].path_id, "C"); /* order: C, D, A, B */
    run_end(&x);
    /* Reversing the declared order reverses the choice. */
    struct run y;
    run_begin(&y, "cd_situation.json");
    ctl_row(&y.rows, "ev-c", "C", "MATCH", CTL_T - 1000);
    ctl_row(&y.rows, "ev-d", "D", "MATCH", CTL_T - 1000);
    json_t *d = ctl_cand(y.sit, "D");
    ctl_set(d, "cost.step_usage.low.egress_gb", json_integer(250));
    ctl_set(d, "cost.step_usage.high.egress_gb", json_string("250.5"));
    ctl_set(d, "qoe.startup_p90_ms", json_integer(1250));
    ctl_set(y.sit, "policy.order", json_pack("[s,s]", "D", "C"));
    run_decide(&y);
    assert_int_equal(y.r.pref.rule, PREF_ORDER);
    assert_string_equal(y.r.c[y.r.chosen].path_id, "D");
    run_end(&y);
}

static void ctl_17_no_eligible_path_keeps_reasons_apart(void **state)
{
    (void)state;
    struct run x;
    run_begin(&x, "main_situation.json");
    ctl_row(&x.rows, "ev-a", "A", "MISMATCH", CTL_T - 1000);
    /* C: no evidence now, and a resource violation. */
    e_r_viol(ctl_cand(x.sit, "C"), x.sit);
    run_decide(&x);
    assert_int_equal(x.r.outcome, DCN_NO_ELIGIBLE_PATH);
    assert_int_equal(x.r.chosen, -1);
    json_t *o = out_result(&x.s, &x.r, "id-1", "test");
    assert_true(json_is_null(json_object_get(o, "chosen")));
    assert_true(json_is_null(json_object_get(o, "chosen_by")));
    assert_string_equal(json_string_value(json_object_get(o, "outcome")), "no_eligible_path");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "refusal"), "id")),
                        "refuse-new-sessions-503");
    json_t *c = json_array_get(json_object_get(o, "candidates"), 2);
    json_t *ex = json_object_get(c, "excluded_by");
    assert_string_equal(json_string_value(json_array_get(json_object_get(ex, "violation"), 0)),
                        "resources");
    assert_string_equal(json_string_value(json_array_get(json_object_get(ex, "unknown"), 0)),
                        "content");
    json_decref(o);
    run_end(&x);
}

static void expect_invalid(void (*edit)(json_t *c, json_t *s), const char *field)
{
    json_t *sit = ctl_fixture_json("main_situation.json");
    edit(ctl_cand(sit, "C"), sit);
    char *text = json_dumps(sit, 0), err[256] = "";
    struct sit_situation s;
    assert_int_equal(sit_parse(text, strlen(text), &s, err, sizeof err), -1);
    if (!strstr(err, field))
        fail_msg("error '%s' does not name %s", err, field);
    free(text);
    json_decref(sit);
}
static void i_policy(json_t *c, json_t *s) { (void)c, ctl_set(s, "policy.max_evidence_age_s", json_string("x")); }
static void i_ratio(json_t *c, json_t *s) { (void)c, ctl_set(s, "policy.qoe.min_start_success_ratio", json_string("1.5")); }
static void i_tiers(json_t *c, json_t *s)
{
    (void)s;
    json_t *eg = json_object_get(json_object_get(json_object_get(json_object_get(c, "cost"), "contract"), "categories"), "egress_gb");
    json_object_set_new(json_array_get(eg, 1), "up_to", json_integer(5000));
}
static void i_order(json_t *c, json_t *s) { (void)c, ctl_set(s, "policy.order", json_pack("[s,s]", "A", "B")); }
static void i_access(json_t *c, json_t *s) { (void)s, ctl_set(c, "access.status", json_string("OK")); }
static void i_decimals(json_t *c, json_t *s) { (void)s, ctl_set(c, "cost.baseline_usage.egress_gb", json_string("1.0000001")); }

static void ctl_18_invalid_situation_names_the_field(void **state)
{
    (void)state;
    expect_invalid(i_policy, "policy.max_evidence_age_s");
    expect_invalid(i_ratio, "policy.qoe.min_start_success_ratio");
    expect_invalid(i_tiers, "candidates[2].cost.contract.categories.egress_gb[1].up_to");
    expect_invalid(i_order, "policy.order");
    expect_invalid(i_access, "candidates[2].access.status");
    expect_invalid(i_decimals, "candidates[2].cost.baseline_usage.egress_gb");
    char err[256];
    struct sit_situation s;
    assert_int_equal(sit_parse("{\"policy\":", 10, &s, err, sizeof err), -1);
    assert_int_equal(sit_parse("[]", 2, &s, err, sizeof err), -1);
}

static long long count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Decides the main fixture and records it; returns the id in id. */
static void record_main(sqlite3 *db, char id[REC_ID_LEN])
{
    struct run x;
    run_begin(&x, "main_situation.json");
    ctl_row(&x.rows, "ev-a", "A", "MISMATCH", CTL_T - 1000);
    ctl_row(&x.rows, "ev-c", "C", "MATCH", CTL_T - 2000);
    run_decide(&x);
    assert_int_equal(rec_new_id(id), 0);
    json_t *res = out_result(&x.s, &x.r, id, "test");
    char *text = json_dumps(x.sit, 0), err[256];
    struct rec_record r = {id, 1, text, strlen(text), &x.rows, res};
    assert_int_equal(rec_insert(db, &r, err, sizeof err), REC_OK);
    free(text);
    json_decref(res);
    run_end(&x);
}

static void ctl_19_record_is_complete_and_versioned(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char path[128], err[256], id[REC_ID_LEN], id2[REC_ID_LEN];
    assert_int_equal(ctl_tmp_make(&t), 0);
    ctl_tmp_path(&t, "control.db", path, sizeof path);
    sqlite3 *db;
    assert_int_equal(rec_open(path, REC_CREATE, &db, err, sizeof err), REC_OK);
    record_main(db, id);
    record_main(db, id2);
    assert_string_not_equal(id, id2);
    assert_int_equal(count(db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(count(db, "SELECT count(*) FROM decisions"), 2);
    /* 3 candidates x 5 conditions, 2 evidence rows as read, per decision. */
    assert_int_equal(count(db, "SELECT count(*) FROM decision_conditions"), 30);
    assert_int_equal(count(db, "SELECT count(*) FROM decision_evidence WHERE verdict='MISMATCH'"
                               " AND observed_at_ms = 1764409999000"), 2);
    assert_int_equal(count(db, "SELECT count(*) FROM decisions WHERE chosen='C' AND "
                               "chosen_by='cost' AND outcome='step_proposed'"), 2);
    assert_int_equal(count(db, "SELECT count(*) FROM decision_conditions WHERE path_id='B' AND "
                               "condition='content' AND status='UNKNOWN' AND reason='no_evidence'"),
                     2);
    sqlite3_close(db);
    /* A database of another schema version is refused, never reused. */
    sqlite3_open(path, &db);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(rec_open(path, REC_CREATE, &db, err, sizeof err), REC_BAD_VERSION);
    ctl_tmp_remove(&t);
}

/* A new control.db in a private temp dir (its path in path) holding the
 * main fixture's decision (its id in id). */
static sqlite3 *new_store_with_main(struct ctl_tmp *t, char *path, size_t len, char id[REC_ID_LEN])
{
    char err[256];
    sqlite3 *db;
    assert_int_equal(ctl_tmp_make(t), 0);
    ctl_tmp_path(t, "control.db", path, len);
    assert_int_equal(rec_open(path, REC_CREATE, &db, err, sizeof err), REC_OK);
    record_main(db, id);
    return db;
}

static void ctl_20_replay_reproduces_and_detects_tampering(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char path[128], err[256], id[REC_ID_LEN];
    sqlite3 *db = new_store_with_main(&t, path, sizeof path, id);
    struct rec_loaded l;
    assert_int_equal(rec_load(db, id, &l, err, sizeof err), REC_OK);
    struct sit_situation s;
    assert_int_equal(sit_parse(l.situation, l.situation_len, &s, err, sizeof err), 0);
    json_t *again;
    assert_int_equal(rpl_recompute(&s, l.decision_time_ms, &l.rows, id, "test", &again), 0);
    FILE *sink = fopen("/dev/null", "w");
    assert_int_equal(rpl_diff(l.result, again, sink), 0);
    /* The recorded evidence row says MATCH for A now: the decision differs. */
    strcpy(l.rows.rows[0].path_id, "nobody");
    json_t *other;
    assert_int_equal(rpl_recompute(&s, l.decision_time_ms, &l.rows, id, "test", &other), 0);
    assert_true(rpl_diff(l.result, other, sink) > 0);
    fclose(sink);
    json_decref(again);
    json_decref(other);
    sit_free(&s);
    rec_loaded_free(&l);
    assert_int_equal(rec_load(db, "no-such-id", &l, err, sizeof err), REC_NOT_FOUND);
    sqlite3_close(db);
    ctl_tmp_remove(&t);
}

static void ctl_21_evidence_db_must_exist_in_a_version_this_build_reads(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char path[128], err[512];
    assert_int_equal(ctl_tmp_make(&t), 0);
    ctl_tmp_path(&t, "missing.db", path, sizeof path);
    json_t *sit = ctl_fixture_json("main_situation.json");
    char *text = json_dumps(sit, 0);
    struct sit_situation s;
    assert_int_equal(sit_parse(text, strlen(text), &s, err, sizeof err), 0);
    struct evidence_rows rows;
    assert_int_equal(evs_read(path, &s, &rows, err, sizeof err), EVIDENCE_E_OPEN);
    assert_null(fopen(path, "r")); /* read-only open never creates a file */
    ctl_tmp_path(&t, "v0.db", path, sizeof path);
    assert_int_equal(ctl_sql(path, "CREATE TABLE evidence (id TEXT)"), 0);
    assert_int_equal(evs_read(path, &s, &rows, err, sizeof err), EVIDENCE_E_OPEN);
    assert_non_null(strstr(err, "not an evidence store"));
    ctl_tmp_path(&t, "v3.db", path, sizeof path);
    ctl_evidence_store(path, NULL); /* the current schema (v5) */
    assert_int_equal(evs_read(path, &s, &rows, err, sizeof err), EVIDENCE_OK);
    evidence_rows_free(&rows);
    assert_int_equal(ctl_sql(path, "PRAGMA user_version = 1"), 0); /* v1 is read as it is */
    assert_int_equal(evs_read(path, &s, &rows, err, sizeof err), EVIDENCE_OK);
    evidence_rows_free(&rows);
    assert_int_equal(ctl_sql(path, "PRAGMA user_version = 99"), 0);
    assert_int_equal(evs_read(path, &s, &rows, err, sizeof err), EVIDENCE_E_VERSION);
    assert_non_null(strstr(err, "schema version 99"));
    sit_free(&s);
    free(text);
    json_decref(sit);
    ctl_tmp_remove(&t);
}

/* Untrusted input: thousands of corrupted variants of a real situation are
 * either refused with a message or decided; nothing crashes or leaks (the
 * ASan build runs this too). */
static void ctl_30_corrupted_situations_never_crash(void **state)
{
    (void)state;
    char *text = ctl_fixture_text("main_situation.json");
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    uint64_t seed = 0x5eed0004ULL;
    int accepted = 0, refused = 0;
    static const char alphabet[] = "{}[]\",:0123456789.-enulltruefalse \\";
    for (int run = 0; run < 2000; run++) {
        memcpy(buf, text, len + 1);
        for (int k = 0; k < 1 + run % 4; k++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            buf[seed % len] = alphabet[(seed >> 32) % (sizeof alphabet - 1)];
        }
        size_t n = (run % 10 == 0) ? (size_t)(seed % len) : len; /* sometimes truncated */
        struct sit_situation s;
        char err[256] = "";
        if (sit_parse(buf, n, &s, err, sizeof err) != 0) {
            assert_true(err[0] != '\0');
            refused++;
            continue;
        }
        accepted++;
        struct evidence_rows rows = {0};
        ctl_row(&rows, "ev-c", "C", "MATCH", CTL_T - 1000);
        struct dcn_result r;
        assert_int_equal(dcn_decide(&s, s.decision_time_ms, &rows, &r), 0);
        json_t *o = out_result(&s, &r, "id", "test");
        assert_non_null(o);
        json_decref(o);
        dcn_free(&r);
        evidence_rows_free(&rows);
        sit_free(&s);
    }
    assert_true(accepted > 0 && refused > 0);
    free(buf);
    free(text);
}

/* ---- numbers are read exactly or refused (issue 9) ---- */

/* Parses sit after replacing the string "@RAW@" by raw: a number exactly as
 * a file would hold it (jansson cannot make such a value).  0 with *s
 * filled, or -1 with err. */
static int parse_raw(const json_t *sit, const char *raw, struct sit_situation *s, char *err,
                     size_t errlen)
{
    char *text = json_dumps(sit, JSON_COMPACT);
    assert_non_null(text);
    char *at = strstr(text, "\"@RAW@\"");
    assert_non_null(at);
    size_t n = strlen(text), head = (size_t)(at - text), rl = strlen(raw);
    char *buf = malloc(n + rl + 1);
    assert_non_null(buf);
    memcpy(buf, text, head);
    memcpy(buf + head, raw, rl);
    strcpy(buf + head + rl, at + 7);
    int rc = sit_parse(buf, strlen(buf), s, err, errlen);
    free(buf);
    free(text);
    return rc;
}

/* Status of C's condition k when field (in C, or in the policy when
 * policy_field) holds raw; -1 when the situation is refused (err says why). */
static int status_with(json_t *sit, bool policy_field, const char *field, const char *raw,
                       enum cond_kind k, char *err, size_t errlen)
{
    ctl_set(policy_field ? sit : ctl_cand(sit, "C"), field, json_string("@RAW@"));
    struct sit_situation s;
    if (parse_raw(sit, raw, &s, err, errlen) != 0)
        return -1;
    struct evidence_rows rows = {0};
    ctl_row(&rows, "ev-c", "C", "MATCH", CTL_T - 1000);
    struct dcn_result r;
    assert_int_equal(dcn_decide(&s, s.decision_time_ms, &rows, &r), 0);
    int st = (int)ctl_status(&r, "C", k);
    dcn_free(&r);
    evidence_rows_free(&rows);
    sit_free(&s);
    return st;
}

/* The refusals the issue found as rounding toward PASS, and the exact forms
 * of one value that must all be read as that value. */
static void ctl_32_numbers_are_read_exactly_or_refused(void **state)
{
    (void)state;
    char err[512];
    static const struct {
        bool policy;
        const char *field, *raw, *named;
    } refused[] = {
        {false, "qoe.rebuffer_ratio", "0.0200004", "candidates[2].qoe.rebuffer_ratio"},
        {false, "qoe.startup_p90_ms", "2500.0000004", "candidates[2].qoe.startup_p90_ms"},
        {false, "cost.step_usage.high.egress_gb", "1333.3333334",
         "candidates[2].cost.step_usage.high.egress_gb"},
        {true, "policy.qoe.max_rebuffer_ratio", "0.0200000000000000001",
         "policy.qoe.max_rebuffer_ratio"},
        {true, "policy.cost.budget_per_step", "4e-7", "policy.cost.budget_per_step"},
        {false, "qoe.rebuffer_ratio", "1e400", "candidates[2].qoe.rebuffer_ratio"},
        {false, "qoe.rebuffer_ratio", "\"0.0200004\"", "candidates[2].qoe.rebuffer_ratio"},
        {true, "policy.id", "1.5", "policy.id"},
        {true, "policy.max_evidence_age_s", "900.0", "policy.max_evidence_age_s"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        json_t *sit = ctl_fixture_json("main_situation.json");
        err[0] = '\0';
        assert_int_equal(status_with(sit, refused[i].policy, refused[i].field, refused[i].raw,
                                     COND_QOE, err, sizeof err), -1);
        if (!strstr(err, refused[i].named))
            fail_msg("%s = %s: error does not name the field: %s", refused[i].field,
                     refused[i].raw, err);
        json_decref(sit);
    }
    /* One value, many exact spellings: 0.02 against a maximum of 0.02 passes,
     * and one micro-unit more does not. */
    static const char *const same[] = {"0.02", "2e-2", "2E-2", "0.0200000000000", "20000e-6",
                                       "0.0002e+2", "\"0.020000000\"", "\"0.02\""};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        json_t *sit = ctl_fixture_json("main_situation.json");
        int st = status_with(sit, false, "qoe.rebuffer_ratio", same[i], COND_QOE, err, sizeof err);
        if (st != COND_PASS)
            fail_msg("rebuffer_ratio %s: status %d (%s)", same[i], st, err);
        json_decref(sit);
    }
    json_t *sit = ctl_fixture_json("main_situation.json");
    assert_int_equal(status_with(sit, false, "qoe.rebuffer_ratio", "0.020001", COND_QOE, err,
                                 sizeof err), COND_VIOLATION);
    json_decref(sit);
    /* A jansson real has already lost its digits: it is never read. */
    int64_t x = 0;
    json_t *real = json_real(0.5);
    assert_int_equal(num_from_json(real, 10, &x), -1);
    json_decref(real);
    /* A string holding \u0000 cannot pose as a number kept as text. */
    struct sit_situation s;
    const char forged[] = "{\"policy\": {\"id\": \"\\u00001.5\"}}";
    assert_int_equal(sit_parse(forged, strlen(forged), &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "\\u0000"));
}

/* A decimal with micro-units as its unit, spelled at random but exactly. */
static void spell(uint64_t *rng, int64_t micro, char *buf, size_t n)
{
    char plain[48];
    num_format(micro, plain, sizeof plain);
    *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
    switch ((*rng >> 33) % 4) {
    case 0: snprintf(buf, n, "%s", plain); break;
    case 1: snprintf(buf, n, "%lld.%06lld000", (long long)(micro / NUM_MICRO),
                     (long long)(micro % NUM_MICRO)); break;
    case 2: snprintf(buf, n, "%llde-6", (long long)micro); break;
    default: snprintf(buf, n, "\"%s\"", plain); break;
    }
}

/* Property: for a random limit L, a value of L passes the condition, L plus
 * one micro-unit (the smallest step the unit holds) is a VIOLATION, and L
 * plus any smaller step (1e-7 .. 1e-18) is refused: none of them is ever
 * rounded to PASS.  Checked for every decimal compared against a limit:
 * rebuffer ratio, startup p90, each resource item, and the cost budget
 * (where the smallest step of the cost is one pico-unit). */
static void ctl_33_prop_one_step_above_a_limit_never_passes(void **state)
{
    (void)state;
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    char err[512], raw[96], plain[48];
    for (int iter = 0; iter < 200; iter++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t lim = (int64_t)((rng >> 20) % 1000000) + 1; /* (0, 1]: fits every field */
        int which = iter % 4;
        int64_t at = lim, above = lim + 1;
        for (int step = 0; step < 3; step++) {
            json_t *sit = ctl_fixture_json("main_situation.json");
            json_t *c = ctl_cand(sit, "C");
            num_format(lim, plain, sizeof plain);
            const char *field = NULL;
            enum cond_kind k = COND_QOE;
            if (which == 0) {
                ctl_set(sit, "policy.qoe.max_rebuffer_ratio", json_string(plain));
                field = "qoe.rebuffer_ratio";
            } else if (which == 1) {
                ctl_set(sit, "policy.qoe.max_startup_p90_ms", json_string(plain));
                ctl_set(sit, "policy.qoe.startup_tie_ms", json_integer(0));
                field = "qoe.startup_p90_ms";
            } else if (which == 2) {
                json_t *it = json_array_get(json_object_get(json_array_get(
                    json_object_get(json_object_get(c, "resources"), "windows"), 0), "items"), 0);
                ctl_set(it, "limit", json_string(plain));
                ctl_set(it, "margin", json_integer(0));
                ctl_set(it, "background_upper", json_integer(0));
                ctl_set(it, "commitments_upper", json_integer(0));
                field = "resources.windows";
                ctl_set(it, "step_upper", json_string("@RAW@"));
                k = COND_RESOURCES;
            } else {
                /* one unit costs one micro-unit: dCost (pico) = usage (micro) */
                ctl_set(sit, "policy.cost.budget_per_step", json_string(plain));
                ctl_set(c, "cost.contract.categories",
                        json_pack("{s:[{s:n,s:s}]}", "egress_gb", "up_to", "unit_price", "0.000001"));
                ctl_set(c, "cost.baseline_usage", json_object());
                ctl_set(c, "cost.step_usage.low", json_object());
                ctl_set(c, "cost.step_usage.high", json_object());
                field = "cost.step_usage.high.egress_gb";
                k = COND_COST;
                at = lim * NUM_MICRO, above = at + 1; /* usage in micro-units */
            }
            int64_t v = step == 0 ? at : above;
            if (step < 2)
                spell(&rng, v, raw, sizeof raw);
            else {
                /* the limit plus 10^-d, 7 <= d <= 18: no micro-unit holds it */
                int d = 7 + (int)((rng >> 40) % 12);
                snprintf(raw, sizeof raw, "%lld.%06lld%0*d1", (long long)(at / NUM_MICRO),
                         (long long)(at % NUM_MICRO), d - 7, 0);
            }
            int st;
            if (which == 2) {
                struct sit_situation s;
                st = parse_raw(sit, raw, &s, err, sizeof err) != 0 ? -1 : 0;
                if (st == 0) {
                    struct evidence_rows rows = {0};
                    ctl_row(&rows, "ev-c", "C", "MATCH", CTL_T - 1000);
                    struct dcn_result r;
                    assert_int_equal(dcn_decide(&s, s.decision_time_ms, &rows, &r), 0);
                    st = (int)ctl_status(&r, "C", k);
                    dcn_free(&r);
                    evidence_rows_free(&rows);
                    sit_free(&s);
                }
            } else {
                st = status_with(sit, false, field, raw, k, err, sizeof err);
            }
            int want = step == 0 ? COND_PASS : step == 1 ? COND_VIOLATION : -1;
            if (st != want)
                fail_msg("iteration %d, %s = %s (limit %lld micro): status %d, want %d (%s)", iter,
                         field, raw, (long long)lim, st, want, st < 0 ? err : "");
            json_decref(sit);
        }
    }
}

/* What schema 5 added (allocations.subject), undone: a file as v4 left it. */
#define V6_UNDONE CTL_V9_UNDONE CTL_V8_UNDONE "DROP INDEX allocations_subject; ALTER TABLE allocations DROP COLUMN subject;"

/* control.db schema 4 (issue 22): delivery_removals is a numbered
 * migration.  A v3 file without the table gains it; a v3 file in which the
 * schema-3 service had created it ad hoc keeps its rows; a removal is never
 * deleted. */
static void ctl_99_schema_v4_keeps_removals_made_before_it(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char path[128], err[256], id[REC_ID_LEN];
    sqlite3 *db = new_store_with_main(&t, path, sizeof path, id);
    char sql[2048];
    /* as schema 3 left it: the ad hoc table with one row, no trigger */
    /* (later versions' tables dropped too: they are created again) */
    snprintf(sql, sizeof sql, "DROP TABLE clock_marks; DROP TRIGGER delivery_removals_kept; "
             "INSERT INTO delivery_removals VALUES ('%s', 'B', 'ev-1', 10, 20); "
             "%s PRAGMA user_version = 3;", id, V6_UNDONE);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rec_open(path, REC_WRITE, &db, err, sizeof err), REC_OK);
    assert_int_equal(count(db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(count(db, "SELECT count(*) FROM delivery_removals WHERE path_id = 'B' AND "
                               "evidence_id = 'ev-1' AND removed_at_ms = 20"), 1);
    assert_int_not_equal(sqlite3_exec(db, "DELETE FROM delivery_removals", NULL, NULL, NULL),
                         SQLITE_OK);
    /* as schema 3 left a file where nothing was removed: no table at all */
    assert_int_equal(sqlite3_exec(db, "DROP TABLE clock_marks; DROP TABLE delivery_removals; "
                                      V6_UNDONE " PRAGMA user_version = 3;",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rec_open(path, REC_WRITE, &db, err, sizeof err), REC_OK);
    assert_int_equal(count(db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(count(db, "SELECT count(*) FROM delivery_removals"), 0);
    sqlite3_close(db);
    ctl_tmp_remove(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_01_main_scenario_only_c_eligible),
        cmocka_unit_test(ctl_02_cd_comparison_c_chosen_by_cost),
        cmocka_unit_test(ctl_03_content_three_states),
        cmocka_unit_test(ctl_04_content_stale_and_future_evidence_is_unknown),
        cmocka_unit_test(ctl_05_content_inapplicable_version_rendition_profile),
        cmocka_unit_test(ctl_06_old_report_imported_again_stays_stale),
        cmocka_unit_test(ctl_07_content_newest_observation_decides),
        cmocka_unit_test(ctl_08_access_three_states_and_stale),
        cmocka_unit_test(ctl_09_qoe_three_states),
        cmocka_unit_test(ctl_10_qoe_unknown_attempts_never_count_as_successes),
        cmocka_unit_test(ctl_11_resources_three_states),
        cmocka_unit_test(ctl_12_resources_violation_names_window_and_item),
        cmocka_unit_test(ctl_13_cost_tier_boundary_is_exact),
        cmocka_unit_test(ctl_14_cost_three_states),
        cmocka_unit_test(ctl_15_overlapping_cost_falls_through_to_qoe),
        cmocka_unit_test(ctl_16_qoe_tie_falls_through_to_order),
        cmocka_unit_test(ctl_17_no_eligible_path_keeps_reasons_apart),
        cmocka_unit_test(ctl_18_invalid_situation_names_the_field),
        cmocka_unit_test(ctl_19_record_is_complete_and_versioned),
        cmocka_unit_test(ctl_20_replay_reproduces_and_detects_tampering),
        cmocka_unit_test(ctl_21_evidence_db_must_exist_in_a_version_this_build_reads),
        cmocka_unit_test(ctl_30_corrupted_situations_never_crash),
        cmocka_unit_test(ctl_31_content_tie_never_lets_a_match_hide_a_mismatch),
        cmocka_unit_test(ctl_32_numbers_are_read_exactly_or_refused),
        cmocka_unit_test(ctl_33_prop_one_step_above_a_limit_never_passes),
        cmocka_unit_test(ctl_99_schema_v4_keeps_removals_made_before_it),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
