/* hlskey.c - AES-128 segments: IV, key fetch, decryption (hlskey.h). */
#include "hlskey.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

void hlskey_iv(const struct hls_segment *s, uint8_t iv[16])
{
    if (s->key.has_iv) {
        memcpy(iv, s->key.iv, 16);
        return;
    }
    memset(iv, 0, 16);
    for (int i = 0; i < 8; i++)
        iv[15 - i] = (uint8_t)(s->media_sequence >> (8 * i));
}

const char *hlskey_decrypt(uint8_t *data, size_t *len, const uint8_t key[HLSKEY_LEN], const uint8_t iv[16],
                           char *why, size_t n)
{
    if (*len == 0 || *len % 16 || *len > INT32_MAX) {
        snprintf(why, n, "%zu bytes are not a whole number of AES blocks", *len);
        return "decryption_failed";
    }
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int out1 = 0, out2 = 0;
    /* in place: EVP allows out == in for a block cipher in CBC mode */
    bool ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) == 1 &&
              EVP_DecryptUpdate(ctx, data, &out1, data, (int)*len) == 1 &&
              EVP_DecryptFinal_ex(ctx, data + out1, &out2) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        snprintf(why, n, "AES-128 CBC padding is not PKCS7 (a wrong key, or damaged bytes)");
        return "decryption_failed";
    }
    *len = (size_t)out1 + (size_t)out2;
    return NULL;
}

/* The record of a key fetch, with nothing that could lead to the key. */
static json_t *hidden_record(const struct fetch_result *res, int seq)
{
    json_t *o = fetch_result_to_json(res, seq);
    if (!o)
        return NULL;
    json_object_set_new(o, "url", json_string(HLSKEY_HIDDEN_URL));
    json_object_set_new(o, "effective_url", json_string(HLSKEY_HIDDEN_URL));
    json_object_set_new(o, "redirects", json_array());
    if (res->error != FETCH_OK)
        json_object_set_new(o, "error", json_string(fetch_error_code(res->error)));
    return o;
}

const char *hlskey_fetch(const struct fetch_options *fo, const char *url, int seq, uint8_t key[HLSKEY_LEN],
                         json_t **record, int64_t *started, int64_t *ended, char *why, size_t n)
{
    struct fetch_options o = *fo;
    o.max_bytes = HLSKEY_MAX_BYTES;
    o.accept_encoding = false;
    o.range = (struct fetch_range){0};
    struct fetch_result res;
    fetch_get(&o, url, &res);
    if (record)
        *record = hidden_record(&res, seq);
    *started = res.started_at_ms;
    *ended = res.ended_at_ms;
    const char *reason = NULL;
    if (res.error != FETCH_OK) {
        /* the message may quote the URL: only the code and status are said */
        if (res.http_status > 0)
            snprintf(why, n, "the key: %s (HTTP %ld)", fetch_error_code(res.error), res.http_status);
        else
            snprintf(why, n, "the key: %s", fetch_error_code(res.error));
        reason = "key_unavailable";
    } else if (res.size != HLSKEY_LEN) {
        snprintf(why, n, "the key is %zu bytes, not 16", res.size);
        reason = "key_invalid";
    } else {
        memcpy(key, res.data, HLSKEY_LEN);
    }
    if (res.data)
        OPENSSL_cleanse(res.data, res.size);
    fetch_result_free(&res);
    return reason;
}

const char *hlskey_read_file(const char *path, uint8_t key[HLSKEY_LEN], char *why, size_t n)
{
    /* O_NONBLOCK: a FIFO in its place must not hang the check */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, n, "the key file %s", fd < 0 ? "cannot be opened" : "is not a regular file");
        if (fd >= 0)
            close(fd);
        return "key_unavailable";
    }
    uint8_t buf[HLSKEY_LEN + 1];
    ssize_t got = read(fd, buf, sizeof buf);
    close(fd);
    const char *reason = NULL;
    if (got != HLSKEY_LEN) {
        snprintf(why, n, "the key file holds %s16 bytes", got < HLSKEY_LEN ? "fewer than " : "more than ");
        reason = "key_invalid";
    } else {
        memcpy(key, buf, HLSKEY_LEN);
    }
    OPENSSL_cleanse(buf, sizeof buf);
    return reason;
}
