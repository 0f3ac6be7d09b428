/* Writers: a readable table for list/latest, a key/value block for show,
 * and JSON.  They format what the queries returned and decide nothing.
 * Stored text comes from CDNs and reports: control characters are escaped
 * so that printing a row cannot drive the terminal. */
#include "evidence.h"
#include "evidence_text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct table_col {
    const char *title;
    const char *key;  /* column of the row object */
    int kind;         /* COL_TEXT, COL_TIME (ms -> UTC), COL_AGE (now - ms) */
};
enum { COL_TEXT, COL_TIME, COL_AGE };

static const struct table_col TABLE[] = {
    {"ID", "id", COL_TEXT},
    {"OBSERVED_AT", "observed_at_ms", COL_TIME},
    {"AGE_S", "observed_at_ms", COL_AGE},
    {"VERDICT", "verdict", COL_TEXT},
    {"REASON", "reason", COL_TEXT},
    {"PATH_ID", "path_id", COL_TEXT},
    {"CHANNEL", "channel", COL_TEXT},
    {"RENDITION", "rendition", COL_TEXT},
    {"PROGRAM_VERSION", "program_version", COL_TEXT},
    {"MEDIA_SEQ", "media_sequence", COL_TEXT},
};
#define NCOLS (sizeof TABLE / sizeof TABLE[0])
#define CELL_MAX 256

/* One value as display text: NULL/absent -> "-"; control characters and
 * bidi controls escaped (evidence_text.h). */
static void value_text(const json_t *v, char *buf, size_t n)
{
    char raw[4096];
    if (!v || json_is_null(v))
        snprintf(raw, sizeof raw, "-");
    else if (json_is_string(v))
        snprintf(raw, sizeof raw, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(raw, sizeof raw, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else {
        char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(raw, sizeof raw, "%s", d ? d : "?");
        free(d);
    }
    evidence_text_escape(raw, false, buf, n);
}

static void cell_text(const json_t *row, const struct table_col *c, int64_t now_ms, char *buf,
                      size_t n)
{
    const json_t *v = json_object_get(row, c->key);
    if (c->kind != COL_TEXT && json_is_integer(v)) {
        int64_t ms = json_integer_value(v);
        if (c->kind == COL_TIME)
            evidence_text_time(ms, buf, n);
        else if (ms > 0 && now_ms > 0) /* both bounded: no overflow from a crafted file */
            snprintf(buf, n, "%" PRId64, (now_ms - ms) / 1000);
        else
            snprintf(buf, n, "-");
        return;
    }
    value_text(v, buf, n);
}

/* Padded cells, no trailing blanks on the last column. */
static void put_cell(FILE *out, const char *text, size_t width, bool last)
{
    if (last)
        fprintf(out, "%s\n", text);
    else
        fprintf(out, "%-*s  ", (int)width, text);
}

int evidence_write_table(FILE *out, const json_t *rows, int64_t now_ms)
{
    size_t width[NCOLS];
    char cell[CELL_MAX];
    for (size_t c = 0; c < NCOLS; c++)
        width[c] = strlen(TABLE[c].title);
    for (size_t r = 0; r < json_array_size(rows); r++)
        for (size_t c = 0; c < NCOLS; c++) {
            cell_text(json_array_get(rows, r), &TABLE[c], now_ms, cell, sizeof cell);
            if (strlen(cell) > width[c])
                width[c] = strlen(cell);
        }
    for (size_t c = 0; c < NCOLS; c++)
        put_cell(out, TABLE[c].title, width[c], c + 1 == NCOLS);
    for (size_t r = 0; r < json_array_size(rows); r++)
        for (size_t c = 0; c < NCOLS; c++) {
            cell_text(json_array_get(rows, r), &TABLE[c], now_ms, cell, sizeof cell);
            put_cell(out, cell, width[c], c + 1 == NCOLS);
        }
    return ferror(out) ? -1 : 0;
}

static void write_fields(FILE *out, const json_t *obj, const char *indent)
{
    const char *key;
    const json_t *v;
    char text[4096];
    json_object_foreach((json_t *)obj, key, v) {
        if (strcmp(key, "fetches") == 0 || strcmp(key, "report") == 0)
            continue;
        value_text(v, text, sizeof text);
        fprintf(out, "%s%-20s %s\n", indent, key, text);
        if (json_is_integer(v) && strlen(key) > 3 && strcmp(key + strlen(key) - 3, "_ms") == 0) {
            evidence_text_time(json_integer_value(v), text, sizeof text);
            fprintf(out, "%s%-20s %s\n", indent, "", text);
        }
    }
}

int evidence_write_record(FILE *out, const json_t *record)
{
    write_fields(out, record, "");
    const json_t *report = json_object_get(record, "report");
    fprintf(out, "%-20s %s\n", "report",
            json_is_object(report) ? "(JSON object; shown with --json)" : "(not a JSON object)");
    const json_t *fetches = json_object_get(record, "fetches");
    fprintf(out, "fetches              %zu\n", json_array_size(fetches));
    for (size_t i = 0; i < json_array_size(fetches); i++) {
        fprintf(out, "  fetch %zu\n", i);
        write_fields(out, json_array_get(fetches, i), "    ");
    }
    return ferror(out) ? -1 : 0;
}

int evidence_write_json(FILE *out, const json_t *value)
{
    if (json_dumpf(value, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) != 0)
        return -1;
    fputc('\n', out);
    return ferror(out) ? -1 : 0;
}
