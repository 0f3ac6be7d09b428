/* smac_anchor.c - control.db's chain heads kept outside the file (see
 * smac_anchor.h). */
#include "smac_anchor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cliutil.h"
#include "smac.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_SORT_KEYS)

/* hex stepctl_mac('store_anchor', '', text, '') on db (the key's). */
static int anchor_mac(sqlite3 *db, const char *text, char hex[SMAC_HEX])
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT stepctl_mac('store_anchor', '', ?1, '')", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT ? 0 : -1;
    if (rc == 0)
        snprintf(hex, SMAC_HEX, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

/* The MAC of o without its "mac" member. */
static int object_mac(sqlite3 *db, const json_t *o, char hex[SMAC_HEX])
{
    json_t *copy = json_copy((json_t *)o);
    json_object_del(copy, "mac");
    char *text = copy ? json_dumps(copy, DUMP_FLAGS) : NULL;
    json_decref(copy);
    int rc = text ? anchor_mac(db, text, hex) : -1;
    free(text);
    return rc;
}

static int keying_key_id(sqlite3 *db, char out[SMAC_HEX])
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT key_id FROM store_keying WHERE id = 1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0)
        snprintf(out, SMAC_HEX, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

/* 0 o is an anchor of this store's key whose MAC verifies, else 65 (err). */
static int anchor_valid(sqlite3 *db, const json_t *o, char *err, size_t errlen)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *key_id = json_string_value(json_object_get(o, "key_id"));
    const char *mac = json_string_value(json_object_get(o, "mac"));
    char mine[SMAC_HEX], want[SMAC_HEX];
    if (!kind || strcmp(kind, "store_anchor") || json_integer_value(json_object_get(o, "version")) != 1 ||
        !key_id || !mac || !json_is_array(json_object_get(o, "heads"))) {
        snprintf(err, errlen, "not a store anchor (version 1) made by stepctl verify-store");
        return 65;
    }
    if (keying_key_id(db, mine) != 0 || !smac_hex_same(mine, key_id)) {
        snprintf(err, errlen, "the anchor was made for another store key (key_id %.16s...)", key_id);
        return 65;
    }
    if (object_mac(db, o, want) != 0)
        return -1;
    if (!smac_hex_same(want, mac)) {
        snprintf(err, errlen, "the anchor's MAC does not verify under the key (the file was edited)");
        return 65;
    }
    return 0;
}

/* One anchored head [tbl, chain, n, last_mac] still the n-th MAC of its
 * chain; st: SELECT (the n-th MAC), (the chain's count). */
static int check_one(sqlite3_stmt *st, const json_t *h, long long made, struct vst_finding *f)
{
    const char *tbl = json_string_value(json_array_get(h, 0));
    const char *chain = json_string_value(json_array_get(h, 1));
    json_int_t n = json_integer_value(json_array_get(h, 2));
    const char *last = json_string_value(json_array_get(h, 3));
    if (!tbl || !chain || !last || n < 0 || !json_is_integer(json_array_get(h, 2)))
        return 65;
    if (n == 0)
        return 0;
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, chain, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, n - 1);
    if (sqlite3_step(st) != SQLITE_ROW)
        return -1;
    const char *mac = (const char *)sqlite3_column_text(st, 0);
    long long now = sqlite3_column_int64(st, 1);
    if (mac && smac_hex_same(mac, last))
        return 0;
    char key[160], detail[256];
    json_t *k = json_pack("[s, s]", tbl, chain);
    char *ks = k ? json_dumps(k, JSON_COMPACT) : NULL;
    snprintf(key, sizeof key, "%s", ks ? ks : tbl);
    free(ks);
    json_decref(k);
    snprintf(detail, sizeof detail, "the anchor of %lld ms has %lld MACs in this chain, the store %lld%s: "
             "control.db went back behind the anchor (an older copy)", made, (long long)n, now,
             mac ? " and another MAC at that place" : "");
    return vst_found(f, "store_heads", key, "head_rollback", detail);
}

