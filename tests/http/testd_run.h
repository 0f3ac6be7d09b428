/* testd_run: start and stop the project's test server (exactav-testd) from
 * a test: --root DIR --port 0 --port-file DIR/port, on 127.0.0.1.  Shared by
 * every test that drives the exactav binary over HTTP (verifier/, cli/,
 * canary/): the one launcher of the test server. */
#ifndef TESTD_RUN_H
#define TESTD_RUN_H

#include <sys/types.h>

/* Starts binary serving root; returns the port (> 0) and sets *pid, or 0
 * when the server did not publish a port within about 10 s. */
int testd_run_start(const char *binary, const char *root, pid_t *pid);

/* The same with more arguments after the port file (NULL-terminated, at
 * most 8; extra may be NULL), e.g. {"--live", PLAYLIST, NULL}. */
int testd_run_start_args(const char *binary, const char *root, const char *const extra[],
                         pid_t *pid);

/* SIGTERM, then waits for the server; returns its exit status or -1. */
int testd_run_stop(pid_t pid);

#endif
