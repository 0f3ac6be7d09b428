/* cli_evidence.c - the `exactav evidence` subcommand: option parsing, exit
 * codes and I/O around the evidence store (evidence/evidence.h).  The
 * parser is self-contained (no getopt) so that it is re-entrant. */
#include "cli_evidence.h"

#include "evidence.h"
#include "redact.h"
#include "reportsig.h"
#include "store_key.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum sub { SUB_NONE = 0, SUB_LIST, SUB_SHOW, SUB_LATEST, SUB_IMPORT, SUB_PRUNE, SUB_VERIFY };

/* Which subcommands accept an option (bit per enum sub). */
#define FOR_QUERY ((1u << SUB_LIST) | (1u << SUB_LATEST))
#define FOR_PRUNE (1u << SUB_PRUNE)
#define FOR_IMPORT (1u << SUB_IMPORT)
#define FOR_VERIFY (1u << SUB_VERIFY)
#define FOR_ALL ((1u << SUB_LIST) | (1u << SUB_SHOW) | (1u << SUB_LATEST) | (1u << SUB_IMPORT) | FOR_PRUNE | \
                 FOR_VERIFY)

struct opts {
    enum sub sub;
    const char *db;
    const char *trusted_keys; /* import --trusted-keys FILE, or NULL */
    const char *store_key_file; /* --store-key-file FILE, or NULL ($EXACTAV_STORE_KEY_FILE) */
    bool json;
    struct evidence_filter filter;
    struct evidence_prune_opts prune; /* prune: keep_ms < 0 until --keep is given */
    char **pos; /* positional arguments (borrowed from argv) */
    int npos;
};

struct io {
    FILE *out, *err;
};

#define MAX_AGE_LIMIT_S 100000000000LL /* ~3170 years: larger is a typo */

static const char USAGE[] =
    "usage: exactav evidence list   --evidence FILE.db [filters] [--limit N] [--json]\n"
    "       exactav evidence latest --evidence FILE.db [filters] [--limit N] [--json]\n"
    "       exactav evidence show ID --evidence FILE.db [--json]\n"
    "       exactav evidence import REPORT.json... --evidence FILE.db [--trusted-keys KEYS.pem]\n"
    "                                  [--store-key-file KEY] [--json]\n"
    "       exactav evidence prune --evidence FILE.db --keep DURATION [--keep-mismatch DURATION]\n"
    "                              [--store-key-file KEY] [--json]\n"
    "       exactav evidence verify-store --evidence FILE.db [--trusted-keys KEYS.pem]\n"
    "                                     [--store-key-file KEY] [--json]\n"
    "filters: --path-id ID --channel C --rendition R --program-version V\n"
    "         --verdict MATCH|MISMATCH|UNKNOWN --max-age SECONDS --media-sequence N\n"
    "exit: 0 ok, 3 show: no such id / verify-store: a row breaks a rule, 64 usage, 65 invalid report (one exactav verify could\n"
    "not have produced) or the store key (its file, a wrong key, a keyed store written without it), 66 cannot open, or\n"
    "not an evidence store this build reads, 70 internal\n";

/* The option of every writer and of verify-store (docs/security.md#tamper-evidence). */
#define HELP_STORE_KEY                                                                            \
    "  --store-key-file KEY  the key of the store's MACs (default $EXACTAV_STORE_KEY_FILE): keys\n" \
    "                     an unkeyed store, is needed to write a keyed one; 32 to 1024 bytes,\n"  \
    "                     mode 600 (else 65), unreadable 66; a wrong key is 65\n"

static const char HELP_LIST[] =
    "usage: exactav evidence list --evidence FILE.db [filters] [--limit N] [--json]\n"
    "Lists evidence rows, newest observation first (read-only).\n"
    "  --path-id ID --channel C --rendition R --program-version V   exact match\n"
    "  --verdict MATCH|MISMATCH|UNKNOWN\n"
    "  --max-age SECONDS   keep rows observed at most SECONDS ago (observed_at_ms only)\n"
    "  --media-sequence N  rows of the check of HLS media sequence number N (canary)\n"
    "  --limit N           at most N rows\n"
    "  --json              a JSON array of rows (column names as keys) instead of a table\n"
    "Table columns: ID OBSERVED_AT AGE_S VERDICT REASON PATH_ID CHANNEL RENDITION PROGRAM_VERSION\n"
    "               MEDIA_SEQ\n"
    "No rows is not an error: an empty table (or []) and exit 0.\n";

