/* evidence_fingerprint.h - the DecodeProfile fingerprint, computed one way
 * for everybody.
 *
 * exactav computes it before a check (verifier/check/profile.c) and puts the
 * profile document, the runtime description and the fingerprint into the
 * report; the evidence store recomputes it from those two when it accepts a
 * report (evidence/evidence_rules.c).  Both call this module, so "the
 * fingerprint" can only mean one thing.  It depends on jansson and OpenSSL
 * only: the decoding code uses it without depending on the evidence store.
 *
 * fingerprint = hex SHA-256 of
 *     canonical(profile document) "\n" canonical(runtime description)
 * where canonical(x) is jansson's compact dump with sorted keys.
 */
#ifndef EVIDENCE_FINGERPRINT_H
#define EVIDENCE_FINGERPRINT_H

#include <stddef.h>

#include <jansson.h>

/* The runtime fields a profile pins (profile.runtime.NAME): a check runs
 * only where every one equals the runtime description's. */
#define EVIDENCE_FINGERPRINT_N_PINS 5
extern const char *const evidence_fingerprint_pins[EVIDENCE_FINGERPRINT_N_PINS];

/* Hex SHA-256 of data into out (64 digits and NUL); "unavailable" when
 * OpenSSL fails. */
void evidence_sha256_hex(const void *data, size_t len, char out[65]);
/* A 32-byte digest as 64 lowercase hex digits plus NUL. */
void evidence_digest_hex(const unsigned char md[32], char out[65]);

/* The fingerprint of a profile document under a runtime description.
 * Returns 0, or -1 (out of memory; out then holds "unavailable"). */
int evidence_fingerprint(const json_t *profile_doc, const json_t *runtime, char out[65]);

/* 0 when every pin of profile_doc.runtime equals the runtime description's
 * value; otherwise -1 and err lists each difference
 * ("libavcodec: profile 59.37.100, runtime 60.3.100"). */
int evidence_fingerprint_check_pins(const json_t *profile_doc, const json_t *runtime, char *err,
                                    size_t errlen);

#endif
