/* canary_store.h - the canary's writes to evidence.db, from many threads.
 *
 * One read-write connection (evidence.h), one lock: every write is a
 * transaction of its own, and the lock also lets the runner decide and
 * write atomically (an interrupted check is recorded UNKNOWN `interrupted`
 * and its own result, should it arrive later, is dropped: canary_store_seal
 * refuses every write after it).
 */
#ifndef CANARY_STORE_H
#define CANARY_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "evidence.h"
#include "verify.h"

struct canary_store;

/* Opens (creating or migrating) the store.  With sign_key (--sign-key, or
 * NULL), every report it stores is signed with that Ed25519 key
 * (reportsig.h), loaded first.  store_key: evidence.db's MAC key
 * (--store-key-file, evidence_open_keyed), or NULL.  NULL with err set;
 * *exit_code is 66 when the file (or the key file) cannot be opened, 65 an
 * unusable key (or a keyed store without its key), 70 otherwise. */
struct canary_store *canary_store_open(const char *path, const char *sign_key, const struct store_key *store_key,
                                       int *exit_code, char *err, size_t errlen);
void canary_store_close(struct canary_store *s);

void canary_store_lock(struct canary_store *s);
void canary_store_unlock(struct canary_store *s);

/* Stores a report (evidence_import_report).  0, or -1 with err set (also
 * after canary_store_seal).  The _locked form expects the lock held. */
int canary_store_report(struct canary_store *s, const json_t *report, char *err, size_t errlen);
int canary_store_report_locked(struct canary_store *s, const json_t *report, char *err, size_t errlen);

/* Stores a probe row.  0, or -1 with err set. */
int canary_store_probe(struct canary_store *s, const struct evidence_probe *p, char *err, size_t errlen);

/* The decode store of verify.h over this store's reference_decodes (each
 * call takes the lock): N paths of one rendition, and a restarted canary,
 * decode a reference at most once. */
void canary_store_decodes(struct canary_store *s, struct verify_decode_store *out);

/* From now on every write is refused (lock held by the caller). */
void canary_store_seal_locked(struct canary_store *s);

#endif
