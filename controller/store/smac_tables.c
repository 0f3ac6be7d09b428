/* smac_tables.c - the MACed rows of control.db (see smac_tables.h). */
#include "smac_tables.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Order: a decision before what refers to it, so the checkpoint reads as
 * the store was written. */
const struct smac_table smac_tables[] = {
    {"decisions", {"id", NULL}, NULL,
     "id,recorded_at_ms,decision_time_ms,tool_version,policy_id,policy_version,intent_version,"
     "channel,rendition,program_version,outcome,chosen,chosen_by,refusal_id,situation,result"},
    {"decision_evidence", {"decision_id", "seq", NULL}, NULL,
     "decision_id,seq,evidence_id,check_kind,verdict,reason,profile_id,path_id,channel,"
     "rendition,program_version,reference_version,observed_at_ms,recorded_at_ms,malformed"},
    {"decision_conditions", {"decision_id", "path_id", "condition", NULL}, NULL,
     "decision_id,path_id,condition,status,reason,detail,eligible,data"},
    {"decision_commitments", {"decision_id", "path_id", "window_index", "item_index"}, NULL,
     "decision_id,path_id,window_index,item_index,resource,scope,metric,start_ms,end_ms,"
     "commitments_micro"},
    {"next_decisions", {"id", NULL}, NULL,
     "id,grant_id,decided_at_ms,tool_version,first_allocation_ms,branch,status,reason,"
     "next_decision_id,observations,result"},
    {"grants", {"id", NULL}, NULL,
     "id,decision_id,created_at_ms,actor,policy_id,policy_version,intent_version,channel,region,"
     "isp,client,build,rendition,program_version,path_id,fallback_path_ids,valid_from_ms,"
     "valid_until_ms,url_ttl_s,expected_play_s,commitment_until_ms,max_allocations,"
     "max_rate_micro,burst,stop_conditions"},
    {"reservations", {"id", NULL}, NULL,
     "id,grant_id,resource,scope,metric,start_ms,end_ms,amount_micro,created_at_ms"},
    {"grant_events", {"grant_id", "seq", NULL}, "grant_id",
     "grant_id,seq,at_ms,kind,reason,actor"},
    /* chained per grant by seq: no global head to serialize on (issue 19) */
    {"allocations", {"id", NULL}, "grant_id",
     "id,grant_id,seq,decision_id,path_id,fallback_path_ids,created_at_ms,expires_at_ms,"
     "commitment_until_ms,request_sha256,request,response,subject"},
};
const size_t smac_n_tables = sizeof smac_tables / sizeof smac_tables[0];

static int add(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add(char *out, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(out);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + len, cap - len, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= cap - len ? -1 : 0;
}

static size_t n_key(const struct smac_table *t)
{
    size_t n = 0;
    while (n < 4 && t->key[n])
        n++;
    return n;
}

int smac_key_expr(const struct smac_table *t, const char *a, char *out, size_t cap)
{
    out[0] = '\0';
    size_t n = n_key(t);
    if (n == 1)
        return add(out, cap, "%s.%s", a, t->key[0]);
    int rc = add(out, cap, "json_array(");
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add(out, cap, "%s%s.%s", i ? ", " : "", a, t->key[i]);
    return rc ? rc : add(out, cap, ")");
}

int smac_chain_expr(const struct smac_table *t, const char *a, char *out, size_t cap)
{
    out[0] = '\0';
    return t->chain ? add(out, cap, "%s.%s", a, t->chain) : add(out, cap, "''");
}

int smac_cols_expr(const struct smac_table *t, const char *a, char *out, size_t cap)
{
    out[0] = '\0';
    int rc = 0;
    const char *p = t->cols;
    while (rc == 0 && *p) {
        size_t len = strcspn(p, ",");
        rc = add(out, cap, "%s%s.%.*s", out[0] ? ", " : "", a, (int)len, p);
        p += len + (p[len] == ',');
    }
    return rc;
}

int smac_n_cols(const struct smac_table *t)
{
    int n = 1;
    for (const char *p = t->cols; *p; p++)
        n += *p == ',';
    return n;
}

int smac_join_expr(const struct smac_table *t, char *out, size_t cap)
{
    out[0] = '\0';
    size_t n = n_key(t);
    if (n == 1)
        return add(out, cap, "t.%s = m.row_key", t->key[0]);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add(out, cap, "%st.%s = json_extract(m.row_key, '$[%zu]')", i ? " AND " : "",
                 t->key[i], i);
    return rc;
}

int smac_trigger_sql(const struct smac_table *t, char *out, size_t cap)
{
    char key[256], chain[64], cols[1024];
    if (smac_key_expr(t, "NEW", key, sizeof key) || smac_chain_expr(t, "NEW", chain, sizeof chain) ||
        smac_cols_expr(t, "NEW", cols, sizeof cols))
        return -1;
    out[0] = '\0';
    return add(out, cap,
               "CREATE TRIGGER IF NOT EXISTS smac_%s AFTER INSERT ON %s BEGIN "
               "INSERT INTO store_macs (tbl, row_key, chain, mac) VALUES ('%s', %s, %s, "
               "stepctl_mac('%s', %s, %s, COALESCE((SELECT mac FROM store_macs WHERE tbl = '%s' "
               "AND chain = %s ORDER BY seq DESC LIMIT 1), ''))); END",
               t->name, t->name, t->name, key, chain, t->name, chain, cols, t->name, chain);
}
