/* store_key.c - the key file and the canonical MAC (see store_key.h). */
#include "store_key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "evidence_text.h"

FILE *store_open_regular(const char *path, unsigned *mode, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        evidence_text_errno(errno, why, n);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, n, "not a regular file");
        close(fd);
        return NULL;
    }
    if (mode)
        *mode = (unsigned)st.st_mode;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        evidence_text_errno(errno, why, n);
        close(fd);
    }
    return f;
}

const char *store_key_file(const char *given, const char *env)
{
    if (given)
        return given;
    const char *v = getenv(env);
    return v && *v ? v : NULL;
}

int store_key_load(const char *who, const char *opt, const char *file, struct store_key *k)
{
    char why[256], shown[1200];
    unsigned mode = 0;
    memset(k, 0, sizeof *k);
    evidence_text_escape(file, false, shown, sizeof shown);
    FILE *f = store_open_regular(file, &mode, why, sizeof why);
    if (!f) {
        fprintf(stderr, "%s: %s %s: %s\n", who, opt, shown, why);
        return STORE_KEY_E_NOINPUT;
    }
    unsigned char buf[STORE_KEY_MAX + 2];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (mode & 077) { /* the key is the whole of the store's tamper evidence */
        fprintf(stderr, "%s: %s %s: accessible by group or others (mode %04o): chmod 600 it\n",
                who, opt, shown, mode & 07777);
        OPENSSL_cleanse(buf, sizeof buf);
        return STORE_KEY_E_DATA;
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--; /* a line's end is not part of the key */
    bool ok = n >= STORE_KEY_MIN && n <= STORE_KEY_MAX;
    if (ok) {
        memcpy(k->b, buf, n);
        k->n = n;
    }
    OPENSSL_cleanse(buf, sizeof buf);
    if (!ok) {
        fprintf(stderr, "%s: %s %s: %d to %d bytes expected (one line or raw bytes)\n", who, opt,
                shown, STORE_KEY_MIN, STORE_KEY_MAX);
        return STORE_KEY_E_DATA;
    }
    return 0;
}

void store_key_wipe(struct store_key *k)
{
    OPENSSL_cleanse(k, sizeof *k);
}

/* The canonical encoding, grown as needed. */
struct enc {
    unsigned char *p;
    size_t n, cap;
    bool oom;
};

static void put(struct enc *e, char tag, const void *bytes, size_t len)
{
    if (e->oom)
        return;
    size_t need = e->n + 9 + len;
    if (need > e->cap) {
        size_t cap = e->cap ? e->cap : 256;
        while (cap < need)
            cap *= 2;
        unsigned char *p = realloc(e->p, cap);
        if (!p) {
            e->oom = true;
            return;
        }
        e->p = p;
        e->cap = cap;
    }
    e->p[e->n++] = (unsigned char)tag;
    for (int i = 7; i >= 0; i--)
        e->p[e->n++] = (unsigned char)((uint64_t)len >> (8 * i));
    if (len)
        memcpy(e->p + e->n, bytes, len);
    e->n += len;
}

static void put_value(struct enc *e, sqlite3_value *v)
{
    char num[32];
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: put(e, 'N', NULL, 0); break;
    case SQLITE_INTEGER:
        snprintf(num, sizeof num, "%lld", (long long)sqlite3_value_int64(v));
        put(e, 'I', num, strlen(num));
        break;
    case SQLITE_FLOAT:
        snprintf(num, sizeof num, "%.17g", sqlite3_value_double(v));
        put(e, 'R', num, strlen(num));
        break;
    case SQLITE_BLOB:
        put(e, 'B', sqlite3_value_blob(v), (size_t)sqlite3_value_bytes(v));
        break;
    default: {
        const unsigned char *t = sqlite3_value_text(v);
        put(e, 'T', t ? t : (const unsigned char *)"", (size_t)sqlite3_value_bytes(v));
    }
    }
}

static void to_hex(const unsigned char *md, size_t n, char *hex)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = d[md[i] >> 4];
        hex[2 * i + 1] = d[md[i] & 15];
    }
    hex[2 * n] = '\0';
}

