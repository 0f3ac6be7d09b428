/* qoe_situation.c - decide's qoe from sessions (see qoe_situation.h). */
#include "qoe_situation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "qoe_fill.h"
#include "record.h"

void qoe_cohort_of(const json_t *c, struct sit_cohort *out)
{
    const char *k[] = {"channel", "region", "isp", "client", "build", "rendition"};
    char *f[] = {out->channel, out->region, out->isp, out->client, out->build, out->rendition};
    for (int i = 0; i < 6; i++) {
        const char *v = json_string_value(json_object_get(c, k[i]));
        snprintf(f[i], SIT_STR, "%s", v ? v : "");
    }
}

/* Fills the candidates of root; the number filled, or -1. */
static int fill_candidates(sqlite3 *db, json_t *root, int64_t now_ms)
{
    const json_t *policy = json_object_get(root, "policy");
    json_t *t = json_object_get(root, "decision_time_ms"), *c;
    int64_t at = json_is_integer(t) ? json_integer_value(t) : now_ms;
    json_t *age = json_object_get(json_object_get(policy, "qoe"), "max_age_s");
    struct qoe_scope sc = {.until_ms = at + 1};
    sc.since_ms = json_is_integer(age) ? at - json_integer_value(age) * 1000 : at;
    qoe_cohort_of(json_object_get(json_object_get(root, "action"), "cohort"), &sc.cohort);
    size_t i;
    int filled = 0;
    json_array_foreach(json_object_get(root, "candidates"), i, c)
    {
        if (!json_is_object(c) || json_object_get(c, "qoe") ||
            !(sc.path_id = json_string_value(json_object_get(c, "path_id"))))
            continue;
        json_t *qoe = NULL, *source = NULL;
        enum qoe_fill f = qoe_fill(db, &sc, policy, &qoe, &source);
        if (f == QOE_FILL_ERROR)
            return -1;
        if (qoe)
            json_object_set_new(c, "qoe", qoe);
        if (source) {
            json_object_set_new(c, "qoe_source", source);
            filled++;
        }
    }
    return filled;
}

int qoe_fill_situation(const char *db_path, const char *text, size_t len, int64_t now_ms,
                       char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    sqlite3 *db = NULL;
    char err[512];
    json_t *root = num_json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(root) || rec_open(db_path, REC_READ, &db, err, sizeof err) != REC_OK) {
        json_decref(root); /* not a situation, or no control.db yet: decide says why, if anything */
        sqlite3_close(db);
        return 0;
    }
    int n = fill_candidates(db, root, now_ms);
    sqlite3_close(db);
    if (n > 0 && (*out = num_json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT)))
        *outlen = strlen(*out);
    json_decref(root);
    return n < 0 || (n > 0 && !*out) ? -1 : 0;
}
