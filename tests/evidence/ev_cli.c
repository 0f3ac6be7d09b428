/* ev_cli.c - see ev_cli.h. */
#define _GNU_SOURCE /* open_memstream */
#include "ev_cli.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "cli_evidence.h"

void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

struct run run_cmd(const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    struct run r = {0};
    size_t no = 0, ne = 0;
    FILE *out = open_memstream(&r.out, &no), *err = open_memstream(&r.err, &ne);
    assert_non_null(out);
    assert_non_null(err);
    r.rc = exactav_cmd_evidence_io(argc, argv, out, err);
    fclose(out);
    fclose(err);
    return r;
}
