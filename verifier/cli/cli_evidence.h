/* cli_evidence.h - `exactav evidence list|show ID|latest|import REPORT.json...`
 * (docs/evidence.md).  Reading commands open the store read-only. */
#ifndef CLI_EVIDENCE_H
#define CLI_EVIDENCE_H

#include <stdio.h>

/* Exit codes (sysexits.h values where one fits). */
enum {
    EXACTAV_EVIDENCE_EXIT_OK = 0,
    EXACTAV_EVIDENCE_EXIT_NOTFOUND = 3,  /* show: no such id */
    EXACTAV_EVIDENCE_EXIT_TAMPERED = 3,  /* verify-store: a row breaks a rule (store_tampered) */
    EXACTAV_EVIDENCE_EXIT_USAGE = 64,
    EXACTAV_EVIDENCE_EXIT_DATAERR = 65,  /* import: invalid or conflicting report */
    EXACTAV_EVIDENCE_EXIT_NOINPUT = 66,  /* cannot open the database or a report */
    EXACTAV_EVIDENCE_EXIT_SOFTWARE = 70, /* internal error */
};

/* argv[0] == "evidence"; writes results to stdout, messages to stderr. */
int exactav_cmd_evidence(int argc, char **argv);
/* The same with explicit streams (tests). */
int exactav_cmd_evidence_io(int argc, char **argv, FILE *out, FILE *err);

#endif
