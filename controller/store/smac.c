/* smac.c - the key and the row MAC (see smac.h). */
#include "smac.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "cliutil.h"
#include "evidence_text.h"

const char *smac_key_file(const char *given)
{
    if (given)
        return given;
    const char *env = getenv(SMAC_ENV);
    return env && *env ? env : NULL;
}

int smac_key_load(const char *cmd, const char *file, struct smac_key *k)
{
    char why[256], shown[1200];
    unsigned mode = 0;
    memset(k, 0, sizeof *k);
    evidence_text_escape(file, false, shown, sizeof shown);
    FILE *f = cli_open_regular(file, &mode, why, sizeof why);
    if (!f) {
        fprintf(stderr, "stepctl %s: --store-key-file %s: %s\n", cmd, shown, why);
        return CLI_NOINPUT;
    }
    unsigned char buf[SMAC_MAX_KEY + 2];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (mode & 077) { /* the key is the whole of the store's tamper evidence */
        fprintf(stderr, "stepctl %s: --store-key-file %s: accessible by group or others "
                        "(mode %04o): chmod 600 it\n", cmd, shown, mode & 07777);
        OPENSSL_cleanse(buf, sizeof buf);
        return CLI_DATA;
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--; /* a line's end is not part of the key */
    bool ok = n >= SMAC_MIN_KEY && n <= SMAC_MAX_KEY;
    if (ok) {
        memcpy(k->b, buf, n);
        k->n = n;
    }
    OPENSSL_cleanse(buf, sizeof buf);
    if (!ok) {
        fprintf(stderr, "stepctl %s: --store-key-file %s: %d to %d bytes expected (one line or "
                        "raw bytes)\n", cmd, shown, SMAC_MIN_KEY, SMAC_MAX_KEY);
        return CLI_DATA;
    }
    return CLI_OK;
}

void smac_key_wipe(struct smac_key *k)
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

static int hmac_hex(const struct smac_key *k, const unsigned char *in, size_t n,
                    char hex[SMAC_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (!HMAC(EVP_sha256(), k->b, (int)k->n, in, n, md, &mdlen) || mdlen != 32)
        return -1;
    to_hex(md, mdlen, hex);
    return 0;
}

bool smac_hex_same(const char *a, const char *b)
{
    return a && b && strlen(a) == strlen(b) && CRYPTO_memcmp(a, b, strlen(a)) == 0;
}

int smac_row(const struct smac_key *k, const char *tbl, const char *chain, const char *prev,
             sqlite3_value **vals, int n, char hex[SMAC_HEX])
{
    struct enc e = {NULL, 0, 0, false};
    put(&e, 'T', "v1", 2);
    put(&e, 'T', tbl, strlen(tbl));
    put(&e, 'T', chain, strlen(chain));
    put(&e, 'T', prev, strlen(prev));
    for (int i = 0; i < n; i++)
        put_value(&e, vals[i]);
    int rc = e.oom ? -1 : hmac_hex(k, e.p, e.n, hex);
    free(e.p);
    return rc;
}

void smac_key_id(const struct smac_key *k, char hex[SMAC_HEX])
{
    static const char label[] = "stepctl store key id v1";
    if (hmac_hex(k, (const unsigned char *)label, sizeof label - 1, hex) != 0)
        hex[0] = '\0';
}

/* stepctl_mac(tbl, chain, col..., prev): the MAC of a row as its trigger
 * writes it (smac_tables.c). */
static void mac_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const struct smac_key *k = sqlite3_user_data(ctx);
    if (!k) {
        sqlite3_result_error(ctx, "control.db is keyed (docs/security.md#tamper-evidence): "
                                  "--store-key-file is needed to write it", -1);
        return;
    }
    if (argc < 3) {
        sqlite3_result_error(ctx, "stepctl_mac(tbl, chain, col..., prev)", -1);
        return;
    }
    const char *tbl = (const char *)sqlite3_value_text(argv[0]);
    const char *chain = (const char *)sqlite3_value_text(argv[1]);
    const char *prev = (const char *)sqlite3_value_text(argv[argc - 1]);
    char hex[SMAC_HEX];
    if (smac_row(k, tbl ? tbl : "", chain ? chain : "", prev ? prev : "", argv + 2, argc - 3,
                 hex) != 0) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, hex, -1, SQLITE_TRANSIENT);
}

static void free_key(void *p)
{
    if (p) {
        smac_key_wipe(p);
        free(p);
    }
}

int smac_attach(sqlite3 *db, const struct smac_key *k)
{
    struct smac_key *copy = NULL;
    if (k) {
        if (!(copy = malloc(sizeof *copy)))
            return SQLITE_NOMEM;
        memcpy(copy, k, sizeof *copy);
    }
    /* Not deterministic and not innocuous: SQLite then refuses it in CHECK
     * constraints, generated columns and indexes a hand-made schema could
     * use to make stepctl MAC rows of its choosing (smac_keyed.c checks
     * triggers and defaults). */
    return sqlite3_create_function_v2(db, "stepctl_mac", -1, SQLITE_UTF8, copy, mac_fn, NULL,
                                      NULL, free_key);
}
