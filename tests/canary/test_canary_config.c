/* The canary's configuration (strict: unknown keys, types and ranges are
 * refused with the field named) and candidate_command (bounded time and
 * output, nothing of its output in any message).  Plus `exactav canary`'s
 * usage exit codes through the real binary. */
#include "canary_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "canary_command.h"
#include "canary_config.h"
#include "ev_test.h"
#include "evidence.h"
#include "util.h"

static const char BASE[] =
    "{\"targets\": [{\"path_id\": \"cdn-c\", \"channel\": \"ch1\", \"rendition\": \"360p\","
    " \"program_version\": \"v7\", \"candidate\": \"https://cdn-c.example/360p.m3u8\","
    " \"reference\": \"/srv/ref/360p\"}]}";

/* BASE with one key set (at the top level, or in targets[0] when in_target). */
static char *with(bool in_target, const char *key, const char *value_json)
{
    json_t *root = json_loads(BASE, 0, NULL);
    json_t *obj = in_target ? json_array_get(json_object_get(root, "targets"), 0) : root;
    if (value_json)
        json_object_set_new(obj, key, json_loads(value_json, JSON_DECODE_ANY, NULL));
    else
        json_object_del(obj, key);
    char *text = json_dumps(root, 0);
    json_decref(root);
    return text;
}

/* Expects a refusal whose message starts with field. */
static void refused(bool in_target, const char *key, const char *value_json, const char *field)
{
    char *text = with(in_target, key, value_json);
    struct canary_config c;
    char err[512];
    int rc = canary_config_parse(text, strlen(text), &c, err, sizeof err);
    if (rc == 0 || strncmp(err, field, strlen(field)) != 0)
        print_error("%s=%s: rc %d, '%s' (want '%s...')\n", key, value_json ? value_json : "(absent)", rc, err, field);
    assert_int_equal(rc, -1);
    assert_memory_equal(err, field, strlen(field));
    free(text);
}

static void accepted(bool in_target, const char *key, const char *value_json, struct canary_config *c)
{
    char *text = with(in_target, key, value_json);
    char err[512] = "";
    int rc = canary_config_parse(text, strlen(text), c, err, sizeof err);
    if (rc)
        print_error("%s=%s: %s\n", key, value_json ? value_json : "(absent)", err);
    assert_int_equal(rc, 0);
    free(text);
}

/* The example's candidate_command, run as the canary runs it (with the
 * stepctl just built on PATH and a real key where the command looks for
 * it), prints a CloudFront-signed URL of the candidate. */
static void example_command_works_as_written(const struct canary_target *t)
{
    char dir[] = "/tmp/exactav-example-XXXXXX", key[64], path[4096], cmd[256];
    assert_non_null(mkdtemp(dir));
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(cmd, sizeof cmd, "openssl genrsa -out %s 2048 2>/dev/null", key);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s:%s", STEPCTL_DIR, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    setenv("EXACTAV_CLOUDFRONT_KEY", key, 1);
    char *env[] = {"EXACTAV_CANDIDATE=https://cdn-c.example/live/ch1/360p.m3u8", NULL};
    char *url = NULL, why[256] = "";
    enum canary_command_status st = canary_command_run(t->command, env, 10000, &url, why, sizeof why);
    if (st != CANARY_COMMAND_OK)
        print_error("candidate_command: %s\n", why);
    assert_int_equal(st, CANARY_COMMAND_OK);
    assert_non_null(strstr(url, "https://cdn-c.example/live/ch1/360p.m3u8?Policy="));
    assert_non_null(strstr(url, "&Key-Pair-Id=K2JCJMDEHXQW5F"));
    free(url);
    unlink(key);
    rmdir(dir);
}

