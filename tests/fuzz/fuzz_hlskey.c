/* libFuzzer target for verifier/delivery/hlskey.h: the first 32 bytes are a
 * key and an IV, the rest a segment body as a CDN could send it.  Decrypting
 * never crashes and never grows the body; a body it accepts, encrypted
 * again with the same key and IV, is the input exactly (PKCS7 is checked,
 * not guessed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "hlskey.h"

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            abort();                                                          \
        }                                                                     \
    } while (0)

static void check_round_trip(const uint8_t *key, const uint8_t *iv, const uint8_t *plain, size_t n,
                             const uint8_t *cipher, size_t cn)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t *out = malloc(n + 32);
    int a = 0, b = 0;
    CHECK(ctx && out && EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) == 1);
    CHECK(EVP_EncryptUpdate(ctx, out, &a, plain, (int)n) == 1 && EVP_EncryptFinal_ex(ctx, out + a, &b) == 1);
    CHECK((size_t)(a + b) == cn && memcmp(out, cipher, cn) == 0);
    free(out);
    EVP_CIPHER_CTX_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 32)
        return 0;
    const uint8_t *key = data, *iv = data + 16;
    size_t n = size - 32;
    uint8_t *body = malloc(n ? n : 1);
    CHECK(body);
    memcpy(body, data + 32, n);
    size_t len = n;
    char why[160] = "";
    const char *reason = hlskey_decrypt(body, &len, key, iv, why, sizeof why);
    if (reason) {
        CHECK(strcmp(reason, "decryption_failed") == 0 && why[0]);
    } else {
        CHECK(n % 16 == 0 && len < n && n - len <= 16);
        check_round_trip(key, iv, body, len, data + 32, n);
    }
    free(body);
    return 0;
}
