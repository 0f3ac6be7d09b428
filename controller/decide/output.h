/* output.h - the decision as JSON (the `--json` answer and the stored record
 * body) and its short human summary.  Writers format what they are given;
 * they never decide anything.
 */
#ifndef OUTPUT_H
#define OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "decision.h"
#include "situation.h"

/* The full result object (schema in docs/controller.md). NULL on ENOMEM. */
json_t *out_result(const struct sit_situation *s, const struct dcn_result *r,
                   const char *decision_id, const char *tool_version);

/* A few lines for people: chosen path and rule, or the refusal, and each
 * excluded candidate with its VIOLATION / UNKNOWN reasons kept apart. */
void out_summary(FILE *f, const json_t *result);

/* Human output of every stepctl writer that quotes text from outside (path
 * ids, reasons, details, actors, stored rows): runs write(mem, arg) into
 * memory, then prints what it wrote on out line by line, every control
 * character but the newline escaped (evidence_text.h), so that printing it
 * can neither drive a terminal nor reorder what is shown.  Returns what
 * write returned, or -1 when memory runs out (nothing printed). */
int out_escaped(FILE *out, int (*write)(FILE *, const void *), const void *arg);

#endif
