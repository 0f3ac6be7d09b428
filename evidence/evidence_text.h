/* evidence_text: what both programs print for people and scripts, shared
 * here because evidence/ is the one library exactav and stepctl both link.
 *
 *  - Escaping: text that comes from outside (a CDN, a playlist, a report, a
 *    situation file, a path id, a file name) is printed with every control
 *    character escaped, so that printing it can neither drive a terminal
 *    (ESC sequences, BEL) nor reorder what is shown (Unicode bidi controls
 *    such as U+202E).  See evidence_text_escape for the exact form.
 *  - The JSON error object: with --json, every failure exit prints one
 *    object on stdout, usage errors included (docs/cli.md):
 *      {"error": {"program", "command", "exit", "kind", "message"}}
 *  - evidence_text_run: how main() runs one command so that the error
 *    object appears exactly when a failing command printed nothing else.
 */
#ifndef EVIDENCE_TEXT_H
#define EVIDENCE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ms since the epoch as RFC 3339 UTC with milliseconds
 * (2026-11-29T14:15:57.123Z); a negative time as its number. */
void evidence_text_time(int64_t ms, char *buf, size_t n);

/* The message of errno value e into buf (strerror_r: strerror's buffer is
 * shared by every thread, and the service prints from many); buf. */
const char *evidence_text_errno(int e, char *buf, size_t n);

/* Escapes s into out (n bytes, always NUL-terminated when n > 0; a result
 * that does not fit is cut at a whole escape and ends in "...").
 *   '\\' -> "\\\\"; bytes 0x00-0x1f and 0x7f -> "\\xNN" ('\n' too, unless
 *   keep_newlines); C1 controls U+0080-U+009F, bidi and invisible format
 *   characters (U+061C, U+200B-U+200F, U+2028-U+202E, U+2060-U+2069,
 *   U+FEFF) -> "\\u{XXXX}"; a byte that is not valid UTF-8 -> "\\xNN".
 * Everything else (printable ASCII, other UTF-8) is copied.  NULL prints
 * as "-".  Returns out. */
char *evidence_text_escape(const char *s, bool keep_newlines, char *out, size_t n);

/* Writes s escaped (keep_newlines false) to f; 0, or -1 on a write error. */
int evidence_text_fputs(FILE *f, const char *s);

/* A short meaning of a failure exit code, for the error object's "kind":
 * 3 not_found, 64 usage, 65 invalid_input, 66 cannot_open, 70 internal,
 * anything else "failed". */
const char *evidence_text_exit_kind(int exit_code);

/* Prints the JSON error object (one line) on f.  message NULL: a generic
 * sentence for the exit code pointing at stderr. */
int evidence_text_json_error(FILE *f, const char *program, const char *command, int exit_code,
                             const char *message);

/* True when argv (before a "--") holds "--json". */
bool evidence_text_wants_json(int argc, char **argv);

/* Runs fn(argc, argv), one command of program, and returns its exit code.
 * With --json in argv, the command's stdout is held in a temporary file
 * while it runs (then copied out intact), so that a failure exit (not 0)
 * that printed nothing there prints the JSON error object instead; its
 * message is message() when given and not NULL, else a generic sentence. */
int evidence_text_run(const char *program, const char *command, int (*fn)(int, char **), int argc,
                      char **argv, const char *(*message)(void));

#endif
