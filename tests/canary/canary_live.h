/* canary_live.h - helpers of the canary's end-to-end tests: a private
 * directory, exactav-testd (optionally with its live simulation over the
 * corpus), the exactav binary in the background, control requests and
 * queries of the evidence store.  Every helper fails the test on error. */
#ifndef CANARY_LIVE_H
#define CANARY_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define LIVE_SOURCE CORPUS_DIR "/media/hls-ts-rollover"

struct live {
    char dir[64];
    pid_t testd;
    int port;
};

/* A private directory and exactav-testd on it; a live_playlist adds --live
 * over it with a window of 4 segments (LIVE_PLAYLIST: the corpus). */
#define LIVE_PLAYLIST LIVE_SOURCE "/playlist.m3u8"
void live_start(struct live *l, const char *live_playlist);
/* The same with --ll-parts N: a Low-Latency HLS live origin (0: plain). */
void live_start_ll(struct live *l, const char *live_playlist, unsigned ll_parts);
void live_stop(struct live *l);

/* The cmocka teardown of every test: kills what a failed test left running
 * and removes its directory. */
int live_teardown(void **state);

/* dir/name */
void live_path(const struct live *l, const char *name, char *out, size_t n);
void live_write(const struct live *l, const char *name, const char *text);
int live_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* GET http://127.0.0.1:port/<path> as JSON (the control routes). */
json_t *live_get_json(const struct live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* GET a URL; *status the HTTP status; the body (malloc'd) or NULL. */
char *live_get(const char *url, long *status);

/* src segment with a small red box drawn on every picture (same times,
 * same audio): a valid stream whose pixels differ. */
void live_tamper_segment(const char *src, const char *dst);

/* exactav canary with args, stdout and stderr into dir/<tag>.out, .err. */
pid_t live_canary_start(const struct live *l, const char *tag, const char *args);
/* Any command line (through sh) the same way: in the background, killed by
 * live_teardown if the test fails, waited for by live_canary_wait. */
pid_t live_spawn(const struct live *l, const char *tag, const char *command);
/* Waits for it; its exit code (or -1 when killed). */
int live_canary_wait(pid_t pid);
/* Runs it to its end; the exit code. */
int live_canary_run(const struct live *l, const char *tag, const char *args);
/* Contents of dir/<name> (malloc'd, "" when absent). */
char *live_read(const struct live *l, const char *name);

/* A query of dir/ev.db returning one integer (0 when no row). */
long long live_q(const struct live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every row of a query as a JSON array of objects (column names as keys). */
json_t *live_rows(const struct live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Waits (at most max_s seconds, polling) until the query gives >= want. */
void live_wait_count(const struct live *l, long long want, int max_s, const char *sql);

/* True when any text of the store, or of the files named, holds needle. */
bool live_anywhere(const struct live *l, const char *needle, const char *const files[]);

#endif
