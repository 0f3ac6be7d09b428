/* cli.h - exactav's subcommands, one entry point each.  Each takes the argv
 * that starts at its own name and returns the exit code (exitcodes.h). */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

int exactav_cmd_verify(int argc, char **argv);
int exactav_cmd_bind(int argc, char **argv);
int exactav_cmd_profile(int argc, char **argv);
int exactav_cmd_canary(int argc, char **argv);

/* Shared by the commands: loads --profile FILE or the embedded profile,
 * printing the error; returns the exit code (0 when loaded). */
struct profile;
int cli_load_profile(const char *path, struct profile *p, const char *cmd);

/* Prints "exactav CMD: message" on stderr and returns code. */
int cli_fail(int code, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
