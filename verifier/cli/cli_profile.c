/* cli_profile.c - `exactav profile`: the runtime description and fingerprint. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "exitcodes.h"
#include "profile.h"

static const char USAGE[] =
    "usage: exactav profile [--profile FILE] [--json] [--pin-runtime OUT.json]\n"
    "\n"
    "Prints the DecodeProfile in use, this machine's runtime description (FFmpeg\n"
    "library versions, build configuration digest, CPU architecture and feature\n"
    "flags), whether the runtime matches the profile's pins, and the fingerprint\n"
    "that goes into every report.\n"
    "  --pin-runtime OUT.json  write a new profile version pinned to this runtime\n"
    "                          (the documented way to support another runtime; see\n"
    "                          docs/profiles.md)\n"
    "\n"
    "Exit: 0 the runtime matches, 65 it does not (or the profile is invalid), 64 usage,\n"
    "66 a file cannot be opened or written.\n";

int exactav_cmd_profile(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"profile", required_argument, NULL, 'p'}, {"json", no_argument, NULL, 'j'},
        {"pin-runtime", required_argument, NULL, 'w'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    const char *path = NULL, *pin = NULL;
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': path = optarg; break;
        case 'j': json = true; break;
        case 'w': pin = optarg; break;
        case 'h': fputs(USAGE, stdout); return 0;
        default: fputs(USAGE, stderr); return EXACTAV_EXIT_USAGE;
        }
    }
    struct profile p;
    int rc = cli_load_profile(path, &p, "profile");
    if (rc)
        return rc;
    json_t *rt = profile_runtime_description();
    char diff[512], fp[65];
    bool matches = profile_check_runtime(&p, rt, diff, sizeof diff) == 0;
    profile_fingerprint(&p, rt, fp);
    rc = matches ? 0 : EXACTAV_EXIT_UNUSABLE;
    if (pin) {
        json_t *pinned = profile_pin_to_runtime(&p, rt);
        if (json_dump_file(pinned, pin, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
            rc = cli_fail(EXACTAV_EXIT_NOINPUT, "profile", "cannot write %s", pin);
        else
            fprintf(stderr, "exactav profile: wrote %s (%s version %lld)\n", pin, p.id, p.version + 1);
        json_decref(pinned);
    }
    if (json) {
        json_t *out = json_pack("{s:s, s:I, s:s, s:O, s:b, s:s, s:s}", "id", p.id, "version", (json_int_t)p.version,
                                "source", p.source, "runtime", rt, "runtime_matches", matches,
                                "differences", matches ? "" : diff, "fingerprint", fp);
        json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        putchar('\n');
        json_decref(out);
    } else {
        char *rtext = json_dumps(rt, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("profile:     %s version %lld (%s)\nruntime:     %s\nmatches:     %s%s%s\nfingerprint: %s\n",
               p.id, p.version, p.source, rtext ? rtext : "?", matches ? "yes" : "NO (", matches ? "" : diff,
               matches ? "" : ")", fp);
        free(rtext);
    }
    json_decref(rt);
    profile_free(&p);
    return rc;
}
