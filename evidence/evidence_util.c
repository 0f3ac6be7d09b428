/* Small pure helpers: ids, clock, enum names. */
#include "evidence_internal.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum evidence_rc evidence_new_id(char out[37])
{
    unsigned char b[16];
    out[0] = '\0';
    if (RAND_bytes(b, (int)sizeof b) != 1)
        return EVIDENCE_E_INTERNAL;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
    return EVIDENCE_OK;
}

int64_t evidence_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *evidence_verdict_name(enum evidence_verdict v)
{
    switch (v) {
    case EVIDENCE_VERDICT_MATCH: return "MATCH";
    case EVIDENCE_VERDICT_MISMATCH: return "MISMATCH";
    case EVIDENCE_VERDICT_UNKNOWN: break;
    }
    return "UNKNOWN";
}

bool evidence_verdict_parse(const char *s, enum evidence_verdict *out)
{
    static const enum evidence_verdict all[] = {EVIDENCE_VERDICT_UNKNOWN, EVIDENCE_VERDICT_MATCH,
                                                 EVIDENCE_VERDICT_MISMATCH};
    for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, evidence_verdict_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

const char *evidence_rc_name(enum evidence_rc rc)
{
    switch (rc) {
    case EVIDENCE_OK: return "ok";
    case EVIDENCE_E_NOTFOUND: return "not found";
    case EVIDENCE_E_INVALID: return "invalid";
    case EVIDENCE_E_CONFLICT: return "conflict";
    case EVIDENCE_E_OPEN: return "cannot open";
    case EVIDENCE_E_VERSION: return "schema version";
    case EVIDENCE_E_KEY: return "store key";
    case EVIDENCE_E_INTERNAL: break;
    }
    return "internal error";
}

/* Ids are printed in tables and used as keys: keep them short and plain. */
bool evidence_id_valid(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > EVIDENCE_MAX_ID_LEN)
        return false;
    return strspn(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_.:") == n;
}
