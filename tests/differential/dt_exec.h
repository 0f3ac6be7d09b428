/* dt_exec.h - running the external programs of the differential test.
 *
 * Every program the generator, the oracle and the runner start (ffmpeg,
 * ffprobe, tsedit, tsrepack, exactav) goes through dt_run(), which
 *   - runs it without a shell (argv as given), stdin from /dev/null,
 *     stdout/stderr to the named files (or /dev/null),
 *   - kills it after a time-out (DT_RUN_TIMEOUT_S),
 *   - appends the command, shell-quoted and with its redirections, to the
 *     case's recipe log: the log is what a person pastes into a shell to
 *     reproduce the case by hand.
 * No global state: the log and the tool paths travel in struct dt_env.
 */
#ifndef DT_EXEC_H
#define DT_EXEC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DT_RUN_TIMEOUT_S 300
#define DT_ARGV_MAX 160
#define DT_PATH_MAX 1024

/* Paths of the programs in use and the open recipe log. */
struct dt_env {
    char exactav[DT_PATH_MAX];
    char testd[DT_PATH_MAX];
    char tsedit[DT_PATH_MAX];
    char tsrepack[DT_PATH_MAX];
    char mp4edit[DT_PATH_MAX];   /* fixtures/tools/mp4edit.c: fMP4 box edits */
    char work[DT_PATH_MAX];      /* this run's directory (cases below it) */
    char cache[DT_PATH_MAX];     /* encodes shared between cases */
    FILE *log;                   /* the current case's recipe; NULL: not logged */
    int verbose;
};

/* An argument vector under construction; strings are owned by it. */
struct dt_argv {
    char *v[DT_ARGV_MAX + 1];
    int n;
    bool overflow;
};

void dt_argv_init(struct dt_argv *a);
/* Append one argument formatted printf-style. */
void dt_argv_add(struct dt_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append several literal arguments, NULL-terminated. */
void dt_argv_addl(struct dt_argv *a, ...);
void dt_argv_free(struct dt_argv *a);

/*
 * Run a->v with stdout to out_path and stderr to err_path (NULL: /dev/null).
 * Returns the exit status (0..255), 128+signal when killed, -1 when it could
 * not be started.  The command is logged first (even when it fails).
 */
int dt_run(struct dt_env *env, struct dt_argv *a, const char *out_path, const char *err_path);

/* Append the command to the recipe log without running it (a reused result). */
void dt_log_command(struct dt_env *env, const struct dt_argv *a, const char *out_path,
                    const char *err_path);

/* Append a comment line ("# ...") to the recipe log. */
void dt_note(struct dt_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write s to f quoted for a POSIX shell (bare when it needs no quoting). */
void dt_shell_quote(FILE *f, const char *s);

/* Read a whole (small) file into a NUL-terminated buffer; NULL on failure. */
char *dt_read_file(const char *path, size_t max, size_t *len);

/* mkdir -p; 0 on success. */
int dt_mkdirs(const char *path);

/* snprintf that reports truncation as failure (returns false). */
bool dt_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* qsort/bsearch order of int64_t values. */
int dt_cmp_i64(const void *a, const void *b);

/* A 90 kHz time reduced mod 2^33 (the PTS range), in [0, 2^33). */
int64_t dt_mod33(int64_t t);

#endif
