/* exitcodes.h - exactav's process exit codes (docs/cli.md).  Interfaces:
 * change only on purpose. */
#ifndef EXITCODES_H
#define EXITCODES_H

enum exactav_exit {
    EXACTAV_EXIT_MATCH = 0,      /* also: success of non-verifying commands */
    EXACTAV_EXIT_MISMATCH = 1,
    EXACTAV_EXIT_UNKNOWN = 2,
    EXACTAV_EXIT_NOT_FOUND = 3,  /* evidence show: no such id */
    EXACTAV_EXIT_USAGE = 64,
    EXACTAV_EXIT_UNUSABLE = 65,  /* reference or profile not usable */
    EXACTAV_EXIT_NOINPUT = 66,   /* an input cannot be opened */
    EXACTAV_EXIT_INTERNAL = 70,
};

#endif
