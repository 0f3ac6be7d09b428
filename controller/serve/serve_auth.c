/* serve_auth.c - operator token, anonymous listening, CORS origins (see
 * serve_auth.h). */
#include "serve_auth.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "cliutil.h"
#include "evidence_text.h"
#include "serve.h"

#define MAX_TOKEN_FILE 4096

int sauth_load_token(const char *file, unsigned char sha256[32])
{
    char why[256], shown[1200], token[MAX_TOKEN_FILE + 2];
    unsigned mode = 0;
    evidence_text_escape(file, false, shown, sizeof shown);
    FILE *f = cli_open_regular(file, &mode, why, sizeof why);
    if (!f) {
        fprintf(stderr, "stepctl serve: --admin-token-file %s: %s\n", shown, why);
        return CLI_NOINPUT;
    }
    size_t n = fread(token, 1, sizeof token - 1, f);
    fclose(f);
    token[n] = '\0';
    if (mode & 077) { /* like a private key: the token is the operators' whole secret */
        fprintf(stderr, "stepctl serve: --admin-token-file %s: accessible by group or others "
                        "(mode %04o): chmod 600 it\n", shown, mode & 07777);
        OPENSSL_cleanse(token, sizeof token);
        return CLI_DATA;
    }
    while (n && (token[n - 1] == '\n' || token[n - 1] == '\r'))
        n--;
    bool ok = n >= SAUTH_MIN_TOKEN && n <= MAX_TOKEN_FILE && strlen(token) >= n &&
              !memchr(token, '\n', n);
    if (ok)
        SHA256((const unsigned char *)token, n, sha256);
    OPENSSL_cleanse(token, sizeof token);
    if (!ok) {
        fprintf(stderr, "stepctl serve: --admin-token-file %s: one line of at least %d bytes "
                        "(and at most %d) expected\n", shown, SAUTH_MIN_TOKEN, MAX_TOKEN_FILE);
        return CLI_DATA;
    }
    return CLI_OK;
}

/* Is the bearer token of an Authorization value the one hashed in want? */
static bool bearer_is(const unsigned char want[32], const char *authorization)
{
    if (!authorization || strncasecmp(authorization, "Bearer ", 7))
        return false;
    const char *t = authorization + 7;
    while (*t == ' ')
        t++;
    unsigned char got[32];
    SHA256((const unsigned char *)t, strlen(t), got);
    return CRYPTO_memcmp(got, want, 32) == 0;
}

bool sauth_operator_ok(const struct srv_config *c, const char *authorization)
{
    return c->admin_token_set && bearer_is(c->admin_token_sha256, authorization);
}

bool sauth_verification_ok(const struct srv_config *c, const char *authorization)
{
    return c->verification_token_set && bearer_is(c->verification_token_sha256, authorization);
}

bool sauth_is_loopback(const struct sockaddr_storage *addr)
{
    if (addr->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
    assert(addr->ss_family == AF_INET6);
    return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr);
}

bool srv_needs_anonymous_ok(const struct srv_config *c)
{
    return !c->client_auth && !sauth_is_loopback(&c->addr);
}

const char *sauth_cors_allow(const struct srv_config *c, const char *origin)
{
    if (c->n_cors == 1 && !strcmp(c->cors_origins[0], "*"))
        return "*";
    for (size_t i = 0; origin && i < c->n_cors; i++)
        if (!strcasecmp(c->cors_origins[i], origin)) /* scheme and host are case-blind */
            return c->cors_origins[i];
    return NULL;
}
