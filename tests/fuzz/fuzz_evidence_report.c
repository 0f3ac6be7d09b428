/* fuzz_evidence_report.c - the rules of a valid evidence report
 * (evidence_check_report) on arbitrary JSON: what import, insert and stepctl
 * decide apply to untrusted reports and rows.
 * Invariants: no crash, no leak; a refusal names a field; an accepted MATCH
 * compared something (never a MATCH over nothing) and has a 64-digit
 * fingerprint. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "evidence.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *r = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!r)
        return 0;
    char err[512] = "";
    if (evidence_check_report(r, err, sizeof err) == EVIDENCE_OK) {
        if (!strcmp(json_string_value(json_object_get(r, "verdict")), "MATCH")) {
            const json_t *v = json_object_get(r, "video"), *a = json_object_get(r, "audio");
            assert(json_integer_value(json_object_get(v, "compared_frames")) > 0 ||
                   json_integer_value(json_object_get(a, "reference_samples")) > 0);
        }
        const char *fp = json_string_value(json_object_get(json_object_get(r, "profile"), "fingerprint"));
        assert(fp && strlen(fp) == 64);
    } else {
        assert(strchr(err, ':') != NULL); /* "field: why" */
    }
    json_decref(r);
    return 0;
}