static const char HELP_LATEST[] =
    "usage: exactav evidence latest --evidence FILE.db [filters] [--limit N] [--json]\n"
    "The newest observation (observed_at_ms) per (path_id, channel, rendition,\n"
    "program_version) among the rows the filters select (read-only).  Filters and\n"
    "output as for `list`.  Note: --verdict selects rows before picking the newest.\n";

static const char HELP_SHOW[] =
    "usage: exactav evidence show ID --evidence FILE.db [--json]\n"
    "Every column of one evidence row and its fetches (read-only); --json also\n"
    "includes the full report.  Exit 3 when ID does not exist.\n";

static const char HELP_IMPORT[] =
    "usage: exactav evidence import REPORT.json... --evidence FILE.db [--trusted-keys KEYS.pem] [--json]\n"
    "Stores reports written by `exactav verify --json` elsewhere.  Idempotent by\n"
    "evidence_id: a report already stored is left untouched (its observed_at_ms is\n"
    "kept); the same id with a different report is refused.  Each file is its own\n"
    "transaction; exit 65 names the file and field of an invalid report.\n"
    "  --trusted-keys KEYS.pem  one or more PEM Ed25519 public keys: every report must\n"
    "                     carry a signature (verify/canary --sign-key) by one of them\n"
    "                     that verifies, else it is refused (exit 65) as\n"
    "                     signature_missing, signature_unknown_key or signature_invalid.\n"
    "                     The file unreadable: 66; no Ed25519 public key in it: 65\n"
    HELP_STORE_KEY;

static const char HELP_PRUNE[] =
    "usage: exactav evidence prune --evidence FILE.db --keep DURATION [--keep-mismatch DURATION]\n"
    "                              [--json]\n"
    "Deletes evidence rows (and their fetches) and probes observed more than --keep ago,\n"
    "and stored reference decodes made before then, in transactions of at most 1000 rows,\n"
    "then gives the space back (incremental_vacuum; the first prune of an older store\n"
    "converts it with one VACUUM).  Never deleted: the newest row of each (path, channel,\n"
    "rendition, program version), a MISMATCH observed less than --keep-mismatch ago\n"
    "(default 30d), the newest probe of each (path, channel, rendition).\n"
    "DURATION: a whole number and a unit, s m h or d (7d, 12h, 30m).\n"
    "Prints what it deleted and kept and the bytes reclaimed; --json: one JSON object.\n"
    "A keyed store is pruned only with its key, and a keyed checkpoint then counts and sums\n"
    "the MACs of the rows deleted.\n"
    HELP_STORE_KEY
    "exit: 0 ok, 64 usage, 65 the store key, 66 missing file or not an evidence store, 70 internal\n";

static const char HELP_VERIFY[] =
    "usage: exactav evidence verify-store --evidence FILE.db [--trusted-keys KEYS.pem] [--json]\n"
    "Checks every evidence row, in the order stored, against the rules of a valid row (the\n"
    "ones import applies and the controller applies to every row it reads: a report exactav\n"
    "verify could have produced, each column equal to its report) and names the first\n"
    "row that breaks one (read-only).  With --trusted-keys every report must also carry a\n"
    "signature (verify/canary --sign-key) that a key of KEYS.pem verifies: a signature\n"
    "import checked is checked again, so a report edited since its import is found.\n"
    "With --store-key-file (or $EXACTAV_STORE_KEY_FILE), first the keyed tamper evidence: the\n"
    "keying row, the keyed head, every checkpoint and every row's MAC, and that the head counts\n"
    "and sums every MAC the surviving rows and the checkpoints hold, so that a row deleted\n"
    "whole is found (row_deleted); rules store_not_keyed, keying_removed, head_mismatch,\n"
    "checkpoint_mismatch, row_mac_missing, row_mac_mismatch, row_deleted.  A keyed store\n"
    "checked without its key: the rules only, and stderr says the MACs were not checked.\n"
    "--json  {\"kind\": \"store_ok\", \"rows\": N, \"signatures_verified\": N} (with a key also\n"
    "        \"macs_verified\": N, \"checkpoints_verified\": N) or\n"
    "        {\"kind\": \"store_tampered\", \"table\", \"row\", \"rule\", \"detail\"}\n"
    "exit: 0 every rule holds, 3 store_tampered (the first broken row named), 64 usage,\n"
    "      65 no Ed25519 public key in KEYS.pem, or the store key (its file; a key that is\n"
    "      not the store's: \"the key does not match\", never tampering), 66 cannot open,\n"
    "      70 internal\n";

