/* cli_verify.c - `exactav verify`: one Exact-AV v1 check. */
#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "avlog.h"
#include "binding.h"
#include "candidate.h"
#include "credential.h"
#include "evidence.h"
#include "store_key.h"
#include "cli.h"
#include "exitcodes.h"
#include "profile.h"
#include "report.h"
#include "reportsig.h"
#include "util.h"
#include "verify.h"

static const char USAGE[] =
    "usage: exactav verify --reference REF --candidate CAND [options]\n"
    "\n"
    "Decodes REF and CAND in separate single-threaded decoders under the pinned\n"
    "DecodeProfile and compares YUV420p8 pixels and f32le PCM exactly (Exact-AV v1).\n"
    "\n"
    "  --reference REF       MPEG-TS or fragmented MP4 file, or a reference binding made\n"
    "                        by `exactav bind`\n"
    "  --candidate CAND      MPEG-TS or fragmented MP4 file, or http(s) URL of a segment\n"
    "                        or of an HLS media playlist (recognised by content, #EXTM3U;\n"
    "                        EXT-X-MAP init segments are fetched)\n"
    "  --interval S:E        half-open interval in 90 kHz ticks on the reference\n"
    "                        timeline (33-bit, may wrap); default: the whole reference\n"
    "  --time-offset T       declared mapping: candidate_pts = (reference_pts + T) mod 2^33\n"
    "                        (default 0; never searched)\n"
    "  --program N           compare the candidate's program N (default: the one program\n"
    "                        whose audio/video tracks are the reference's)\n"
    "  --profile FILE        DecodeProfile (default: the embedded exact-av-v1)\n"
    "  --compare auto|full   auto (default): MATCH without decoding the candidate when its\n"
    "                        decoder input is byte-identical to the reference's and both are\n"
    "                        undamaged (\"compare\": \"decoder-input\"), else the full decode;\n"
    "                        full: always decode and compare both (\"compare\": \"full\")\n"
    "  --media-sequence F[:L]  HLS segments to fetch, by media sequence number\n"
    "                        (default: the binding's, else every segment of the playlist)\n"
    "  --evidence FILE.db    append the result to this evidence store (SQLite; opened and\n"
    "                        checked before the check; `evidence: ID` once committed); a\n"
    "                        reference's clean decode is kept there, so a later check of an\n"
    "                        unmodified copy decodes nothing (\"reference_decode\": \"stored\")\n"
    "  --path-id ID          delivery path checked (evidence context)\n"
    "  --allocation-id ID, --pathway P\n"
    "                        the admission service's allocation whose delivery this is and\n"
    "                        the PATHWAY-ID followed (evidence context; both or neither):\n"
    "                        what `stepctl next` counts under content_from step_sessions\n"
    "  --channel C, --rendition R, --program-version V\n"
    "                        evidence context (default: from the reference binding;\n"
    "                        with a binding, a different value is a usage error)\n"
    "  --keep-param NAME     show this query parameter's value in what is stored and\n"
    "                        printed (repeatable); every other value is redacted, and\n"
    "                        credentials (Signature, Policy, token...) always are\n"
    "  --redact-param NAME   redact this parameter even if kept (repeatable)\n"
    "  --allow-redirect-host HOST  follow redirects only to the requested host and to\n"
    "                        HOST (repeatable); others end UNKNOWN redirect_not_allowed.\n"
    "                        Default: any host is followed and the report marks it\n"
    "  --header 'Name: value'  send this request header (repeatable; e.g. a token); its\n"
    "                        value is a credential: never stored or printed\n"
    "  --cookie 'name=value' send this cookie (repeatable; e.g. the three CloudFront\n"
    "                        signed cookies); never stored or printed.  Both go to the\n"
    "                        candidate's own host only, never to a redirect elsewhere\n"
    "  --cacert FILE         extra CA certificates (PEM) for TLS verification\n"
    "  --connect-timeout S   seconds to connect (default 5)\n"
    "  --timeout S           seconds for each object (default 60)\n"
    "  --deadline S          seconds for the whole check (default 300, at most 86400);\n"
    "                        beyond it: UNKNOWN deadline_exceeded\n"
    "  --max-size BYTES      largest object accepted (default 268435456, at most 1073741824)\n"
    "  --max-redirects N     redirects followed per object (default 5)\n"
    "  --diff-dir DIR        for a MISMATCH, write PNGs of the first differing frame\n"
    "                        (reference, candidate, difference map) and a plot of the first\n"
    "                        audio difference into DIR (made when missing; an existing file\n"
    "                        is never replaced: a numbered name is used); the report's\n"
    "                        \"diff_images\" names them.  A MATCH writes nothing\n"
    "  --store-key-file F    the key of the evidence store's MACs (default\n"
    "                        $EXACTAV_STORE_KEY_FILE; docs/security.md#tamper-evidence):\n"
    "                        keys an unkeyed store, is needed to write a keyed one (65)\n"
    "  --sign-key FILE       sign the report (printed and stored) with this Ed25519\n"
    "                        private key (PEM, `openssl genpkey -algorithm ed25519`,\n"
    "                        mode 600): a \"signature\" member, last (docs/evidence.md)\n"
    "  --json                print the report as one JSON object\n"
    "  --progress            progress on stderr (default when stderr is a terminal)\n"
    "  --no-progress         no progress\n"
    "  -v, --verbose         show FFmpeg's own messages\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit: 0 MATCH, 1 MISMATCH, 2 UNKNOWN, 64 usage, 65 reference or profile not usable\n"
    "(or the store key: its file, a wrong key, a keyed store without it),\n"
    "66 an input cannot be opened or the evidence store is not usable, 70 internal error.\n"
    "See docs/cli.md.\n";

