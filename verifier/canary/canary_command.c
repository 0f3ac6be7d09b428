/* canary_command.c - running candidate_command (see canary_command.h). */
#define _GNU_SOURCE /* pipe2: no other thread's child may inherit the pipe */
#include "canary_command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uri.h"
#include "util.h"

extern char **environ;

/* environ plus extra (a new array of borrowed strings). */
static char **make_env(char *const extra[])
{
    size_t n = 0, m = 0;
    while (environ && environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = calloc(n + m + 1, sizeof *env);
    if (!env)
        return NULL;
    if (m)
        memcpy(env, extra, m * sizeof *env);
    if (n)
        memcpy(env + m, environ, n * sizeof *env);
    return env;
}

static int spawn(char *const argv[], char *const extra_env[], int out_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&defaults, sigs[i]);
    char **env = make_env(extra_env);
    if (!env)
        return ENOMEM;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &defaults);
    int rc = posix_spawnp(pid, argv[0], &fa, &at, argv, env);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    return rc;
}

/* Reads the child's stdout until EOF, the limit or the deadline.  Returns
 * 0 at EOF, 1 on time-out, 2 when the output is too long, -1 on error. */
static int collect(int fd, char *buf, size_t cap, size_t *len, int64_t deadline)
{
    *len = 0;
    for (;;) {
        int64_t left = deadline - util_now_ms();
        if (left <= 0)
            return 1;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        ssize_t n = read(fd, buf + *len, cap - *len);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n == 0)
            return 0;
        if (n > 0 && (*len += (size_t)n) == cap)
            return 2;
    }
}

/* Waits for the child until the deadline, then kills its group.  Returns
 * false when it had to be killed. */
static bool reap(pid_t pid, int64_t deadline, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return r == pid;
        if (util_now_ms() >= deadline)
            break;
        struct timespec d = {0, 10 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    kill(-pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return false;
}

/* The first line, trimmed; NULL unless it is an http(s) URL. */
static char *first_line_url(char *buf, size_t len)
{
    buf[len] = '\0';
    size_t n = strcspn(buf, "\n");
    while (n > 0 && (buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    buf[n] = '\0';
    return n && strlen(buf) == n && uri_is_http(buf) ? strdup(buf) : NULL;
}

enum canary_command_status canary_command_run(char *const argv[], char *const extra_env[], int64_t timeout_ms,
                                              char **url, char *why, size_t whylen)
{
    *url = NULL;
    int fds[2];
    if (!argv || !argv[0] || pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(why, whylen, "cannot start the command");
        return CANARY_COMMAND_FAILED;
    }
    pid_t pid = -1;
    int rc = spawn(argv, extra_env, fds[1], &pid);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        snprintf(why, whylen, "cannot start the command: %s", strerror(rc));
        return CANARY_COMMAND_FAILED;
    }
    char *buf = malloc(CANARY_COMMAND_MAX_OUTPUT + 1);
    size_t len = 0;
    int64_t deadline = util_now_ms() + timeout_ms;
    int got = buf ? collect(fds[0], buf, CANARY_COMMAND_MAX_OUTPUT, &len, deadline) : -1;
    close(fds[0]);
    int status = 0;
    /* the whole group is killed: a child of the command may hold the pipe */
    if (!reap(pid, got == 0 ? deadline : 0, &status) && got == 0)
        got = 1;
    if (got == 1)
        snprintf(why, whylen, "timed out after %lld ms", (long long)timeout_ms);
    else if (got == 2)
        snprintf(why, whylen, "more than %zu bytes of output", CANARY_COMMAND_MAX_OUTPUT);
    else if (got < 0)
        snprintf(why, whylen, "cannot read the command's output");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(why, whylen, WIFEXITED(status) ? "exit status %d" : "killed by signal %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    else if (!(*url = first_line_url(buf, len)))
        snprintf(why, whylen, "the first line of its output is not an http(s) URL");
    free(buf);
    return *url ? CANARY_COMMAND_OK : CANARY_COMMAND_FAILED;
}
