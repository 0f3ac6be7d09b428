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
#include "evidence.h"
#include "situation.h"

#define CTL_T 1764410000000LL /* decision_time_ms of every fixture */

/* Takes a control.db back from schema 9 (store_heads, with its guard) to 8,
 * before a test takes it further back.  On an unkeyed store only: a keyed
 * one's head triggers would be left without their table. */
#define CTL_V9_UNDONE "DROP TABLE store_heads; "

/* Takes a control.db back from schema 8 (verification allocations) to 7,
 * before a test takes it further back: a migration adds its columns again. */
#define CTL_V8_UNDONE                                                                             \
    "DROP INDEX allocations_verification; DROP TRIGGER allocations_within_cap; "                 \
    "ALTER TABLE allocations DROP COLUMN verification; "                                         \
    "ALTER TABLE grants DROP COLUMN verification_allocated; "                                    \
    "ALTER TABLE grants DROP COLUMN verification_allocations; "                                  \
    "CREATE TRIGGER allocations_within_cap BEFORE INSERT ON allocations WHEN NEW.seq > "         \
    "(SELECT max_allocations FROM grants WHERE id = NEW.grant_id) BEGIN SELECT "                 \
    "RAISE(ABORT, 'allocation beyond the grant cap'); END; "

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

/* The report fixtures/controller/REL (e.g. "main_evidence/c.json"), real
 * `exactav verify --json` output (make-evidence.sh); caller decrefs. */
json_t *ctl_report(const char *rel);
/* Imports report into the evidence store at path (created when absent)
 * through exactav's import; asserts that it is accepted. */
void ctl_import(const char *db_path, const json_t *report);
/* An evidence store at path holding every report of fixtures/controller/DIR
 * (NULL: none, an empty store). */
void ctl_evidence_store(const char *db_path, const char *dir);
/* Runs sql on the file at path through a raw SQLite connection (to tamper
 * with a store the way a person with sqlite3 could). 0 on success. */
int ctl_sql(const char *path, const char *sql);

/* Appends an in-memory evidence row in the fixtures' scope, as evidence/
 * would return it for a valid report with that verdict. */
void ctl_row(struct evidence_rows *set, const char *id, const char *path_id, const char *verdict,
             int64_t observed_at_ms);

/* Parses sit (must be valid) and decides at its decision time. */
void ctl_decide(const json_t *sit, const struct evidence_rows *rows, struct sit_situation *s,
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
/* The same with another program (e.g. CTL_EXACTAV). */
int ctl_run_program(const struct ctl_tmp *t, const char *program, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same as a user who cannot write what the test made read-only: as
 * root (who passes every permission check) the command runs as user nobody
 * through setpriv; otherwise as the current user. */
int ctl_run_reader(const struct ctl_tmp *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bool ctl_reader_is_other_user(void);
/* The same in a mount namespace where dir is a read-only bind mount; -2
 * when that cannot be done here (not root, or no right to mount). */
int ctl_run_ro_mount(const struct ctl_tmp *t, const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* `explain` output answers the seven numbered questions ("\n1. " .. "\n7. "). */
void ctl_assert_seven_answers(const char *out);
/* Contents of dir/out.txt or dir/err.txt (malloc'd). */
char *ctl_out(const struct ctl_tmp *t, const char *which);
/* Writes text to dir/name; full path to path. */
void ctl_write_text(const struct ctl_tmp *t, const char *name, const char *text, char *path,
                    size_t n);
/* dir/out.txt parsed as JSON; fails the test when it is not (caller decrefs). */
json_t *ctl_out_json(const struct ctl_tmp *t);

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
 * rendition 720p, pv-42, profile exact-av-v1) past exactav, with track
 * verdicts in its report (both = the row's verdict; no tracks: a report of
 * "{}").  Its report is not one exactav verify could have written: a forged
 * row, which evidence/ reads as malformed (never applicable). */
void ctl_evidence_sql(char *buf, size_t n, const char *id, const char *path_id,
                      const char *verdict, int64_t observed_at_ms, bool tracks);
/* Runs "stepctl decide" on sit (written to dir/NAME) and returns the
 * decision id (static buffer per call site is the caller's: out, 33). */
int ctl_decide_cli(const struct ctl_tmp *t, const char *name, const json_t *sit, const char *ev,
                   const char *db, char id[33]);
/* Runs "stepctl grant ID --db DB ARGS"; returns the exit code, grant id in out. */
int ctl_grant_cli(const struct ctl_tmp *t, const char *db, const char *decision,
                  const char *args, char id[33]);
/* A world: a temporary folder with evidence.db (the schema this build
 * writes) and the path of control.db, at "now". */
struct ctl_world {
    struct ctl_tmp t;
    char ev[128], db[128];
    int64_t now;
};

/* The main scenario now: A MISMATCH (2 min old), B nothing, C a MATCH
 * (5 min old) with both tracks: decide chooses C. */
void ctl_world_begin(struct ctl_world *w);
void ctl_world_end(struct ctl_world *w);
/* One valid exact-av-v1 row in the world's evidence.db: a real report
 * (MATCH: main_evidence/c.json, MISMATCH: a-new.json) imported with this id,
 * path and observation time; without tracks, a report of a reference
 * without audio (only the video track shows MATCH). */
void ctl_world_evidence(struct ctl_world *w, const char *id, const char *path,
                        const char *verdict, int64_t at, bool tracks);
/* The same for another rendition than the fixtures' (NULL: theirs). */
void ctl_world_evidence_of(struct ctl_world *w, const char *id, const char *path,
                           const char *rendition, const char *verdict, int64_t at, bool tracks);
/* The same, checked under allocation alloc (NULL: none) along pathway
 * path: the report's context.allocation_id and context.pathway. */
void ctl_world_evidence_under(struct ctl_world *w, const char *id, const char *path,
                              const char *rendition, const char *verdict, int64_t at, bool tracks,
                              const char *alloc);
/* One forged row (ctl_evidence_sql) in the world's evidence.db. */
void ctl_world_forged(struct ctl_world *w, const char *id, const char *path, const char *verdict,
                      int64_t at);
/* main_situation.json decided one second ago. */
json_t *ctl_world_situation(const struct ctl_world *w);
/* Lifts the rate cap out of the way (100000/s, burst 100000). */
void ctl_fast(json_t *sit);

/* Candidate C's resource items: commitments left to the ledger (when
 * drop), origin rps step set to step_rps (< 0: unchanged). */
void ctl_tune_c(json_t *sit, bool drop, int step_rps);
/* Another ISP: another cohort sharing the same origin and shield. */
void ctl_other_isp(json_t *sit, const char *isp);
/* The step's observations for `stepctl next --input`: candidate C's access,
 * qoe and resources in sit, moved so that the newest is just now, written
 * to dir/name; full path to path. */
void ctl_observations(const struct ctl_tmp *t, const json_t *sit, const char *name, char *path,
                      size_t n);

/* SELECT count(*) style query on a database file: the first column of the
 * first row as an integer (-1 on error). */
long long ctl_query_int(const char *db, const char *sql);
/* The same with the SQL built like printf (a query that does not fit in
 * 2048 bytes fails the test, never runs cut). */
long long ctl_queryf(const char *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
