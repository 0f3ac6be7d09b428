/* jwt_key.c - the --client-auth key from its file (see jwt_key.h). */
#include "jwt_key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/pem.h>

#include "cliutil.h"

#define JWT_SECRET_MIN 32 /* RFC 7518 3.2: a key at least as long as the hash */
#define JWT_SECRET_MAX 1024

/* The whole regular file (O_NONBLOCK: a FIFO is refused, not waited on). */
static int slurp(const char *path, unsigned char *buf, size_t cap, size_t *len, mode_t *mode,
                 char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CLI_NOINPUT;
    }
    int rc = CLI_OK;
    ssize_t n = 0;
    if (!S_ISREG(st.st_mode) || st.st_size < 1 || (size_t)st.st_size > cap) {
        snprintf(err, errlen, "%s: a regular file of 1 to %zu bytes expected", path, cap);
        rc = CLI_DATA;
    } else if ((n = read(fd, buf, (size_t)st.st_size)) != st.st_size) {
        snprintf(err, errlen, "%s: short read", path);
        rc = CLI_NOINPUT;
    }
    close(fd);
    *len = rc == CLI_OK ? (size_t)n : 0;
    *mode = st.st_mode;
    return rc;
}

static int secret(const char *path, struct jwt_key *out, char *err, size_t errlen)
{
    unsigned char buf[JWT_SECRET_MAX];
    size_t len = 0;
    mode_t mode = 0;
    int rc = slurp(path, buf, sizeof buf, &len, &mode, err, errlen);
    if (rc != CLI_OK)
        return rc;
    if (mode & 077) { /* the secret signs tokens too: only its owner may read it */
        snprintf(err, errlen, "%s: the HS256 secret is accessible by group or others (mode %04o): "
                              "chmod 600 it", path, (unsigned)(mode & 07777));
        return CLI_DATA;
    }
    if (len < JWT_SECRET_MIN) {
        snprintf(err, errlen, "%s: an HS256 secret of at least %d bytes expected", path,
                 JWT_SECRET_MIN);
        return CLI_DATA;
    }
    out->secret = malloc(len);
    if (!out->secret)
        return CLI_SOFTWARE;
    memcpy(out->secret, buf, len);
    out->secret_len = len;
    return CLI_OK;
}

static int public_key(const char *path, struct jwt_key *out, char *err, size_t errlen)
{
    unsigned char buf[8192];
    size_t len = 0;
    mode_t mode = 0;
    int rc = slurp(path, buf, sizeof buf, &len, &mode, err, errlen);
    if (rc != CLI_OK)
        return rc;
    BIO *bio = BIO_new_mem_buf(buf, (int)len);
    EVP_PKEY *k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    char group[64] = "";
    size_t glen = 0;
    if (!k || !EVP_PKEY_is_a(k, "EC") ||
        EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                       &glen) != 1 ||
        strcmp(group, "prime256v1")) {
        snprintf(err, errlen, "%s: a PEM public key on P-256 expected (ES256)", path);
        EVP_PKEY_free(k);
        return CLI_DATA;
    }
    out->pub = k;
    return CLI_OK;
}

int jwt_key_load(enum jwt_alg alg, const char *path, struct jwt_key *out, char *err,
                 size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->alg = alg;
    int rc = alg == JWT_HS256 ? secret(path, out, err, errlen) : public_key(path, out, err, errlen);
    if (rc != CLI_OK)
        jwt_key_free(out);
    return rc;
}

void jwt_key_free(struct jwt_key *k)
{
    if (!k)
        return;
    if (k->secret)
        OPENSSL_cleanse(k->secret, k->secret_len);
    free(k->secret);
    EVP_PKEY_free(k->pub);
    k->secret = NULL;
    k->pub = NULL;
    k->secret_len = 0;
}
