/* portfile.c - the port file of the test servers (see portfile.h). */
#include "portfile.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int portfile_write(const char *path, unsigned port)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int ok = fprintf(f, "%u\n", port) > 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
