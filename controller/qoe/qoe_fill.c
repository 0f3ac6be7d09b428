/* qoe_fill.c - qoe from sessions where none was given (see qoe_fill.h). */
#include "qoe_fill.h"

#include "num.h"

/* The exact decimals of o (num_json_loadb's marked text) as decimal
 * strings, in place: a record printed by json_dumps keeps their digits. */
static void decimals_as_strings(json_t *o)
{
    const char *k;
    json_t *v;
    size_t i;
    if (json_is_object(o)) {
        json_object_foreach(o, k, v)
        {
            if (num_json_is_number(v))
                json_object_set_new(o, k, json_string(json_string_value(v) + 1));
            else
                decimals_as_strings(v);
        }
    } else if (json_is_array(o)) {
        json_array_foreach(o, i, v) decimals_as_strings(v);
    }
}

enum qoe_fill qoe_fill(sqlite3 *db, const struct qoe_scope *scope, const json_t *policy,
                       json_t **qoe, json_t **source)
{
    *qoe = *source = NULL;
    long long n = qoe_count_sessions(db, scope);
    if (n < 0)
        return QOE_FILL_ERROR;
    if (n == 0)
        return QOE_FILL_UNUSED;
    struct qoe_rules rules;
    const char *missing = "qoe_classes_missing";
    if (qoe_rules_from_policy(policy, &rules, &missing) != 0) {
        *source = json_pack("{s:s,s:s,s:s,s:I}", "source", "sessions", "status", "UNKNOWN",
                            "reason", missing, "sessions", (json_int_t)n);
        return *source ? QOE_FILL_RULES_MISSING : QOE_FILL_ERROR;
    }
    char err[256];
    json_t *o = qoe_report(db, scope, &rules, err, sizeof err);
    if (!o)
        return QOE_FILL_ERROR;
    *source = json_pack("{s:s,s:s,s:s,s:O,s:O,s:O}", "source", "sessions", "status", "filled",
                        "reason", "qoe_from_sessions", "unused", json_object_get(o, "unused"),
                        "out_of_context", json_object_get(o, "out_of_context"), "provenance",
                        json_object_get(o, "provenance"));
    decimals_as_strings(*source);
    json_object_del(o, "unused");
    json_object_del(o, "out_of_context");
    json_object_del(o, "provenance");
    *qoe = o;
    return *source ? QOE_FILL_FILLED : QOE_FILL_ERROR;
}