static enum sub parse_sub(const char *s)
{
    static const struct { const char *name; enum sub sub; } subs[] = {
        {"list", SUB_LIST}, {"show", SUB_SHOW}, {"latest", SUB_LATEST}, {"import", SUB_IMPORT},
        {"prune", SUB_PRUNE}, {"verify-store", SUB_VERIFY}};
    for (size_t i = 0; s && i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(s, subs[i].name) == 0)
            return subs[i].sub;
    return SUB_NONE;
}

static const char *help_text(enum sub s)
{
    switch (s) {
    case SUB_LIST: return HELP_LIST;
    case SUB_LATEST: return HELP_LATEST;
    case SUB_SHOW: return HELP_SHOW;
    case SUB_IMPORT: return HELP_IMPORT;
    case SUB_PRUNE: return HELP_PRUNE;
    case SUB_VERIFY: return HELP_VERIFY;
    case SUB_NONE: break;
    }
    return USAGE;
}

static int usage(const struct io *io, const char *fmt, const char *arg)
{
    fprintf(io->err, "exactav evidence: ");
    fprintf(io->err, fmt, arg);
    fprintf(io->err, "\n%s", USAGE);
    return EXACTAV_EVIDENCE_EXIT_USAGE;
}

/* Strict decimal: the whole text, in [lo, hi]. */
static bool parse_int(const char *s, long long lo, long long hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int set_filter_value(struct opts *o, const char *name, const char *val, const struct io *io)
{
    struct evidence_filter *f = &o->filter;
    enum evidence_verdict v;
    if (strcmp(name, "--path-id") == 0) f->path_id = val;
    else if (strcmp(name, "--channel") == 0) f->channel = val;
    else if (strcmp(name, "--rendition") == 0) f->rendition = val;
    else if (strcmp(name, "--program-version") == 0) f->program_version = val;
    else if (strcmp(name, "--verdict") == 0) {
        if (!evidence_verdict_parse(val, &v))
            return usage(io, "--verdict must be MATCH, MISMATCH or UNKNOWN, not '%s'", val);
        f->verdict = val;
    } else if (strcmp(name, "--max-age") == 0) {
        if (!parse_int(val, 0, MAX_AGE_LIMIT_S, &f->max_age_s))
            return usage(io, "--max-age needs whole seconds >= 0, not '%s'", val);
        f->has_max_age = true;
    } else if (strcmp(name, "--media-sequence") == 0) {
        if (!parse_int(val, 0, INT64_MAX, &f->media_sequence))
            return usage(io, "--media-sequence needs a whole number >= 0, not '%s'", val);
        f->has_media_sequence = true;
    } else if (strcmp(name, "--keep") == 0 || strcmp(name, "--keep-mismatch") == 0) {
        bool keep = strcmp(name, "--keep") == 0;
        if (!evidence_duration_parse(val, keep ? &o->prune.keep_ms : &o->prune.keep_mismatch_ms))
            return usage(io, "a duration is a whole number and s, m, h or d (7d, 12h), not '%s'", val);
    } else if (strcmp(name, "--limit") == 0) {
        if (!parse_int(val, 1, INT64_MAX, &f->limit))
            return usage(io, "--limit needs a whole number >= 1, not '%s'", val);
    }
    return 0;
}

/* Options that take a value, and the subcommands that accept them. */
static const struct { const char *name; unsigned subs; } VALUE_OPTS[] = {
    {"--evidence", FOR_ALL},      {"--path-id", FOR_QUERY}, {"--channel", FOR_QUERY},
    {"--rendition", FOR_QUERY},   {"--program-version", FOR_QUERY},
    {"--verdict", FOR_QUERY},     {"--max-age", FOR_QUERY}, {"--limit", FOR_QUERY},
    {"--media-sequence", FOR_QUERY}, {"--keep", FOR_PRUNE}, {"--keep-mismatch", FOR_PRUNE},
    {"--trusted-keys", FOR_IMPORT | FOR_VERIFY},
    {"--store-key-file", FOR_IMPORT | FOR_PRUNE | FOR_VERIFY},
};

static int value_opt(const char *name)
{
    for (size_t i = 0; i < sizeof VALUE_OPTS / sizeof VALUE_OPTS[0]; i++)
        if (strcmp(name, VALUE_OPTS[i].name) == 0)
            return (int)i;
    return -1;
}

/* One "--name value" or "--name=value"; *i advances past what it used. */
static int parse_option(struct opts *o, int argc, char **argv, int *i, const struct io *io)
{
    char name[64];
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n >= sizeof name)
        return usage(io, "unknown option '%s'", arg);
    memcpy(name, arg, n);
    name[n] = '\0';
    if (strcmp(name, "--json") == 0 && !eq) {
        o->json = true;
        return 0;
    }
    int k = value_opt(name);
    if (k < 0 || !(VALUE_OPTS[k].subs & (1u << o->sub)))
        return usage(io, "option '%s' is not valid here", name);
    const char *val = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!val)
        return usage(io, "option '%s' needs a value", name);
    if (strcmp(name, "--evidence") == 0) {
        o->db = val;
        return 0;
    }
    if (strcmp(name, "--trusted-keys") == 0) {
        o->trusted_keys = val;
        return 0;
    }
    if (strcmp(name, "--store-key-file") == 0) {
        o->store_key_file = val;
        return 0;
    }
    return set_filter_value(o, name, val, io);
}

