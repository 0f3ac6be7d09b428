/* cmcd.c - the CMCD v2 record parser (see cmcd.h). */
#include "cmcd.h"

#include <stdlib.h>
#include <string.h>

/* One value's span and kind, found by the scanner. */
enum cmcd_kind { K_NONE, K_BOOL, K_INT, K_DEC, K_STR, K_TOKEN, K_LIST };

struct cmcd_value {
    enum cmcd_kind kind;
    const char *p; /* the value's text (a string: between the quotes) */
    size_t len;
    int64_t i; /* K_INT */
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' || c == '-' || c == '.' || c == '*';
}

static bool token_char(char c)
{
    return is_alpha(c) || is_digit(c) || (c && strchr(":/!#$%&'*+.^_`|~-", c));
}

/* An integer of at most 15 digits (the structured-field limit), else invalid. */
static bool scan_number(const char *p, size_t len, struct cmcd_value *v)
{
    size_t k = 0, digits = 0, frac = 0;
    bool neg = k < len && p[k] == '-', dot = false;
    int64_t n = 0;
    for (k = neg; k < len; k++) {
        if (is_digit(p[k]) && !dot && digits < 15) {
            n = n * 10 + (p[k] - '0');
            digits++;
        } else if (is_digit(p[k]) && dot && frac < 3) {
            frac++;
        } else if (p[k] == '.' && !dot && digits && digits <= 12) {
            dot = true;
        } else {
            return false;
        }
    }
    if (!digits || (dot && !frac))
        return false;
    v->kind = dot ? K_DEC : K_INT;
    v->i = neg ? -n : n;
    return true;
}

/* A "string": printable ASCII, \" and \\ the only escapes. */
static bool scan_string(const char *p, size_t len)
{
    if (len < 2 || p[0] != '"' || p[len - 1] != '"')
        return false;
    for (size_t k = 1; k + 1 < len; k++) {
        unsigned char c = (unsigned char)p[k];
        if (c < 0x20 || c > 0x7e)
            return false;
        if (c == '\\' && (k + 2 >= len || (p[k + 1] != '"' && p[k + 1] != '\\')))
            return false;
        if (c == '\\')
            k++;
        else if (c == '"')
            return false;
    }
    return true;
}

static bool scan_token(const char *p, size_t len)
{
    if (!len || !(is_alpha(p[0]) || p[0] == '*'))
        return false;
    for (size_t k = 1; k < len; k++)
        if (!token_char(p[k]))
            return false;
    return true;
}

/* An inner list "(item item)": each item a number, string or token. */
static bool scan_list(const char *p, size_t len)
{
    if (len < 2 || p[0] != '(' || p[len - 1] != ')')
        return false;
    size_t k = 1;
    while (k + 1 < len) {
        if (p[k] == ' ') {
            k++;
            continue;
        }
        size_t e = k;
        bool quoted = p[k] == '"';
        for (e = k + 1; e + 1 < len && (quoted ? p[e] != '"' || p[e - 1] == '\\' : p[e] != ' ');
             e++)
            ;
        if (quoted)
            e++;
        struct cmcd_value item;
        if (!(scan_number(p + k, e - k, &item) || scan_string(p + k, e - k) ||
              scan_token(p + k, e - k)))
            return false;
        k = e;
    }
    return true;
}

static bool scan_value(const char *p, size_t len, struct cmcd_value *v)
{
    v->p = p;
    v->len = len;
    if (len == 2 && p[0] == '?' && (p[1] == '0' || p[1] == '1')) {
        v->kind = K_BOOL;
        return true;
    }
    if (len && (is_digit(p[0]) || p[0] == '-'))
        return scan_number(p, len, v);
    if (len && p[0] == '"') {
        v->kind = K_STR;
        v->p = p + 1;
        v->len = len - 2;
        return scan_string(p, len);
    }
    if (len && p[0] == '(') {
        v->kind = K_LIST;
        return scan_list(p, len);
    }
    v->kind = K_TOKEN;
    return scan_token(p, len);
}

/* Copies a string value (escapes resolved) into dst of cap bytes; false when
 * it does not fit, dst then untouched: a value that is ignored must leave no
 * part of itself behind (the fuzzer found a cut `cen` kept while its pair
 * was counted invalid and left out of the stored text). */
static bool copy_string(const struct cmcd_value *v, char *dst, size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < v->len; k++, n++)
        if (v->p[k] == '\\')
            k++;
    if (n + 1 > cap)
        return false;
    n = 0;
    for (size_t k = 0; k < v->len; k++) {
        if (v->p[k] == '\\')
            k++;
        dst[n++] = v->p[k];
    }
    dst[n] = '\0';
    return true;
}

static bool copy_token(const struct cmcd_value *v, char *dst, size_t cap)
{
    if (v->kind != K_TOKEN || v->len >= cap)
        return false;
    memcpy(dst, v->p, v->len);
    dst[v->len] = '\0';
    return true;
}

static bool set_int(const struct cmcd_value *v, bool nonneg, bool *has, int64_t *dst)
{
    if (v->kind != K_INT || (nonneg && v->i < 0))
        return false;
    *has = true;
    *dst = v->i;
    return true;
}

/* Applies one well-formed pair to the record; false: the value is invalid
 * for its key (ignored and counted).  Unknown keys are accepted and ignored. */
