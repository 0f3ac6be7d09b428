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

#include <jansson.h>

#include "ctl_test.h"

/* Every server the rig starts has this operator token (--admin-token-file,
 * a 0600 file in the test's folder); send SERVE_ADMIN_AUTH to reach
 * /metrics and /v1/grants/ID. */
#define SERVE_ADMIN_TOKEN "operator-token-of-the-tests-0123456789"
#define SERVE_ADMIN_AUTH "Authorization: Bearer " SERVE_ADMIN_TOKEN
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

/* The delivery world (docs/delivery.md tests): the main situation plus D
 * and E, copies of C (MATCH, same cost and QoE), in the policy order given:
 * A is excluded (MISMATCH), B too (no evidence), and the first of C, D, E
 * in the order is chosen with the other two as eligible fallbacks. */
extern const char *const SERVE_ORDER_CDE[5]; /* C, D, E, A, B */
json_t *serve_situation(const struct ctl_world *w, const char *const order[5]);
/* ctl_world_begin, MATCH evidence for D and E, decided in SERVE_ORDER_CDE
 * and granted (rate cap lifted); the grant id into g. */
void serve_world_granted(struct ctl_world *w, char g[33]);
/* Issue 17's world: ctl_world_begin, MATCH evidence for D and E, the
 * situation in SERVE_ORDER_CDE (policy.loop.content_from set unless NULL)
 * into *sit (caller decrefs), decided (d) and granted with a verification
 * quota (g). */
void serve_verification_world(struct ctl_world *w, const char *content_from, int quota, json_t **sit,
                              char d[33], char g[33]);
/* POST /v1/allocations for the fixtures' cohort on 127.0.0.1:port; asserts
 * 201 and returns its body (caller decrefs). */
json_t *serve_allocate(int port, const char *id);
/* The same for the fixtures' cohort with another ISP (one cohort per grant). */
json_t *serve_allocate_isp(int port, const char *id, const char *isp);
/* paths.json (dir/paths.json, its path into path) delivering every path
 * A..E without signatures: r360 (with attributes) and r720. */
void serve_paths_unsigned(const struct ctl_world *w, char *path, size_t n);
/* The PATHWAY-PRIORITY of allocation alloc's steering manifest (asserted
 * 200, VERSION 1) as "C,D,E" into out; db: control.db, where its session
 * id (the URL's capability) is looked up. */
void serve_priority(const char *db, int port, const char *alloc, char *out, size_t n);
/* path with "/v1/allocations/ID/REST" made "/v1/sessions/SID/REST", SID the
 * session of allocation ID in control.db (ID itself when it has none);
 * other paths as they are.  Delivery URLs carry only the session id. */
void serve_session_path(const char *db, const char *path, char *out, size_t n);
/* text with every "/v1/allocations/ALLOC/" made "/v1/sessions/SID/". */
void serve_session_text(const char *db, const char *alloc, const char *text, char *out, size_t n);
/* The same POST, any answer (the caller frees h). */
struct cdn_http;
void serve_post_allocation(int port, const char *id, struct cdn_http *h);

#endif
