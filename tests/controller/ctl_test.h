/* Shared helpers for the controller tests: temp directories, the committed
 * fixtures as JSON to mutate, real evidence.db files, in-process decisions
 * and end-to-end runs of the stepctl binary. */
#ifndef CTL_TEST_H
#define CTL_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "decision.h"
#include "evidence_read.h"
#include "situation.h"

#define CTL_T 1764410000000LL /* decision_time_ms of every fixture */

struct ctl_tmp {
    char dir[64];
};

int ctl_tmp_make(struct ctl_tmp *t);
void ctl_tmp_remove(struct ctl_tmp *t);
void ctl_tmp_path(const struct ctl_tmp *t, const char *name, char *out, size_t n);

/* fixtures/controller/NAME parsed (caller decrefs) / read as text (free). */
json_t *ctl_fixture_json(const char *name);
char *ctl_fixture_text(const char *name);

/* The candidate object with this path id inside a situation. */
json_t *ctl_cand(json_t *sit, const char *path_id);
/* Sets a value at a dotted path inside obj ("qoe.attempts"), creating
 * objects on the way; steals v. */
void ctl_set(json_t *obj, const char *dotted, json_t *v);

/* An evidence.db at path: schema v1 (evidence_schema_v1_sql), user_version 1,
 * then sql (may be NULL). 0 on success. */
int ctl_evidence_db(const char *path, const char *sql);

/* Appends an in-memory evidence row in the fixtures' scope. */
void ctl_row(struct evr_set *set, const char *id, const char *path_id, const char *verdict,
             int64_t observed_at_ms);

/* Parses sit (must be valid) and decides at its decision time. */
void ctl_decide(const json_t *sit, const struct evr_set *rows, struct sit_situation *s,
                struct dcn_result *r);
/* Index of candidate path_id in r. */
size_t ctl_idx(const struct dcn_result *r, const char *path_id);
/* Status of one condition of one candidate. */
enum cond_status ctl_status(const struct dcn_result *r, const char *path_id, enum cond_kind k);
const char *ctl_reason(const struct dcn_result *r, const char *path_id, enum cond_kind k);

/* Writes sit to dir/name; full path to out. */
void ctl_write_json(const struct ctl_tmp *t, const char *name, const json_t *sit, char *out,
                    size_t n);

/* Runs "STEPCTL args" through /bin/sh with stdout to dir/out.txt and stderr
 * to dir/err.txt; returns the exit status (or -1). */
int ctl_run(const struct ctl_tmp *t, const char *args_fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Contents of dir/out.txt or dir/err.txt (malloc'd). */
char *ctl_out(const struct ctl_tmp *t, const char *which);

/* ---- the loop after a decision (grants, ledger, next, serve) ---------- */

/* Wall clock, ms. */
int64_t ctl_now_ms(void);
/* Adds delta to every time in a situation (decision_time_ms, observed_at_ms,
 * start_ms, end_ms), at any depth. */
void ctl_shift_ms(json_t *j, int64_t delta);
/* fixtures/controller/NAME with every time moved so that its decision time
 * is at_ms (observations keep their age). */
json_t *ctl_situation_at(const char *name, int64_t at_ms);
/* SQL inserting one exact-av-v1 row in the fixtures' scope (channel news-1,
 * rendition 720p, pv-42, profile decode-profile-v1) with track verdicts in
 * its report (both = the row's verdict; NULL tracks: a report of "{}"). */
void ctl_evidence_sql(char *buf, size_t n, const char *id, const char *path_id,
                      const char *verdict, int64_t observed_at_ms, bool tracks);
/* Runs "stepctl decide" on sit (written to dir/NAME) and returns the
 * decision id (static buffer per call site is the caller's: out, 33). */
int ctl_decide_cli(const struct ctl_tmp *t, const char *name, const json_t *sit, const char *ev,
                   const char *db, char id[33]);
/* Runs "stepctl grant ID --db DB ARGS"; returns the exit code, grant id in out. */
int ctl_grant_cli(const struct ctl_tmp *t, const char *db, const char *decision,
                  const char *args, char id[33]);
/* A world: a temporary folder with evidence.db (schema v1) and the path
 * of control.db, at "now". */
struct ctl_world {
    struct ctl_tmp t;
    char ev[128], db[128];
    int64_t now;
};

/* The main scenario now: A MISMATCH (2 min old), B nothing, C a MATCH
 * (5 min old) with both tracks: decide chooses C. */
void ctl_world_begin(struct ctl_world *w);
void ctl_world_end(struct ctl_world *w);
/* One exact-av-v1 row (ctl_evidence_sql) into the world's evidence.db. */
void ctl_world_evidence(struct ctl_world *w, const char *id, const char *path,
                        const char *verdict, int64_t at, bool tracks);
/* main_situation.json decided one second ago. */
json_t *ctl_world_situation(const struct ctl_world *w);
/* Lifts the rate cap out of the way (100000/s, burst 100000). */
void ctl_fast(json_t *sit);

/* SELECT count(*) style query on a database file: the first column of the
 * first row as an integer (-1 on error). */
long long ctl_query_int(const char *db, const char *sql);

#endif
