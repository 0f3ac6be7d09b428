/* serve_reports.h - the session report endpoint of `stepctl serve`:
 *
 *   POST /v1/sessions/{id}/reports   CMCD v2 event reports (an
 *                                    application/cmcd body, or ?CMCD=)
 *
 * The body is parsed on the request thread (cmcd.h); the records are
 * stored by the group commit (serve_writer.h) and the 204 leaves only
 * after the COMMIT.  Slow clients never hold a thread: the body is read by
 * libmicrohttpd's event loop and the connection is suspended while the
 * writer works.  Contract: docs/qoe.md.
 */
#ifndef SERVE_REPORTS_H
#define SERVE_REPORTS_H

#include "serve.h"

/* The first GET of a session's master playlist: recorded in it
 * session by the writer, without delaying the playlist's answer. */
void srep_master_fetched(struct srv *s, const char *session_id);

#endif
