/* dt_verify.h - running the verifier under test on a case: `exactav bind`
 * when the reference is a binding, then `exactav verify --json`, with an HLS
 * candidate served by the project's test server (exactav-testd) on
 * 127.0.0.1.  Also starts and stops that server. */
#ifndef DT_VERIFY_H
#define DT_VERIFY_H

#include <sys/types.h>

#include "dt_case.h"

struct dt_outcome {
    int exit_code;              /* of verify (or of bind when bind failed) */
    enum dt_verdict verdict;    /* from the exit code: 0 MATCH, 1 MISMATCH, 2 UNKNOWN, 64 USAGE, else ERROR */
    char reason[64], vreason[64], areason[64];
    char first[160];            /* first_mismatch of the track that decided, if any */
    char report[DT_PATH_MAX];   /* the JSON report */
    char step[16];              /* "bind" or "verify": the step that produced exit_code */
};

int dt_verify_case(struct dt_env *env, const struct dt_case *c, int port, struct dt_outcome *o);

/* Start exactav-testd serving env->work; returns its pid (>0) and the port. */
pid_t dt_testd_start(struct dt_env *env, int *port);
void dt_testd_stop(pid_t pid);

#endif
