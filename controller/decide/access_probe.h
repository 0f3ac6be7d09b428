/* access_probe.h - the access condition from availability probes.
 *
 * A situation may leave a candidate's `access` out.  Then `stepctl decide`
 * takes the newest availability probe of that path (table `probes` of
 * evidence.db, written by `exactav canary`) in the decision's scope
 * (path_id, action.cohort.channel, action.cohort.rendition), observed at or
 * before the decision time, as that candidate's access:
 *   {"status": PASS|VIOLATION|UNKNOWN, "observed_at_ms": ..., "source": "probe",
 *    "probe_id": ..., "reason": ...}
 * and cond_access judges it like a given one (freshness by
 * policy.access.max_age_s: a stale probe is access_stale).  The filled-in
 * access is written into the situation text that is decided and recorded,
 * so replay needs no store.  evidence.db is opened read-only, through
 * evidence/'s queries only; a store without probes (schema v1, or none
 * for the path) leaves the access missing.
 */
#ifndef ACCESS_PROBE_H
#define ACCESS_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* text/len: the situation as given.  When at least one candidate without
 * `access` has a probe, *out is a new situation text (malloc'd) and *outlen
 * its length; otherwise *out = NULL (decide the text as given).  A text
 * that is not a situation object, or a store that cannot be read, is left
 * to the situation parser and the evidence reader to report: *out = NULL.
 * now_ms: the decision time when the situation gives none.  Returns 0, or
 * -1 when out of memory. */
int acp_fill(const char *evidence_path, const char *text, size_t len, int64_t now_ms, char **out,
             size_t *outlen);

/* The same for one candidate object (`stepctl next`, whose situation is
 * built in memory): when cand has no `access` and its path has a probe in
 * (channel, rendition) at or before at_ms, cand gets the probe's access.
 * 1 filled, 0 not (no probe, no such store, a v1 store), -1 out of memory. */
int acp_fill_candidate(const char *evidence_path, json_t *cand, const char *channel,
                       const char *rendition, int64_t at_ms);

#endif