static int hmac_hex(const struct store_key *k, const unsigned char *in, size_t n,
                    char hex[STORE_KEY_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (!HMAC(EVP_sha256(), k->b, (int)k->n, in, n, md, &mdlen) || mdlen != 32)
        return -1;
    to_hex(md, mdlen, hex);
    return 0;
}

bool store_key_hex_same(const char *a, const char *b)
{
    return a && b && strlen(a) == strlen(b) && CRYPTO_memcmp(a, b, strlen(a)) == 0;
}

int store_key_mac(const struct store_key *k, const char *const *heads, size_t nheads,
                  sqlite3_value **vals, int n, char hex[STORE_KEY_HEX])
{
    struct enc e = {NULL, 0, 0, false};
    put(&e, 'T', "v1", 2);
    for (size_t i = 0; i < nheads; i++)
        put(&e, 'T', heads[i], strlen(heads[i]));
    for (int i = 0; i < n; i++)
        put_value(&e, vals[i]);
    int rc = e.oom ? -1 : hmac_hex(k, e.p, e.n, hex);
    free(e.p);
    return rc;
}

static void free_key(void *p)
{
    if (p) {
        store_key_wipe(p);
        free(p);
    }
}

int store_key_attach(sqlite3 *db, const char *name, const struct store_key *k,
                     void (*fn)(sqlite3_context *, int, sqlite3_value **))
{
    struct store_key *copy = NULL;
    if (k) {
        if (!(copy = malloc(sizeof *copy)))
            return SQLITE_NOMEM;
        memcpy(copy, k, sizeof *copy);
    }
    return sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8, copy, fn, NULL, NULL, free_key);
}

void store_key_sql_mac(sqlite3_context *ctx, const char *keyless, const char *const *heads,
                       size_t nheads, sqlite3_value **vals, int n)
{
    const struct store_key *k = sqlite3_user_data(ctx);
    char hex[STORE_KEY_HEX];
    if (!k)
        sqlite3_result_error(ctx, keyless, -1);
    else if (n < 0)
        sqlite3_result_error(ctx, "a MAC function called with too few arguments", -1);
    else if (store_key_mac(k, heads, nheads, vals, n, hex) != 0)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
}

int store_key_matches(sqlite3 *db, const char *sql, const struct store_key *k, const char *label)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int res = -1, rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        res = 2;
    if (rc == SQLITE_ROW) {
        char id[STORE_KEY_HEX];
        store_key_id(k, label, id);
        res = store_key_hex_same((const char *)sqlite3_column_text(st, 0), id);
    }
    sqlite3_finalize(st);
    return res;
}

static bool in_ref(sqlite3 *ref, const char *name, const char *sql)
{
    sqlite3_stmt *st = NULL;
    bool yes = false;
    if (sqlite3_prepare_v2(ref, "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?1 "
                                "AND sql = ?2", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, sql, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

int store_key_foreign_object(sqlite3 *db, sqlite3 *ref, const char *fn, char *name, size_t cap)
{
    /* LIKE is case-insensitive for ASCII, as SQL names are: "STEPCTL_MAC"
     * and "stepctl_mac" are one function (and '_' matches any character:
     * more is suspect, never less). */
    static const char sql[] = "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                              "AND (type = 'trigger' OR sql LIKE '%' || ?1 || '%') ORDER BY rowid";
    sqlite3_stmt *st = NULL;
    int rc, found = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, fn, -1, SQLITE_STATIC) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -1;
    }
    while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *n = (const char *)sqlite3_column_text(st, 1);
        const char *text = (const char *)sqlite3_column_text(st, 2);
        if (strcmp(type, "trigger") || !in_ref(ref, n, text)) {
            snprintf(name, cap, "%s %s", type, n);
            found = 1;
        }
    }
    if (!found && rc != SQLITE_DONE)
        found = -1;
    sqlite3_finalize(st);
    return found;
}

void store_key_id(const struct store_key *k, const char *label, char hex[STORE_KEY_HEX])
{
    if (hmac_hex(k, (const unsigned char *)label, strlen(label), hex) != 0)
        hex[0] = '\0';
}
