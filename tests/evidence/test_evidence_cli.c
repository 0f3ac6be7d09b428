/* `exactav evidence ...` through exactav_cmd_evidence_io with real files:
 * outputs, exit codes, read-only behaviour.  (End-to-end runs of the
 * exactav binary belong to the lead once main is wired.) */
#include "cli_evidence.h"
#include "ev_cli.h"
#include "ev_cmocka.h"
#include "ev_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* Writes a sample report file and returns its path in out. */
static void report_file(struct ev_tmp *t, const char *name, const char *id, const char *verdict,
                        int64_t observed, const char *path_id, char *out, size_t n)
{
    char *text = ev_sample_report(id, verdict, observed, path_id, "ch1", "720p", "pv7");
    assert_non_null(text);
    assert_int_equal(ev_write_file(t, name, text, out, n), 0);
    free(text);
}

static void expect_rc(struct run r, int rc)
{
    if (r.rc != rc)
        print_error("rc %d, want %d\nstdout:\n%s\nstderr:\n%s\n", r.rc, rc, r.out, r.err);
    assert_int_equal(r.rc, rc);
}

static void cli_01_empty_store_lists_nothing_with_exit_0(void **state)
{
    struct ev_tmp *t = *state;
    struct run r = run_cmd("evidence", "import", "--evidence", t->db, "--json", NULL); /* no files */
    expect_rc(r, 64);
    run_free(&r);
    char rep[160];
    report_file(t, "r.json", "id-1", "MATCH", evidence_now_ms() - 1000, "cdn-c", rep, sizeof rep);
    r = run_cmd("evidence", "import", rep, "--evidence", t->db, NULL); /* creates the file */
    expect_rc(r, 0);
    run_free(&r);
    r = run_cmd("evidence", "list", "--evidence", t->db, "--path-id", "nowhere", NULL);
    expect_rc(r, 0);
    assert_non_null(strstr(r.out, "ID"));
    assert_non_null(strstr(r.out, "VERDICT"));
    assert_null(strstr(r.out, "id-1"));
    run_free(&r);
    r = run_cmd("evidence", "latest", "--evidence", t->db, "--path-id=nowhere", "--json", NULL);
    expect_rc(r, 0);
    assert_string_equal(r.out, "[]\n");
    run_free(&r);
}

static void cli_02_import_then_list_show_latest(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    char a[160], b[160];
    report_file(t, "a.json", "id-a", "MATCH", now - 7200 * 1000, "cdn-a", a, sizeof a);
    report_file(t, "b.json", "id-b", "MISMATCH", now - 60 * 1000, "cdn-b", b, sizeof b);
    struct run r = run_cmd("evidence", "import", a, b, "--evidence", t->db, NULL);
    expect_rc(r, 0);
    assert_non_null(strstr(r.out, "imported"));
    assert_non_null(strstr(r.out, "id-b"));
    run_free(&r);

    r = run_cmd("evidence", "list", "--evidence", t->db, NULL);
    expect_rc(r, 0);
    char *pa = strstr(r.out, "id-a"), *pb = strstr(r.out, "id-b");
    assert_non_null(pa);
    assert_non_null(pb);
    assert_true(pb < pa); /* newest observation first */
    assert_non_null(strstr(r.out, "MISMATCH"));
    run_free(&r);

    r = run_cmd("evidence", "list", "--evidence", t->db, "--max-age", "3600", "--json", NULL);
    expect_rc(r, 0);
    json_t *rows = json_loads(r.out, 0, NULL);
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "id")), "id-b");
    json_decref(rows);
    run_free(&r);

    r = run_cmd("evidence", "list", "--evidence", t->db, "--verdict", "MATCH", "--limit", "5", "--json", NULL);
    expect_rc(r, 0);
    rows = json_loads(r.out, 0, NULL);
    assert_int_equal(json_array_size(rows), 1);
    json_decref(rows);
    run_free(&r);

    r = run_cmd("evidence", "show", "id-a", "--evidence", t->db, NULL);
    expect_rc(r, 0);
    assert_non_null(strstr(r.out, "observed_at_ms"));
    assert_non_null(strstr(r.out, "fetch 1"));
    assert_non_null(strstr(r.out, "https://e.cdn-c.example/s1.ts"));
    run_free(&r);

    r = run_cmd("evidence", "show", "--json", "id-a", "--evidence", t->db, NULL);
    expect_rc(r, 0);
    json_t *rec = json_loads(r.out, 0, NULL);
    assert_non_null(rec);
    assert_int_equal(json_array_size(json_object_get(rec, "fetches")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(rec, "report"), "video"), "compared_frames")), 150);
    json_decref(rec);
    run_free(&r);

    r = run_cmd("evidence", "latest", "--evidence", t->db, "--channel", "ch1", "--json", NULL);
    expect_rc(r, 0);
    rows = json_loads(r.out, 0, NULL);
    assert_int_equal(json_array_size(rows), 2); /* two paths, two scopes */
    json_decref(rows);
    run_free(&r);
}