static void config_13_example_and_defaults(void **state)
{
    (void)state;
    struct canary_config c;
    char err[512];
    assert_int_equal(canary_config_load(EXAMPLES_DIR "/canary.json", &c, err, sizeof err), 0);
    assert_int_equal(c.n_targets, 3);
    assert_string_equal(c.targets[0].command[0], "sh");
    assert_null(c.targets[0].command[3]);
    assert_int_equal(c.targets[2].n_headers, 1);
    assert_string_equal(c.targets[2].cookie, "session=xyz");
    assert_int_equal(c.n_player_origins, 1);
    assert_int_equal(c.max_behind_ms, 4000);
    example_command_works_as_written(&c.targets[0]);
    assert_int_equal(c.targets[2].probe_period_ms, 0);
    assert_string_equal(c.targets[1].key, "cdn-a/ch1/360p");
    assert_string_equal(c.redact_params[0], "token");
    assert_string_equal(c.keep_params[0], "region");
    assert_int_equal(c.n_keep, 1);
    canary_config_free(&c);
    accepted(false, "unused", NULL, &c);
    assert_int_equal(c.concurrency, 2);
    assert_int_equal(c.period_ms, 2000);
    assert_int_equal(c.timeout_ms, 10000);
    assert_int_equal(c.lag_segments, 1);
    assert_int_equal(c.catchup_segments, 5);
    assert_int_equal(c.probe_period_ms, 5000);
    assert_int_equal(c.targets[0].period_ms, 2000);
    assert_int_equal(c.targets[0].time_offset, 0);
    canary_config_free(&c);
    accepted(false, "period_s", "0.5", &c); /* decimals are seconds too */
    assert_int_equal(c.period_ms, 500);
    assert_int_equal(c.targets[0].period_ms, 500); /* the run's period is the default of a target's */
    canary_config_free(&c);
}

static void config_14_unknown_keys_are_named(void **state)
{
    (void)state;
    refused(false, "periods_s", "2", "periods_s: unknown key");
    refused(true, "lag_segments", "1", "targets[0].lag_segments: unknown key");
    struct canary_config c;
    char err[512];
    assert_int_equal(canary_config_parse("[]", 2, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "object"));
    assert_int_equal(canary_config_parse("{\"targets\": [], \"targets\": []}", 30, &c, err, sizeof err), -1);
    assert_int_equal(canary_config_parse("{", 1, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "not JSON"));
}

static void config_15_out_of_range_values_are_named(void **state)
{
    (void)state;
    refused(false, "concurrency", "0", "concurrency:");
    refused(false, "concurrency", "65", "concurrency:");
    refused(false, "concurrency", "2.5", "concurrency:");
    refused(false, "period_s", "0", "period_s:");
    refused(false, "period_s", "\"2\"", "period_s:");
    refused(false, "timeout_s", "0.5", "timeout_s:");
    refused(false, "timeout_s", "3601", "timeout_s:");
    refused(false, "lag_segments", "-1", "lag_segments:");
    refused(false, "lag_segments", "101", "lag_segments:");
    refused(false, "catchup_segments", "0", "catchup_segments:");
    refused(false, "probe_period_s", "0.2", "probe_period_s:");
    refused(false, "max_backoff_s", "0", "max_backoff_s:");
    refused(false, "command_timeout_s", "601", "command_timeout_s:");
    refused(false, "redact_params", "[1]", "redact_params[0]:");
    refused(false, "keep_params", "[\"region\", 2]", "keep_params[1]:");
    /* a credential is always redacted (as --keep-param refuses it) */
    refused(false, "keep_params", "[\"region\", \"Signature\"]", "keep_params[1]: Signature is a credential");
    refused(false, "keep_params", "[\"token\"]", "keep_params[0]: token is a credential");
    refused(true, "time_offset", "8589934592", "targets[0].time_offset:");
    refused(true, "time_offset", "1.5", "targets[0].time_offset:");
    refused(true, "period_s", "-2", "targets[0].period_s:");
    refused(true, "probe_period_s", "4000", "targets[0].probe_period_s:");
    struct canary_config c;
    accepted(true, "time_offset", "-8589934591", &c);
    assert_int_equal(c.targets[0].time_offset, -8589934591LL);
    canary_config_free(&c);
    accepted(false, "probe_period_s", "0", &c); /* 0: no probes */
    assert_int_equal(c.targets[0].probe_period_ms, 0);
    canary_config_free(&c);
}

