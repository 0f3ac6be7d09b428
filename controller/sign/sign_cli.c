/* sign_cli.c - `stepctl sign-url` and `stepctl sign-cookies`: one CloudFront
 * signature (cfsign.h) printed as a signed URL or as the signed cookies.
 *
 * Exit codes (docs/cli.md, docs/delivery.md): 0 printed, 64 usage (an option
 * missing or invalid, named in the message), 65 the key file holds no usable
 * key or group or others can access it, 66 the key file cannot be opened or
 * is not a regular file, 70 internal (OpenSSL failed).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cfsign.h"
#include "stepctl.h"

enum { SIGN_OK = 0, SIGN_USAGE = 64, SIGN_BADKEY = 65, SIGN_NOKEY = 66, SIGN_INTERNAL = 70 };

struct sign_args {
    const char *key, *key_pair_id, *url, *expires, *expires_in, *not_before, *ip, *hash, *resource;
    bool canned, help;
};

static const char sign_help[] =
    "usage: stepctl %s --key KEY.pem --key-pair-id ID --url URL (--expires EPOCH | --expires-in S)\n"
    "         [--not-before EPOCH] [--ip CIDR] [--hash sha1|sha256] [--resource PATTERN]\n"
    "         [--canned]\n"
    "\n"
    "%s"
    "\n"
    "The policy is CloudFront's custom policy, whitespace-free JSON with Resource,\n"
    "DateLessThan and, when asked, DateGreaterThan and IpAddress; it is signed with\n"
    "RSA PKCS#1 v1.5 or ECDSA P-256 over SHA-1 (default) or SHA-256, and sent in\n"
    "CloudFront's URL-safe base64.  See docs/delivery.md.\n"
    "\n"
    "  --key F           PEM private key (RSA 2048 or ECDSA P-256; not encrypted), a regular\n"
    "                    file that group and others cannot access (chmod 600)\n"
    "  --key-pair-id ID  the CloudFront public key id (A-Z a-z 0-9 _ -)\n"
    "  --url URL         absolute http(s) URL, query allowed, no fragment, no signing parameters\n"
    "  --expires EPOCH   DateLessThan, UTC epoch seconds\n"
    "  --expires-in S    DateLessThan S seconds from now (for a program that signs on demand,\n"
    "                    e.g. the canary's candidate_command)\n"
    "  --not-before E    DateGreaterThan, UTC epoch seconds\n"
    "  --ip CIDR         IpAddress: only viewers from this range (192.0.2.0/24, 2001:db8::/32)\n"
    "  --hash H          sha1 (default) or sha256 (adds Hash-Algorithm=SHA256)\n"
    "  --resource P      policy Resource instead of the URL itself; '*' and '?' are\n"
    "                    wildcards (https://d111.cloudfront.net/ch1/r360/*)\n"
    "  --canned          a canned policy (Expires=EPOCH); not with --not-before, --ip, --resource\n"
    "\n"
    "exit: 0 printed, 64 usage, 65 the key is not usable (or group or others can access it),\n"
    "      66 the key file cannot be opened or is not a regular file, 70 internal\n";

static const char url_what[] =
    "Prints URL with Policy, Signature and Key-Pair-Id (and Hash-Algorithm for\n"
    "sha256) appended after any query it already has.  The policy's Resource is\n"
    "URL exactly, query included, unless --resource is given.\n";
static const char cookies_what[] =
    "Prints the signed cookies, one NAME=VALUE per line: CloudFront-Policy,\n"
    "CloudFront-Signature, CloudFront-Key-Pair-Id (and CloudFront-Hash-Algorithm\n"
    "for sha256; CloudFront-Expires instead of CloudFront-Policy with --canned).\n"
    "--url is the policy's Resource unless --resource is given.\n";

/* "stepctl CMD: WHAT: MSG (see --help)", exit 64. */
static int usage_error(const char *cmd, const char *what, const char *msg)
{
    fprintf(stderr, "stepctl %s: %s: %s (see --help)\n", cmd, what, msg);
    return SIGN_USAGE;
}

static int parse_args(int argc, char **argv, struct sign_args *a)
{
    static const char *names[] = {"--key",    "--key-pair-id", "--url",  "--expires", "--expires-in",
                                  "--not-before", "--ip",      "--hash", "--resource"};
    const char **dsts[] = {&a->key, &a->key_pair_id, &a->url,  &a->expires, &a->expires_in,
                           &a->not_before, &a->ip, &a->hash, &a->resource};
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a->help = true;
            continue;
        }
        if (!strcmp(o, "--canned")) {
            a->canned = true;
            continue;
        }
        size_t k = 0;
        while (k < sizeof names / sizeof names[0] && strcmp(o, names[k]))
            k++;
        if (k == sizeof names / sizeof names[0])
            return fprintf(stderr, "stepctl %s: unexpected argument '%s' (see --help)\n",
                           argv[0], o),
                   SIGN_USAGE;
        if (i + 1 >= argc)
            return usage_error(argv[0], o, "needs a value");
        if (*dsts[k])
            return usage_error(argv[0], o, "given twice");
        *dsts[k] = argv[++i];
    }
    return SIGN_OK;
}

/* Strict decimal epoch seconds in 1..CFSIGN_EPOCH_MAX; 0 when invalid. */
static int64_t parse_epoch(const char *s)
{
    int64_t v = 0;
    if (!s || !*s || strlen(s) > 12)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (*s - '0');
    }
    return v <= CFSIGN_EPOCH_MAX ? v : 0;
}