static int parse_args(struct opts *o, int argc, char **argv, const struct io *io)
{
    bool only_pos = false;
    for (int i = 2; i < argc; i++) {
        int rc = 0;
        if (!only_pos && strcmp(argv[i], "--") == 0)
            only_pos = true;
        else if (!only_pos && argv[i][0] == '-' && argv[i][1] != '\0')
            rc = parse_option(o, argc, argv, &i, io);
        else
            o->pos[o->npos++] = argv[i];
        if (rc)
            return rc;
    }
    if (!o->db)
        return usage(io, "%s needs --evidence FILE.db", argv[1]);
    bool want_one = o->sub == SUB_SHOW, want_some = o->sub == SUB_IMPORT;
    if (want_one && o->npos != 1)
        return usage(io, "%s takes exactly one evidence id", "show");
    if (want_some && o->npos < 1)
        return usage(io, "%s takes one or more report files", "import");
    if (!want_one && !want_some && o->npos > 0)
        return usage(io, "unexpected argument '%s'", o->pos[0]);
    if (o->sub == SUB_PRUNE && o->prune.keep_ms < 0)
        return usage(io, "%s needs --keep DURATION", "prune");
    return 0;
}

static int open_rc(enum evidence_rc rc)
{
    return rc == EVIDENCE_E_INTERNAL ? EXACTAV_EVIDENCE_EXIT_SOFTWARE
           : rc == EVIDENCE_E_KEY    ? EXACTAV_EVIDENCE_EXIT_DATAERR
                                     : EXACTAV_EVIDENCE_EXIT_NOINPUT;
}

/* Opens the store, with the key of --store-key-file (or the environment)
 * for the subcommands that take one (the key file is read first: a refused
 * key leaves the store untouched).  *keyed: a key was given. */
static int open_db_keyed(const struct opts *o, enum evidence_open_mode mode,
                         struct evidence_db **db, bool *keyed, const struct io *io)
{
    char err[512] = "";
    struct store_key k;
    bool have = false;
    bool takes = o->sub == SUB_IMPORT || o->sub == SUB_PRUNE || o->sub == SUB_VERIFY;
    int krc = takes ? evidence_key_load("exactav evidence", o->store_key_file, &k, &have) : 0;
    if (keyed)
        *keyed = have;
    if (krc)
        return krc;
    enum evidence_rc rc = evidence_open_keyed(o->db, mode, have ? &k : NULL, db, err, sizeof err);
    if (have)
        store_key_wipe(&k); /* the connection holds its own copy */
    if (rc == EVIDENCE_OK)
        return 0;
    fprintf(io->err, "exactav evidence: %s: %s\n", o->db, err);
    return open_rc(rc);
}

static int open_db(const struct opts *o, enum evidence_open_mode mode, struct evidence_db **db,
                   const struct io *io)
{
    return open_db_keyed(o, mode, db, NULL, io);
}

