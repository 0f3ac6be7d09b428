/* cli_verify.c - `exactav verify`: one Exact-AV v1 check. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "avlog.h"
#include "binding.h"
#include "cli.h"
#include "exitcodes.h"
#include "profile.h"
#include "report.h"
#include "util.h"
#include "verify.h"

static const char USAGE[] =
    "usage: exactav verify --reference REF --candidate CAND [options]\n"
    "\n"
    "Decodes REF and CAND in separate single-threaded decoders under the pinned\n"
    "DecodeProfile and compares YUV420p8 pixels and f32le PCM exactly (Exact-AV v1).\n"
    "\n"
    "  --reference REF       MPEG-TS file, or a reference binding made by `exactav bind`\n"
    "  --candidate CAND      MPEG-TS file\n"
    "  --interval S:E        half-open interval in 90 kHz ticks on the reference\n"
    "                        timeline (33-bit, may wrap); default: the whole reference\n"
    "  --time-offset T       declared mapping: candidate_pts = (reference_pts + T) mod 2^33\n"
    "                        (default 0; never searched)\n"
    "  --profile FILE        DecodeProfile (default: the embedded exact-av-v1)\n"
    "  --json                print the report as one JSON object\n"
    "  --progress            progress on stderr (default when stderr is a terminal)\n"
    "  --no-progress         no progress\n"
    "  -v, --verbose         show FFmpeg's own messages\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit: 0 MATCH, 1 MISMATCH, 2 UNKNOWN, 64 usage, 65 reference or profile not usable,\n"
    "66 an input cannot be opened, 70 internal error.  See docs/cli.md.\n";

struct verify_opts {
    const char *reference, *candidate, *profile;
    bool have_interval, json, progress;
    int64_t start, end, offset;
    int verbose;
};

static int parse(int argc, char **argv, struct verify_opts *o)
{
    static const struct option longopts[] = {
        {"reference", required_argument, NULL, 'r'}, {"candidate", required_argument, NULL, 'c'},
        {"interval", required_argument, NULL, 'i'}, {"time-offset", required_argument, NULL, 't'},
        {"profile", required_argument, NULL, 'p'}, {"json", no_argument, NULL, 'j'},
        {"progress", no_argument, NULL, 'P'}, {"no-progress", no_argument, NULL, 'N'},
        {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    o->progress = isatty(STDERR_FILENO);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': o->reference = optarg; break;
        case 'c': o->candidate = optarg; break;
        case 'p': o->profile = optarg; break;
        case 'j': o->json = true; break;
        case 'P': o->progress = true; break;
        case 'N': o->progress = false; break;
        case 'v': o->verbose++; break;
        case 'h': fputs(USAGE, stdout); return -1;
        case 'i':
            if (util_parse_range(optarg, &o->start, &o->end) || o->start < 0 || o->end < 0)
                return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--interval wants START:END in ticks, got '%s'", optarg);
            o->have_interval = true;
            break;
        case 't':
            if (util_parse_i64(optarg, &o->offset))
                return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--time-offset wants an integer, got '%s'", optarg);
            break;
        default: fputs(USAGE, stderr); return EXACTAV_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "unexpected argument '%s'", argv[optind]);
    if (!o->reference || !o->candidate)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--reference and --candidate are required (see --help)");
    return 0;
}

static int check_readable(const char *path, const char *what)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli_fail(EXACTAV_EXIT_NOINPUT, "verify", "cannot open %s %s", what, path);
    fclose(f);
    return 0;
}

/* The reference's segments and context, from a binding or a plain file. */
struct reference {
    struct binding b;
    bool is_binding;
    struct bsrc_segment segs[BINDING_MAX_FILES];
    size_t nsegs;
    json_t *context;
};

static int load_reference(const struct verify_opts *o, const struct profile *p, struct reference *ref)
{
    char err[512];
    memset(ref, 0, sizeof *ref);
    if (check_readable(o->reference, "reference"))
        return EXACTAV_EXIT_NOINPUT;
    ref->context = json_object();
    if (!binding_looks_like(o->reference)) {
        ref->segs[0].path = o->reference;
        ref->nsegs = 1;
        return 0;
    }
    if (binding_load(o->reference, &ref->b, err, sizeof err))
        return cli_fail(EXACTAV_EXIT_UNUSABLE, "verify", "%s", err);
    ref->is_binding = true;
    if (strcmp(ref->b.profile_id, p->id))
        return cli_fail(EXACTAV_EXIT_UNUSABLE, "verify", "binding is for profile %s, not %s",
                        ref->b.profile_id, p->id);
    if (o->have_interval)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "the binding fixes the interval; drop --interval");
    for (size_t i = 0; i < ref->b.nfiles; i++) {
        ref->segs[i].path = ref->b.paths[i];
        ref->segs[i].expect_sha256 = ref->b.sha256[i];
        if (check_readable(ref->b.paths[i], "reference file"))
            return EXACTAV_EXIT_NOINPUT;
    }
    ref->nsegs = ref->b.nfiles;
    json_object_set_new(ref->context, "channel", json_string(ref->b.channel));
    json_object_set_new(ref->context, "rendition", json_string(ref->b.rendition));
    json_object_set_new(ref->context, "program_version", json_string(ref->b.program_version));
    return 0;
}

static int emit(const struct verify_opts *o, json_t *report, int rc, const char *err)
{
    if (report) {
        if (o->json ? report_write_json(stdout, report) : report_write_human(stdout, report))
            return cli_fail(EXACTAV_EXIT_INTERNAL, "verify", "cannot write the report");
        return rc;
    }
    if (o->json)
        printf("{\"error\": {\"exit\": %d, \"message\": \"%s\"}}\n", rc, "see stderr");
    return cli_fail(rc, "verify", "%s", err[0] ? err : "failed");
}

int exactav_cmd_verify(int argc, char **argv)
{
    struct verify_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    avlog_install(o.verbose ? AV_LOG_INFO : AV_LOG_QUIET);
    struct profile p;
    if ((rc = cli_load_profile(o.profile, &p, "verify")))
        return rc;
    struct reference ref;
    struct bsrc_segment cand = {.path = o.candidate};
    if (!(rc = load_reference(&o, &p, &ref)) && !(rc = check_readable(o.candidate, "candidate"))) {
        struct verify_request rq = {
            .profile = &p, .ref_segs = ref.segs, .n_ref = ref.nsegs, .cand_segs = &cand, .n_cand = 1,
            .have_interval = o.have_interval || ref.is_binding,
            .start = ref.is_binding ? ref.b.start : o.start, .end = ref.is_binding ? ref.b.end : o.end,
            .offset = o.offset, .reference_object = o.reference, .candidate_object = o.candidate,
            .reference_version = ref.is_binding ? ref.b.reference_version : NULL,
            .context = ref.context, .progress = o.progress,
        };
        json_t *report = NULL;
        char err[768] = "";
        rc = verify_run(&rq, &report, err, sizeof err);
        rc = emit(&o, report, rc, err);
        json_decref(report);
    }
    if (ref.is_binding)
        binding_free(&ref.b);
    json_decref(ref.context);
    profile_free(&p);
    return rc;
}
