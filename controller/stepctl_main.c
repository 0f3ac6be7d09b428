/* stepctl_main.c - entry point of stepctl: dispatches to one subcommand. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "evidence_text.h"
#include "stepctl.h"

struct stepctl_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct stepctl_command commands[] = {
    {"decide", stepctl_cmd_decide, "check conditions, prefer, record one step decision"},
    {"decisions", stepctl_cmd_decisions, "list or show recorded decisions"},
    {"replay", stepctl_cmd_replay, "recompute a recorded decision from its inputs"},
    {"explain", stepctl_cmd_explain, "explain a decision, a grant or a next decision in plain words"},
    {"grant", stepctl_cmd_grant, "authorize a proposed step: caps, validity, reservation"},
    {"revoke", stepctl_cmd_revoke, "end new issuance under a grant, with a reason"},
    {"grants", stepctl_cmd_grants, "list or show grants"},
    {"release", stepctl_cmd_release, "void a closed grant's pending reservation, with a reason"},
    {"verify-store", stepctl_cmd_verify_store, "check every row of control.db against the rules stepctl writes by"},
    {"serve", stepctl_cmd_serve, "the admission service (HTTP): allocations; with --paths, playback delivery"},
    {"next", stepctl_cmd_next, "review a grant's step: propose the next one or close issuance"},
    {"status", stepctl_cmd_status, "the operator's view: each cohort's decision, grant, evidence, next"},
    {"qoe", stepctl_cmd_qoe, "the QoE of a step from its viewers' CMCD session reports"},
    {"plan", stepctl_cmd_plan, "allocate live viewers to edge servers (LUA and baselines)"},
    {"sign-url", stepctl_cmd_sign_url, "sign a URL for CloudFront (custom or canned policy)"},
    {"sign-cookies", stepctl_cmd_sign_cookies, "print CloudFront signed cookies for a policy"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: stepctl COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'stepctl COMMAND --help' for a command's options.\n"
                 "Exit codes: see docs/cli.md (the controller's commands: docs/controller.md).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 64;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("stepctl %s\n", STEPCTL_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            /* --json: a failure that printed nothing prints the error object (docs/cli.md) */
            return evidence_text_run("stepctl", commands[i].name, commands[i].run, argc - 1, argv + 1, NULL);
    char shown[256];
    fprintf(stderr, "stepctl: unknown command '%s'\n", evidence_text_escape(argv[1], false, shown, sizeof shown));
    usage(stderr);
    if (evidence_text_wants_json(argc, argv))
        evidence_text_json_error(stdout, "stepctl", NULL, 64, "unknown command");
    return 64;
}
