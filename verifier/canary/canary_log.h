/* canary_log.h - the canary's log: one line per check, and a few events.
 *
 * JSON (one object per line) with --json, else one short human line.  Lines
 * are written whole (stdio locks the stream per call).  Nothing secret is
 * ever given to the log: URLs are redacted by their producers, and the
 * output of candidate_command is never logged.
 *
 * A check line (event "check"):
 *   {"ts", "event": "check", "target", "path_id", "channel", "rendition",
 *    "media_sequence", "verdict", "reason", "evidence_id", "observed_at",
 *    "duration_ms", "decoded"}
 *   2026-11-29T14:27:56.484Z check cdn-c/ch1/360p seq 41 MATCH identical 212 ms 83c4126f-...
 * An event line: {"ts", "event", "message"} / "<ts> <event> <message>".
 */
#ifndef CANARY_LOG_H
#define CANARY_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "canary_config.h"

struct canary_log {
    FILE *f;
    bool json;
};

/* One line for a stored (or attempted) check; report is the report. */
void canary_log_check(const struct canary_log *l, const struct canary_target *t, const json_t *report,
                      int64_t duration_ms);

void canary_log_event(const struct canary_log *l, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
