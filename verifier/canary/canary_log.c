/* canary_log.c - structured log lines (see canary_log.h). */
#include "canary_log.h"

#include <stdarg.h>
#include <stdlib.h>

#include "util.h"

static void write_json_line(FILE *f, json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (text)
        fprintf(f, "%s\n", text);
    free(text);
    json_decref(o);
}

void canary_log_check(const struct canary_log *l, const struct canary_target *t, const json_t *report,
                      int64_t duration_ms)
{
    char ts[32], at[32];
    util_rfc3339(util_now_ms(), ts);
    const json_t *seq = json_object_get(report, "media_sequence");
    const char *verdict = json_string_value(json_object_get(report, "verdict"));
    const char *reason = json_string_value(json_object_get(report, "reason"));
    const char *id = json_string_value(json_object_get(report, "evidence_id"));
    util_rfc3339(json_integer_value(json_object_get(report, "observed_at_ms")), at);
    bool decoded = json_is_true(json_object_get(json_object_get(report, "canary"), "decoded"));
    if (!l->json) {
        char seqtext[32] = "-";
        if (json_is_integer(seq))
            snprintf(seqtext, sizeof seqtext, "%lld", (long long)json_integer_value(seq));
        fprintf(l->f, "%s check %s seq %s %s %s %lld ms %s\n", ts, t->key, seqtext, verdict ? verdict : "UNKNOWN",
                reason ? reason : "-", (long long)duration_ms, id ? id : "-");
        return;
    }
    write_json_line(l->f, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:s, s:s, s:s, s:s, s:I, s:b}",
                                     "ts", ts, "event", "check", "target", t->key, "path_id", t->path_id,
                                     "channel", t->channel, "rendition", t->rendition,
                                     "media_sequence", seq ? seq : json_null(), "verdict",
                                     verdict ? verdict : "UNKNOWN", "reason", reason ? reason : "",
                                     "evidence_id", id ? id : "", "observed_at", at, "duration_ms",
                                     (json_int_t)duration_ms, "decoded", decoded));
}

void canary_log_event(const struct canary_log *l, const char *event, const char *fmt, ...)
{
    char ts[32], msg[1024];
    util_rfc3339(util_now_ms(), ts);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (l->json)
        write_json_line(l->f, json_pack("{s:s, s:s, s:s}", "ts", ts, "event", event, "message", msg));
    else
        fprintf(l->f, "%s %s %s\n", ts, event, msg);
}
