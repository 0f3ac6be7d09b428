/* cli_common.c - helpers shared by exactav's subcommands. */
#include "cli.h"

#include <stdarg.h>

#include "exitcodes.h"
#include "profile.h"

int cli_fail(int code, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "exactav %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
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
