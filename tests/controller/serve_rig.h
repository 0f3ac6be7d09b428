/* serve_rig.h - `stepctl serve` as a child process of a test: started on
 * 127.0.0.1 with a kernel-chosen port (read from its port file), its
 * stderr in the test's folder (serve.log), stopped by a signal.  Servers
 * still running when a test fails are killed by kill_leftovers (a cmocka
 * teardown), so ctest never waits for one.  Used by the service tests
 * (test_controller_serve.c, test_controller_delivery.c) and the real-player
 * test (tests/player/). */
#ifndef SERVE_RIG_H
#define SERVE_RIG_H

#include <sys/types.h>

#include "ctl_test.h"

struct server {
    pid_t pid;
    int port;
};

/* stepctl serve --db w->db --listen 127.0.0.1:0 --threads 4 [extra...]
 * (extra: NULL or NULL-terminated); returns once it listens. */
void server_start_with(struct ctl_world *w, struct server *s, const char *const *extra);
void server_start(struct ctl_world *w, struct server *s);
/* Sends sig, waits; the exit status (or 128 + signal). */
int server_stop(struct server *s, int sig);
/* A cmocka teardown: SIGKILL to every server still running. */
int kill_leftovers(void **state);

#endif
