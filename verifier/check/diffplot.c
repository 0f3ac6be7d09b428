/* diffplot.c - the plot of an audio difference (see diffpic.h): gnuplot in
 * a child process, bounded in time, its data in a temporary file and its
 * PNG on its stdout, into a file created here (so that no path is ever
 * quoted into a gnuplot script). */
#include "diffpic.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PLOT_POLL_NS 10000000L   /* 10 ms between checks on the child */

/* A temporary file in $TMPDIR (or /tmp): its name goes into the gnuplot
 * script between single quotes, so a TMPDIR with a quote, a backslash or a
 * line break is not used. */
static int make_temp(char *name, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    bool usable = tmp && tmp[0] == '/' && !strpbrk(tmp, "'\\\n\r");
    snprintf(name, len, "%s/exactav-plot-XXXXXX", usable ? tmp : "/tmp");
    return mkstemp(name);
}

/* The data file: sample index, reference, candidate, difference. */
static int write_data(const struct diffpic_audio *a, char *name, size_t len)
{
    int fd = make_temp(name, len);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            unlink(name);
        }
        return -1;
    }
    for (int i = 0; i < a->n; i++)
        fprintf(f, "%lld %.9g %.9g %.9g\n", (long long)(a->first_index + i), a->ref[i], a->cand[i],
                (double)a->cand[i] - (double)a->ref[i]);
    if (fclose(f)) {
        unlink(name);
        return -1;
    }
    return 0;
}

/* The script names only the data file, a mkstemp name (no quote in it). */
static void make_script(const struct diffpic_audio *a, const char *data, char *s, size_t len)
{
    snprintf(s, len,
             "set terminal pngcairo size 800,480 noenhanced\n"
             "set multiplot layout 2,1 title 'exactav: first audio difference, channel %s, sample %lld (%d Hz)'\n"
             "set xlabel 'sample index'\nset key top right\nset grid\n"
             "plot '%s' using 1:2 with lines title 'reference', '' using 1:3 with lines title 'candidate'\n"
             "set arrow from %lld, graph 0 to %lld, graph 1 nohead lc rgb 'red'\n"
             "plot '%s' using 1:4 with lines lc rgb 'red' title 'candidate - reference'\n"
             "unset multiplot\n",
             a->channel ? "R" : "L", (long long)a->diff_index, a->sample_rate, data, (long long)a->diff_index,
             (long long)a->diff_index, data);
}

/* Waits for the child until timeout_ms, then kills it; its exit status or -1. */
static int wait_bounded(pid_t pid, int64_t timeout_ms)
{
    int status = 0;
    for (int64_t waited = 0;; waited += PLOT_POLL_NS / 1000000) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (waited >= timeout_ms)
            break;
        nanosleep(&(struct timespec){0, PLOT_POLL_NS}, NULL);
    }
    kill(-pid, SIGKILL);   /* its own process group: whatever it started goes too */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return -1;
}

/* Runs gnuplot SCRIPT with stdout on out_fd; 0 when it exits 0 in time. */
static int run_gnuplot(const char *script, int out_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    char *argv[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc)
        return -1;
    return wait_bounded(pid, DIFFPIC_PLOT_TIMEOUT_MS) == 0 ? 0 : -1;
}

static int write_script(const char *text, char *name, size_t len)
{
    int fd = make_temp(name, len);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n;
    if (close(fd) || !ok) {
        unlink(name);
        return -1;
    }
    return 0;
}

int diffpic_audio(const char *dir, const char *stem, const struct diffpic_audio *a, json_t *files, char *err,
                  size_t errlen)
{
    char data[4096], script_name[4096], script[2 * 4096 + 1024], path[4200];
    if (a->n <= 0) {
        snprintf(err, errlen, "audio: no samples kept");
        return -1;
    }
    if (write_data(a, data, sizeof data)) {
        snprintf(err, errlen, "audio: cannot write the plot's data: %s", strerror(errno));
        return -1;
    }
    make_script(a, data, script, sizeof script);
    bool have_script = write_script(script, script_name, sizeof script_name) == 0;
    int rc = have_script ? 0 : -1;
    int fd = rc ? -1 : diffpic_create(dir, stem, "-audio-difference", path, sizeof path, err, errlen);
    if (rc)
        snprintf(err, errlen, "audio: cannot write the plot's script");
    if (fd >= 0) {
        rc = run_gnuplot(script_name, fd);
        off_t size = lseek(fd, 0, SEEK_END);
        close(fd);
        if (rc || size <= 0) {
            snprintf(err, errlen, "%s: gnuplot failed or took longer than %d ms", path, DIFFPIC_PLOT_TIMEOUT_MS);
            unlink(path);
            rc = -1;
        } else {
            json_object_set_new(files, "audio_plot", json_string(path));
        }
    } else {
        rc = -1;
    }
    unlink(data);
    if (have_script)
        unlink(script_name);
    return rc;
}
