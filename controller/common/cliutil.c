/* cliutil.c - shared command-line helpers (see cliutil.h). */
#include "cliutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evidence_text.h"
#include "store_key.h"

int cli_store_exit(bool file_problem)
{
    return file_problem ? CLI_NOINPUT : CLI_SOFTWARE;
}

int64_t cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

FILE *cli_open_regular(const char *path, unsigned *mode, char *why, size_t n)
{
    return store_open_regular(path, mode, why, n); /* one implementation (store_key.h) */
}

int cli_slurp(const char *path, size_t max, char **buf, size_t *len)
{
    char why[128];
    FILE *f = cli_open_regular(path, NULL, why, sizeof why);
    if (!f) {
        fprintf(stderr, "stepctl: cannot open %s: %s\n", path, why);
        return CLI_NOINPUT;
    }
    char *b = malloc(max + 1);
    size_t n = b ? fread(b, 1, max + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!b || err) {
        free(b);
        fprintf(stderr, "stepctl: cannot read %s\n", path);
        return b ? CLI_NOINPUT : CLI_SOFTWARE;
    }
    if (n > max) {
        free(b);
        fprintf(stderr, "stepctl: %s is larger than %zu bytes\n", path, max);
        return CLI_DATA;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return CLI_OK;
}

static const struct cli_opt *find(const struct cli_opt *opts, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(opts[i].name, name))
            return &opts[i];
    return NULL;
}

int cli_parse(int argc, char **argv, const struct cli_opt *opts, size_t n_opts, bool *help,
              const char **pos, size_t max_pos, size_t *n_pos)
{
    *help = false;
    *n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct cli_opt *o = find(opts, n_opts, a);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *help = true;
        } else if (o && o->flag) {
            *o->flag = true;
        } else if (o) {
            if (i + 1 >= argc) {
                fprintf(stderr, "stepctl %s: %s needs a value\n", argv[0], a);
                return CLI_USAGE;
            }
            *o->value = argv[++i];
        } else if (a[0] != '-' && *n_pos < max_pos) {
            pos[(*n_pos)++] = a;
        } else {
            fprintf(stderr, "stepctl %s: unexpected argument '%s' (see --help)\n", argv[0], a);
            return CLI_USAGE;
        }
    }
    return CLI_OK;
}

size_t cli_values(int argc, char **argv, const struct cli_opt *opts, size_t n_opts,
                  const char *name, const char **out, size_t max)
{
    size_t n = 0;
    for (int i = 1; i + 1 < argc; i++) {
        const struct cli_opt *o = find(opts, n_opts, argv[i]);
        if (!o || o->flag)
            continue;
        if (!strcmp(o->name, name) && n++ < max) /* walked as cli_parse does: a value is skipped */
            out[n - 1] = argv[i + 1];
        i++;
    }
    return n;
}

int cli_int(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
            int64_t *out)
{
    if (!s)
        return CLI_OK;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        fprintf(stderr, "stepctl %s: %s must be an integer in [%" PRId64 ", %" PRId64 "]\n", cmd,
                opt, min, max);
        return CLI_USAGE;
    }
    *out = v;
    return CLI_OK;
}

int cli_actor(const char *cmd, const char *given, size_t max_len, const char **out)
{
    const char *u = getenv("USER");
    *out = given ? given : u && u[0] ? u : "unknown";
    size_t n = strlen(*out);
    if (n && n <= max_len)
        return CLI_OK;
    fprintf(stderr, "stepctl %s: --actor must be 1 to %zu bytes (got %zu)\n", cmd, max_len, n);
    return CLI_USAGE;
}
