/* hlskey.h - AES-128 encrypted segments (RFC 8216 4.3.2.4 and 5.2).
 *
 * A segment under EXT-X-KEY METHOD=AES-128 is the whole segment encrypted
 * with AES-128 CBC and PKCS7 padding, CBC restarted at every segment, the
 * IV either the tag's or the media sequence number as a big-endian 128-bit
 * integer.  The key is a 16-byte body fetched from the tag's URI through
 * the same fetch path (and limits) as the segments.
 *
 * The key and its URI are credentials: whoever has them can decrypt the
 * channel, and a key URI often carries a token.  Neither is ever printed,
 * logged or stored; a key fetch is recorded with its URLs replaced by
 * HLSKEY_HIDDEN_URL and its error reduced to the stable code.  Buffers that
 * held a key are cleansed (OPENSSL_cleanse) before they are freed.
 */
#ifndef HLSKEY_H
#define HLSKEY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "fetch.h"
#include "hls.h"

#define HLSKEY_LEN 16
#define HLSKEY_MAX_BYTES 1024        /* a body larger than this is not a key */
#define HLSKEY_HIDDEN_URL "REDACTED-KEY-URI"

/* The IV of segment s: the tag's, or its media sequence number. */
void hlskey_iv(const struct hls_segment *s, uint8_t iv[16]);

/* Decrypts data in place and removes the padding (*len shrinks).  NULL, or
 * the stable reason "decryption_failed" with why (a length that is not a
 * whole number of blocks, padding that is not PKCS7: a wrong key or damaged
 * bytes). */
const char *hlskey_decrypt(uint8_t *data, size_t *len, const uint8_t key[HLSKEY_LEN], const uint8_t iv[16],
                           char *why, size_t n);

/* Fetches the key at url with fo (its size limit lowered to
 * HLSKEY_MAX_BYTES).  NULL with key filled, or a stable reason:
 * "key_unavailable" (the fetch failed) or "key_invalid" (not 16 bytes).
 * record (may be NULL) receives the fetch record with every URL hidden,
 * numbered seq; started and ended the request's times. */
const char *hlskey_fetch(const struct fetch_options *fo, const char *url, int seq, uint8_t key[HLSKEY_LEN],
                         json_t **record, int64_t *started, int64_t *ended, char *why, size_t n);

/* The key in a local file (a reference provider's directory): NULL, or
 * "key_unavailable" / "key_invalid" as hlskey_fetch.  why never names the
 * path. */
const char *hlskey_read_file(const char *path, uint8_t key[HLSKEY_LEN], char *why, size_t n);

#endif