#define MAX_NAMED_PARAMS 32          /* each of --keep-param, --redact-param, --allow-redirect-host */
#define DEFAULT_DEADLINE_S 300
#define MAX_DEADLINE_S 86400
#define TS33_MAX (((int64_t)1 << 33) - 1)

/* Long options without a short letter. */
enum { OPT_ALLOCATION_ID = 1000, OPT_PATHWAY, OPT_STORE_KEY };

struct verify_opts {
    const char *reference, *candidate, *profile, *evidence;
    const char *path_id, *channel, *rendition, *program_version;
    const char *allocation_id, *pathway;
    const char *diff_dir, *sign_key, *store_key_file;
    bool have_interval, json, progress, have_seq;
    int64_t start, end, offset, seq_first, seq_last, program;
    int64_t deadline_s, deadline_ms;   /* --deadline, and when it ends (UTC ms) */
    int verbose;
    enum verify_compare compare;
    struct fetch_options fetch;
    const char *redact[MAX_NAMED_PARAMS], *keep[MAX_NAMED_PARAMS], *allow_hosts[MAX_NAMED_PARAMS];
    const char *headers[MAX_NAMED_PARAMS];
    char cookie[8192]; /* the --cookie values joined by "; " */
};

/* Appends a repeatable option's value to list (n entries); 0 when done. */
static int add_name(const char **list, size_t *n, const char *opt, const char *value)
{
    if (*n == MAX_NAMED_PARAMS)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "at most %d %s", MAX_NAMED_PARAMS, opt);
    if (!value[0])
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "%s wants a non-empty name", opt);
    list[(*n)++] = value;
    return 0;
}

/* --header 'Name: value' and --cookie 'name=value'.  Messages name the
 * option and at most the header or cookie NAME: the value is a credential
 * and never appears anywhere.  0 when taken. */