static int emit(const struct opts *o, const json_t *rows, const struct io *io, bool record)
{
    int rc;
    if (o->json)
        rc = evidence_write_json(io->out, rows);
    else if (record)
        rc = evidence_write_record(io->out, rows);
    else
        rc = evidence_write_table(io->out, rows, evidence_now_ms());
    if (rc != 0 || fflush(io->out) != 0) {
        fprintf(io->err, "exactav evidence: cannot write output\n");
        return EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    return 0;
}

static int cmd_query(struct opts *o, const struct io *io)
{
    struct evidence_db *db = NULL;
    int rc = open_db(o, EVIDENCE_OPEN_RO, &db, io);
    if (rc)
        return rc;
    char err[512] = "";
    json_t *rows = NULL;
    o->filter.now_ms = evidence_now_ms();
    enum evidence_rc q = o->sub == SUB_LATEST ? evidence_latest(db, &o->filter, &rows, err, sizeof err)
                                              : evidence_list(db, &o->filter, &rows, err, sizeof err);
    if (q == EVIDENCE_OK)
        rc = emit(o, rows, io, false);
    else {
        fprintf(io->err, "exactav evidence: %s\n", err);
        rc = q == EVIDENCE_E_INVALID ? EXACTAV_EVIDENCE_EXIT_USAGE : EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    json_decref(rows);
    evidence_close(db);
    return rc;
}

static int cmd_show(const struct opts *o, const struct io *io)
{
    struct evidence_db *db = NULL;
    int rc = open_db(o, EVIDENCE_OPEN_RO, &db, io);
    if (rc)
        return rc;
    char err[512] = "";
    json_t *rec = NULL;
    enum evidence_rc q = evidence_show(db, o->pos[0], &rec, err, sizeof err);
    if (q == EVIDENCE_OK)
        rc = emit(o, rec, io, true);
    else {
        fprintf(io->err, "exactav evidence: %s\n", err);
        rc = q == EVIDENCE_E_NOTFOUND ? EXACTAV_EVIDENCE_EXIT_NOTFOUND : EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    json_decref(rec);
    evidence_close(db);
    return rc;
}

/* Reads at most EVIDENCE_MAX_REPORT_BYTES + 1 bytes: a larger file is
 * refused as invalid without reading it all (it may be a device). */
static int read_report(const char *path, char **buf, size_t *len, const struct io *io)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(io->err, "exactav evidence: %s: cannot open: %s\n", path, strerror(errno));
        return EXACTAV_EVIDENCE_EXIT_NOINPUT;
    }
    size_t cap = EVIDENCE_MAX_REPORT_BYTES + 1;
    *buf = malloc(cap);
    *len = *buf ? fread(*buf, 1, cap, f) : 0;
    int failed = ferror(f);
    fclose(f);
    if (!*buf || failed) {
        fprintf(io->err, "exactav evidence: %s: cannot read\n", path);
        return *buf ? EXACTAV_EVIDENCE_EXIT_NOINPUT : EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    if (*len == cap) {
        fprintf(io->err, "exactav evidence: %s: report: larger than %u bytes\n", path,
                EVIDENCE_MAX_REPORT_BYTES);
        return EXACTAV_EVIDENCE_EXIT_DATAERR;
    }
    return 0;
}

/* Whether every string of v (a report or part of one) is free of
 * credentials (redact_text_is_clean); when not, where (n bytes) names the
 * first such field, e.g. fetches[0].url.  Evidence never holds a secret:
 * exactav redacts what it records, and a report made by hand that did not
 * is refused rather than stored or silently rewritten. */
static bool report_is_redacted(const json_t *v, char *where, size_t n)
{
    size_t used = strlen(where);
    if (json_is_string(v))
        return redact_text_is_clean(json_string_value(v));
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(where + used, n - used, "[%zu]", i);
            if (!report_is_redacted(json_array_get(v, i), where, n))
                return false;
        }
    } else if (json_is_object(v)) {
        const char *key;
        const json_t *item;
        json_object_foreach((json_t *)v, key, item) {
            snprintf(where + used, n - used, "%s%s", used ? "." : "", key);
            if (!report_is_redacted(item, where, n))
                return false;
        }
    }
    where[used] = '\0';
    return true;
}

/* 0, or the exit code after saying which field of path holds a credential. */
/* 0, or the exit code after saying which field of path's report (root,
 * parsed; NULL when it does not parse) holds a credential. */
static int refuse_secrets(const char *path, const json_t *root, const struct io *io)
{
    char where[256] = "";
    if (!root || report_is_redacted(root, where, sizeof where))
        return 0;   /* an unparsable report is the importer's to refuse */
    fprintf(io->err, "exactav evidence: %s: report: %s holds a value exactav redacts (a signature, policy, "
                     "key id, token, password or path token) that is not redacted; evidence never "
                     "stores one\n", path, where);
    return EXACTAV_EVIDENCE_EXIT_DATAERR;
}

