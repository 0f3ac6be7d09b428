/* dt_exec.c - see dt_exec.h. */
#include "dt_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void dt_argv_init(struct dt_argv *a)
{
    memset(a, 0, sizeof *a);
}

static void argv_push(struct dt_argv *a, char *s)
{
    if (s == NULL || a->n >= DT_ARGV_MAX) {
        a->overflow = true;
        free(s);
        return;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

void dt_argv_add(struct dt_argv *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    va_end(ap);
    argv_push(a, s);
}

void dt_argv_addl(struct dt_argv *a, ...)
{
    va_list ap;
    va_start(ap, a);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
        argv_push(a, strdup(s));
    va_end(ap);
}

void dt_argv_free(struct dt_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    dt_argv_init(a);
}

void dt_shell_quote(FILE *f, const char *s)
{
    bool plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+./:=@,%", *p);
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

void dt_note(struct dt_env *env, const char *fmt, ...)
{
    if (env->log == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("# ", env->log);
    vfprintf(env->log, fmt, ap);
    fputc('\n', env->log);
    va_end(ap);
    fflush(env->log);
}

void dt_log_command(struct dt_env *env, const struct dt_argv *a, const char *out_path,
                    const char *err_path)
{
    if (env->log == NULL)
        return;
    for (int i = 0; i < a->n; i++) {
        if (i)
            fputc(' ', env->log);
        dt_shell_quote(env->log, a->v[i]);
    }
    if (out_path) {
        fputs(" >", env->log);
        dt_shell_quote(env->log, out_path);
    }
    if (err_path) {
        fputs(" 2>", env->log);
        dt_shell_quote(env->log, err_path);
    }
    fputc('\n', env->log);
    fflush(env->log);
}

static int open_or_null(const char *path)
{
    if (path == NULL)
        return open("/dev/null", O_WRONLY | O_CLOEXEC);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int dt_run(struct dt_env *env, struct dt_argv *a, const char *out_path, const char *err_path)
{
    dt_log_command(env, a, out_path, err_path);
    if (a->overflow || a->n == 0)
        return -1;
    if (env->verbose) {
        fputs("+", stderr);
        for (int i = 0; i < a->n; i++) {
            fputc(' ', stderr);
            dt_shell_quote(stderr, a->v[i]);
        }
        fputc('\n', stderr);
    }
    int fd_out = open_or_null(out_path), fd_err = open_or_null(err_path);
    int fd_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd_out < 0 || fd_err < 0 || fd_in < 0) {
        if (fd_out >= 0)
            close(fd_out);
        if (fd_err >= 0)
            close(fd_err);
        if (fd_in >= 0)
            close(fd_in);
        return -1;
    }
    fflush(NULL); /* the child must not inherit unwritten output */
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd_in, 0);
        dup2(fd_out, 1);
        dup2(fd_err, 2);
        setpgid(0, 0); /* its own group: a time-out kills its children too */
        execvp(a->v[0], a->v);
        _exit(127);
    }
    close(fd_out);
    close(fd_err);
    close(fd_in);
    if (pid < 0)
        return -1;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        if (r < 0 && errno != EINTR)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > DT_RUN_TIMEOUT_S) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            fprintf(stderr, "differential: %s timed out after %d s\n", a->v[0], DT_RUN_TIMEOUT_S);
            return 128 + SIGKILL;
        }
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

char *dt_read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= max) {
                free(buf);
                buf = NULL;
                break;
            }
            cap = cap * 2 > max ? max : cap * 2;
            char *p = realloc(buf, cap + 1);
            if (p == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

int dt_mkdirs(const char *path)
{
    char tmp[DT_PATH_MAX];
    if (!dt_fmt(tmp, sizeof tmp, "%s", path))
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

bool dt_fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

int dt_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t dt_mod33(int64_t t)
{
    const int64_t m = INT64_C(1) << 33;
    int64_t r = t % m;
    return r < 0 ? r + m : r;
}
