/* areq.h - the body of POST /v1/allocations, parsed and bounded.
 *
 *   {"allocation_id": "ID", "cohort": {"channel", "region", "isp", "client",
 *                                       "build", "rendition"},
 *    "verification": true}   (optional, issue 17: a verification session;
 *                             false or absent: a viewer)
 *
 * Everything else is refused: more than AREQ_MAX_BODY bytes, malformed JSON,
 * duplicate keys, unknown members, a missing member, a member of the wrong
 * type, a string with a NUL byte or above SIT_STR - 1 bytes, an allocation
 * id outside [A-Za-z0-9._:-]{1,128}.  The canonical form (members in this
 * order, no whitespace) is what the idempotency check compares: two bodies
 * with the same members are the same request whatever their spacing or
 * member order.  Pure: no I/O (fuzzed by tests/fuzz/fuzz_alloc_request.c).
 */
#ifndef AREQ_H
#define AREQ_H

#include <stdbool.h>
#include <stddef.h>

#include "situation.h"

#define AREQ_MAX_BODY 4096
#define AREQ_ID_MAX 128

struct areq {
    char allocation_id[AREQ_ID_MAX + 1];
    struct sit_cohort cohort;
    bool verification;
};

/* 0, or -1 with err naming the member ("cohort.isp: must be a string"). */
int areq_parse(const char *body, size_t len, struct areq *out, char *err, size_t errlen);

/* The canonical JSON text (NUL-terminated); returns its length, or -1 when
 * it does not fit in len bytes. */
int areq_canonical(const struct areq *r, char *buf, size_t len);

/* Lower-case hex SHA-256 of the canonical form. */
void areq_digest(const struct areq *r, char hex[65]);

#endif
