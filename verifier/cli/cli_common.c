/* cli_common.c - helpers shared by exactav's subcommands. */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

#include "evidence_text.h"
#include "exitcodes.h"
#include "profile.h"

/* The first failure message of this process.  One process runs one command
 * and fails once; main() repeats the message in the JSON error object
 * (--json).  This is the only state kept outside a command's own data. */
static char first_error[1024];

int cli_fail(int code, const char *cmd, const char *fmt, ...)
{
    char raw[4096], shown[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* Messages quote paths, URLs and playlist text: never raw control bytes. */
    evidence_text_escape(raw, true, shown, sizeof shown);
    fprintf(stderr, "exactav %s: %s\n", cmd, shown);
    if (!first_error[0]) {
        size_t k = strnlen(raw, sizeof first_error - 1);
        memcpy(first_error, raw, k);
        first_error[k] = '\0';
    }
    return code;
}

const char *cli_first_error(void)
{
    return first_error[0] ? first_error : NULL;
}

int cli_load_profile(const char *path, struct profile *p, const char *cmd)
{
    char err[512];
    if (profile_load(path, p, err, sizeof err) == 0)
        return 0;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (path && !f)
        return cli_fail(EXACTAV_EXIT_NOINPUT, cmd, "cannot open profile %s", path);
    if (f)
        fclose(f);
    return cli_fail(EXACTAV_EXIT_UNUSABLE, cmd, "%s", err);
}
