/* serve_deadline.h - the whole-request deadline of `stepctl serve`.
 *
 * libmicrohttpd's connection timeout is an idle timeout: every byte a
 * client sends restarts it, so a client trickling a byte every few seconds
 * holds its connection (and with enough of them, every connection) for
 * ever (slowloris).  Its access handler is called only once the headers
 * are complete, so a deadline on the headers cannot be checked there.
 * Instead every connection is registered here when it is accepted, with a
 * deadline: the accept (or the end of its previous request) plus the
 * request timeout.  The deadline is disarmed when the request's body has
 * fully arrived (from then on the service, not the client, is working) and
 * armed again when the request ends.  One thread wakes every tenth of a
 * second and shuts down (shutdown(2), never close: the descriptor stays
 * libmicrohttpd's) every connection past its deadline; libmicrohttpd sees
 * the end of the stream and closes it.
 */
#ifndef SERVE_DEADLINE_H
#define SERVE_DEADLINE_H

#include <stdint.h>

struct sdl;
struct sdl_conn;

/* Starts the watching thread; NULL when it cannot be started. */
struct sdl *sdl_start(unsigned timeout_ms);
/* Stops the thread; every connection must have been closed (sdl_close). */
void sdl_stop(struct sdl *d);

/* A connection accepted on socket fd, armed; NULL when memory runs out
 * (the connection then has no deadline beyond the idle timeout). */
struct sdl_conn *sdl_open(struct sdl *d, int fd);
/* The connection was closed: forgotten (c may be NULL). */
void sdl_close(struct sdl *d, struct sdl_conn *c);
/* The request's body is complete / the request ended (the next one's
 * deadline starts now).  c may be NULL. */
void sdl_disarm(struct sdl *d, struct sdl_conn *c);
void sdl_arm(struct sdl *d, struct sdl_conn *c);
/* Connections shut down for their deadline so far. */
uint64_t sdl_cut_total(struct sdl *d);

#endif
