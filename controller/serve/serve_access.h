/* serve_access.h - the access log of `stepctl serve` (--access-log).
 *
 * One JSON object per line and per answer, in this member order:
 *   {"time": "2026-12-01T22:15:03.481Z", "method": "GET", "route": "master",
 *    "status": 200, "bytes": 812, "duration_s": 0.000213, "client": "127.0.0.1"}
 * Nothing of the request's URL, query, headers or body is written: the
 * route name stands for the path.  Delivery paths carry the allocation id
 * (a capability to its signed playlists), and queries and cookies may carry
 * CloudFront Policy / Signature / Key-Pair-Id values or tokens; an access
 * log is read by more people than control.db.  Format: docs/serve.md.
 */
#ifndef SERVE_ACCESS_H
#define SERVE_ACCESS_H

#include <stddef.h>
#include <stdint.h>

struct sacc;

/* "-": stderr; else the file, created (0640) or appended to.  NULL with err
 * set when it cannot be opened. */
struct sacc *sacc_open(const char *path, char *err, size_t errlen);
void sacc_close(struct sacc *a);
/* Opens the file again (after logrotate moved it, at SIGHUP); stderr: no-op.
 * 0, or -1 (the old file stays in use). */
int sacc_reopen(struct sacc *a);

struct sacc_entry {
    int64_t time_ms;   /* wall clock, when the answer was queued */
    const char *method; /* as received: written only when a known method */
    const char *route;  /* the route's name, "preflight" or "unmatched" */
    unsigned status;
    size_t bytes;      /* of the body */
    double duration_s; /* from the request's headers to the answer queued */
    const char *client; /* the peer's address, numeric */
};

/* One line, written with one write(2) to an O_APPEND descriptor: lines of
 * concurrent threads never interleave.  Thread-safe. */
void sacc_write(struct sacc *a, const struct sacc_entry *e);

#endif
