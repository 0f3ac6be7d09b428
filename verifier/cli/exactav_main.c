/* exactav_main.c - entry point of exactav: dispatches to one subcommand. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_evidence.h"
#include "evidence_text.h"
#include "exitcodes.h"
#include "fetch.h"

struct exactav_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    bool own_json_errors; /* prints its own --json error object (cli_canary.c says why) */
};

static const struct exactav_command commands[] = {
    {"verify", exactav_cmd_verify, "compare a candidate with the reference (Exact-AV v1)", false},
    {"bind", exactav_cmd_bind, "write a reference binding", false},
    {"profile", exactav_cmd_profile, "print the runtime description and profile fingerprint", false},
    {"evidence", exactav_cmd_evidence, "list, show, import, prune evidence (SQLite)", false},
    {"canary", exactav_cmd_canary, "check live renditions at every segment; --once: a pre-flight session",
     true},
    {"report", exactav_cmd_report, "the evidence as one static HTML page (timelines, probes, pictures)", false},
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
    bool json = evidence_text_wants_json(argc, argv);
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
        /* --json: a failure that printed nothing prints the error object (docs/cli.md) */
        int rc = commands[i].own_json_errors
                     ? commands[i].run(argc - 1, argv + 1)
                     : evidence_text_run("exactav", commands[i].name, commands[i].run, argc - 1,
                                         argv + 1, cli_first_error);
        fetch_global_cleanup();
        return rc;
    }
    char shown[256];
    fprintf(stderr, "exactav: unknown command '%s'\n", evidence_text_escape(argv[1], false, shown, sizeof shown));
    usage(stderr);
    if (json)
        evidence_text_json_error(stdout, "exactav", NULL, EXACTAV_EXIT_USAGE, "unknown command");
    return EXACTAV_EXIT_USAGE;
}
