/* fetch: one HTTP(S) GET into memory, with an observation record.
 *
 * fetch_get() fetches one object (a segment, a playlist) through libcurl with
 * bounded time, size and redirects, and records what was observed: the
 * redacted URLs, every redirect hop, the status, the byte counts, the wall
 * clock times of the transfer and a few response headers (metadata only;
 * never used as a reference).  Any outcome other than FETCH_OK is an
 * incomplete observation (the verdict can only be UNKNOWN).
 *
 * Call fetch_global_init() once at program start (exactav_main.c, before any
 * thread exists) and fetch_global_cleanup() at exit.  docs/fetch.md has the
 * defaults and the error classes.
 */
#ifndef EXACTAV_FETCH_H
#define EXACTAV_FETCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "redact.h"

/* Defaults used when an option is 0 (a zero option never means "unlimited"). */
#define FETCH_DEFAULT_CONNECT_TIMEOUT_MS 5000L
#define FETCH_DEFAULT_TOTAL_TIMEOUT_MS 60000L
#define FETCH_DEFAULT_LOW_SPEED_LIMIT 1024L /* bytes per second ... */
#define FETCH_DEFAULT_LOW_SPEED_TIME_S 10L  /* ... for this long aborts */
#define FETCH_DEFAULT_MAX_BYTES ((size_t)256 * 1024 * 1024)
#define FETCH_DEFAULT_MAX_REDIRECTS 5
#define FETCH_MAX_REDIRECTS_LIMIT 50 /* hard cap on max_redirects */
#define FETCH_HEADER_MAX 1024        /* recorded header values are cut here */
#define FETCH_MAX_SET_COOKIE 16      /* Set-Cookie values kept (keep_set_cookie) */
#define FETCH_SET_COOKIE_MAX 4096    /* bytes of one kept Set-Cookie value (RFC 6265 6.1) */
#define FETCH_MESSAGE_MAX 256

/* Outcome of a fetch.  The zero value is a failure, never success. */
enum fetch_error {
    FETCH_NOT_ATTEMPTED = 0,  /* nothing was fetched (the result was never filled) */
    FETCH_OK,                 /* complete 200 (or 206 / sliced 200 for a range) */
    FETCH_HTTP_ERROR,         /* a final status other than the expected 2xx */
    FETCH_SHORT_TRANSFER,     /* fewer bytes than declared, reset, empty reply */
    FETCH_TIMEOUT,            /* connect, total or low-speed time-out */
    FETCH_TOO_LARGE,          /* the object exceeds max_bytes */
    FETCH_TOO_MANY_REDIRECTS, /* more than max_redirects hops */
    FETCH_CONNECT_ERROR,      /* name resolution or TCP connect failed */
    FETCH_TLS_ERROR,          /* handshake or certificate verification failed */
    FETCH_BAD_URL,            /* malformed URL or a scheme other than http(s) */
    FETCH_BAD_RANGE,          /* the range answer does not match the request */
    FETCH_TRANSFER_ERROR,     /* any other transfer failure */
    FETCH_INTERNAL_ERROR,     /* out of memory, libcurl set-up failed */
    FETCH_REDIRECT_NOT_ALLOWED /* a redirect to a host outside allow_redirect_hosts (not requested) */
};

/* A byte range (EXT-X-BYTERANGE: length@offset).  length 0 = no range. */
struct fetch_range {
    uint64_t offset;
    uint64_t length;
};

struct fetch_options {
    long connect_timeout_ms; /* 0: FETCH_DEFAULT_CONNECT_TIMEOUT_MS */
    long total_timeout_ms;   /* whole fetch, all hops; 0: default */
    long low_speed_limit;    /* bytes/s; 0: default */
    long low_speed_time_s;   /* 0: default */
    size_t max_bytes;        /* body size limit; 0: default */
    int max_redirects;       /* hops followed; <= 0: none are followed */
    const char *cacert;      /* extra CA file (PEM), NULL for the system store only */
    struct fetch_range range;
    struct redact_policy redact; /* which query values stay visible (default: none) */
    /* Redirect targets allowed besides the requested URL's own host; none
     * given (n == 0): every host is followed (and marked in the result). */
    const char *const *allow_redirect_hosts;
    size_t n_allow_redirect_hosts;
    /* Request headers ("Name: value") and a Cookie header value ("a=b; c=d",
     * NULL for none), e.g. signed cookies or a token header.  Sent only to
     * the requested URL's own host (a redirect to another host gets neither),
     * and never recorded, logged or printed: they are credentials. */
    const char *const *headers;
    size_t n_headers;
    const char *cookie;
    /* Send Accept-Encoding: gzip, deflate and decode what comes (playlists:
     * RFC 9110 lets a server compress them).  max_bytes bounds the decoded
     * body; Content-Length is checked against the bytes on the wire. */
    bool accept_encoding;
    /* Keep the Set-Cookie values of the final response in the result
     * (fetch_result.set_cookie): a master playlist of a signed-cookie CDN
     * path hands the session its cookies so.  Credentials: never recorded,
     * logged or printed. */
    bool keep_set_cookie;
};