static void cli_03_show_unknown_id_exits_3(void **state)
{
    struct ev_tmp *t = *state;
    char a[160];
    report_file(t, "a.json", "id-a", "MATCH", evidence_now_ms(), "cdn-a", a, sizeof a);
    struct run r = run_cmd("evidence", "import", a, "--evidence", t->db, NULL);
    expect_rc(r, 0);
    run_free(&r);
    r = run_cmd("evidence", "show", "id-zzz", "--evidence", t->db, NULL);
    expect_rc(r, 3);
    assert_non_null(strstr(r.err, "id-zzz"));
    run_free(&r);
}

static void cli_04_usage_errors_exit_64(void **state)
{
    struct ev_tmp *t = *state;
    const char *db = t->db;
    const char *cases[][8] = {
        {"evidence", NULL},
        {"evidence", "frobnicate", "--evidence", db, NULL},
        {"evidence", "list", NULL},                                   /* no --evidence */
        {"evidence", "list", "--evidence", NULL},                     /* no value */
        {"evidence", "list", "--evidence", db, "--bogus", NULL},
        {"evidence", "list", "--evidence", db, "--verdict", "PASS", NULL},
        {"evidence", "list", "--evidence", db, "--max-age", "-5", NULL},
        {"evidence", "list", "--evidence", db, "--max-age", "10s", NULL},
        {"evidence", "list", "--evidence", db, "--limit", "0", NULL},
        {"evidence", "list", "--evidence", db, "extra", NULL},
        {"evidence", "show", "--evidence", db, NULL},                 /* no id */
        {"evidence", "show", "a", "b", "--evidence", db, NULL},
        {"evidence", "show", "a", "--evidence", db, "--path-id", "p", NULL},
        {"evidence", "import", "--evidence", db, NULL},
        {"evidence", "import", "x.json", "--evidence", db, "--max-age", "5", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int argc = 0;
        while (cases[i][argc])
            argc++;
        size_t no = 0, ne = 0;
        char *out = NULL, *err = NULL;
        FILE *fo = open_memstream(&out, &no), *fe = open_memstream(&err, &ne);
        int rc = exactav_cmd_evidence_io(argc, (char **)cases[i], fo, fe);
        fclose(fo);
        fclose(fe);
        if (rc != 64)
            print_error("case %zu: rc %d\n%s", i, rc, err);
        assert_int_equal(rc, 64);
        assert_non_null(strstr(err, "usage:"));
        free(out);
        free(err);
    }
    assert_int_equal(access(db, F_OK), -1); /* nothing was created */
}

static void cli_05_invalid_report_exits_65_naming_file_and_field(void **state)
{
    struct ev_tmp *t = *state;
    char bad[160], good[160], conflict[160];
    assert_int_equal(ev_write_file(t, "bad.json",
                                   "{\"check_kind\":\"exact-av-v1\",\"evidence_id\":\"x\",\"verdict\":\"MATCH\","
                                   "\"reason\":\"r\",\"profile\":{\"id\":\"exact-av-v1\"},"
                                   "\"observed_at_ms\":1,\"observed_end_ms\":2}",
                                   bad, sizeof bad), 0);
    int64_t now = evidence_now_ms();
    report_file(t, "good.json", "id-g", "MATCH", now, "cdn-a", good, sizeof good);
    report_file(t, "conflict.json", "id-g", "MISMATCH", now, "cdn-a", conflict, sizeof conflict);
    /* every file is tried: the good one is stored, the run exits 65 */
    struct run r = run_cmd("evidence", "import", bad, good, "--evidence", t->db, NULL);
    expect_rc(r, 65);
    assert_non_null(strstr(r.err, bad));
    assert_non_null(strstr(r.err, "profile.fingerprint"));
    assert_non_null(strstr(r.out, "id-g"));
    run_free(&r);
    r = run_cmd("evidence", "import", conflict, "--evidence", t->db, NULL);
    expect_rc(r, 65);
    assert_non_null(strstr(r.err, "conflict.json"));
    assert_non_null(strstr(r.err, "different report"));
    run_free(&r);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE verdict='MATCH'"), 1);
}

static void cli_06_unopenable_files_exit_66(void **state)
{
    struct ev_tmp *t = *state;
    struct run r = run_cmd("evidence", "list", "--evidence", t->db, NULL); /* does not exist */
    expect_rc(r, 66);
    assert_non_null(strstr(r.err, t->db));
    run_free(&r);
    assert_int_equal(access(t->db, F_OK), -1); /* reading never creates */
    char missing[160];
    ev_tmp_path(t, "missing.json", missing, sizeof missing);
    r = run_cmd("evidence", "import", missing, "--evidence", t->db, NULL);
    expect_rc(r, 66);
    assert_non_null(strstr(r.err, "missing.json"));
    run_free(&r);
    char junk[160];
    assert_int_equal(ev_write_file(t, "junk.db", "definitely not an SQLite file, but long enough to look", junk, sizeof junk), 0);
    r = run_cmd("evidence", "show", "x", "--evidence", junk, NULL);
    expect_rc(r, 66);
    run_free(&r);
}

static void cli_07_help_exits_0(void **state)
{
    (void)state;
    const char *subs[] = {"list", "show", "latest", "import"};
    for (size_t i = 0; i < 4; i++) {
        struct run r = run_cmd("evidence", subs[i], "--help", NULL);
        expect_rc(r, 0);
        assert_non_null(strstr(r.out, subs[i]));
        assert_non_null(strstr(r.out, "--evidence"));
        run_free(&r);
    }
    struct run r = run_cmd("evidence", "--help", NULL);
    expect_rc(r, 0);
    assert_non_null(strstr(r.out, "latest"));
    run_free(&r);
}

static void cli_08_import_twice_reports_unchanged(void **state)
{
    struct ev_tmp *t = *state;
    char a[160];
    int64_t old = evidence_now_ms() - 86400 * 1000LL;
    report_file(t, "a.json", "id-a", "MATCH", old, "cdn-a", a, sizeof a);
    struct run r = run_cmd("evidence", "import", a, "--evidence", t->db, "--json", NULL);
    expect_rc(r, 0);
    json_t *s = json_loads(r.out, 0, NULL);
    assert_true(json_is_true(json_object_get(json_array_get(s, 0), "inserted")));
    json_decref(s);
    run_free(&r);
    r = run_cmd("evidence", "import", a, "--evidence", t->db, "--json", NULL);
    expect_rc(r, 0);
    s = json_loads(r.out, 0, NULL);
    assert_true(json_is_false(json_object_get(json_array_get(s, 0), "inserted")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(s, 0), "evidence_id")), "id-a");
    json_decref(s);
    run_free(&r);
    r = run_cmd("evidence", "list", "--evidence", t->db, "--max-age", "3600", "--json", NULL);
    expect_rc(r, 0);
    assert_string_equal(r.out, "[]\n"); /* re-importing did not make it fresh */
    run_free(&r);
}

