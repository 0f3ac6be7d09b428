/* reportsig.h - Ed25519 signatures of verify and canary reports (issue 19,
 * docs/evidence.md "Signed reports").
 *
 * A signed report carries, as its LAST member,
 *   "signature": {"alg": "ed25519", "key_id": HEX16, "value": BASE64}
 * key_id: the first 16 hex digits of SHA-256 of the raw 32-byte public key;
 * value: standard base64 (with padding) of the 64-byte signature over the
 * canonical bytes: the report WITHOUT its "signature" member, serialized as
 * compact JSON with the members in their order (json_dumps JSON_COMPACT |
 * JSON_PRESERVE_ORDER), exactly as evidence.db stores a report.  A verifier
 * re-serializes the parsed report minus "signature" the same way, so any
 * layout of the same JSON (e.g. `verify --json`'s indented one) verifies.
 *
 * The private key is only ever in the struct: never printed or stored. */
#ifndef REPORTSIG_H
#define REPORTSIG_H

#include <stddef.h>

#include <jansson.h>

#define REPORTSIG_MEMBER "signature"
#define REPORTSIG_KEY_ID_LEN 16

/* Why a report is refused by a trust set (the import's reason codes). */
#define REPORTSIG_MISSING "signature_missing"
#define REPORTSIG_UNKNOWN_KEY "signature_unknown_key"
#define REPORTSIG_INVALID "signature_invalid"

struct reportsig_key;   /* a worker's private key */
struct reportsig_trust; /* the trusted public keys */

/* Loads a PEM Ed25519 private key (`openssl genpkey -algorithm ed25519`).
 * Returns 0, or an exit code with err set: 66 when the file cannot be
 * opened or is not a regular file (a FIFO is never waited on), 65 when it
 * holds no unencrypted Ed25519 private key or is accessible by group or
 * others (mode & 077), 70 internal. */
int reportsig_key_load(const char *path, struct reportsig_key **out, char *err, size_t errlen);
void reportsig_key_free(struct reportsig_key *k);

/* Appends the signature member to report (an object without one).
 * 0, or -1 with err set. */
int reportsig_sign(const struct reportsig_key *k, json_t *report, char *err, size_t errlen);

/* The canonical bytes of report (its "signature" member left out), NUL-
 * terminated; NULL when out of memory.  The caller frees. */
char *reportsig_canonical(const json_t *report);

/* Loads one or more PEM Ed25519 public keys from path.  Returns 0, or an
 * exit code with err set: 66 cannot open / not a regular file, 65 no key,
 * or a key that is not Ed25519, 70 internal. */
int reportsig_trust_load(const char *path, struct reportsig_trust **out, char *err, size_t errlen);
void reportsig_trust_free(struct reportsig_trust *t);

/* NULL when report's signature verifies with a key of t; else one of
 * REPORTSIG_MISSING, REPORTSIG_UNKNOWN_KEY, REPORTSIG_INVALID, with a
 * one-line explanation in why. */
const char *reportsig_check(const struct reportsig_trust *t, const json_t *report, char *why, size_t whylen);

#endif