static int add_credential(struct verify_opts *o, bool cookie, const char *arg)
{
    const char *opt = cookie ? "--cookie" : "--header";
    size_t total = strlen(arg);
    char why[160];
    if (credential_check(cookie, arg, why, sizeof why))
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "%s %s", opt, why);
    if (!cookie)
        return add_name(o->headers, &o->fetch.n_headers, opt, arg);
    size_t have = strlen(o->cookie);
    if (have + total + 3 > sizeof o->cookie)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--cookie: at most %zu bytes of cookies", sizeof o->cookie - 1);
    snprintf(o->cookie + have, sizeof o->cookie - have, "%s%s", have ? "; " : "", arg);
    o->fetch.cookie = o->cookie;
    return 0;
}

static int parse_positive(const char *arg, const char *name, int64_t max, int64_t *out)
{
    if (util_parse_i64(arg, out) || *out <= 0 || *out > max)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "%s wants a positive integer, got '%s'", name, arg);
    return 0;
}

/* Options of the delivery path (issue 3); 0 when handled. */
static int parse_delivery(int c, struct verify_opts *o)
{
    int64_t v;
    switch (c) {
    case 'E': o->evidence = optarg; return 0;
    case 'I': o->path_id = optarg; return 0;
    case OPT_ALLOCATION_ID: o->allocation_id = optarg; return 0;
    case OPT_PATHWAY: o->pathway = optarg; return 0;
    case OPT_STORE_KEY: o->store_key_file = optarg; return 0;
    case 'C': o->channel = optarg; return 0;
    case 'R': o->rendition = optarg; return 0;
    case 'V': o->program_version = optarg; return 0;
    case 'A': o->fetch.cacert = optarg; return 0;
    case 'X': return add_name(o->redact, &o->fetch.redact.n_redact, "--redact-param", optarg);
    case 'K':
        if (redact_is_credential_name(optarg))
            return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--keep-param %s: a credential is always redacted", optarg);
        return add_name(o->keep, &o->fetch.redact.n_keep, "--keep-param", optarg);
    case 'H': return add_name(o->allow_hosts, &o->fetch.n_allow_redirect_hosts, "--allow-redirect-host", optarg);
    case 'Q': return add_credential(o, false, optarg);
    case 'Z': return add_credential(o, true, optarg);
    case 'L': return parse_positive(optarg, "--deadline", MAX_DEADLINE_S, &o->deadline_s);
    case 'S':
        if (util_parse_seq_range(optarg, &o->seq_first, &o->seq_last))
            return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--media-sequence wants FIRST[:LAST], 0 <= FIRST <= LAST");
        o->have_seq = true;
        return 0;
    case 'T':
        if (parse_positive(optarg, "--connect-timeout", 3600, &v)) return EXACTAV_EXIT_USAGE;
        o->fetch.connect_timeout_ms = (long)v * 1000;
        return 0;
    case 'O':
        if (parse_positive(optarg, "--timeout", 86400, &v)) return EXACTAV_EXIT_USAGE;
        o->fetch.total_timeout_ms = (long)v * 1000;
        return 0;
    case 'M':
        if (parse_positive(optarg, "--max-size", (int64_t)CANDIDATE_MAX_TOTAL_BYTES, &v)) return EXACTAV_EXIT_USAGE;
        o->fetch.max_bytes = (size_t)v;
        return 0;
    case 'D':
        if (util_parse_i64(optarg, &v) || v < 0 || v > FETCH_MAX_REDIRECTS_LIMIT)
            return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--max-redirects wants 0..%d", FETCH_MAX_REDIRECTS_LIMIT);
        o->fetch.max_redirects = (int)v;
        return 0;
    }
    fputs(USAGE, stderr);
    return cli_fail(EXACTAV_EXIT_USAGE, "verify", "an unknown option, or an option without its value (usage above)");
}

