/* test_plan_cli.c - end-to-end runs of the real stepctl binary on the JSON
 * inputs in tests/plan/data: exit codes, output fields, the mask. */
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_skip.h"

typedef struct {
    int code;
    char out[1 << 20];
    char err[8192];
} run_result;

static void slurp_fd(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t k;
    lseek(fd, 0, SEEK_SET);
    while (n + 1 < cap && (k = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = '\0';
}

/* Runs STEPCTL_BIN plan ARGS... (NULL-terminated), capturing both streams. */
static run_result *run(const char *first, ...)
{
    static run_result r; /* large; tests run one at a time */
    char *argv[32] = {STEPCTL_BIN, "plan"};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    FILE *o = tmpfile(), *e = tmpfile();
    assert_non_null(o);
    assert_non_null(e);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fileno(o), 1);
        dup2(fileno(e), 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    slurp_fd(fileno(o), r.out, sizeof r.out);
    slurp_fd(fileno(e), r.err, sizeof r.err);
    fclose(o);
    fclose(e);
    return &r;
}

#define DATA(name) PLAN_DATA_DIR "/" name

static json_t *parse_out(const run_result *r)
{
    json_error_t je;
    json_t *j = json_loads(r->out, 0, &je);
    assert_non_null(j);
    return j;
}

/* 01: every algorithm plans tiny.json; output carries every field. */
static void cli_01_all_algorithms_json(void **state)
{
    (void)state;
    const char *algos[] = {"lua", "lua-ls", "df", "mhcp", "random", "optimal"};
    const char *metrics[] = {"mean_latency_ms", "mean_bitrate_mbps", "mean_interaction",
                             "mean_bitrate_drop_mbps", "switch_count", "weighted_qoe",
                             "mean_qoe", "served", "unserved"};
    for (size_t a = 0; a < 6; a++) {
        run_result *r = run("--algorithm", algos[a], "--input", DATA("tiny.json"), "--json", NULL);
        assert_int_equal(r->code, 0);
        json_t *j = parse_out(r);
        assert_string_equal(json_string_value(json_object_get(j, "algorithm")), algos[a]);
        json_t *m = json_object_get(j, "metrics");
        for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; k++)
            assert_non_null(json_object_get(m, metrics[k]));
        json_t *vs = json_object_get(j, "viewers");
        assert_int_equal(json_array_size(vs), 4);
        size_t i;
        json_t *v;
        json_array_foreach(vs, i, v) {
            assert_non_null(json_object_get(v, "qoe"));
            if (json_is_true(json_object_get(v, "served"))) {
                assert_true(json_is_string(json_object_get(v, "server")));
                assert_true(json_is_number(json_object_get(v, "bitrate_mbps")));
            }
        }
        json_decref(j);
    }
}

/* 02: the admission mask: s1 FAIL is never assigned; v3 (only s1) unserved. */
static void cli_02_mask(void **state)
{
    (void)state;
    const char *algos[] = {"lua", "lua-ls", "df", "mhcp", "random", "optimal"};
    for (size_t a = 0; a < 6; a++) {
        run_result *r = run("--algorithm", algos[a], "--input", DATA("masked.json"), "--json", NULL);
        assert_int_equal(r->code, 0);
        json_t *j = parse_out(r), *v;
        size_t i;
        json_array_foreach(json_object_get(j, "viewers"), i, v) {
            const char *s = json_string_value(json_object_get(v, "server"));
            assert_true(s == NULL || strcmp(s, "s1") != 0);
            if (strcmp(json_string_value(json_object_get(v, "id")), "v3") == 0)
                assert_true(json_is_false(json_object_get(v, "served")));
        }
        json_decref(j);
    }
}

/* 03: geometric coverage (no links) with an UNKNOWN verdict as the mask. */
static void cli_03_geometric_coverage(void **state)
{
    (void)state;
    run_result *r = run("--input", DATA("geo.json"), "--json", NULL);
    assert_int_equal(r->code, 0);
    json_t *j = parse_out(r);
    json_t *vs = json_object_get(j, "viewers");
    assert_string_equal(json_string_value(json_object_get(json_array_get(vs, 0), "server")),
                        "flinders");
    assert_true(json_is_null(json_object_get(json_array_get(vs, 1), "server")));
    json_decref(j);
}

/* 04: invalid input exits 65 and names the field. */
static void cli_04_invalid_input_names_field(void **state)
{
    (void)state;
    struct { const char *file, *field; } cases[] = {
        {DATA("bad_expected.json"), "viewers[1].expected_mbps"},
        {DATA("bad_link.json"), "viewers[2].links[0].server"},
        {DATA("bad_ladder.json"), "ladder_mbps[1]"},
        {DATA("bad_syntax.json"), "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result *r = run("--input", cases[i].file, NULL);
        assert_int_equal(r->code, 65);
        assert_non_null(strstr(r->err, cases[i].field));
    }
}

/* 05: usage 64, unopenable file 66, help 0 and truthful. */
static void cli_05_exit_codes(void **state)
{
    (void)state;
    assert_int_equal(run("--algorithm", "nope", "--input", DATA("tiny.json"), NULL)->code, 64);
    assert_int_equal(run(NULL)->code, 64);
    assert_int_equal(run("--input", DATA("tiny.json"), "--users", NULL)->code, 64);
    assert_int_equal(run("--input", DATA("tiny.json"), "--bogus", NULL)->code, 64);
    run_result *r = run("--input", "/nonexistent/plan.json", NULL);
    assert_int_equal(r->code, 66);
    assert_non_null(strstr(r->err, "/nonexistent/plan.json"));
    r = run("--help", NULL);
    assert_int_equal(r->code, 0);
    const char *words[] = {"lua", "lua-ls", "df", "mhcp", "random", "optimal", "--input",
                           "--json", "admission", "64", "65", "66", "70"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        assert_non_null(strstr(r->out, words[i]));
}

/* 06: optimal beyond its size limit: 65 naming viewers. */
static void cli_06_optimal_too_large(void **state)
{
    (void)state;
    run_result *r = run("--algorithm", "optimal", "--synthetic", "--users", "3000",
                        "--servers", "40", NULL);
    assert_int_equal(r->code, 65);
    assert_non_null(strstr(r->err, "viewers"));
}

/* 07: --write-input round-trips: the written instance plans identically. */
static void cli_07_write_input_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/plan_rt_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    run_result *r = run("--synthetic", "--users", "60", "--servers", "6", "--seed", "3",
                        "--write-input", path, "--tsv", NULL);
    assert_int_equal(r->code, 0);
    char first[4096];
    size_t len = strlen(r->out);
    assert_true(len < sizeof first);
    memcpy(first, r->out, len + 1);
    r = run("--input", path, "--seed", "3", "--tsv", NULL);
    assert_int_equal(r->code, 0);
    /* identical in the 14 columns before the elapsed time */
    const char *p = first;
    for (int tab = 0; tab < 14; tab++) {
        p = strchr(p, '\t');
        assert_non_null(p);
        p++;
    }
    assert_memory_equal(first, r->out, (size_t)(p - first));
    remove(path);
}

/* 08: EUA generation and coverage through the CLI (skips without corpus). */
static void cli_08_corpus_eua(void **state)
{
    (void)state;
    test_skip_unless(PLAN_CORPUS_DIR "/eua");
    run_result *r = run("--coverage", PLAN_CORPUS_DIR "/eua", NULL);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "below10 72 8.8%"));
    assert_non_null(strstr(r->out, "from10to20 607 74.4%"));
    assert_non_null(strstr(r->out, "above20 137 16.8%"));
    r = run("--algorithm", "lua", "--eua", PLAN_CORPUS_DIR "/eua", "--users", "50",
            "--servers", "8", "--json", NULL);
    assert_int_equal(r->code, 0);
    json_t *j = parse_out(r);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "metrics"), "viewers")), 50);
    json_decref(j);
    assert_int_equal(run("--eua", "/nonexistent", NULL)->code, 66);
}

