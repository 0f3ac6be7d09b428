/* evidence_fingerprint.c - the DecodeProfile fingerprint (see the header). */
#include "evidence_fingerprint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

const char *const evidence_fingerprint_pins[EVIDENCE_FINGERPRINT_N_PINS] = {
    "libavcodec", "libavformat", "libavutil", "libswresample", "ffmpeg_configuration_sha256",
};

void evidence_digest_hex(const unsigned char md[32], char out[65])
{
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void evidence_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
        snprintf(out, 65, "%s", "unavailable");
        return;
    }
    evidence_digest_hex(md, out);
}

int evidence_fingerprint(const json_t *profile_doc, const json_t *runtime, char out[65])
{
    char *a = json_dumps(profile_doc, JSON_COMPACT | JSON_SORT_KEYS);
    char *b = json_dumps(runtime, JSON_COMPACT | JSON_SORT_KEYS);
    size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
    char *both = a && b ? malloc(la + lb + 2) : NULL;
    int rc = -1;
    snprintf(out, 65, "%s", "unavailable");
    if (both) {
        memcpy(both, a, la);
        both[la] = '\n';
        memcpy(both + la + 1, b, lb);
        evidence_sha256_hex(both, la + lb + 1, out);
        rc = 0;
    }
    free(both);
    free(a);
    free(b);
    return rc;
}

int evidence_fingerprint_check_pins(const json_t *profile_doc, const json_t *runtime, char *err,
                                    size_t errlen)
{
    const json_t *pins = json_object_get(profile_doc, "runtime");
    size_t used = 0;
    int differences = 0;
    if (errlen)
        err[0] = '\0';
    for (size_t i = 0; i < EVIDENCE_FINGERPRINT_N_PINS; i++) {
        const char *name = evidence_fingerprint_pins[i];
        const char *want = json_string_value(json_object_get(pins, name));
        const char *have = json_string_value(json_object_get(runtime, name));
        if (want && have && !strcmp(want, have))
            continue;
        differences++;
        if (used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, "%s%s: profile %s, runtime %s",
                                     differences > 1 ? "; " : "", name, want ? want : "(none)",
                                     have ? have : "(none)");
    }
    return differences ? -1 : 0;
}