static void config_16_required_fields_and_types(void **state)
{
    (void)state;
    refused(false, "targets", NULL, "targets: required");
    refused(false, "targets", "[]", "targets:");
    refused(true, "path_id", NULL, "targets[0].path_id: required");
    refused(true, "channel", "\"a/b\"", "targets[0].channel:"); /* '/' would make keys ambiguous */
    refused(true, "rendition", "\"\"", "targets[0].rendition:");
    refused(true, "program_version", "7", "targets[0].program_version:");
    refused(true, "reference", NULL, "targets[0].reference: required");
    refused(true, "candidate", "\"ftp://x/y.m3u8\"", "targets[0].candidate:");
    refused(true, "candidate", NULL, "targets[0].candidate: required");
    refused(true, "candidate_command", "[]", "targets[0].candidate_command:");
    refused(true, "candidate_command", "\"sign-url\"", "targets[0].candidate_command:");
    refused(true, "candidate_command", "[\"sign\", 3]", "targets[0].candidate_command[1]:");
    struct canary_config c;
    char *text = with(true, "candidate", NULL);
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(json_array_get(json_object_get(root, "targets"), 0), "candidate_command",
                        json_pack("[s, s]", "/bin/echo", "x"));
    text = json_dumps(root, 0);
    json_decref(root);
    char err[512];
    assert_int_equal(canary_config_parse(text, strlen(text), &c, err, sizeof err), 0); /* command alone */
    assert_null(c.targets[0].candidate);
    free(text);
    canary_config_free(&c);
}

static void config_17_duplicate_target_is_refused(void **state)
{
    (void)state;
    json_t *root = json_loads(BASE, 0, NULL);
    json_t *arr = json_object_get(root, "targets");
    json_array_append_new(arr, json_deep_copy(json_array_get(arr, 0)));
    char *text = json_dumps(root, 0);
    json_decref(root);
    struct canary_config c;
    char err[512];
    assert_int_equal(canary_config_parse(text, strlen(text), &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "targets[1]"));
    assert_non_null(strstr(err, "cdn-c/ch1/360p"));
    free(text);
}

/* ---- candidate_command ---- */

static enum canary_command_status sh(const char *script, int64_t timeout_ms, char **url, char *why, size_t n)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    char *env[] = {"EXACTAV_CANDIDATE=https://cdn.example/x.m3u8", NULL};
    return canary_command_run(argv, env, timeout_ms, url, why, n);
}