static int parse(int argc, char **argv, struct verify_opts *o)
{
    static const struct option longopts[] = {
        {"reference", required_argument, NULL, 'r'}, {"candidate", required_argument, NULL, 'c'},
        {"interval", required_argument, NULL, 'i'}, {"time-offset", required_argument, NULL, 't'},
        {"profile", required_argument, NULL, 'p'}, {"json", no_argument, NULL, 'j'},
        {"progress", no_argument, NULL, 'P'}, {"no-progress", no_argument, NULL, 'N'},
        {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'},
        {"evidence", required_argument, NULL, 'E'}, {"path-id", required_argument, NULL, 'I'},
        {"allocation-id", required_argument, NULL, OPT_ALLOCATION_ID},
        {"pathway", required_argument, NULL, OPT_PATHWAY},
        {"store-key-file", required_argument, NULL, OPT_STORE_KEY},
        {"channel", required_argument, NULL, 'C'}, {"rendition", required_argument, NULL, 'R'},
        {"program-version", required_argument, NULL, 'V'}, {"media-sequence", required_argument, NULL, 'S'},
        {"cacert", required_argument, NULL, 'A'}, {"redact-param", required_argument, NULL, 'X'},
        {"connect-timeout", required_argument, NULL, 'T'}, {"timeout", required_argument, NULL, 'O'},
        {"max-size", required_argument, NULL, 'M'}, {"max-redirects", required_argument, NULL, 'D'},
        {"program", required_argument, NULL, 'G'},
        {"keep-param", required_argument, NULL, 'K'}, {"allow-redirect-host", required_argument, NULL, 'H'},
        {"deadline", required_argument, NULL, 'L'}, {"header", required_argument, NULL, 'Q'},
        {"cookie", required_argument, NULL, 'Z'},
        {"compare", required_argument, NULL, 'W'}, {"diff-dir", required_argument, NULL, 'F'},
        {"sign-key", required_argument, NULL, 'Y'},
        {NULL, 0, NULL, 0},
    };
    o->progress = isatty(STDERR_FILENO);
    o->fetch = fetch_options_default();
    o->fetch.redact = (struct redact_policy){.keep = o->keep, .redact = o->redact};
    o->fetch.allow_redirect_hosts = o->allow_hosts;
    o->fetch.headers = o->headers;
    o->deadline_s = DEFAULT_DEADLINE_S;
    o->compare = VERIFY_COMPARE_AUTO;
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
            /* 33-bit values: a larger one is refused, never reduced modulo 2^33 */
            if (util_parse_range(optarg, &o->start, &o->end) || o->start < 0 || o->end < 0 ||
                o->start > TS33_MAX || o->end > TS33_MAX)
                return cli_fail(EXACTAV_EXIT_USAGE, "verify",
                                "--interval wants START:END in 90 kHz ticks, each 0..%lld, got '%s'",
                                (long long)TS33_MAX, optarg);
            o->have_interval = true;
            break;
        case 't':
            if (util_parse_i64(optarg, &o->offset))
                return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--time-offset wants an integer, got '%s'", optarg);
            break;
        case 'W':
            if (strcmp(optarg, "auto") && strcmp(optarg, "full"))
                return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--compare wants auto or full, got '%s'", optarg);
            o->compare = optarg[0] == 'a' ? VERIFY_COMPARE_AUTO : VERIFY_COMPARE_FULL;
            break;
        case 'F':
            if (!optarg[0])
                return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--diff-dir wants a directory");
            o->diff_dir = optarg;
            break;
        case 'Y': o->sign_key = optarg; break;
        case 'G':
            if (util_parse_i64(optarg, &o->program) || o->program < 1 || o->program > 65535)
                return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--program wants a program_number 1..65535, got '%s'",
                                optarg);
            break;
        default: {
            int rc = parse_delivery(c, o);
            if (rc)
                return rc;
        }
        }
    }
    if (optind < argc)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "unexpected argument '%s'", argv[optind]);
    if (!o->reference || !o->candidate)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--reference and --candidate are required (see --help)");
    if (o->have_seq && !candidate_location_is_url(o->candidate))
        return cli_fail(EXACTAV_EXIT_USAGE, "verify",
                        "--media-sequence selects segments of an HLS playlist; the candidate is a local file");
    return 0;
}

