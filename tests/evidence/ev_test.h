/* Shared helpers for the evidence tests: a private temp directory per
 * test, sample records and sample verifier reports. */
#ifndef EV_TEST_H
#define EV_TEST_H

#include "evidence.h"

#include <stddef.h>
#include <stdint.h>

struct ev_tmp {
    char dir[64];
    char db[128]; /* dir/evidence.db (not created) */
};

/* Creates a fresh directory under $TMPDIR (or /tmp); 0 on success. */
int ev_tmp_make(struct ev_tmp *t);
/* Removes the directory and everything in it. */
void ev_tmp_remove(struct ev_tmp *t);
/* dir/name into out. */
void ev_tmp_path(const struct ev_tmp *t, const char *name, char *out, size_t n);
/* Writes text to dir/name; returns the full path in out. */
int ev_write_file(const struct ev_tmp *t, const char *name, const char *text, char *out, size_t n);

/* A valid record with two fetches and a valid report that agrees with its
 * columns; strings point to static storage except id, which the caller
 * provides. */
struct evidence_record ev_sample_record(const char *id, int64_t observed_at_ms);
/* After changing columns of r: a new report that agrees with them (and the
 * fingerprint column with it, and media_sequence when present), so that r
 * is a valid row again. */
void ev_refresh_report(struct evidence_record *r);

/* A verifier report as JSON text (malloc'd), valid by the rules of a valid
 * report for MATCH, MISMATCH (video_pixels) and UNKNOWN (continuity_gap;
 * its second fetch failed); any other verdict string is written as given.
 * NULL scope strings become JSON null. */
char *ev_sample_report(const char *id, const char *verdict, int64_t observed_at_ms,
                       const char *path_id, const char *channel, const char *rendition,
                       const char *program_version);

/* SELECT count(*) through a separate raw SQLite connection. */
long long ev_count(const char *db_path, const char *sql);

#endif
