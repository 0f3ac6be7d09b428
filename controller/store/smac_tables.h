/* smac_tables.h - which rows of control.db are MACed, and the SQL that
 * writes and reads their MACs (smac.h).
 *
 * Only the immutable columns of a row are MACed: the ones no stepctl
 * UPDATE changes.  The mutable ones (grants.allocated, first_allocation_ms,
 * the token bucket, status, closed_at_ms, close_status, close_reason;
 * reservations.state, resolved_at_ms, resolve_reason) are checked by
 * vstore.c's invariants instead.
 */
#ifndef SMAC_TABLES_H
#define SMAC_TABLES_H

#include <stddef.h>

struct smac_table {
    const char *name;
    const char *key[4]; /* the row key's columns (NULL-terminated) */
    const char *chain;  /* the chain's column, NULL: one chain ('') for the table */
    const char *cols;   /* the MACed columns, comma-separated */
};

/* In checkpoint order. */
extern const struct smac_table smac_tables[];
extern const size_t smac_n_tables;

/* The row key of alias a (e.g. "NEW" or "t"): a.id, or json_array(a.k1,
 * a.k2, ...).  The chain expression: a.col or ''.  The columns: a.c1,
 * a.c2, ....  Into out (cap bytes); -1 when it does not fit. */
int smac_key_expr(const struct smac_table *t, const char *a, char *out, size_t cap);
int smac_chain_expr(const struct smac_table *t, const char *a, char *out, size_t cap);
int smac_cols_expr(const struct smac_table *t, const char *a, char *out, size_t cap);
/* The number of MACed columns. */
int smac_n_cols(const struct smac_table *t);
/* store_macs m joined to the row: t.id = m.row_key, or each key column to
 * json_extract(m.row_key, '$[i]'). */
int smac_join_expr(const struct smac_table *t, char *out, size_t cap);
/* CREATE TRIGGER IF NOT EXISTS smac_NAME AFTER INSERT ON NAME ... */
int smac_trigger_sql(const struct smac_table *t, char *out, size_t cap);

#endif