static int check_heads(sqlite3 *db, const json_t *o, size_t *checked, struct vst_finding *f, char *err,
                       size_t errlen)
{
    static const char sql[] =
        "SELECT (SELECT mac FROM store_macs WHERE tbl = ?1 AND chain = ?2 ORDER BY seq LIMIT 1 OFFSET ?3), "
        "(SELECT COUNT(*) FROM store_macs WHERE tbl = ?1 AND chain = ?2)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    const json_t *heads = json_object_get(o, "heads");
    long long made = (long long)json_integer_value(json_object_get(o, "made_at_ms"));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(heads); i++, ++*checked)
        rc = check_one(st, json_array_get(heads, i), made, f);
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == 65)
        snprintf(err, errlen, "a head of the anchor is not [table, chain, n, last_mac]");
    return rc;
}

int smac_anchor_check(sqlite3 *db, const char *path, bool *had, size_t *checked, struct vst_finding *f,
                      char *err, size_t errlen)
{
    *had = false;
    *checked = 0;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read it: %s", strerror(errno));
        return 66;
    }
    *had = true;
    char *text = NULL;
    size_t len = 0;
    int rc = cli_slurp(path, SMAC_ANCHOR_MAX, &text, &len);
    if (rc != 0) {
        snprintf(err, errlen, rc == 65 ? "larger than %u bytes" : "cannot read it", SMAC_ANCHOR_MAX);
        return rc == 65 || rc == 66 ? rc : -1;
    }
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!json_is_object(o)) {
        json_decref(o);
        snprintf(err, errlen, "not JSON: %s", je.text);
        return 65;
    }
    rc = anchor_valid(db, o, err, errlen);
    if (rc == 0)
        rc = check_heads(db, o, checked, f, err, errlen);
    json_decref(o);
    return rc;
}

/* Every head of db, each verified under the key: [tbl, chain, n, last_mac]. */
static int read_heads(sqlite3 *db, json_t *heads, struct vst_finding *f)
{
    static const char sql[] =
        "SELECT tbl, chain, n, last_mac, head_mac, stepctl_mac('store_heads', tbl, chain, n, last_mac) "
        "FROM store_heads ORDER BY tbl, chain";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc, res = 0;
    while (res == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *tbl = (const char *)sqlite3_column_text(st, 0);
        const char *chain = (const char *)sqlite3_column_text(st, 1);
        const char *last = (const char *)sqlite3_column_text(st, 3);
        if (!tbl || !chain || !last ||
            !smac_hex_same((const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 5))) {
            res = vst_found(f, "store_heads", tbl ? tbl : "", "head_mismatch",
                            "a head does not verify under the key: no anchor written");
            break;
        }
        if (json_array_append_new(heads, json_pack("[s, s, I, s]", tbl, chain,
                                                   (json_int_t)sqlite3_column_int64(st, 2), last)))
            res = -1;
    }
    if (res == 0 && rc != SQLITE_DONE)
        res = -1;
    sqlite3_finalize(st);
    return res;
}

/* text to path through path.tmp, renamed over it; 0 or -1 (errno). */
static int write_atomically(const char *path, const char *text)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    int ok = off == len && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok || rename(tmp, path) != 0) {
        saved = ok ? errno : saved;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

int smac_anchor_write(sqlite3 *db, const char *path, size_t *chains, struct vst_finding *f, char *err,
                      size_t errlen)
{
    *chains = 0;
    char key_id[SMAC_HEX], mac[SMAC_HEX];
    json_t *heads = json_array();
    if (!heads || sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        json_decref(heads);
        return -1;
    }
    int rc = keying_key_id(db, key_id) != 0 ? -1 : read_heads(db, heads, f);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != 0) {
        json_decref(heads);
        return rc;
    }
    *chains = json_array_size(heads);
    json_t *o = json_pack("{s:o, s:s, s:s, s:I, s:i}", "heads", heads, "key_id", key_id, "kind",
                          "store_anchor", "made_at_ms", (json_int_t)cli_now_ms(), "version", 1);
    if (!o || object_mac(db, o, mac) != 0 || json_object_set_new(o, "mac", json_string(mac))) {
        json_decref(o);
        return -1;
    }
    char *text = json_dumps(o, DUMP_FLAGS);
    json_decref(o);
    if (!text)
        return -1;
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (!line) {
        free(text);
        return -1;
    }
    memcpy(line + len, "\n", 2);
    rc = write_atomically(path, line) == 0 ? 0 : 66;
    if (rc)
        snprintf(err, errlen, "cannot write it: %s", strerror(errno));
    free(line);
    return rc;
}
