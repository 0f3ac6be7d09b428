/* util.h - small helpers shared by the verifier's modules. */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* SHA-256 of a buffer as 64 lowercase hex digits plus NUL. */
void util_sha256_hex(const void *data, size_t len, char out[65]);

/* Wall-clock time, UTC milliseconds since the Unix epoch. */
int64_t util_now_ms(void);

/* RFC 3339 UTC with milliseconds, e.g. 2026-11-29T14:08:22.123Z. */
void util_rfc3339(int64_t ms, char out[32]);

/* Parses a decimal int64 with nothing after it; 0 on success. */
int util_parse_i64(const char *s, int64_t *out);

/* Parses "START:END" (two int64); 0 on success. */
int util_parse_range(const char *s, int64_t *a, int64_t *b);

/* Parses "FIRST[:LAST]" (LAST defaults to FIRST) with 0 <= FIRST <= LAST;
 * 0 on success.  The form of --media-sequence. */
int util_parse_seq_range(const char *s, int64_t *first, int64_t *last);

/* 0 when path names a regular file this process can open for reading;
 * else -1 with a message naming the path (a directory, a FIFO, a device or
 * a missing file is refused before anything reads it). */
int util_check_regular_file(const char *path, char *err, size_t errlen);

/* The same check and the open in one: the file (read-only, binary) and
 * its st_mode in *mode (may be NULL), so that what is checked is what is
 * read; NULL with the same messages. */
FILE *util_open_regular(const char *path, unsigned *mode, char *err, size_t errlen);

#endif