/* 0, or the exit code after saying why path's report (root; NULL when it
 * does not parse, the importer's to refuse) has no signature that a key of
 * trust (NULL: no --trusted-keys, nothing asked) verifies. */
static int refuse_unsigned(const char *path, const json_t *root, const struct reportsig_trust *trust,
                           const struct io *io)
{
    char why[256];
    const char *reason = trust && root ? reportsig_check(trust, root, why, sizeof why) : NULL;
    if (!reason)
        return 0;
    fprintf(io->err, "exactav evidence: %s: %s: %s\n", path, reason, why);
    return EXACTAV_EVIDENCE_EXIT_DATAERR;
}

static int import_one(struct evidence_db *db, const struct opts *o, const struct reportsig_trust *trust,
                      const char *path, json_t *summary, const struct io *io)
{
    char *buf = NULL, err[512] = "";
    size_t len = 0;
    int inserted = 0, rc = read_report(path, &buf, &len, io);
    json_t *root = rc ? NULL : json_loadb(buf, len, 0, NULL);
    if (!rc)
        rc = refuse_secrets(path, root, io);
    if (!rc)
        rc = refuse_unsigned(path, root, trust, io);
    if (rc) {
        json_decref(root);
        free(buf);
        return rc;
    }
    enum evidence_rc r = evidence_import_report(db, buf, len, &inserted, err, sizeof err);
    if (r == EVIDENCE_OK) {
        /* the id, for the message only */
        const json_t *id = json_object_get(root, "evidence_id");
        if (o->json)
            json_array_append_new(summary, json_pack("{s:s, s:O, s:b}", "file", path,
                                                     "evidence_id", id ? (json_t *)id : json_null(),
                                                     "inserted", inserted));
        else
            fprintf(io->out, "%s  %s  %s\n", inserted ? "imported " : "unchanged", path,
                    json_is_string(id) ? json_string_value(id) : "-");
    } else {
        fprintf(io->err, "exactav evidence: %s: %s\n", path, err);
        rc = r == EVIDENCE_E_INVALID || r == EVIDENCE_E_CONFLICT ? EXACTAV_EVIDENCE_EXIT_DATAERR
                                                                 : EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    json_decref(root);
    free(buf);
    return rc;
}

/* --trusted-keys, read before the store is opened.  0 or the exit code. */
static int load_trust(const struct opts *o, struct reportsig_trust **trust, const struct io *io)
{
    char err[512];
    *trust = NULL;
    int rc = o->trusted_keys ? reportsig_trust_load(o->trusted_keys, trust, err, sizeof err) : 0;
    if (rc)
        fprintf(io->err, "exactav evidence: --trusted-keys %s\n", err);
    return rc;
}

/* Every file is tried; the exit code is the worst one seen. */
static int cmd_import(const struct opts *o, const struct io *io)
{
    struct evidence_db *db = NULL;
    struct reportsig_trust *trust = NULL;
    int worst = load_trust(o, &trust, io);
    if (!worst)
        worst = open_db(o, EVIDENCE_OPEN_RW, &db, io);
    if (worst) {
        reportsig_trust_free(trust);
        return worst;
    }
    json_t *summary = json_array();
    for (int i = 0; i < o->npos; i++) {
        int rc = import_one(db, o, trust, o->pos[i], summary, io);
        worst = rc > worst ? rc : worst;
    }
    if (o->json && emit(o, summary, io, true) != 0)
        worst = EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    fflush(io->out);
    json_decref(summary);
    evidence_close(db);
    reportsig_trust_free(trust);
    return worst;
}

static int write_prune(const struct opts *o, const struct evidence_prune_result *r,
                       const struct io *io)
{
    json_t *j = evidence_prune_json(r);
    int rc = j ? 0 : -1;
    if (j && o->json)
        rc = evidence_write_json(io->out, j);
    else if (j)
        fprintf(io->out,
                "deleted  evidence %" PRId64 "  fetches %" PRId64 "  probes %" PRId64
                "  reference_decodes %" PRId64 "\n"
                "kept     newest %" PRId64 "  mismatch %" PRId64 "  (older than --keep)\n"
                "space    %" PRId64 " -> %" PRId64 " bytes, %" PRId64 " reclaimed (vacuum %s)\n"
                "transactions %" PRId64 "\n",
                r->evidence_rows, r->fetch_rows, r->probe_rows, r->decode_rows, r->kept_newest,
                r->kept_mismatch, r->bytes_before, r->bytes_after, r->bytes_before - r->bytes_after,
                r->vacuum, r->transactions);
    json_decref(j);
    if (rc != 0 || fflush(io->out) != 0) {
        fprintf(io->err, "exactav evidence: cannot write output\n");
        return EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    return 0;
}

/* A missing file is an error (exit 66), never a new empty store. */
static int cmd_prune(struct opts *o, const struct io *io)
{
    if (access(o->db, F_OK) != 0) {
        fprintf(io->err, "exactav evidence: %s: %s\n", o->db, strerror(errno));
        return EXACTAV_EVIDENCE_EXIT_NOINPUT;
    }
    struct evidence_db *db = NULL;
    int rc = open_db(o, EVIDENCE_OPEN_RW, &db, io);
    if (rc)
        return rc;
    char err[512] = "";
    struct evidence_prune_result r;
    o->prune.now_ms = evidence_now_ms();
    enum evidence_rc p = evidence_prune(db, &o->prune, &r, err, sizeof err);
    if (p == EVIDENCE_OK)
        rc = write_prune(o, &r, io);
    else {
        fprintf(io->err, "exactav evidence: %s: %s\n", o->db, err);
        rc = open_rc(p);
    }
    evidence_close(db);
    return rc;
}

static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    }
    return false;
}

