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
/* Contents of dir/out.txt or dir/err.txt (malloc'd). */
char *ctl_out(const struct ctl_tmp *t, const char *which);

#endif
