/* exactav_main.c - entry point of exactav: dispatches to one subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_evidence.h"
#include "exitcodes.h"
#include "fetch.h"

struct exactav_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct exactav_command commands[] = {
    {"verify", exactav_cmd_verify, "compare a candidate with the reference (Exact-AV v1)"},
    {"bind", exactav_cmd_bind, "write a reference binding"},
    {"profile", exactav_cmd_profile, "print the runtime description and profile fingerprint"},
    {"evidence", exactav_cmd_evidence, "list, show, import evidence (SQLite)"},
    {"canary", exactav_cmd_canary, "check live renditions at every segment; --once: a pre-flight session"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: exactav COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'exactav COMMAND --help' for a command's options.  Exit codes: docs/cli.md.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXACTAV_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("exactav %s\n", EXACTAV_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name))
            continue;
        /* libcurl's global state is set up once, before any thread exists. */
        if (fetch_global_init()) {
            fprintf(stderr, "exactav: cannot initialise libcurl\n");
            return EXACTAV_EXIT_INTERNAL;
        }
        int rc = commands[i].run(argc - 1, argv + 1);
        fetch_global_cleanup();
        return rc;
    }
    fprintf(stderr, "exactav: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXACTAV_EXIT_USAGE;
}