/* ---- verify-store ---------------------------------------------------------------------- */

struct vfinding {
    const struct reportsig_trust *trust;
    size_t signed_ok;
    bool tampered;
    const char *table; /* of the finding: "evidence", or "profiles" (schema v7) */
    char row[EVIDENCE_ROW_STR], rule[48], detail[320];
};

static int found(struct vfinding *f, const char *row, const char *rule, const char *detail)
{
    f->tampered = true;
    f->table = "evidence";
    snprintf(f->row, sizeof f->row, "%s", row);
    snprintf(f->rule, sizeof f->rule, "%s", rule);
    snprintf(f->detail, sizeof f->detail, "%s", detail);
    return 1; /* stops the scan: the first broken row is named */
}

static int check_one(const struct evidence_row *r, const char *report, size_t len, void *ctx)
{
    struct vfinding *f = ctx;
    if (r->malformed)
        return found(f, r->id, "row_rules", r->why[0] ? r->why : "breaks a rule of a valid row");
    if (!f->trust)
        return 0;
    json_t *root = report ? json_loadb(report, len, 0, NULL) : NULL;
    char why[256];
    const char *reason = root ? reportsig_check(f->trust, root, why, sizeof why) : REPORTSIG_MISSING;
    json_decref(root);
    if (reason)
        return found(f, r->id, reason, root ? why : "no report");
    f->signed_ok++;
    return 0;
}

/* Schema v7: a stored profile is the text of every report that refers to
 * it, so its digest must still be its own (a document changed by hand
 * changes every such report, which the row rules see too). */
