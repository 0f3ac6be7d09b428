/* cli.h - exactav's subcommands, one entry point each.  Each takes the argv
 * that starts at its own name and returns the exit code (exitcodes.h). */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdio.h>

int exactav_cmd_verify(int argc, char **argv);
int exactav_cmd_bind(int argc, char **argv);
int exactav_cmd_profile(int argc, char **argv);
int exactav_cmd_canary(int argc, char **argv);
int exactav_cmd_report(int argc, char **argv);

/* Shared by the commands: loads --profile FILE or the embedded profile,
 * printing the error; returns the exit code (0 when loaded). */
struct profile;
int cli_load_profile(const char *path, struct profile *p, const char *cmd);

/* Prints "exactav CMD: message" on stderr (control characters escaped,
 * evidence_text.h) and returns code.  The first message is kept for the
 * JSON error object (cli_first_error). */
int cli_fail(int code, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The first message given to cli_fail in this process, or NULL. */
const char *cli_first_error(void);

/* A local input named on the command line: 0 when path is a readable
 * regular file (and, with mpegts, starts like an MPEG-TS); else prints the
 * error and returns 66 (not a readable regular file) or 65 (not MPEG-TS). */
int cli_check_input_file(const char *path, const char *what, bool mpegts, const char *cmd);

#endif
