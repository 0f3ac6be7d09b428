/* fb_replay.c - `stepctl replay NEXT_ID` for a review that recorded
 * resource feedback (see feedback.h): the judgement is recomputed from the
 * recorded queries and answers alone (Prometheus is not asked) and compared
 * with what was recorded. */
#include "feedback.h"

#include <stdio.h>

int fb_replay(sqlite3 *db, const json_t *review, bool as_json, FILE *out)
{
    const json_t *rec = json_object_get(review, "resource_feedback");
    const char *id = json_string_value(json_object_get(review, "next_id"));
    const char *grant = json_string_value(json_object_get(review, "grant_id"));
    struct fb_result again;
    if (!rec || !id || !grant ||
        fb_for_grant(db, grant, json_integer_value(json_object_get(rec, "end_ms")), rec,
                     &again) != 0)
        return -1;
    bool same = again.used && json_equal(again.record, (json_t *)rec);
    if (as_json)
        fprintf(out, "{\"next_id\": \"%s\", \"resource_feedback_identical\": %s}\n", id,
                same ? "true" : "false");
    else
        fprintf(out, "replay %s: resource feedback %s (%s %s)\n", id,
                same ? "identical" : "DIFFERENT", again.used ? cond_status_name(again.status) : "-",
                again.used ? again.reason : "not recomputable");
    fb_result_free(&again);
    return same ? 0 : 1;
}