static int emit(const struct verify_opts *o, json_t *report, int rc, const char *err);

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
    int rc = cli_check_input_file(o->reference, "reference", false, "verify");
    if (rc)
        return rc;
    ref->context = json_object();
    if (!binding_looks_like(o->reference)) {
        if ((rc = cli_check_input_file(o->reference, "reference", true, "verify")))
            return rc;
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
        if ((rc = cli_check_input_file(ref->b.paths[i], "reference file", false, "verify")))
            return rc;
    }
    ref->nsegs = ref->b.nfiles;
    json_object_set_new(ref->context, "channel", json_string(ref->b.channel));
    json_object_set_new(ref->context, "rendition", json_string(ref->b.rendition));
    json_object_set_new(ref->context, "program_version", json_string(ref->b.program_version));
    return 0;
}

/* Allocation ids as the admission service takes them (areq.h); a
 * PATHWAY-ID as HLS writes it (RFC 8216bis 4.4.6.6). */
static bool id_chars(const char *s, size_t max, const char *extra)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (; *s; s++)
        if (!(*s >= 'A' && *s <= 'Z') && !(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') &&
            !strchr(extra, *s))
            return false;
    return true;
}

/* --allocation-id and --pathway (issue 17): both or neither. */
static int apply_allocation(const struct verify_opts *o, struct reference *ref)
{
    if (!o->allocation_id && !o->pathway)
        return 0;
    if (!o->allocation_id || !o->pathway)
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--allocation-id and --pathway go together");
    if (!id_chars(o->allocation_id, 128, "._:-"))
        return cli_fail(EXACTAV_EXIT_USAGE, "verify",
                        "--allocation-id: 1-128 characters of [A-Za-z0-9._:-]");
    if (!id_chars(o->pathway, 127, "._-"))
        return cli_fail(EXACTAV_EXIT_USAGE, "verify", "--pathway: 1-127 characters of [A-Za-z0-9._-]");
    json_object_set_new(ref->context, "allocation_id", json_string(o->allocation_id));
    json_object_set_new(ref->context, "pathway", json_string(o->pathway));
    return 0;
}

/* The evidence context.  A binding fixes channel, rendition and program
 * version: the command line may repeat them, never change them (a MATCH
 * stored for a scope that was never checked would be false evidence). */
static int apply_context(const struct verify_opts *o, struct reference *ref)
{
    static const char *keys[] = {"path_id", "channel", "rendition", "program_version"};
    static const char *opts[] = {"--path-id", "--channel", "--rendition", "--program-version"};
    const char *vals[] = {o->path_id, o->channel, o->rendition, o->program_version};
    for (size_t i = 0; i < 4; i++) {
        const char *bound = json_string_value(json_object_get(ref->context, keys[i]));
        if (vals[i] && ref->is_binding && bound && strcmp(bound, vals[i]))
            return cli_fail(EXACTAV_EXIT_USAGE, "verify", "%s %s conflicts with the binding's %s %s", opts[i],
                            vals[i], keys[i], bound);
        if (vals[i])
            json_object_set_new(ref->context, keys[i], json_string(vals[i]));
    }
    return apply_allocation(o, ref);
}

/* Opens (creating if needed) and validates the evidence store before the
 * check starts: a store that is not ours, of another version or not
 * writable here fails now, before any byte is fetched, not after the whole
 * check.  Store errors about the file exit 66, like every other command. */