/* 09: --json and --tsv together are refused as a usage error, in either order. */
static void cli_09_json_and_tsv_refused(void **state)
{
    (void)state;
    run_result *r = run("--input", DATA("tiny.json"), "--json", "--tsv", NULL);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--json and --tsv"));
    assert_non_null(strstr(r->out, "\"kind\":\"usage\""));      /* the --json error object, nothing else */
    assert_null(strstr(r->out, "\"metrics\""));
    assert_int_equal(run("--input", DATA("tiny.json"), "--tsv", "--json", NULL)->code, 64);
    assert_int_equal(run("--input", DATA("tiny.json"), "--tsv", NULL)->code, 0);
}

/* 10: optimal not proven within its time limit has its own exit code (75),
 * prints no allocation, and names the option.  GLPK stops at its first
 * check when tm_lim is 1 ms (the check is "tm_lim - 1 <= elapsed"), so this
 * does not depend on the machine's speed. */
static void cli_10_optimal_time_limit_exits_75(void **state)
{
    (void)state;
    run_result *r = run("--algorithm", "optimal", "--synthetic", "--users", "200", "--servers",
                        "20", "--time-limit-ms", "1", "--json", NULL);
    assert_int_equal(r->code, 75);
    assert_non_null(strstr(r->out, "\"kind\":\"time_limit\""));  /* the --json error object, no allocation */
    assert_null(strstr(r->out, "\"metrics\""));
    assert_non_null(strstr(r->err, "--time-limit-ms"));
    assert_int_equal(run("--algorithm", "optimal", "--input", DATA("tiny.json"), "--time-limit-ms",
                         "0", NULL)->code, 64);
    r = run("--help", NULL);
    assert_non_null(strstr(r->out, "75"));
}

