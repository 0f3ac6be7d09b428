/* next.h - `stepctl next`: closing the loop on one grant.
 *
 * Only observations made after the grant's first allocation count.  The
 * step's content evidence (step_evidence.h) must hold no MISMATCH and its
 * newest check must be a fresh MATCH on both tracks; then the next step is
 * evaluated exactly like a decision (the same conditions, on the granted
 * path first, with the QoE, resource and access observations of the step from
 * the --input file and the current commitments from the ledger) at the size
 * policy.steps allows.  Positive (content PASS and the evaluation proposes
 * a step): the evaluation is recorded as a new decision, which proposes the
 * next, larger step and authorizes nothing; the reviewed grant's issuance
 * ends ("closed_by_next", PASS).  Negative (a MISMATCH, a violated guard or
 * insufficient observation): issuance under the grant is closed with the
 * reason, VIOLATION or UNKNOWN, and nothing grows.  Never a fallback to
 * another path: the decision's other candidates are evaluated again beside
 * the granted path (next_fallback.c) so the proposal keeps the fallbacks
 * that pass, but a review whose rule now prefers another path is negative.
 * All of it is one write transaction; a grant is reviewed once.  Rules: docs/controller.md.
 */
#ifndef NEXT_H
#define NEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "evidence.h"
#include "grant.h"

struct nxt_request {
    const char *grant_id, *evidence_path, *actor;
    const char *observations; /* the --input text, NULL without */
    size_t observations_len;
    bool dry_run; /* --dry-run: the whole answer, nothing written (next_dry.c) */
};

/* FAILED is the zero value: nothing is ever read as a positive review. */
enum nxt_outcome {
    NXT_FAILED = 0,
    NXT_POSITIVE,
    NXT_NEGATIVE,
    NXT_REFUSED,   /* why says: already reviewed, revoked, invalid observations */
    NXT_NOT_FOUND, /* no such grant */
    NXT_NOINPUT,   /* evidence.db cannot be opened */
};

/* Reviews the grant at now_ms and records the review (and, positive, the
 * new decision).  *result: the recorded answer (caller decrefs). */
enum nxt_outcome nxt_run(sqlite3 *db, const struct nxt_request *rq, int64_t now_ms,
                         json_t **result, char *why, size_t whylen);

/* The answer of a dry run (next_dry.c): the answer `next` would record,
 * marked as not recorded: "dry_run": true, no next_id nor next_decision_id
 * (nothing was stored under them), "issuance_closed": false.  0 or -1. */
int nxt_dry_mark(json_t *answer);

/* When obs has no `access`: the newest availability probe of the granted
 * path (next_access.c, as decide takes it: access_probe.h) becomes obs's
 * access and *source a reference to it (the caller records and decrefs
 * it); no probe leaves both alone.  0, or -1 out of memory. */
int nxt_access_fill(const char *evidence_path, const struct grt_grant *g, int64_t now_ms,
                    json_t *obs, json_t **source);

/* The fallbacks of the next step (next_fallback.c).  observations.json's
 * "paths" member: an object of path ids, each with any of access, qoe,
 * resources, cost (objects).  0, or -1 with why naming the member. */
int nxt_paths_check(const json_t *paths, char *why, size_t len);

struct nxt_fallback_in {
    sqlite3 *db;               /* control.db: viewers' sessions */
    const char *evidence_path; /* evidence.db: probes, content rows */
    const struct grt_grant *g;
    int64_t now_ms;
    const json_t *policy;     /* the recorded situation's policy */
    const json_t *candidates; /* the recorded situation's candidates */
    const json_t *paths;      /* observations.json's "paths", or NULL */
};

/* Appends to cands (the next situation's, the granted path first) every
 * other candidate of the decision, re-observed, and to rows their newest
 * content rows.  0, 1 (invalid observations: why names the member), -1. */
int nxt_fallbacks(const struct nxt_fallback_in *in, json_t *cands, struct evidence_rows *rows,
                  char *why, size_t len);

/* True (reason set) when the evaluation chose a path other than granted:
 * the review is negative, UNKNOWN preferred_other_path. */
bool nxt_other_preferred(const json_t *eval, const char *granted, char *reason, size_t len);

/* The review of one grant as recorded, loaded by its id or by the grant's
 * id.  0, 1 none, -1. */
int nxt_load(sqlite3 *db, const char *id, json_t **result);

#endif
