/* cliutil.h - what every stepctl command shares: exit codes, the wall clock,
 * bounded file reading, and a small option parser.
 *
 * Exit codes follow docs/cli.md: 0 done, 3 replay differs, 4 a recorded
 * negative outcome (no eligible path, issuance closed), 64 usage, 65 data
 * refused (invalid input, unknown id, a refused grant), 66 a file or address
 * cannot be opened, 70 internal.
 */
#ifndef CLIUTIL_H
#define CLIUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_exit {
    CLI_OK = 0,
    CLI_NEGATIVE = 4,
    CLI_USAGE = 64,
    CLI_DATA = 65,
    CLI_NOINPUT = 66,
    CLI_SOFTWARE = 70
};

/* Exit code of a store error, the same for both stores and every command:
 * a file that is missing, not ours, of another schema version or cannot be
 * opened here is 66; a failure while working with it is 70. */
int cli_store_exit(bool file_problem);

/* Wall clock, ms since the Unix epoch (UTC). */
int64_t cli_now_ms(void);

/* Reads a whole file of at most max bytes into *buf (NUL-terminated, free()).
 * Returns 0, 66 (cannot open/read, or not a regular file), 65 (too big) or
 * 70, after printing why. */
int cli_slurp(const char *path, size_t max, char **buf, size_t *len);

/* Opens path for reading as a stream when it is a regular file, else NULL
 * with why filled (the errno message, or "not a regular file").  The open
 * is O_NONBLOCK, so a FIFO without a writer (or a device) can hang neither
 * the open nor the read: it is refused.  *mode: the file's st_mode (may be
 * NULL). */
FILE *cli_open_regular(const char *path, unsigned *mode, char *why, size_t n);

/* One option: "--name VALUE" stores VALUE in *value; a flag (value NULL)
 * sets *flag. */
struct cli_opt {
    const char *name;
    const char **value;
    bool *flag;
};

/* Parses argv[1..argc) (argv[0] is the command name): options from opts,
 * "--help"/"-h" into *help, and up to max_pos positional words into pos[].
 * Returns 0, or 64 after printing the problem. */
int cli_parse(int argc, char **argv, const struct cli_opt *opts, size_t n_opts, bool *help,
              const char **pos, size_t max_pos, size_t *n_pos);

/* A repeatable option: after cli_parse accepted argv (which keeps the last
 * value in *value), every value of the option called name, in the order
 * given, into out[0..max).  Returns how many were given (may exceed max:
 * the caller refuses that). */
size_t cli_values(int argc, char **argv, const struct cli_opt *opts, size_t n_opts,
                  const char *name, const char **out, size_t max);

/* The actor a command records: given (--actor), else $USER, else
 * "unknown", into *out.  It must be 1 to max_len bytes: a longer or an
 * empty one is refused (a longer one was once silently cut).  0, or 64
 * after printing a message naming cmd.  Control characters are kept:
 * every output escapes them. */
int cli_actor(const char *cmd, const char *given, size_t max_len, const char **out);

/* An integer option in [min, max]; NULL s leaves *out unchanged.  0 or 64
 * after printing a message naming the option. */
int cli_int(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
            int64_t *out);

#endif