static void cli_09_table_output_neutralises_control_characters(void **state)
{
    struct ev_tmp *t = *state;
    char *text = ev_sample_report("id-esc", "MATCH", evidence_now_ms(), "cdn-\x1b[31mred", "ch1", "720p", "pv7");
    char path[160];
    assert_int_equal(ev_write_file(t, "esc.json", text, path, sizeof path), 0);
    free(text);
    struct run r = run_cmd("evidence", "import", path, "--evidence", t->db, NULL);
    expect_rc(r, 0);
    run_free(&r);
    r = run_cmd("evidence", "list", "--evidence", t->db, NULL);
    expect_rc(r, 0);
    assert_null(strchr(r.out, '\x1b'));
    assert_non_null(strstr(r.out, "cdn-\\x1b[31mred"));
    run_free(&r);
}

static void expect_refused(struct run r, const char *why)
{
    if (r.rc != 66 || !strstr(r.err, why))
        fail_msg("exit %d (want 66), stderr does not say \"%s\": %s", r.rc, why, r.err);
    run_free(&r);
}

/* Every store error exits 66 in every subcommand, with a message that says
 * what the file is; import into a file that is not ours changes nothing. */
static void cli_10_store_errors_exit_66_in_every_subcommand(void **state)
{
    struct ev_tmp *t = *state;
    char missing[160], foreign[160], control[160], newer[160], rep[160];
    ev_tmp_path(t, "missing.db", missing, sizeof missing);
    ev_tmp_path(t, "foreign.db", foreign, sizeof foreign);
    ev_tmp_path(t, "control.db", control, sizeof control);
    ev_tmp_path(t, "newer.db", newer, sizeof newer);
    report_file(t, "r.json", "id-r", "MATCH", evidence_now_ms(), "cdn-c", rep, sizeof rep);
    struct run r = run_cmd("evidence", "import", rep, "--evidence", newer, NULL);
    expect_rc(r, 0);
    run_free(&r);
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(newer, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(sqlite3_open(foreign, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(sqlite3_open(control, &raw), SQLITE_OK); /* what stepctl's control.db says */
    assert_int_equal(sqlite3_exec(raw, "CREATE TABLE decisions(id); PRAGMA application_id = 1398031188",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    const struct {
        const char *db, *why;
    } stores[] = {{missing, "no such file"},
                  {foreign, "not an evidence store"},
                  {control, "this is a stepctl control.db"},
                  {newer, "schema version 99"}};
    for (size_t i = 0; i < sizeof stores / sizeof stores[0]; i++) {
        expect_refused(run_cmd("evidence", "list", "--evidence", stores[i].db, NULL), stores[i].why);
        expect_refused(run_cmd("evidence", "latest", "--evidence", stores[i].db, NULL), stores[i].why);
        expect_refused(run_cmd("evidence", "show", "id-r", "--evidence", stores[i].db, NULL),
                       stores[i].why);
        if (i > 0) /* import creates a missing store */
            expect_refused(run_cmd("evidence", "import", rep, "--evidence", stores[i].db, NULL),
                           stores[i].why);
    }
    assert_int_equal(access(missing, F_OK), -1);
    assert_int_equal(ev_count(foreign, "SELECT count(*) FROM sqlite_master"), 1);
    assert_int_equal(ev_count(control, "SELECT count(*) FROM sqlite_master"), 1);
}

/* The reading subcommands on a store in a directory the reader cannot
 * write: as root the reader runs as user nobody (root passes every
 * permission check), otherwise as this user.  The store is as its writer
 * left it (WAL files kept), then without WAL files (read immutable). */
static void cli_11_readers_work_on_a_store_they_cannot_write(void **state)
{
    struct ev_tmp *t = *state;
    char rep[160], dir[160], db[200];
    report_file(t, "r.json", "id-r", "MATCH", evidence_now_ms(), "cdn-c", rep, sizeof rep);
    ev_tmp_path(t, "ro", dir, sizeof dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    struct run r = run_cmd("evidence", "import", rep, "--evidence", db, NULL);
    expect_rc(r, 0);
    run_free(&r);
    assert_int_equal(chmod(t->dir, 0755), 0);
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            assert_int_equal(ev_count(db, "SELECT count(*) FROM evidence"), 1); /* drops WAL files */
        assert_int_equal(chmod(dir, 0555), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
                _exit(99);
            const char *cmds[][6] = {{"evidence", "list", "--evidence", db, NULL},
                                     {"evidence", "latest", "--evidence", db, NULL},
                                     {"evidence", "show", "id-r", "--evidence", db, NULL}};
            for (int i = 0; i < 3; i++) {
                int argc = 0;
                while (cmds[i][argc])
                    argc++;
                FILE *out = fopen("/dev/null", "w");
                int rc = exactav_cmd_evidence_io(argc, (char **)cmds[i], out, stderr);
                fclose(out);
                if (rc != 0)
                    _exit(10 + i);
            }
            _exit(0);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        assert_int_equal(chmod(dir, 0755), 0);
    }
}

/* --media-sequence (schema v2) selects the rows of one media sequence number;
 * it is a filter of list and latest only. */
static void cli_12_list_filters_by_media_sequence(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    for (int i = 0; i < 2; i++) {
        char id[16], name[32], path[160];
        snprintf(id, sizeof id, "seq-%d", 30 + i);
        snprintf(name, sizeof name, "%s.json", id);
        char *text = ev_sample_report(id, "MATCH", now - 1000 * (2 - i), "cdn-c", "ch1", "720p", "pv7");
        json_t *rep = json_loads(text, 0, NULL);
        free(text);
        json_object_set_new(rep, "media_sequence", json_integer(30 + i));
        text = json_dumps(rep, JSON_COMPACT);
        json_decref(rep);
        assert_int_equal(ev_write_file(t, name, text, path, sizeof path), 0);
        free(text);
        struct run r = run_cmd("evidence", "import", path, "--evidence", t->db, NULL);
        expect_rc(r, 0);
        run_free(&r);
    }
    struct run r = run_cmd("evidence", "list", "--evidence", t->db, "--media-sequence", "31", NULL);
    expect_rc(r, 0);
    assert_non_null(strstr(r.out, "MEDIA_SEQ"));
    assert_non_null(strstr(r.out, "seq-31"));
    assert_null(strstr(r.out, "seq-30"));
    run_free(&r);
    r = run_cmd("evidence", "latest", "--evidence", t->db, "--media-sequence=30", "--json", NULL);
    expect_rc(r, 0);
    assert_non_null(strstr(r.out, "\"media_sequence\": 30"));
    run_free(&r);
    r = run_cmd("evidence", "list", "--evidence", t->db, "--media-sequence", "-1", NULL);
    expect_rc(r, 64);
    run_free(&r);
    r = run_cmd("evidence", "show", "seq-30", "--evidence", t->db, "--media-sequence", "30", NULL);
    expect_rc(r, 64);
    run_free(&r);
}

/* Writes the sample report with its first `from` replaced by `to`. */
static void sample_report_edited(struct ev_tmp *t, const char *name, const char *id, const char *from,
                                 const char *to, char *path, size_t n)
{
    char *text = ev_sample_report(id, "MATCH", evidence_now_ms(), "cdn-a", "ch1", "720p", "pv7");
    assert_non_null(text);
    char *at = strstr(text, from);
    assert_non_null(at);
    char *edited = malloc(strlen(text) + strlen(to) + 1);
    assert_non_null(edited);
    memcpy(edited, text, (size_t)(at - text));
    strcpy(edited + (at - text), to);
    strcat(edited, at + strlen(from));
    assert_int_equal(ev_write_file(t, name, edited, path, n), 0);
    free(edited);
    free(text);
}

/* A report whose URL or header still holds a credential value is refused
 * (exit 65, naming the field), nothing of it stored; redacted ones, kept
 * harmless parameters and non-ASCII file names pass. */
static void cli_13_import_refuses_unredacted_credentials(void **state)
{
    struct ev_tmp *t = *state;
    static const struct {
        const char *from, *to, *field;
    } leaks[] = {
        {"index.m3u8?Signature=REDACTED", "index.m3u8?Signature=abc123", "candidate.object"},
        {"index.m3u8?Signature=REDACTED", "index.m3u8?Key-Pair-Id=K2JCJMDEHXQW5F", "candidate.object"},
        {"https://cdn-c.example/live", "https://u:pw@cdn-c.example/live", "candidate.object"},
        {"https://cdn-c.example/live", "https://cdn-c.example/Policy=eyJTdGF0/live", "candidate.object"},
        {"https://e.cdn-c.example/s1.ts", "https://e.cdn-c.example/s1.ts?token=abc", "fetches[1].url"},
        {"\"nginx\"", "\"nginx sig=abcd\"", "fetches[0].headers.server"},
    };
    for (size_t i = 0; i < sizeof leaks / sizeof leaks[0]; i++) {
        char path[160];
        sample_report_edited(t, "leak.json", "id-leak", leaks[i].from, leaks[i].to, path, sizeof path);
        struct run r = run_cmd("evidence", "import", path, "--evidence", t->db, NULL);
        expect_rc(r, 65);
        if (!strstr(r.err, leaks[i].field))
            print_error("want %s in: %s\n", leaks[i].field, r.err);
        assert_non_null(strstr(r.err, leaks[i].field));
        assert_non_null(strstr(r.err, "not redacted"));
        assert_null(strstr(r.err, leaks[i].to));       /* the secret is not echoed either */
        run_free(&r);
    }
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 0);
    /* what exactav records passes: REDACTED values, a kept harmless
     * parameter, a file name outside ASCII */
    char path[160];
    sample_report_edited(t, "ok.json", "id-ok", "index.m3u8?Signature=REDACTED",
                         "index.m3u8?bitrate=3000&Signature=REDACTED&caf\u00e9=1", path, sizeof path);
    struct run r = run_cmd("evidence", "import", path, "--evidence", t->db, NULL);
    expect_rc(r, 0);
    run_free(&r);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, ev_setup, ev_teardown)

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(cli_01_empty_store_lists_nothing_with_exit_0),
        T(cli_02_import_then_list_show_latest),
        T(cli_03_show_unknown_id_exits_3),
        T(cli_04_usage_errors_exit_64),
        T(cli_05_invalid_report_exits_65_naming_file_and_field),
        T(cli_06_unopenable_files_exit_66),
        T(cli_07_help_exits_0),
        T(cli_08_import_twice_reports_unchanged),
        T(cli_09_table_output_neutralises_control_characters),
        T(cli_10_store_errors_exit_66_in_every_subcommand),
        T(cli_11_readers_work_on_a_store_they_cannot_write),
        T(cli_12_list_filters_by_media_sequence),
        T(cli_13_import_refuses_unredacted_credentials),
    };
    return ev_run_tests("test_evidence_cli", tests, sizeof tests / sizeof tests[0], argc, argv);
}
