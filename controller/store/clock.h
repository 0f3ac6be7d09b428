/* clock.h - control.db's clock marks: the high-water mark of every time a
 * process acted on the file, and the admission service's heartbeat
 * (docs/security.md#time).
 *
 * Why: every time recorded in control.db (an allocation, an `expired`
 * event, a release) was read off some process's clock.  A clock that steps
 * back would make a recorded state revert (a grant recorded `expired`
 * allocating again); a clock that runs ahead would free headroom the service
 * still honours.  So every writer acts at max(its clock, high_water) and
 * refuses when its clock is behind high_water by more than CLK_SKEW_MS; and
 * a grant's expiry counts for `release` only once the service itself has
 * reached it (its heartbeat) or recorded it.
 *
 * Invariants (enforced by triggers of migrate_v5.sql, not only here): a mark
 * never decreases and is never deleted; every time a writer records is at
 * most high_water once its transaction commits.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#define CLK_SKEW_MS 2000 /* how far behind high_water a clock may be and still act */

#define CLK_HIGH_WATER "high_water"           /* the latest time any writer acted on */
#define CLK_SERVE_HEARTBEAT "serve_heartbeat" /* the latest time the service confirmed */

enum clk_rc { CLK_OK = 0, CLK_BEHIND, CLK_FAILED };

/* The mark's time: 0 found, 1 absent (or a file older than schema 5), -1 an
 * SQLite error. */
int clk_read(sqlite3 *db, const char *mark, int64_t *at_ms);

/* Raises the mark to at_ms (never lowers it).  0 or -1. */
int clk_advance(sqlite3 *db, const char *mark, int64_t at_ms);

/* The time to act at, max(now_ms, high_water), without writing it (a dry
 * run): CLK_BEHIND when now_ms + CLK_SKEW_MS < high_water (*acting_ms is
 * then high_water), CLK_FAILED on an SQLite error. */
enum clk_rc clk_check(sqlite3 *db, int64_t now_ms, int64_t *acting_ms);

/* Inside the caller's write transaction: the time to act at,
 * max(now_ms, high_water), recorded as the new high_water.  CLK_BEHIND (and
 * nothing written) when now_ms + CLK_SKEW_MS < high_water; *acting_ms is then
 * high_water, for the message.  CLK_FAILED on an SQLite error. */
enum clk_rc clk_enter(sqlite3 *db, int64_t now_ms, int64_t *acting_ms);

/* clk_advance and clk_enter with their statements kept in c (stmtcache.h;
 * NULL: prepared each time): the service's writer enters the clock for
 * every batch, and preparing four statements each time was a twentieth of
 * its work. */
struct stmtcache;
int clk_advance_cached(sqlite3 *db, struct stmtcache *c, const char *mark, int64_t at_ms);
enum clk_rc clk_enter_cached(sqlite3 *db, struct stmtcache *c, int64_t now_ms,
                             int64_t *acting_ms);

/* "clock_behind: this clock reads N ms, control.db has acted at M ms (D ms
 * later; CLK_SKEW_MS allowed)": the refusal every command prints. */
void clk_behind_text(char *buf, size_t len, int64_t now_ms, int64_t high_water_ms);

#endif
