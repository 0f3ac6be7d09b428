/* replay.c - the shared decide pipeline and the record comparison. */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "output.h"
#include "record.h"

int rpl_recompute(const struct sit_situation *s, int64_t t_ms, const struct evidence_rows *rows,
                  const char *decision_id, const char *tool_version, json_t **result)
{
    struct dcn_result r;
    *result = NULL;
    if (dcn_decide(s, t_ms, rows, &r) < 0)
        return 70;
    *result = out_result(s, &r, decision_id, tool_version);
    dcn_free(&r);
    return *result ? 0 : 70;
}

#define RPL_MAX_LINES 100

static void show(FILE *out, size_t *n, const char *path, const json_t *a, const json_t *b)
{
    if ((*n)++ >= RPL_MAX_LINES)
        return;
    char *x = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char *y = b ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    fprintf(out, "  %s: recorded %.200s, recomputed %.200s\n", path[0] ? path : "(root)",
            x ? x : "(absent)", y ? y : "(absent)");
    free(x);
    free(y);
}

static void walk(const json_t *a, const json_t *b, char *path, size_t cap, FILE *out, size_t *n)
{
    size_t len = strlen(path);
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
            if (!len && !strcmp(k, "tool_version"))
                continue; /* a newer build may replay an older record */
            snprintf(path + len, cap - len, "%s%s", len ? "." : "", k);
            walk(v, json_object_get(b, k), path, cap, out, n);
        }
        json_object_foreach((json_t *)b, k, v) if (!json_object_get(a, k))
        {
            snprintf(path + len, cap - len, "%s%s", len ? "." : "", k);
            show(out, n, path, NULL, v);
        }
    } else if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(path + len, cap - len, "[%zu]", i);
            walk(json_array_get(a, i), json_array_get(b, i), path, cap, out, n);
        }
    } else if (!a || !b || !json_equal(a, b)) {
        show(out, n, path, a, b);
    }
    path[len] = '\0';
}

size_t rpl_diff(const json_t *recorded, const json_t *recomputed, FILE *out)
{
    char path[1024] = "";
    size_t n = 0;
    walk(recorded, recomputed, path, sizeof path, out, &n);
    if (n > RPL_MAX_LINES)
        fprintf(out, "  ... %zu differences in all\n", n);
    return n;
}

/* The stored columns and condition rows against what the recomputed answer
 * would have stored (the mapping insert uses: rec_columns_of,
 * rec_conditions_of). */
static void check_stored(const struct rec_loaded *l, const json_t *again, FILE *out, size_t *n)
{
    char path[1024];
    const char *cols[REC_N_COLUMNS];
    rec_columns_of(again, cols);
    json_t *want = json_object();
    for (int c = 0; c < REC_N_COLUMNS; c++)
        json_object_set_new(want, rec_column_names[c], cols[c] ? json_string(cols[c]) : json_null());
    snprintf(path, sizeof path, "decisions");
    walk(l->columns, want, path, sizeof path, out, n);
    json_decref(want);
    want = rec_conditions_of(again);
    snprintf(path, sizeof path, "decision_conditions");
    if (l->conditions)
        walk(l->conditions, want, path, sizeof path, out, n);
    else
        show(out, n, "decision_conditions (the table is missing)", NULL, want);
    json_decref(want);
    if (l->evidence_missing)
        show(out, n, "decision_evidence (the table is missing; replayed without evidence)", NULL,
             NULL);
    if (l->commitments_missing)
        show(out, n, "decision_commitments (the table is missing; replayed without the ledger "
                     "values decide used)", NULL, NULL);
}

size_t rpl_compare(const struct rec_loaded *l, const json_t *recomputed, FILE *out)
{
    char path[1024] = "";
    size_t n = 0;
    walk(l->result, recomputed, path, sizeof path, out, &n);
    check_stored(l, recomputed, out, &n);
    if (n > RPL_MAX_LINES)
        fprintf(out, "  ... %zu differences in all\n", n);
    return n;
}