/* One redirect hop: the URL that answered with a 3xx, that status, and the
 * URL it pointed to (resolved against url; the next hop unless the limit
 * was reached or the target was refused). */
struct fetch_hop {
    char *url; /* redacted */
    long http_status;
    char *location; /* redacted */
};

/* Selected headers of the final response (only these are ever recorded),
 * redacted like URLs (redact_text_dup: NAME=VALUE values, embedded URLs),
 * bytes outside printable ASCII as '?', NULL when absent.  Repeated headers
 * are joined by ", ". */
struct fetch_headers {
    char *age;
    char *via;
    char *x_cache;
    char *server;
    char *etag;
    char *content_type;
    char *content_encoding;  /* as the server sent it (gzip, deflate), NULL when none */
};

enum fetch_range_mode {
    FETCH_RANGE_NONE = 0,   /* no range asked */
    FETCH_RANGE_PARTIAL,    /* 206 with the asked Content-Range */
    FETCH_RANGE_SLICED_FULL /* the server ignored Range: 200, slice taken from the full body */
};

struct fetch_result {
    enum fetch_error error;
    char message[FETCH_MESSAGE_MAX]; /* human text; "" on success */
    char *url;                       /* redacted request URL */
    char *effective_url;             /* redacted URL of the last hop */
    /* The last hop's URL as fetched, NOT redacted: the base for resolving
     * relative references (RFC 3986 5.2).  Never store or print it. */
    char *raw_effective_url;
    long http_status;       /* final status, 0 if no response */
    uint64_t bytes;         /* body bytes received on the final hop (decoded, when encoded) */
    uint64_t wire_bytes;    /* the same as sent (before Content-Encoding is undone) */
    int64_t content_length; /* declared by the final response, -1 if absent */
    int64_t started_at_ms;  /* wall clock UTC ms: first request sent */
    int64_t ended_at_ms;    /* wall clock UTC ms: last byte received or failure */
    struct fetch_hop *redirects;
    size_t n_redirects;
    struct fetch_headers headers;
    enum fetch_range_mode range_mode;
    /* The body's end was never declared: no Content-Length, not chunked, not
     * HTTP/2 (a close-delimited body).  Such a body cut short looks complete,
     * so its length proves nothing about what the server meant to send. */
    bool length_unproven;
    /* A redirect led to a host other than the requested URL's host (followed
     * because no allow list was given). */
    bool other_host_redirect;
    unsigned char *data; /* the object (the range slice if a range was asked) */
    size_t size;         /* bytes in data; 0 unless error == FETCH_OK */
    /* keep_set_cookie: the final response's Set-Cookie values as sent (at
     * most FETCH_MAX_SET_COOKIE, each at most FETCH_SET_COOKIE_MAX bytes; a
     * longer one is left out), NULL-terminated; NULL when none.
     * Credentials: fetch_result_free wipes them. */
    char **set_cookie;
};

/* Once per process, before threads; return 0 on success. */
int fetch_global_init(void);
void fetch_global_cleanup(void);

/* Options with every default filled in (max_redirects included). */
struct fetch_options fetch_options_default(void);

/* Fetches url.  res is overwritten (it need not be initialised; free it with
 * fetch_result_free afterwards, whatever the outcome).  Returns res->error.
 * No retries: one request per hop, each on a fresh connection. */
enum fetch_error fetch_get(const struct fetch_options *opt, const char *url,
                           struct fetch_result *res);

void fetch_result_free(struct fetch_result *res);

/* Wipes and frees a set_cookie array taken out of a result (NULL: nothing). */
void fetch_set_cookie_free(char **set_cookie);

/* Stable short code of an error ("ok", "http_error", ...). */
const char *fetch_error_code(enum fetch_error e);

/* The observation record as JSON, with exactly the keys seq, url,
 * effective_url, http_status, bytes, content_length, started_at_ms,
 * ended_at_ms, redirects, headers {age, via, x_cache, server, etag,
 * content_type} and error.  This is the shape `exactav evidence import`
 * reads into the `fetches` table: redirects is the array of redacted
 * Location targets in order (url, then each of them, is the whole chain);
 * error is null on FETCH_OK, else the string "code: message" (the code is a
 * fetch_error_code, stable).  http_status and content_length are null when
 * absent.  Returns a new reference, NULL on out of memory. */
json_t *fetch_result_to_json(const struct fetch_result *res, int seq);

/* The error as one line "code: message" (as in the JSON); NULL on success.
 * malloc'd. */
char *fetch_result_error_text(const struct fetch_result *res);

#endif