static void command_18_prints_a_fresh_url_and_nothing_else_leaks(void **state)
{
    (void)state;
    char *url = NULL, why[256] = "";
    assert_int_equal(sh("echo >&2 SECRET-stderr; printf '%s?Signature=SECRET\\r\\nmore\\n' \"$EXACTAV_CANDIDATE\"",
                        5000, &url, why, sizeof why), CANARY_COMMAND_OK);
    assert_string_equal(url, "https://cdn.example/x.m3u8?Signature=SECRET");
    free(url);
    struct { const char *script, *why; } bad[] = {
        {"echo SECRET-out; exit 3", "exit status 3"},
        {"echo not-a-url SECRET", "not an http(s) URL"},
        {"kill -9 $$", "killed by signal 9"},
        {"head -c 20000 /dev/zero | tr '\\0' a", "more than"},
        {"", "not an http(s) URL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        url = NULL;
        assert_int_equal(sh(bad[i].script, 5000, &url, why, sizeof why), CANARY_COMMAND_FAILED);
        assert_null(url);
        assert_non_null(strstr(why, bad[i].why));
        assert_null(strstr(why, "SECRET"));
    }
    char *missing[] = {"/nonexistent/sign-url", NULL};
    assert_int_equal(canary_command_run(missing, NULL, 1000, &url, why, sizeof why), CANARY_COMMAND_FAILED);
}

/* Running, not a zombie waiting for a reaper that may be slow in a container. */
static bool alive(int pid)
{
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static void command_19_time_limit_kills_the_whole_group(void **state)
{
    (void)state;
    char *url = NULL, why[256] = "", pidfile[] = "/tmp/canary-cmd-XXXXXX";
    int fd = mkstemp(pidfile);
    assert_true(fd >= 0);
    close(fd);
    char script[256];
    /* a grandchild keeps the pipe open; the command itself never exits */
    snprintf(script, sizeof script, "sleep 30 & echo $! > %s; sleep 30", pidfile);
    int64_t t0 = util_now_ms();
    assert_int_equal(sh(script, 300, &url, why, sizeof why), CANARY_COMMAND_FAILED);
    assert_non_null(strstr(why, "timed out"));
    assert_true(util_now_ms() - t0 < 20000); /* bounded, not the 30 s of the script */
    FILE *f = fopen(pidfile, "r");
    int pid = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    unlink(pidfile);
    for (int i = 0; i < 100 && alive(pid); i++)
        usleep(10000);
    assert_false(alive(pid)); /* the grandchild is gone too */
    /* printing the URL and then lingering is a time-out as well */
    assert_int_equal(sh("echo https://cdn.example/a.m3u8; exec >&-; sleep 30", 300, &url, why, sizeof why),
                     CANARY_COMMAND_FAILED);
    assert_null(url);
}

/* ---- the command line ---- */

static int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s canary %s >/dev/null 2>/tmp/canary-cli-err.$$; rc=$?; cat /tmp/canary-cli-err.$$ >&2; "
             "rm -f /tmp/canary-cli-err.$$; exit $rc", EXACTAV_BIN, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void config_20_usage_errors_exit_64_and_name_the_key(void **state)
{
    (void)state;
    char dir[] = "/tmp/canary-cli-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], args[512];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    char *text = with(true, "candidat", "\"https://x.example/a.m3u8\"");
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    snprintf(args, sizeof args, "--config %s --evidence %s/ev.db --once 2>&1 | grep -q 'targets\\[0\\].candidat: unknown key'", path, dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s canary %s", EXACTAV_BIN, args);
    assert_int_equal(system(cmd), 0);
    snprintf(args, sizeof args, "--config %s --evidence %s/ev.db --once", path, dir);
    assert_int_equal(run(args), 64);
    snprintf(args, sizeof args, "--config %s/missing.json --evidence %s/ev.db", dir, dir);
    assert_int_equal(run(args), 66);
    assert_int_equal(run("--evidence x.db"), 64);
    snprintf(args, sizeof args, "--config %s --evidence %s/ev.db --shard 2/2", EXAMPLES_DIR "/canary.json", dir);
    assert_int_equal(run(args), 64);
    snprintf(args, sizeof args, "--config %s --evidence %s/ev.db --duration 0", EXAMPLES_DIR "/canary.json", dir);
    assert_int_equal(run(args), 64);
    snprintf(args, sizeof args, "--config %s --evidence %s/ev.db --metrics-listen nowhere", EXAMPLES_DIR "/canary.json", dir);
    assert_int_equal(run(args), 64);
    assert_int_equal(run("--help"), 0);
    assert_int_equal(run("--config a --evidence b extra"), 64);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void config_21_retention_parsed_and_refused(void **state)
{
    (void)state;
    struct canary_config c;
    accepted(false, "unused", NULL, &c);
    assert_false(c.retention.on); /* absent: the canary never prunes */
    canary_config_free(&c);
    accepted(false, "retention", "{\"keep\": \"7d\"}", &c);
    assert_true(c.retention.on);
    assert_int_equal(c.retention.keep_ms, 7 * 86400 * INT64_C(1000));
    assert_int_equal(c.retention.keep_mismatch_ms, 30 * 86400 * INT64_C(1000));
    assert_int_equal(c.retention.every_ms, 3600 * 1000);
    canary_config_free(&c);
    accepted(false, "retention", "{\"keep\": \"12h\", \"keep_mismatch\": \"30m\", \"every_s\": 60}", &c);
    assert_int_equal(c.retention.keep_ms, 12 * 3600 * 1000);
    assert_int_equal(c.retention.keep_mismatch_ms, 30 * 60 * 1000);
    assert_int_equal(c.retention.every_ms, 60 * 1000);
    canary_config_free(&c);
    refused(false, "retention", "{}", "retention.keep: required");
    refused(false, "retention", "{\"keep\": 7}", "retention.keep: must be a duration");
    refused(false, "retention", "{\"keep\": \"7w\"}", "retention.keep: must be a duration");
    refused(false, "retention", "{\"keep\": \"7d\", \"keep_mismatch\": \"\"}", "retention.keep_mismatch");
    refused(false, "retention", "{\"keep\": \"7d\", \"every_s\": 0}", "retention.every_s");
    refused(false, "retention", "{\"keep\": \"7d\", \"every\": 5}", "retention.every: unknown key");
    refused(false, "retention", "\"7d\"", "retention: must be an object");
}

/* The real binary with "retention": the prune at the start of the run
 * deletes the old rows of a store written through the evidence API and
 * logs what it did; the newest row of the scope stays. */
static void config_22_retention_prunes_the_store_at_start(void **state)
{
    (void)state;
    char dir[] = "/tmp/canary-ret-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char db_path[128], cfg_path[128], log_path[128], cmd[1024];
    snprintf(db_path, sizeof db_path, "%s/ev.db", dir);
    snprintf(cfg_path, sizeof cfg_path, "%s/c.json", dir);
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    struct evidence_db *db = NULL;
    assert_int_equal(evidence_open(db_path, EVIDENCE_OPEN_RW, &db, NULL, 0), EVIDENCE_OK);
    int64_t now = evidence_now_ms();
    for (int i = 0; i < 5; i++) {
        char id[32];
        snprintf(id, sizeof id, "old-%d", i);
        char *text = ev_sample_report(id, "MATCH", now - (40 - i) * 86400 * INT64_C(1000), "cdn-z", "ch1",
                                      "720p", "pv7");
        int inserted = 0;
        assert_int_equal(evidence_import_report(db, text, strlen(text), &inserted, NULL, 0), EVIDENCE_OK);
        free(text);
    }
    evidence_close(db);
    /* one target nobody serves: its checks are UNKNOWN, the run goes on */
    char *text = with(false, "retention", "{\"keep\": \"7d\", \"every_s\": 3600}");
    FILE *f = fopen(cfg_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    snprintf(cmd, sizeof cmd, "%s canary --config %s --evidence %s --duration 1 --json >%s 2>&1", EXACTAV_BIN,
             cfg_path, db_path, log_path);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(ev_count(db_path, "SELECT count(*) FROM evidence WHERE id LIKE 'old-%'"), 1);
    assert_int_equal(ev_count(db_path, "SELECT count(*) FROM evidence WHERE id = 'old-4'"), 1);
    snprintf(cmd, sizeof cmd, "grep -F '\"event\":\"prune\"' %s | grep -qF 'evidence\\\":4,'", log_path);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "cat %s >&2", log_path);
        assert_int_equal(system(cmd), 0);
        fail_msg("no prune event with 4 evidence rows deleted in the log");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A file under dir/rel, its mtime age_s seconds ago (a link's own time). */
static void aged_file(const char *dir, const char *rel, int64_t age_s, bool link_to_outside)
{
    char path[256], target[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (link_to_outside) {
        snprintf(target, sizeof target, "%s/outside.png", dir);
        assert_int_equal(symlink(target, path), 0);
    } else {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("png", f);
        fclose(f);
    }
    struct timespec t[2] = {{time(NULL) - age_s, 0}, {time(NULL) - age_s, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

static bool present(const char *dir, const char *rel)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return lstat(path, &st) == 0;
}

/* "diff_dir" in the configuration (issue 22): parsed like --diff-dir, and
 * the scheduled prune removes the MISMATCH pictures older than
 * keep_mismatch from each target folder, nothing else: not a newer PNG,
 * not a file of another kind, not a link (nor what it points to), not a
 * file outside the target folders. */
static void config_23_diff_dir_pictures_are_pruned_with_their_mismatches(void **state)
{
    (void)state;
    struct canary_config c;
    accepted(false, "diff_dir", "\"/var/lib/exactav/pictures\"", &c);
    assert_string_equal(c.diff_dir, "/var/lib/exactav/pictures");
    canary_config_free(&c);
    refused(false, "diff_dir", "\"\"", "diff_dir: must be a non-empty string");
    refused(false, "diff_dir", "7", "diff_dir: must be a non-empty string");
    char dir[] = "/tmp/canary-pics-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pics[128], cfg_path[128], db_path[128], log_path[128], cmd[1024];
    snprintf(pics, sizeof pics, "%s/pics", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/t1", pics);
    assert_int_equal(system(cmd), 0);
    int64_t day = 86400;
    aged_file(dir, "outside.png", 3 * day, false);
    aged_file(pics, "t1/old-video-candidate.png", 3 * day, false);
    aged_file(pics, "t1/new-video-candidate.png", 60, false);
    aged_file(pics, "t1/old-notes.txt", 3 * day, false);
    aged_file(pics, "t1/old-link.png", 3 * day, true);
    aged_file(pics, "top-level.png", 3 * day, false);
    char *text = with(false, "retention", "{\"keep\": \"7d\", \"keep_mismatch\": \"1d\"}");
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(root, "diff_dir", json_string(pics));
    snprintf(cfg_path, sizeof cfg_path, "%s/c.json", dir);
    snprintf(db_path, sizeof db_path, "%s/ev.db", dir);
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    assert_int_equal(json_dump_file(root, cfg_path, 0), 0);
    json_decref(root);
    snprintf(cmd, sizeof cmd, "%s canary --config %s --evidence %s --duration 1 --json >%s 2>&1", EXACTAV_BIN,
             cfg_path, db_path, log_path);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    snprintf(cmd, sizeof cmd, "grep -F '\"event\":\"prune\"' %s | grep -qF 'pictures_removed\\\":1'", log_path);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "cat %s >&2", log_path);
        assert_int_equal(system(cmd), 0);
        fail_msg("no prune event with 1 picture removed in the log");
    }
    assert_false(present(pics, "t1/old-video-candidate.png"));
    assert_true(present(pics, "t1/new-video-candidate.png"));
    assert_true(present(pics, "t1/old-notes.txt"));
    assert_true(present(pics, "t1/old-link.png"));
    assert_true(present(dir, "outside.png"));
    assert_true(present(pics, "top-level.png"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_13_example_and_defaults),
        cmocka_unit_test(config_14_unknown_keys_are_named),
        cmocka_unit_test(config_15_out_of_range_values_are_named),
        cmocka_unit_test(config_16_required_fields_and_types),
        cmocka_unit_test(config_17_duplicate_target_is_refused),
        cmocka_unit_test(command_18_prints_a_fresh_url_and_nothing_else_leaks),
        cmocka_unit_test(command_19_time_limit_kills_the_whole_group),
        cmocka_unit_test(config_20_usage_errors_exit_64_and_name_the_key),
        cmocka_unit_test(config_21_retention_parsed_and_refused),
        cmocka_unit_test(config_22_retention_prunes_the_store_at_start),
        cmocka_unit_test(config_23_diff_dir_pictures_are_pruned_with_their_mismatches),
    };
    return canary_test_main("canary_config", tests, sizeof tests / sizeof tests[0], argc, argv);
}