static bool apply(struct cmcd_record *r, const char *key, size_t klen, const struct cmcd_value *v)
{
#define KEY(k) (klen == sizeof k - 1 && !memcmp(key, k, klen))
    if (KEY("v"))
        return set_int(v, true, &r->has_v, &r->v);
    if (KEY("sn"))
        return set_int(v, true, &r->has_sn, &r->sn);
    if (KEY("ts"))
        return set_int(v, true, &r->has_ts, &r->ts);
    if (KEY("rc"))
        return set_int(v, true, &r->has_rc, &r->rc);
    if (KEY("ttfb"))
        return set_int(v, true, &r->has_ttfb, &r->ttfb);
    if (KEY("ttlb"))
        return set_int(v, true, &r->has_ttlb, &r->ttlb);
    if (KEY("com.exactav-rvfc-ms"))
        return set_int(v, true, &r->has_rvfc, &r->rvfc_ms);
    if (KEY("e"))
        return copy_token(v, r->e, sizeof r->e);
    if (KEY("sta"))
        return copy_token(v, r->sta, sizeof r->sta);
    if (KEY("cen"))
        return v->kind == K_STR ? copy_string(v, r->cen, sizeof r->cen)
                                : copy_token(v, r->cen, sizeof r->cen);
    if (KEY("sid"))
        return v->kind == K_STR && v->len <= 64 && copy_string(v, r->sid, sizeof r->sid);
    if (KEY("url"))
        return v->kind == K_STR && copy_string(v, r->url, sizeof r->url);
#undef KEY
    return true;
}

static void keep_text(struct cmcd_record *r, const char *p, size_t len)
{
    if (r->text_len + len + 1 > CMCD_MAX_TEXT) {
        r->invalid++; /* beyond the stored size: ignored, counted */
        return;
    }
    if (r->text_len)
        r->text[r->text_len++] = ',';
    memcpy(r->text + r->text_len, p, len);
    r->text_len += len;
    r->text[r->text_len] = '\0';
}

/* One pair "key[=value]": true when well formed (then kept and applied). */
static bool pair(struct cmcd_record *r, const char *p, size_t len)
{
    size_t k = 0;
    while (k < len && key_char(p[k]))
        k++;
    if (k == 0 || k > 64 || !(p[0] >= 'a' && p[0] <= 'z') || (k < len && p[k] != '='))
        return false;
    struct cmcd_value v = {K_BOOL, p + k, 0, 1};
    if (k < len && !scan_value(p + k + 1, len - k - 1, &v))
        return false;
    if (!apply(r, p, k, &v))
        return false;
    keep_text(r, p, len);
    return true;
}

/* The end of the pair starting at p: the next ',' outside quotes and parens. */
static size_t pair_end(const char *p, size_t len)
{
    bool quoted = false;
    int depth = 0;
    for (size_t k = 0; k < len; k++) {
        if (quoted && p[k] == '\\')
            k++;
        else if (p[k] == '"')
            quoted = !quoted;
        else if (!quoted && p[k] == '(')
            depth++;
        else if (!quoted && p[k] == ')')
            depth--;
        else if (!quoted && depth <= 0 && p[k] == ',')
            return k;
    }
    return len;
}

unsigned cmcd_parse_record(const char *p, size_t len, struct cmcd_record *r)
{
    memset(r, 0, sizeof *r);
    unsigned pairs = 0;
    for (size_t k = 0; k < len;) {
        while (k < len && p[k] == ' ')
            k++;
        size_t n = pair_end(p + k, len - k);
        if (n && pair(r, p + k, n))
            pairs++;
        else
            r->invalid++;
        k += n + 1;
    }
    return pairs;
}

/* The slot of the next kept record: NULL when the batch is full or out of
 * memory (the record is then read into spill and refused). */
static struct cmcd_record *next_slot(struct cmcd_batch *out)
{
    if (out->n == CMCD_MAX_RECORDS)
        return NULL;
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 1;
        cap = cap > CMCD_MAX_RECORDS ? CMCD_MAX_RECORDS : cap;
        struct cmcd_record *r = realloc(out->r, cap * sizeof *r);
        if (!r) {
            out->oom = true;
            return NULL;
        }
        out->r = r;
        out->cap = cap;
    }
    return &out->r[out->n];
}

static void record(const char *p, size_t len, struct cmcd_batch *out)
{
    while (len && (p[len - 1] == '\r' || p[len - 1] == ' '))
        len--;
    if (!len)
        return;
    struct cmcd_record *slot = next_slot(out), *r = slot ? slot : &out->spill;
    unsigned pairs = cmcd_parse_record(p, len, r);
    out->invalid += r->invalid;
    if (!pairs)
        out->not_cmcd++;
    else if ((r->has_v && r->v > 2) || !slot)
        out->refused++;
    else
        out->n++;
}

void cmcd_parse_body(const char *body, size_t len, struct cmcd_batch *out)
{
    size_t start = 0;
    for (size_t k = 0; k <= len; k++)
        if (k == len || body[k] == '\n') {
            record(body + start, k - start, out);
            start = k + 1;
        }
}

void cmcd_parse_query(const char *value, size_t len, struct cmcd_batch *out)
{
    for (size_t k = 0; k < len; k++)
        if (value[k] == '\n' || value[k] == '\r') /* one record only: a newline is invalid */
            len = k;
    record(value, len, out);
}

void cmcd_batch_free(struct cmcd_batch *b)
{
    free(b->r);
    memset(b, 0, sizeof *b);
}