static int open_evidence(const char *path, const char *key_file, struct evidence_db **db)
{
    char err[1024];
    *db = NULL;
    if (!path)
        return 0;
    struct store_key k;
    bool have = false;
    int krc = evidence_key_load("exactav verify", key_file, &k, &have);
    if (krc)
        return krc;
    enum evidence_rc rc = evidence_open_keyed(path, EVIDENCE_OPEN_RW, have ? &k : NULL, db, err, sizeof err);
    store_key_wipe(&k); /* the connection holds its own copy */
    if (rc == EVIDENCE_OK)
        return 0;
    return cli_fail(rc == EVIDENCE_E_INTERNAL ? EXACTAV_EXIT_INTERNAL
                    : rc == EVIDENCE_E_KEY    ? EXACTAV_EXIT_UNUSABLE
                                              : EXACTAV_EXIT_NOINPUT,
                    "verify", "--evidence %s: %s", path, err);
}

/* Appends the report to the evidence store in one transaction. */
static int store_evidence(struct evidence_db *db, const char *path, const json_t *report)
{
    char err[1024];
    char *text = json_dumps(report, JSON_COMPACT | JSON_PRESERVE_ORDER);
    int inserted = 0;
    enum evidence_rc rc = text ? evidence_import_report(db, text, strlen(text), &inserted, err, sizeof err)
                               : EVIDENCE_E_INTERNAL;
    free(text);
    if (rc != EVIDENCE_OK)
        return cli_fail(EXACTAV_EXIT_INTERNAL, "verify", "evidence %s: %s", path,
                        text ? err : "out of memory");
    return 0;
}

static int emit(const struct verify_opts *o, json_t *report, int rc, const char *err)
{
    if (report) {
        if (o->json ? report_write_json(stdout, report) : report_write_human(stdout, report))
            return cli_fail(EXACTAV_EXIT_INTERNAL, "verify", "cannot write the report");
        return rc;
    }
    return cli_fail(rc, "verify", "%s", err[0] ? err : "failed");
}

static int open_candidate(const struct verify_opts *o, const struct reference *ref, struct candidate *cand)
{
    struct candidate_options co = {.location = o->candidate, .fetch = o->fetch,
                                   .have_sequence = o->have_seq || (ref->is_binding && ref->b.have_media_sequence),
                                   .seq_first = (uint64_t)(o->have_seq ? o->seq_first : ref->b.media_sequence_first),
                                   .seq_last = (uint64_t)(o->have_seq ? o->seq_last : ref->b.media_sequence_last),
                                   .deadline_ms = o->deadline_ms};
    char err[4096] = "";
    switch (candidate_open(&co, cand, err, sizeof err)) {
    case CANDIDATE_OK: return 0;
    case CANDIDATE_USAGE: return cli_fail(EXACTAV_EXIT_USAGE, "verify", "%s", err);
    case CANDIDATE_NOINPUT: return cli_fail(EXACTAV_EXIT_NOINPUT, "verify", "%s", err);
    case CANDIDATE_FAILED: break;
    }
    return cli_fail(EXACTAV_EXIT_INTERNAL, "verify", "cannot prepare the candidate");
}

/* The reference's clean decode in the evidence store (reference_decodes):
 * a later verify of an unmodified copy of the same reference decodes nothing. */
static bool decode_load(void *ctx, const struct verify_decode_key *k, int64_t *frames, int64_t *samples,
                        json_t **reference)
{
    struct evidence_decode_key key = {k->digest, k->fingerprint, k->start, k->end};
    struct evidence_decode d;
    if (evidence_decode_get(ctx, &key, &d, NULL, 0) != EVIDENCE_OK)
        return false;
    *frames = d.frames;
    *samples = d.samples;
    *reference = d.reference;
    return true;
}

static void decode_save(void *ctx, const struct verify_decode_key *k, int64_t frames, int64_t samples,
                        const json_t *reference, const char *evidence_id)
{
    struct evidence_decode_key key = {k->digest, k->fingerprint, k->start, k->end};
    struct evidence_decode d = {.frames = frames, .samples = samples, .reference = (json_t *)reference,
                                .evidence_id = evidence_id};
    evidence_decode_put(ctx, &key, &d, NULL, 0);
}