static int check_profiles(struct evidence_db *db, struct vfinding *f, const struct io *io)
{
    char bad[65], err[512];
    if (evidence_check_profiles(db, bad, err, sizeof err) != EVIDENCE_OK) {
        fprintf(io->err, "exactav evidence: %s\n", err);
        return EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    if (bad[0]) {
        found(f, bad, "profile_digest", "the stored profile's SHA-256 is not its digest");
        f->table = "profiles";
    }
    return 0;
}

/* With the key: the MACs, head and checkpoints, before the rules
 * (evidence_check_macs).  Without it, on a keyed store: a note that they
 * were not checked.  0 or the exit code. */
static int check_macs(const struct opts *o, struct evidence_db *db, bool keyed, struct vfinding *f,
                      struct evidence_mac_check *c, const struct io *io)
{
    char err[512] = "";
    if (!keyed) {
        if (evidence_is_keyed(db))
            fprintf(io->err, "exactav evidence: %s is keyed: its MACs, head and checkpoints were "
                             "not checked (the rules only); give --store-key-file\n", o->db);
        return 0;
    }
    enum evidence_rc rc = evidence_check_macs(db, c, err, sizeof err);
    if (rc != EVIDENCE_OK) {
        fprintf(io->err, "exactav evidence: %s: %s\n", o->db, err);
        return open_rc(rc);
    }
    if (c->tampered) {
        found(f, c->row, c->rule, c->detail);
        f->table = c->table;
    }
    return 0;
}

static int cmd_verify_store(const struct opts *o, const struct io *io)
{
    struct evidence_db *db = NULL;
    struct reportsig_trust *trust = NULL;
    bool keyed = false;
    int rc = load_trust(o, &trust, io);
    if (!rc)
        rc = open_db_keyed(o, EVIDENCE_OPEN_RO, &db, &keyed, io);
    struct vfinding f = {.trust = trust};
    struct evidence_mac_check macs = {0};
    size_t rows = 0;
    char err[512];
    if (!rc)
        rc = check_macs(o, db, keyed, &f, &macs, io);
    if (!rc && !f.tampered && evidence_scan(db, check_one, &f, &rows, err, sizeof err) != EVIDENCE_OK) {
        fprintf(io->err, "exactav evidence: %s\n", err);
        rc = EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    }
    if (!rc && !f.tampered)
        rc = check_profiles(db, &f, io);
    evidence_close(db);
    reportsig_trust_free(trust);
    if (rc)
        return rc;
    json_t *j = f.tampered ? json_pack("{s:s,s:s,s:s,s:s,s:s}", "kind", "store_tampered", "table",
                                       f.table, "row", f.row, "rule", f.rule, "detail", f.detail)
                           : json_pack("{s:s,s:I,s:I}", "kind", "store_ok", "rows", (json_int_t)rows,
                                       "signatures_verified", (json_int_t)f.signed_ok);
    if (j && keyed && !f.tampered) {
        json_object_set_new(j, "macs_verified", json_integer((json_int_t)macs.rows));
        json_object_set_new(j, "checkpoints_verified", json_integer((json_int_t)macs.checkpoints));
    }
    char *t = o->json && j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (o->json && !t)
        return EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    if (t)
        fprintf(io->out, "%s\n", t);
    else if (f.tampered)
        fprintf(io->out, "store_tampered: %s %s breaks %s: %s\n", f.table, f.row, f.rule, f.detail);
    else if (keyed)
        fprintf(io->out, "store_ok: %zu rows hold every rule, %zu signatures verified, %zu MACs "
                         "and %zu checkpoints verified, the keyed head counts every row\n",
                rows, f.signed_ok, macs.rows, macs.checkpoints);
    else
        fprintf(io->out, "store_ok: %zu rows hold every rule, %zu signatures verified\n", rows,
                f.signed_ok);
    free(t);
    return f.tampered ? EXACTAV_EVIDENCE_EXIT_TAMPERED : EXACTAV_EVIDENCE_EXIT_OK;
}

int exactav_cmd_evidence_io(int argc, char **argv, FILE *out, FILE *err)
{
    const struct io io = {out, err};
    if (wants_help(argc, argv)) {
        fputs(help_text(argc > 1 ? parse_sub(argv[1]) : SUB_NONE), out);
        return EXACTAV_EVIDENCE_EXIT_OK;
    }
    struct opts o = {.sub = argc > 1 ? parse_sub(argv[1]) : SUB_NONE,
                     .prune = {.keep_ms = -1, .keep_mismatch_ms = EVIDENCE_PRUNE_KEEP_MISMATCH_MS}};
    if (o.sub == SUB_NONE)
        return usage(&io, "unknown subcommand '%s'", argc > 1 ? argv[1] : "");
    o.pos = calloc((size_t)argc, sizeof *o.pos);
    if (!o.pos)
        return EXACTAV_EVIDENCE_EXIT_SOFTWARE;
    int rc = parse_args(&o, argc, argv, &io);
    if (rc == 0) {
        switch (o.sub) {
        case SUB_LIST:
        case SUB_LATEST: rc = cmd_query(&o, &io); break;
        case SUB_SHOW: rc = cmd_show(&o, &io); break;
        case SUB_IMPORT: rc = cmd_import(&o, &io); break;
        case SUB_PRUNE: rc = cmd_prune(&o, &io); break;
        case SUB_VERIFY: rc = cmd_verify_store(&o, &io); break;
        case SUB_NONE: rc = EXACTAV_EVIDENCE_EXIT_SOFTWARE; break;
        }
    }
    free(o.pos);
    return rc;
}

int exactav_cmd_evidence(int argc, char **argv)
{
    return exactav_cmd_evidence_io(argc, argv, stdout, stderr);
}
