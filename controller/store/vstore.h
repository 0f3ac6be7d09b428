/* vstore.h - control.db's rules of a valid row, checked (`stepctl
 * verify-store`, and `stepctl serve` at start).
 *
 * Why: the schema's triggers stop an UPDATE or DELETE a program makes by
 * mistake; they stop nobody who can write the file (sqlite3 drops a
 * trigger as easily as it inserts a row).  What a hand-made change leaves
 * behind is a row that no stepctl command could have written: a grant whose
 * decision proposed no step, whose cohort or caps are not its decision's,
 * with no reservation; a grant count that is not the count of its
 * allocations; a status change no event records; a recorded time past the
 * high-water mark (clock.h).  Each rule is one query naming the first row
 * that breaks it.  A row that keeps every rule is not proven genuine (that
 * takes the keyed MACs of smac_verify.h: docs/security.md#tamper-evidence);
 * a row that breaks one was not written by stepctl.
 */
#ifndef VSTORE_H
#define VSTORE_H

#include <stddef.h>

#include <sqlite3.h>

/* The first broken rule found: which table, which row, which rule. */
struct vst_finding {
    char table[32];
    char row[160];  /* the row's key (grant id, allocation id, ...) */
    char rule[48];  /* a short name, e.g. "grant_caps_within_decision" */
    char detail[256];
};

/* Fills f (each text cut to fit, NULL as ""); returns 1, "tampered". */
int vst_found(struct vst_finding *f, const char *table, const char *row, const char *rule,
              const char *detail);

/* Checks every rule, in a read transaction of the caller's connection.
 * 0 every rule holds (*checked: the number of rules), 1 tampered (*f
 * filled), -1 an SQLite error.  A file of schema 1 (no grants) holds. */
int vst_check(sqlite3 *db, struct vst_finding *f, size_t *checked);

#endif