/* 11: --overload RATIO generates an overloaded instance (issue 23): lua-ls
 * plans it, leaving viewers out; the ratio must be positive and is one
 * more instance source, exclusive with the others. */
static void cli_11_overload_generator(void **state)
{
    (void)state;
    run_result *r = run("--algorithm", "lua-ls", "--overload", "2", "--users", "24", "--servers",
                        "5", "--seed", "3", "--json", NULL);
    assert_int_equal(r->code, 0);
    json_t *j = parse_out(r);
    json_t *m = json_object_get(j, "metrics");
    assert_int_equal(json_integer_value(json_object_get(m, "viewers")), 24);
    assert_true(json_integer_value(json_object_get(m, "unserved")) > 0); /* demand = 2 x capacity */
    assert_true(json_real_value(json_object_get(m, "weighted_qoe")) < 0);
    json_decref(j);
    assert_int_equal(run("--overload", "0", "--users", "24", NULL)->code, 64);
    assert_int_equal(run("--overload", "x", NULL)->code, 64);
    r = run("--overload", "2", "--synthetic", NULL);
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--overload"));
    assert_non_null(strstr(run("--help", NULL)->out, "--overload RATIO"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cli_01_all_algorithms_json),
        cmocka_unit_test(cli_02_mask),
        cmocka_unit_test(cli_03_geometric_coverage),
        cmocka_unit_test(cli_04_invalid_input_names_field),
        cmocka_unit_test(cli_05_exit_codes),
        cmocka_unit_test(cli_06_optimal_too_large),
        cmocka_unit_test(cli_07_write_input_round_trip),
        cmocka_unit_test(cli_08_corpus_eua),
        cmocka_unit_test(cli_09_json_and_tsv_refused),
        cmocka_unit_test(cli_10_optimal_time_limit_exits_75),
        cmocka_unit_test(cli_11_overload_generator),
    };
    test_select(argc, argv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
