/* replay.h - recompute a decision from recorded inputs alone.
 *
 * rpl_recompute is the one pipeline shared by `decide` and `replay`: parse
 * the situation text, decide at t_ms on the given evidence rows, format the
 * answer.  Replay feeds it the situation, decision time and evidence rows
 * stored in control.db (never evidence.db) and compares the answers.
 */
#ifndef REPLAY_H
#define REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "evidence.h"
#include "situation.h"

/* Exit code of `stepctl replay` when the recomputed decision differs. */
#define RPL_EXIT_DIFFERENT 3

/* Returns 0 with *result set, 65 when the situation is invalid (err names the
 * field), 70 on internal failure. */
int rpl_recompute(const struct sit_situation *s, int64_t t_ms, const struct evidence_rows *rows,
                  const char *decision_id, const char *tool_version, json_t **result);

/* Prints every difference (JSON path: recorded vs recomputed), ignoring
 * tool_version.  Returns the number of differences. */
size_t rpl_diff(const json_t *recorded, const json_t *recomputed, FILE *out);

/* What `stepctl replay` checks: the recorded answer against the recomputed
 * one (rpl_diff), and everything else that was stored from it - the
 * decisions columns (decisions.chosen, .outcome, ...) and every
 * decision_conditions row (decision_conditions.PATH/CONDITION.status, ...),
 * a dropped table included.  Prints each difference; returns their count. */
struct rec_loaded;
size_t rpl_compare(const struct rec_loaded *l, const json_t *recomputed, FILE *out);

#endif
