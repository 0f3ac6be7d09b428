/* serve_rig.c - `stepctl serve` as a child of a test (see serve_rig.h). */
#include "serve_rig.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* Servers still running: a failing assertion leaves its test early, and the
 * teardown must not leave a server behind (ctest would wait for it). */
static pid_t live[16];

static void track(pid_t pid, bool alive)
{
    for (int i = 0; i < 16; i++)
        if (alive ? live[i] == 0 : live[i] == pid) {
            live[i] = alive ? pid : 0;
            return;
        }
}

int kill_leftovers(void **state)
{
    (void)state;
    for (int i = 0; i < 16; i++)
        if (live[i]) {
            kill(live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
            live[i] = 0;
        }
    return 0;
}

void server_start_with(struct ctl_world *w, struct server *s, const char *const *extra)
{
    char pf[160], log[160];
    ctl_tmp_path(&w->t, "port", pf, sizeof pf);
    ctl_tmp_path(&w->t, "serve.log", log, sizeof log);
    unlink(pf);
    const char *argv[32] = {"stepctl", "serve", "--db", w->db, "--listen", "127.0.0.1:0",
                            "--port-file", pf, "--threads", "4"};
    size_t n = 10;
    for (size_t i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        if (!freopen(log, "a", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(97);
        execv(CTL_STEPCTL, (char *const *)argv);
        _exit(98);
    }
    track(s->pid, true);
    s->port = 0;
    for (int i = 0; i < 500 && !s->port; i++) {
        FILE *f = fopen(pf, "r");
        if (f) {
            if (fscanf(f, "%d", &s->port) != 1)
                s->port = 0;
            fclose(f);
        }
        if (!s->port)
            usleep(10000);
    }
    assert_true(s->port > 0);
}

void server_start(struct ctl_world *w, struct server *s)
{
    server_start_with(w, s, NULL);
}

int server_stop(struct server *s, int sig)
{
    int st;
    kill(s->pid, sig);
    assert_int_equal(waitpid(s->pid, &st, 0), s->pid);
    track(s->pid, false);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
