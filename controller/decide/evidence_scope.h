/* evidence_scope.h - the evidence rows one decision reads.
 *
 * For every candidate of the situation, the scope of the decision (path,
 * the action's channel, rendition and program version) is asked of the
 * evidence store (evidence_newest: the newest row, or the newest of the
 * path and channel for any version, every row checked against the rules of
 * a valid row).  The store is opened read-only and never written.  The rows
 * are copied as read: they become part of the decision record, and replay
 * uses them instead of the store.  What a valid row is and how the newest
 * is chosen are evidence/'s knowledge, not the controller's.
 */
#ifndef EVIDENCE_SCOPE_H
#define EVIDENCE_SCOPE_H

#include <stddef.h>

#include "evidence.h"
#include "situation.h"

/* EVIDENCE_OK with *out filled (free with evidence_rows_free); otherwise
 * err says why: EVIDENCE_E_OPEN / EVIDENCE_E_VERSION for a store that is
 * missing, not an evidence store or of another version, anything else for a
 * failed read. */
enum evidence_rc evs_read(const char *path, const struct sit_situation *s,
                          struct evidence_rows *out, char *err, size_t errlen);

#endif
