/* cdn_rig.h - what the delivery tests share: start and stop exactav-cdnd
 * instances (each one CDN, or the player page's origin), ask them things
 * over HTTP with libcurl, and read their JSON-lines request logs and reports.
 *
 * Every instance runs on 127.0.0.1 with a kernel-chosen port, its files under
 * the test's own temporary directory: NAME.port, NAME.log, NAME.report,
 * NAME.stderr.  cdn_stop() ends only the process cdn_start() made.
 */
#ifndef CDN_RIG_H
#define CDN_RIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct cdn_proc {
    pid_t pid;
    unsigned port;
    char name[32];
    char log[PATH_MAX], report[PATH_MAX];
    char base[64]; /* "http://127.0.0.1:PORT" */
};

/* Runs argv[0] with stdout and stderr to out_path, killed when the calling
 * thread ends; own_group: leader of a new process group (to end it with all
 * its children).  The pid, or -1. */
pid_t cdn_spawn(const char *const *argv, const char *out_path, bool own_group);

/* Starts cdnd_bin with args (NULL-terminated; --log, --report and --port-file
 * are added) and waits up to 20 s for it to listen.  0 or -1. */
int cdn_start(struct cdn_proc *p, const char *cdnd_bin, const char *dir, const char *name,
              const char *const *args);
/* SIGTERM, then waits for that pid. */
void cdn_stop(struct cdn_proc *p);
/* Every later request answers status (0: normal service again).  0 or -1. */
int cdn_set_answer(const struct cdn_proc *p, int status);

struct cdn_http {
    long status;
    char *body, *headers;
    size_t len;
};
/* One request (method NULL = GET; body NULL = none; cookie NULL = none);
 * nothing is followed.  0 when an HTTP answer arrived. */
int cdn_http(const char *method, const char *url, const char *cookie, const char *body,
             struct cdn_http *out);
/* The same with one more request header ("Name: value", NULL none). */
int cdn_http_with(const char *method, const char *url, const char *cookie, const char *header,
                  const char *body, struct cdn_http *out);
void cdn_http_free(struct cdn_http *h);
/* The value of header name in h (case-insensitive, malloc'd) or NULL. */
char *cdn_http_header(const struct cdn_http *h, const char *name);

/* Every line of a JSON-lines file as an array (empty when the file is absent). */
json_t *cdn_jsonl(const char *path);

/* Writes text to dir/name. 0 or -1. */
int cdn_write_file(const char *dir, const char *name, const char *text);

#endif
