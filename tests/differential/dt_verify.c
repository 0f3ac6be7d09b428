/* dt_verify.c - see dt_verify.h. */
#include "dt_verify.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

static enum dt_verdict verdict_of_exit(int rc)
{
    switch (rc) {
    case 0: return DT_MATCH;
    case 1: return DT_MISMATCH;
    case 2: return DT_UNKNOWN;
    case 64: return DT_USAGE;
    default: return DT_ERROR;
    }
}

static void copy_str(char *dst, size_t size, json_t *v)
{
    const char *s = json_string_value(v);
    dt_fmt(dst, size, "%s", s ? s : "-");
}

/* Reason codes and the first difference from the JSON report. */
static void read_report(struct dt_outcome *o)
{
    json_t *root = json_load_file(o->report, 0, NULL);
    if (root == NULL)
        return;
    copy_str(o->reason, sizeof o->reason, json_object_get(root, "reason"));
    json_t *v = json_object_get(root, "video"), *a = json_object_get(root, "audio");
    copy_str(o->vreason, sizeof o->vreason, json_object_get(v, "reason"));
    copy_str(o->areason, sizeof o->areason, json_object_get(a, "reason"));
    json_t *fm = json_object_get(v, "first_mismatch");
    if (!json_is_object(fm) || json_is_null(fm))
        fm = json_object_get(a, "first_mismatch");
    if (json_is_object(fm)) {
        char *s = json_dumps(fm, JSON_COMPACT);
        dt_fmt(o->first, sizeof o->first, "%s", s ? s : "");
        free(s);
    }
    json_decref(root);
}

/* exactav bind of the reference files; the binding's path into out. */
static int bind_reference(struct dt_env *env, const struct dt_case *c, struct dt_outcome *o,
                          char *out, size_t size)
{
    struct dt_argv a;
    char err[DT_PATH_MAX];
    if (!dt_fmt(out, size, "%s/ref.json", c->dir) || !dt_fmt(err, sizeof err, "%s/bind.err", c->dir))
        return -1;
    dt_argv_init(&a);
    dt_argv_addl(&a, env->exactav, "bind", "--channel", "dt", "--program-version", "v1",
                 "--rendition", "r0", "--out", out, NULL);
    if (c->has_interval) {
        dt_argv_addl(&a, "--interval", NULL);
        dt_argv_add(&a, "%" PRIu64 ":%" PRIu64, c->start, c->end);
    }
    for (size_t i = 0; i < c->nref; i++)
        dt_argv_add(&a, "%s", c->ref[i].path);
    int rc = dt_run(env, &a, NULL, err);
    dt_argv_free(&a);
    if (rc != 0) {
        o->exit_code = rc;
        o->verdict = verdict_of_exit(rc) == DT_USAGE ? DT_USAGE : DT_ERROR;
        dt_fmt(o->step, sizeof o->step, "bind");
        char *text = dt_read_file(err, 4096, NULL);
        dt_fmt(o->reason, sizeof o->reason, "bind exit %d", rc);
        if (text)
            dt_fmt(o->first, sizeof o->first, "%.*s", (int)strcspn(text, "\n"), text);
        free(text);
        return 1;
    }
    return 0;
}

int dt_verify_case(struct dt_env *env, const struct dt_case *c, int port, struct dt_outcome *o)
{
    memset(o, 0, sizeof *o);
    dt_fmt(o->step, sizeof o->step, "verify");
    dt_note(env, "---- the verifier under test");
    char ref[DT_PATH_MAX], err[DT_PATH_MAX];
    bool bound = c->ref_bind || c->nref > 1;
    if (bound) {
        int b = bind_reference(env, c, o, ref, sizeof ref);
        if (b != 0)
            return b < 0 ? -1 : 0;
    } else if (!dt_fmt(ref, sizeof ref, "%s", c->ref[0].path)) {
        return -1;
    }
    if (!dt_fmt(o->report, sizeof o->report, "%s/report.json", c->dir) ||
        !dt_fmt(err, sizeof err, "%s/verify.err", c->dir))
        return -1;
    struct dt_argv a;
    dt_argv_init(&a);
    dt_argv_addl(&a, env->exactav, "verify", "--json", "--no-progress", "--reference", ref,
                 "--candidate", NULL);
    if (c->cand_kind == DT_CAND_HLS) {
        size_t wl = strlen(env->work);
        if (strncmp(c->playlist, env->work, wl) != 0 || port <= 0) {
            dt_argv_free(&a);
            return -1;
        }
        dt_argv_add(&a, "http://127.0.0.1:%d%s", port, c->playlist + wl);
    } else {
        dt_argv_add(&a, "%s", c->cand[0].path);
    }
    if (c->has_interval && !bound) {
        dt_argv_addl(&a, "--interval", NULL);
        dt_argv_add(&a, "%" PRIu64 ":%" PRIu64, c->start, c->end);
    }
    if (c->offset) {
        dt_argv_addl(&a, "--time-offset", NULL);
        dt_argv_add(&a, "%" PRIu64, c->offset);
    }
    for (int i = 0; i < c->nextra; i++)
        dt_argv_add(&a, "%s", c->extra[i]);
    int rc = dt_run(env, &a, o->report, err);
    dt_argv_free(&a);
    if (rc < 0)
        return -1;
    o->exit_code = rc;
    o->verdict = verdict_of_exit(rc);
    read_report(o);
    if (o->reason[0] == '\0' || strcmp(o->reason, "-") == 0) {
        char *text = dt_read_file(err, 4096, NULL);
        dt_fmt(o->reason, sizeof o->reason, "exit %d", rc);
        if (text)
            dt_fmt(o->first, sizeof o->first, "%.*s", (int)strcspn(text, "\n"), text);
        free(text);
    }
    return 0;
}

pid_t dt_testd_start(struct dt_env *env, int *port)
{
    char port_file[DT_PATH_MAX];
    if (!dt_fmt(port_file, sizeof port_file, "%s/testd.port", env->work))
        return -1;
    unlink(port_file);
    fflush(NULL); /* the child must not inherit unwritten output */
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        execl(env->testd, env->testd, "--root", env->work, "--port", "0", "--port-file",
              port_file, (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    *port = 0;
    for (int i = 0; i < 200 && *port == 0; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", port) != 1)
                *port = 0;
            fclose(f);
        }
        if (*port == 0) {
            struct timespec nap = {0, 25 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
    }
    if (*port == 0) {
        dt_testd_stop(pid);
        return -1;
    }
    return pid;
}

void dt_testd_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}
