/* evidence_read.h - the evidence rows the content condition reads.
 *
 * evr_read opens evidence.db strictly read-only (SQLITE_OPEN_READONLY),
 * checks PRAGMA user_version (1 or 2) and, for each candidate, selects the newest
 * 'exact-av-v1' row of the decision's scope (path, channel, rendition, program
 * version); when there is none, also the newest row of the path and channel
 * for any version, so the content condition can say WHY nothing applies.
 * The rows are copied as read: they become part of the decision record and
 * replay uses them instead of the database.
 */
#ifndef EVIDENCE_READ_H
#define EVIDENCE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "situation.h"

enum evr_verdict { EVR_UNKNOWN = 0, EVR_MATCH, EVR_MISMATCH };

#define EVR_STR 256

struct evr_row {
    char id[EVR_STR], check_kind[EVR_STR], reason[EVR_STR], profile_id[EVR_STR];
    char path_id[EVR_STR], channel[EVR_STR], rendition[EVR_STR];
    char program_version[EVR_STR], reference_version[EVR_STR];
    enum evr_verdict verdict;
    int64_t observed_at_ms, recorded_at_ms;
    bool malformed; /* a field was too long or of the wrong type: never applicable */
};

struct evr_set {
    struct evr_row *rows;
    size_t n, cap;
};

enum evr_status { EVR_OK = 0, EVR_OPEN_FAILED, EVR_BAD_VERSION, EVR_QUERY_FAILED };

/* Reads the rows for every candidate of s.  On failure err says why. */
enum evr_status evr_read(const char *db_path, const struct sit_situation *s, struct evr_set *out,
                         char *err, size_t errlen);

/* Appends a copy of row (used by replay and tests). Returns 0 or -1 (ENOMEM). */
int evr_append(struct evr_set *set, const struct evr_row *row);
void evr_free(struct evr_set *set);

const char *evr_verdict_name(enum evr_verdict v);
enum evr_verdict evr_verdict_parse(const char *s); /* anything unknown -> EVR_UNKNOWN */

/* Copies src into a row field; marks the row malformed when it does not fit. */
void evr_set_field(struct evr_row *row, char *dst, const char *src);

#endif