/* Checks every value; fills the policy.  0 or 64 after naming the option. */
static int check_args(const char *cmd, const struct sign_args *a, struct cfsign_policy *p,
                      enum cfsign_hash *h)
{
    static const struct {
        const char *name;
        size_t off;
    } required[] = {{"--key", offsetof(struct sign_args, key)},
                    {"--key-pair-id", offsetof(struct sign_args, key_pair_id)},
                    {"--url", offsetof(struct sign_args, url)}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!*(const char *const *)((const char *)a + required[i].off))
            return usage_error(cmd, required[i].name, "is required");
    if (!a->expires == !a->expires_in)
        return usage_error(cmd, "--expires", a->expires ? "not with --expires-in" : "is required (or --expires-in)");
    if (!cfsign_key_pair_id_ok(a->key_pair_id))
        return usage_error(cmd, "--key-pair-id", "1 to 128 of A-Z a-z 0-9 _ - expected");
    const char *why = cfsign_url_problem(a->url);
    if (why)
        return usage_error(cmd, "--url", why);
    int64_t in = a->expires_in ? parse_epoch(a->expires_in) : 0, now = (int64_t)time(NULL);
    if (a->expires_in && (!in || in > CFSIGN_EPOCH_MAX - now))
        return usage_error(cmd, "--expires-in", "seconds expected (1 or more)");
    *p = (struct cfsign_policy){a->resource ? a->resource : a->url, a->expires ? parse_epoch(a->expires) : now + in,
                                0, a->ip};
    if (!p->date_less_than)
        return usage_error(cmd, "--expires", "epoch seconds expected");
    if (a->not_before && !(p->date_greater_than = parse_epoch(a->not_before)))
        return usage_error(cmd, "--not-before", "epoch seconds expected");
    if (a->canned && (a->not_before || a->ip || a->resource))
        return usage_error(cmd, "--canned", "cannot be combined with --not-before, --ip or --resource");
    if (!a->hash || !strcasecmp(a->hash, "sha1"))
        *h = CFSIGN_SHA1;
    else if (!strcasecmp(a->hash, "sha256"))
        *h = CFSIGN_SHA256;
    else
        return usage_error(cmd, "--hash", "sha1 or sha256 expected");
    char err[256];
    if (!cfsign_policy_check(p, err, sizeof err))
        return usage_error(cmd, "policy", err);
    return SIGN_OK;
}

/* Prints the URL or the cookies; false when they do not fit (never half). */
static bool print_result(bool cookies, const char *url, const struct cfsign_values *v)
{
    if (cookies) {
        struct cfsign_cookie c[4];
        size_t n = cfsign_cookies(v, c);
        for (size_t i = 0; i < n; i++)
            printf("%s=%s\n", c[i].name, c[i].value);
        return true;
    }
    static char query[CFSIGN_POLICY_B64_MAX + CFSIGN_SIG_B64_MAX + 256];
    static char out[CFSIGN_RESOURCE_MAX + sizeof query + 2];
    /* Both fit by construction (the URL is at most CFSIGN_RESOURCE_MAX). */
    if (!cfsign_query(v, query, sizeof query) || !cfsign_append_query(url, query, out, sizeof out))
        return false;
    printf("%s\n", out);
    return true;
}

static int sign_main(int argc, char **argv, bool cookies)
{
    struct sign_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    if (a.help) {
        printf(sign_help, argv[0], cookies ? cookies_what : url_what);
        return SIGN_OK;
    }
    struct cfsign_policy p;
    enum cfsign_hash h = CFSIGN_SHA1;
    if ((rc = check_args(argv[0], &a, &p, &h)))
        return rc;
    char err[512];
    bool unopenable = false;
    struct cfsign_key *k = cfsign_key_load(a.key, &unopenable, err, sizeof err);
    if (!k) {
        fprintf(stderr, "stepctl %s: --key %s\n", argv[0], err);
        return unopenable ? SIGN_NOKEY : SIGN_BADKEY;
    }
    if (!cfsign_key_cloudfront_ok(k))
        fprintf(stderr, "stepctl %s: warning: %s key: CloudFront accepts only RSA 2048 and "
                        "ECDSA P-256 public keys\n",
                argv[0], cfsign_key_describe(k));
    if (p.date_less_than <= (int64_t)time(NULL))
        fprintf(stderr, "stepctl %s: warning: --expires is not in the future: already expired\n",
                argv[0]);
    static struct cfsign_values v; /* large (policy buffer): not on the stack */
    bool ok = cfsign_make(k, a.key_pair_id, h, &p, a.canned, &v, err, sizeof err);
    cfsign_key_free(k);
    if (!ok) {
        fprintf(stderr, "stepctl %s: %s\n", argv[0], err);
        return SIGN_INTERNAL;
    }
    if (!print_result(cookies, a.url, &v)) {
        fprintf(stderr, "stepctl %s: the signed URL does not fit\n", argv[0]);
        return SIGN_INTERNAL;
    }
    return fflush(stdout) == 0 ? SIGN_OK : SIGN_INTERNAL;
}

int stepctl_cmd_sign_url(int argc, char **argv)
{
    return sign_main(argc, argv, false);
}

int stepctl_cmd_sign_cookies(int argc, char **argv)
{
    return sign_main(argc, argv, true);
}