/* --sign-key: loaded before the check, so that an unusable key fails
 * before any byte is fetched.  0 or the exit code (66, 65, 70). */
static int load_sign_key(const char *path, struct reportsig_key **key)
{
    char err[1024];
    *key = NULL;
    int rc = path ? reportsig_key_load(path, key, err, sizeof err) : 0;
    return rc ? cli_fail(rc, "verify", "--sign-key %s", err) : 0;
}

static int run_check(const struct verify_opts *o, const struct profile *p, struct reference *ref,
                     struct candidate *cand, struct evidence_db *edb, const struct reportsig_key *key)
{
    struct verify_request rq = {
        .profile = p, .ref_segs = ref->segs, .n_ref = ref->nsegs, .cand_segs = cand->segs, .n_cand = cand->nsegs,
        .have_interval = o->have_interval || (ref->is_binding && ref->b.interval_declared),
        .start = ref->is_binding ? ref->b.start : o->start, .end = ref->is_binding ? ref->b.end : o->end,
        .offset = o->offset, .program = (int)o->program, .reference_object = o->reference, .candidate_object = cand->object,
        .reference_version = ref->is_binding ? ref->b.reference_version : NULL,
        .context = ref->context, .progress = o->progress, .fetches = cand->fetches,
        .observed_at_ms = cand->observed_at_ms, .observed_end_ms = cand->observed_end_ms,
        .candidate_failure = cand->failure, .deadline_ms = o->deadline_ms,
        .candidate_length_unproven = cand->length_unproven, .compare = o->compare, .diff_dir = o->diff_dir,
    };
    struct verify_decode_store ds = {edb, decode_load, decode_save};
    if (edb)
        rq.decode_store = &ds;
    char id[37];
    if (evidence_new_id(id) != EVIDENCE_OK)
        return cli_fail(EXACTAV_EXIT_INTERNAL, "verify", "no randomness for an evidence id");
    rq.evidence_id = id;
    json_t *report = NULL;
    char err[768] = "";
    int rc = verify_run(&rq, &report, err, sizeof err);
    if (report)
        candidate_annotate_report(report, cand);
    /* signed last: what is printed and stored is what was signed */
    int erc = report && key && reportsig_sign(key, report, err, sizeof err)
                  ? cli_fail(EXACTAV_EXIT_INTERNAL, "verify", "%s", err) : 0;
    if (!erc && report && edb)
        erc = store_evidence(edb, o->evidence, report);
    rc = emit(o, report, erc ? erc : rc, err);
    /* `evidence: ID` only for a committed row (the JSON report has its id). */
    if (report && edb && !erc && !o->json)
        printf("evidence: %s\n", id);
    json_decref(report);
    return erc ? erc : rc;
}

int exactav_cmd_verify(int argc, char **argv)
{
    struct verify_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    o.deadline_ms = util_now_ms() + o.deadline_s * 1000;
    avlog_install(o.verbose ? AV_LOG_INFO : AV_LOG_QUIET);
    struct profile p;
    if ((rc = cli_load_profile(o.profile, &p, "verify")))
        return rc;
    struct reference ref;
    struct candidate cand;
    struct evidence_db *edb = NULL;
    struct reportsig_key *key = NULL;
    memset(&cand, 0, sizeof cand);
    rc = load_reference(&o, &p, &ref);
    if (!rc)
        rc = apply_context(&o, &ref);
    if (!rc)
        rc = load_sign_key(o.sign_key, &key);
    if (!rc)
        rc = open_evidence(o.evidence, o.store_key_file, &edb);
    if (!rc)
        rc = open_candidate(&o, &ref, &cand);
    if (!rc)
        rc = run_check(&o, &p, &ref, &cand, edb, key);
    reportsig_key_free(key);
    evidence_close(edb);
    candidate_free(&cand);
    if (ref.is_binding)
        binding_free(&ref.b);
    json_decref(ref.context);
    profile_free(&p);
    return rc;
}
