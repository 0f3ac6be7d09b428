/* Running `exactav evidence ...` in-process (exactav_cmd_evidence_io) with
 * its output and messages captured; for the CLI tests, which compile
 * cli_evidence.c in. */
#ifndef EV_CLI_H
#define EV_CLI_H

struct run {
    int rc;
    char *out, *err; /* malloc'd, NUL-terminated */
};

/* Runs the command with a NULL-terminated argument list (at most 31). */
struct run run_cmd(const char *first, ...);
void run_free(struct run *r);

#endif
