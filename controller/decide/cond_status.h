/* cond_status.h - the tri-state of every condition.
 *
 * UNKNOWN is the zero value on purpose: a forgotten initialisation or an
 * error path can only ever produce UNKNOWN, never PASS.
 */
#ifndef COND_STATUS_H
#define COND_STATUS_H

enum cond_status { COND_UNKNOWN = 0, COND_PASS, COND_VIOLATION };

static inline const char *cond_status_name(enum cond_status s)
{
    return s == COND_PASS ? "PASS" : s == COND_VIOLATION ? "VIOLATION" : "UNKNOWN";
}

#endif
