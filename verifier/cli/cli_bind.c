/* cli_bind.c - `exactav bind`: write a reference binding. */
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/log.h>

#include "avlog.h"
#include "binding.h"
#include "cli.h"
#include "exitcodes.h"
#include "profile.h"
#include "refscan.h"
#include "util.h"

static const char USAGE[] =
    "usage: exactav bind --channel C --program-version V --rendition R --out REF.json\n"
    "                    [--interval S:E] [--media-sequence FIRST[:LAST]] [--profile FILE] FILE...\n"
    "\n"
    "Checks that FILE... (one continuous MPEG-TS, or one fMP4 stream: an init segment\n"
    "and its media segments, in order) is inside the profile's\n"
    "envelope and undamaged, then writes the reference binding: channel, program\n"
    "version, rendition, interval (default: the whole reference), decode boundary,\n"
    "profile id, each file's SHA-256, and the reference_version digest.\n"
    "--media-sequence records which HLS segments of a candidate playlist correspond.\n"
    "\n"
    "Exit: 0 written, 64 usage, 65 reference not usable, 66 a file cannot be opened, 70 internal.\n";

struct bind_opts {
    const char *channel, *program_version, *rendition, *out, *profile;
    bool have_interval, have_seq;
    int64_t start, end, seq_first, seq_last;
};

static int parse(int argc, char **argv, struct bind_opts *o)
{
    static const struct option longopts[] = {
        {"channel", required_argument, NULL, 'c'}, {"program-version", required_argument, NULL, 'V'},
        {"rendition", required_argument, NULL, 'R'}, {"out", required_argument, NULL, 'o'},
        {"interval", required_argument, NULL, 'i'}, {"media-sequence", required_argument, NULL, 's'},
        {"profile", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o->channel = optarg; break;
        case 'V': o->program_version = optarg; break;
        case 'R': o->rendition = optarg; break;
        case 'o': o->out = optarg; break;
        case 'p': o->profile = optarg; break;
        case 'h': fputs(USAGE, stdout); return -1;
        case 'i':
            /* 33-bit values: a larger one is refused, never reduced modulo 2^33 */
            if (util_parse_range(optarg, &o->start, &o->end) || o->start < 0 || o->end < 0 ||
                o->start >= ((int64_t)1 << 33) || o->end >= ((int64_t)1 << 33))
                return cli_fail(EXACTAV_EXIT_USAGE, "bind", "--interval wants START:END in 90 kHz ticks, each 0..%lld",
                                (long long)((int64_t)1 << 33) - 1);
            o->have_interval = true;
            break;
        case 's':
            if (util_parse_seq_range(optarg, &o->seq_first, &o->seq_last))
                return cli_fail(EXACTAV_EXIT_USAGE, "bind", "--media-sequence wants FIRST[:LAST], 0 <= FIRST <= LAST");
            o->have_seq = true;
            break;
        default: fputs(USAGE, stderr); return EXACTAV_EXIT_USAGE;
        }
    }
    if (!o->channel || !o->program_version || !o->rendition || !o->out)
        return cli_fail(EXACTAV_EXIT_USAGE, "bind", "--channel, --program-version, --rendition and --out are required");
    if (optind >= argc)
        return cli_fail(EXACTAV_EXIT_USAGE, "bind", "name at least one reference FILE");
    if (argc - optind > BINDING_MAX_FILES)
        return cli_fail(EXACTAV_EXIT_USAGE, "bind", "at most %d files", BINDING_MAX_FILES);
    return 0;
}

/* Paths under the binding's directory are stored relative to it, so that a
 * binding moves with its files; others are stored absolute. */
static json_t *stored_path(const char *out, const char *file)
{
    char rfile[PATH_MAX], rdir[PATH_MAX];
    char *outcopy = strdup(out);
    const char *dir = outcopy ? dirname(outcopy) : ".";
    json_t *res;
    if (!realpath(file, rfile))
        res = json_string(file);
    else if (realpath(dir, rdir) && !strncmp(rfile, rdir, strlen(rdir)) && rfile[strlen(rdir)] == '/')
        res = json_string(rfile + strlen(rdir) + 1);
    else
        res = json_string(rfile);
    free(outcopy);
    return res;
}

static json_t *binding_json(const struct bind_opts *o, const struct profile *p, const struct refscan *r,
                            struct bsrc_segment *segs, size_t n)
{
    json_t *files = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(files, json_pack("{s:o, s:s, s:I}", "path", stored_path(o->out, segs[i].path),
                                               "sha256", segs[i].sha256, "bytes", (json_int_t)segs[i].bytes_read));
    struct binding_spec spec = {
        .channel = o->channel, .program_version = o->program_version, .rendition = o->rendition,
        .profile_id = p->id, .start = r->start, .end = r->end, .declared = o->have_interval,
        .video_boundary = r->video_boundary, .has_audio = r->has_audio,
        .audio_boundary = r->audio_boundary / AU_UNITS_PER_TICK,   /* a 90 kHz PTS */
        .have_media_sequence = o->have_seq, .seq_first = o->seq_first, .seq_last = o->seq_last,
    };
    return binding_document(&spec, files);
}

int exactav_cmd_bind(int argc, char **argv)
{
    struct bind_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    avlog_install(AV_LOG_QUIET);
    struct profile p;
    if ((rc = cli_load_profile(o.profile, &p, "bind")))
        return rc;
    size_t n = (size_t)(argc - optind);
    struct bsrc_segment segs[BINDING_MAX_FILES];
    memset(segs, 0, sizeof segs);
    for (size_t i = 0; i < n; i++) {
        segs[i].path = argv[optind + (int)i];
        segs[i].want_sha256 = true;   /* the binding names each file's digest */
        if ((rc = cli_check_input_file(segs[i].path, "reference", true, "bind"))) {
            profile_free(&p);
            return rc;
        }
    }
    struct refscan r;
    char err[512];
    switch (refscan_run(segs, n, &p, o.have_interval, o.start, o.end, &r, err, sizeof err)) {
    case REFSCAN_OK: rc = 0; break;
    case REFSCAN_UNOPENABLE: rc = cli_fail(EXACTAV_EXIT_NOINPUT, "bind", "%s", err); break;
    case REFSCAN_UNUSABLE: rc = cli_fail(EXACTAV_EXIT_UNUSABLE, "bind", "%s", err); break;
    case REFSCAN_FAILED: rc = cli_fail(EXACTAV_EXIT_INTERNAL, "bind", "internal error"); break;
    }
    if (rc == 0) {
        json_t *doc = binding_json(&o, &p, &r, segs, n);
        if (!doc || json_dump_file(doc, o.out, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
            rc = cli_fail(EXACTAV_EXIT_NOINPUT, "bind", "cannot write %s", o.out);
        else
            printf("%s: reference_version %s, interval [%lld, %lld), %zu file(s)\n", o.out,
                   json_string_value(json_object_get(doc, "reference_version")), (long long)r.start,
                   (long long)r.end, n);
        json_decref(doc);
    }
    profile_free(&p);
    return rc;
}
