/* canary_command.h - a target's candidate_command: a program that prints a
 * freshly signed candidate URL, run once per cycle.
 *
 * The program runs in its own process group with the default signal
 * dispositions and mask, stdin and stderr on /dev/null (its stderr may
 * hold secrets: it is never read), and its stdout on a pipe.  It must exit
 * 0 within the time limit and print an http(s) URL on its first line,
 * within max_output bytes in all; anything else is a failure whose reason
 * contains no output.  On time-out the whole process group is killed.
 * The URL is a secret (it carries a signature): redact before printing.
 */
#ifndef CANARY_COMMAND_H
#define CANARY_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#define CANARY_COMMAND_MAX_OUTPUT ((size_t)16384)

enum canary_command_status {
    CANARY_COMMAND_FAILED = 0,
    CANARY_COMMAND_OK,
};

/* argv: program and arguments, NULL-terminated (the program is looked up
 * in PATH when it has no '/').  extra_env: "NAME=value" strings added to
 * the environment, NULL-terminated (may be NULL).  On success *url is
 * malloc'd; on failure why holds a short reason ("exit status 3",
 * "timed out after 5000 ms", ...). */
enum canary_command_status canary_command_run(char *const argv[], char *const extra_env[], int64_t timeout_ms,
                                              char **url, char *why, size_t whylen);

#endif
