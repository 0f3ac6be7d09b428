/* access_probe.c - access from the newest probe (see access_probe.h). */
#include "access_probe.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "evidence.h"

/* The access object a probe row gives; NULL on out of memory. */
static json_t *access_of(const json_t *probe)
{
    return json_pack("{s:O, s:O, s:s, s:O, s:O}", "status", json_object_get(probe, "status"), "observed_at_ms",
                     json_object_get(probe, "observed_at_ms"), "source", "probe", "probe_id",
                     json_object_get(probe, "id"), "reason", json_object_get(probe, "reason"));
}

/* Fills candidate c when it has no access and its path has a probe in the
 * scope: 1 filled, 0 not, -1 out of memory. */
static int fill_one(struct evidence_db *db, json_t *c, const char *channel,
                    const char *rendition, int64_t at_ms)
{
    const char *path = json_string_value(json_object_get(c, "path_id"));
    json_t *probe = NULL;
    if (!json_is_object(c) || json_object_get(c, "access") || !path || !channel || !rendition ||
        evidence_probe_newest(db, path, channel, rendition, at_ms, &probe, NULL, 0) !=
            EVIDENCE_OK ||
        !probe)
        return 0;
    json_t *a = access_of(probe);
    json_decref(probe);
    return a && json_object_set_new(c, "access", a) == 0 ? 1 : -1;
}

/* Fills every candidate without access that has a probe; the count. */
static int fill(struct evidence_db *db, json_t *sit, int64_t at_ms)
{
    const json_t *cohort = json_object_get(json_object_get(sit, "action"), "cohort");
    const char *channel = json_string_value(json_object_get(cohort, "channel"));
    const char *rendition = json_string_value(json_object_get(cohort, "rendition"));
    size_t i;
    json_t *c;
    int filled = 0;
    json_array_foreach(json_object_get(sit, "candidates"), i, c) {
        int f = fill_one(db, c, channel, rendition, at_ms);
        if (f < 0)
            return -1;
        filled += f;
    }
    return filled;
}

int acp_fill_candidate(const char *evidence_path, json_t *cand, const char *channel,
                       const char *rendition, int64_t at_ms)
{
    struct evidence_db *db = NULL;
    if (evidence_open(evidence_path, EVIDENCE_OPEN_RO, &db, NULL, 0) != EVIDENCE_OK)
        return 0;
    int f = fill_one(db, cand, channel, rendition, at_ms);
    evidence_close(db);
    return f;
}

int acp_fill(const char *evidence_path, const char *text, size_t len, int64_t now_ms, char **out,
             size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    json_t *sit = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    struct evidence_db *db = NULL;
    if (!json_is_object(sit) ||
        evidence_open(evidence_path, EVIDENCE_OPEN_RO, &db, NULL, 0) != EVIDENCE_OK) {
        json_decref(sit);
        return 0;
    }
    const json_t *t = json_object_get(sit, "decision_time_ms");
    int filled = fill(db, sit, json_is_integer(t) ? json_integer_value(t) : now_ms);
    evidence_close(db);
    if (filled > 0) {
        *out = json_dumps(sit, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        *outlen = *out ? strlen(*out) : 0;
    }
    json_decref(sit);
    return filled < 0 || (filled > 0 && !*out) ? -1 : 0;
}
