/* decide_cli.c - `stepctl decide`, `decisions`, `replay`, `explain`.
 *
 * Exit codes (docs/controller.md): 0 a path was chosen / success, 4 no
 * eligible path (decision recorded), 3 replay differs, 64 usage, 65 invalid
 * situation or unknown decision id, 66 a file cannot be opened or a store is
 * not usable here (cli_store_exit), 70 internal.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_probe.h"
#include "qoe_situation.h"
#include "cliutil.h"
#include "evidence_scope.h"
#include "evidence_text.h"
#include "explain.h"
#include "loop_policy.h"
#include "output.h"
#include "record.h"
#include "replay.h"
#include "vstore.h"
#include "feedback.h"
#include "next.h"
#include "situation.h"
#include "smac_cli.h"
#include "smac_keyed.h"
#include "smac_verify.h"
#include "stepctl.h"

struct cli_args {
    const char *input, *evidence, *db, *id, *key_file;
    bool json, help;
};

/* Accepts the options named in `allowed` (e.g. "ied") and one positional id
 * when want_id.  Returns 0 or 64 after printing the problem. */
static int parse_args(int argc, char **argv, const char *allowed, bool want_id,
                      struct cli_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char **dst = !strcmp(o, "--input")      ? &a->input
                           : !strcmp(o, "--evidence") ? &a->evidence
                           : !strcmp(o, "--db")       ? &a->db
                           : !strcmp(o, "--store-key-file") ? &a->key_file
                                                      : NULL;
        char key = dst == &a->input ? 'i' : dst == &a->evidence ? 'e' : dst == &a->db ? 'd' : 'k';
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a->help = true;
        } else if (!strcmp(o, "--json")) {
            a->json = true;
        } else if (dst && strchr(allowed, key)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "stepctl %s: %s needs a value\n", argv[0], o);
                return CLI_USAGE;
            }
            *dst = argv[++i];
        } else if (want_id && o[0] != '-' && !a->id) {
            a->id = o;
        } else {
            fprintf(stderr, "stepctl %s: unexpected argument '%s' (see --help)\n", argv[0], o);
            return CLI_USAGE;
        }
    }
    return CLI_OK;
}

static void print_json(const json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
}

static const char decide_help[] =
    "usage: stepctl decide --input SITUATION.json --evidence evidence.db --db control.db [--json]\n"
    "                      [--store-key-file F]\n"
    "\n"
    "Checks every candidate path against the mandatory conditions (content, access, qoe,\n"
    "resources, cost: each PASS, VIOLATION or UNKNOWN), prefers among the eligible ones by\n"
    "cost, then QoE, then policy.order, records the decision in control.db (one transaction)\n"
    "and only then prints it.  evidence.db is opened read-only.\n"
    "\n"
    "  --input F     situation JSON (schema: docs/controller.md; a resources item without\n"
    "                background_upper takes it from Prometheus when the policy declares\n"
    "                policy.feedback.prometheus.background)\n"
    "  --evidence F  evidence store, schema v1 or v2 (read-only; rows that break the rules\n"
    "                of a valid evidence row are never applicable, the reason is printed;\n"
    "                a candidate without `access` takes the newest availability probe of\n"
    "                its path, see docs/controller.md)\n"
    "  --db F        control.db (created when absent; a resources item without\n"
    "                commitments_upper takes it from the commitments ledger there)\n"
    "  --json        print the full decision JSON instead of a summary\n"
    SMAC_CLI_HELP
    "\n"
    "exit: 0 step proposed, 4 no eligible path (recorded, with the pre-declared refusal),\n"
    "      64 usage, 65 invalid situation (names the field; a decimal is read exactly or\n"
    "      refused; a background_upper Prometheus cannot give) or a key not control.db's, 66 a file cannot be opened or a store is not usable (missing, not\n"
    "      ours, the other store, another schema version), 70 internal\n";

/* Rows that break the rules of a valid row make the content condition
 * UNKNOWN (evidence_malformed); the reason is said here, once. */
static void warn_malformed(const struct evidence_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++)
        if (rows->rows[i].malformed)
            fprintf(stderr, "stepctl decide: evidence %s (path %s) is not valid evidence, never "
                            "applicable: %s\n", rows->rows[i].id, rows->rows[i].path_id,
                    rows->rows[i].why[0] ? rows->rows[i].why : "malformed");
}

/* commitments_upper left out of the situation: from the ledger, read in one
 * snapshot.  0 or -1. */
static int fill_from_ledger(sqlite3 *db, struct sit_situation *s, struct ldg_fills *fills)
{
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    int rc = ldg_fill(db, s, fills);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return rc;
}

/* Decides and records; *answer is the result to print. */
static int decide_text(const struct cli_args *a, const char *text, size_t len, json_t **answer)
{
    char err[1024] = "";
    struct sit_situation s;
    struct lpol lp;
    if (sit_parse(text, len, &s, err, sizeof err) != 0) {
        fprintf(stderr, "stepctl decide: invalid situation: %s\n", err);
        return CLI_DATA;
    }
    if (lpol_parse(text, len, &s, &lp, err, sizeof err) != 0) { /* checked now, used by grant */
        fprintf(stderr, "stepctl decide: invalid situation: %s\n", err);
        sit_free(&s);
        return CLI_DATA;
    }
    if (fb_policy_check(text, len, err, sizeof err) != 0) { /* checked now, used by next */
        fprintf(stderr, "stepctl decide: invalid situation: %s\n", err);
        sit_free(&s);
        return CLI_DATA;
    }
    struct evidence_rows rows;
    enum evidence_rc es = evs_read(a->evidence, &s, &rows, err, sizeof err);
    if (es != EVIDENCE_OK) {
        fprintf(stderr, "stepctl decide: --evidence %s: %s\n", a->evidence, err);
        sit_free(&s);
        return cli_store_exit(es == EVIDENCE_E_OPEN || es == EVIDENCE_E_VERSION);
    }
    warn_malformed(&rows);
    sqlite3 *db = NULL;
    int orc = smac_cli_open("decide", a->db, REC_CREATE, a->key_file, &db); /* says why */
    char id[REC_ID_LEN];
    struct ldg_fills fills = {NULL, 0};
    err[0] = '\0';
    int rc = orc != CLI_OK ? orc
             : fill_from_ledger(db, &s, &fills) != 0 || rec_new_id(id) != 0
                 ? CLI_SOFTWARE
                 : rpl_recompute(&s, s.has_decision_time ? s.decision_time_ms : cli_now_ms(), &rows,
                                 id, STEPCTL_VERSION, answer);
    if (rc == CLI_OK) {
        struct rec_record r = {id, cli_now_ms(), text, len, &rows, *answer};
        if (rec_insert_fills(db, &r, &fills, err, sizeof err) != REC_OK) {
            rc = CLI_SOFTWARE;
            json_decref(*answer);
            *answer = NULL;
        }
    }
    if (orc == CLI_OK && rc != CLI_OK && rc != CLI_DATA)
        fprintf(stderr, "stepctl decide: %s\n", err[0] ? err : "internal error");
    sqlite3_close(db);
    evidence_rows_free(&rows);
    ldg_fills_free(&fills);
    sit_free(&s);
    return rc;
}

/* Candidates without access take the newest probe (access_probe.h); the
 * situation so completed is the one decided and recorded. */
static int decide_and_record(const struct cli_args *a, const char *text, size_t len,
                             json_t **answer)
{
    char *filled = NULL, *with_qoe = NULL;
    size_t filled_len = 0, qoe_len = 0;
    if (acp_fill(a->evidence, text, len, cli_now_ms(), &filled, &filled_len) != 0)
        return CLI_SOFTWARE;
    if (filled)
        text = filled, len = filled_len;
    /* Candidates without qoe: their viewer sessions (qoe_situation.h). */
    if (qoe_fill_situation(a->db, text, len, cli_now_ms(), &with_qoe, &qoe_len) != 0) {
        free(filled);
        return CLI_SOFTWARE;
    }
    if (with_qoe)
        text = with_qoe, len = qoe_len;
    /* Items without background_upper: Prometheus, when declared (feedback.h). */
    char *with_bg = NULL, err[512];
    size_t bg_len = 0;
    int bg = fb_fill_background(text, len, &with_bg, &bg_len, err, sizeof err);
    if (bg == 1)
        fprintf(stderr, "stepctl decide: invalid situation: %s\n", err);
    int rc = bg != 0 ? (bg == 1 ? CLI_DATA : CLI_SOFTWARE)
                     : decide_text(a, with_bg ? with_bg : text, with_bg ? bg_len : len, answer);
    free(with_bg);
    free(with_qoe);
    free(filled);
    return rc;
}

int stepctl_cmd_decide(int argc, char **argv)
{
    struct cli_args a;
    int rc = parse_args(argc, argv, "iedk", false, &a);
    if (rc != CLI_OK || a.help) {
        fputs(decide_help, a.help && rc == CLI_OK ? stdout : stderr);
        return rc;
    }
    if (!a.input || !a.evidence || !a.db) {
        fprintf(stderr, "stepctl decide: --input, --evidence and --db are required\n%s",
                decide_help);
        return CLI_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    if ((rc = cli_slurp(a.input, SIT_MAX_INPUT_BYTES, &text, &len)) != CLI_OK)
        return rc;
    json_t *answer = NULL;
    rc = decide_and_record(&a, text, len, &answer);
    free(text);
    if (rc != CLI_OK)
        return rc;
    /* The record is committed: only now may the answer be printed. */
    if (a.json)
        print_json(answer);
    else
        out_summary(stdout, answer);
    int chosen = json_is_string(json_object_get(answer, "chosen"));
    json_decref(answer);
    return chosen ? CLI_OK : CLI_NEGATIVE;
}

/* Opens an existing control.db (default ./control.db) read-only: the
 * readers work on a store they cannot write. */
static int open_existing(const struct cli_args *a, const char *cmd, sqlite3 **db)
{
    return smac_cli_open(cmd, a->db ? a->db : "control.db", REC_READ, NULL, db);
}

/* The same for replay and explain with --store-key-file (or
 * $STEPCTL_STORE_KEY_FILE) into k (*have): a keyed store's MACs are then
 * checked too (store_tampered).  The caller wipes k. */
static int open_keyed(const struct cli_args *a, const char *cmd, sqlite3 **db,
                      struct store_key *k, bool *have)
{
    int rc = smac_cli_key(cmd, a->key_file, k, have);
    if (rc != CLI_OK)
        return rc;
    char err[1024];
    enum rec_status st = rec_open_keyed(a->db ? a->db : "control.db", REC_READ, *have ? k : NULL,
                                        db, err, sizeof err);
    if (st != REC_OK)
        fprintf(stderr, "stepctl %s: --db %s\n", cmd, err);
    return smac_cli_exit(st);
}

/* Loads record ID; 0, 65 (unknown id) or 70. */
static int load(sqlite3 *db, const char *cmd, const char *id, struct rec_loaded *l)
{
    char err[512];
    enum rec_status st = rec_load(db, id, l, err, sizeof err);
    if (st == REC_OK)
        return CLI_OK;
    char shown[2048]; /* the message quotes the id as given */
    fprintf(stderr, "stepctl %s: %s\n", cmd, evidence_text_escape(err, false, shown, sizeof shown));
    return st == REC_NOT_FOUND ? CLI_DATA : CLI_SOFTWARE;
}

static const char decisions_help[] =
    "usage: stepctl decisions list [--db control.db] [--json]\n"
    "       stepctl decisions show ID [--db control.db]\n"
    "\n"
    "list: one line per recorded decision, newest first (--json: an array).\n"
    "show: the full record as JSON: the situation as given, the evidence rows as read,\n"
    "      and the recorded answer.\n"
    "With --store-key-file F (default $STEPCTL_STORE_KEY_FILE) a keyed store's MACs are\n"
    "checked too; the first broken one is printed after the answer (store_tampered).\n"
    "exit: 0, 64 usage, 65 unknown ID or a key not control.db's, 66 control.db cannot be\n"
    "      opened or is not usable (opened read-only), 70 internal\n";

static json_t *rows_json(const struct evidence_rows *rows)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rows->n; i++) {
        const struct evidence_row *e = &rows->rows[i];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b}", "id", e->id,
                         "check_kind", e->check_kind, "verdict", evidence_verdict_name(e->verdict),
                         "reason", e->reason, "profile_id", e->profile_id, "path_id", e->path_id,
                         "channel", e->channel, "rendition", e->rendition, "program_version",
                         e->program_version, "reference_version", e->reference_version,
                         "observed_at_ms", (json_int_t)e->observed_at_ms, "recorded_at_ms",
                         (json_int_t)e->recorded_at_ms, "malformed", e->malformed));
    }
    return a;
}

static int show(sqlite3 *db, const char *id)
{
    struct rec_loaded l;
    int rc = load(db, "decisions show", id, &l);
    if (rc != CLI_OK)
        return rc;
    json_t *sit = json_loadb(l.situation, l.situation_len, 0, NULL);
    json_t *o = json_pack("{s:s,s:s,s:I,s:o,s:o,s:O}", "decision_id", id, "tool_version",
                          l.tool_version, "decision_time_ms", (json_int_t)l.decision_time_ms,
                          "situation", sit ? sit : json_string(l.situation), "evidence_rows",
                          rows_json(&l.rows), "result", l.result);
    print_json(o);
    json_decref(o);
    rec_loaded_free(&l);
    return CLI_OK;
}

int stepctl_cmd_decisions(int argc, char **argv)
{
    struct cli_args a;
    const char *sub = argc > 1 ? argv[1] : "";
    bool is_list = !strcmp(sub, "list"), is_show = !strcmp(sub, "show");
    int rc = (is_list || is_show) ? parse_args(argc - 1, argv + 1, "d", is_show, &a)
                                  : parse_args(argc, argv, "", false, &a);
    if (rc != CLI_OK || a.help || !(is_list || is_show) || (is_show && !a.id)) {
        bool ok = rc == CLI_OK && a.help;
        fputs(decisions_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    if ((rc = open_existing(&a, "decisions", &db)) != CLI_OK)
        return rc;
    char err[512];
    if (is_list) {
        rc = rec_list(db, stdout, a.json, err, sizeof err) == REC_OK ? CLI_OK : CLI_SOFTWARE;
        if (rc != CLI_OK)
            fprintf(stderr, "stepctl decisions: %s\n", err);
    } else {
        rc = show(db, a.id);
    }
    sqlite3_close(db);
    return rc;
}

static const char replay_help[] =
    "usage: stepctl replay ID [--db control.db] [--json] [--store-key-file F]\n"
    "\n"
    "Recomputes decision ID from its recorded inputs alone (the situation as given, the\n"
    "decision time, the evidence rows as read, and the commitments decide took from the\n"
    "ledger; neither evidence.db nor today's ledger is read) and compares the result with\n"
    "the recorded answer, field by field (tool_version is ignored), and with every stored\n"
    "column and decision_conditions row derived from it.  ID may also name a `next` review\n"
    "that recorded resource feedback from Prometheus: its verdict is recomputed from the\n"
    "recorded queries and answers alone (Prometheus is not asked) and compared.\n"
    "A control.db that breaks a rule of a valid row (stepctl verify-store) is never\n"
    "identical: the first broken row is printed (store_tampered) and the exit is 3.\n"
    "With --store-key-file F (default $STEPCTL_STORE_KEY_FILE) a keyed store's MACs are\n"
    "checked first (docs/security.md#tamper-evidence); a wrong key is 65.\n"
    "exit: 0 identical, 3 different (each difference printed) or store_tampered, 64 usage,\n"
    "      65 unknown ID, or the recorded situation or ledger values no longer valid, 66\n"
    "      control.db cannot be opened or is not usable, 70 internal\n";

static int replay_one(sqlite3 *db, const char *id, bool as_json)
{
    struct rec_loaded l;
    int rc = load(db, "replay", id, &l);
    if (rc != CLI_OK)
        return rc;
    char err[512];
    struct sit_situation s;
    json_t *again = NULL;
    if (sit_parse(l.situation, l.situation_len, &s, err, sizeof err) != 0) {
        fprintf(stderr, "stepctl replay: recorded situation is not valid any more: %s\n", err);
        rec_loaded_free(&l);
        return CLI_DATA;
    }
    if (ldg_apply(&s, &l.fills, err, sizeof err) != 0) {
        fprintf(stderr, "stepctl replay: %s\n", err);
        sit_free(&s);
        rec_loaded_free(&l);
        return CLI_DATA;
    }
    rc = rpl_recompute(&s, l.decision_time_ms, &l.rows, id, STEPCTL_VERSION, &again);
    if (rc == CLI_OK) {
        FILE *report = as_json ? stderr : stdout;
        size_t n = rpl_compare(&l, again, report);
        if (as_json)
            printf("{\"decision_id\": \"%s\", \"identical\": %s, \"differences\": %zu}\n", id,
                   n ? "false" : "true", n);
        else
            printf("replay %s: %s\n", id, n ? "DIFFERENT" : "identical");
        rc = n ? RPL_EXIT_DIFFERENT : CLI_OK;
    }
    json_decref(again);
    sit_free(&s);
    rec_loaded_free(&l);
    return rc;
}

/* Does control.db break a MAC (with key k, on a keyed store: smac_verify.h)
 * or a rule of a valid row (vstore.h)?  Says which on f.  An error of the
 * check is no finding (the command's own reads said). */
static bool store_tampered(FILE *f, sqlite3 *db, const struct store_key *k)
{
    struct vst_finding v;
    size_t rules;
    int keyed = smac_is_keyed(db);
    if (keyed > 0 && !k)
        fprintf(stderr, "stepctl: control.db is keyed: its MACs are checked only with "
                        "--store-key-file\n");
    if (!(keyed > 0 && k && smac_verify(db, k, &v, &rules) == 1) && vst_check(db, &v, &rules) != 1)
        return false;
    fprintf(f, "store_tampered: control.db: %s %s breaks %s (%s): stepctl verify-store\n",
            v.table, v.row, v.rule, v.detail);
    return true;
}

int stepctl_cmd_replay(int argc, char **argv)
{
    struct cli_args a;
    int rc = parse_args(argc, argv, "dk", true, &a);
    if (rc != CLI_OK || a.help || !a.id) {
        bool ok = rc == CLI_OK && a.help;
        fputs(replay_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    struct store_key key;
    bool have = false;
    if ((rc = open_keyed(&a, "replay", &db, &key, &have)) != CLI_OK) {
        smac_key_wipe(&key);
        return rc;
    }
    json_t *review = NULL; /* a next review with resource feedback (feedback.h) */
    if (nxt_load(db, a.id, &review) == 0 && json_object_get(review, "resource_feedback")) {
        int same = fb_replay(db, review, a.json, stdout);
        rc = same == 0 ? CLI_OK : same == 1 ? RPL_EXIT_DIFFERENT : CLI_SOFTWARE;
    } else
        rc = replay_one(db, a.id, a.json);
    json_decref(review);
    if (rc == CLI_OK && store_tampered(stdout, db, have ? &key : NULL))
        rc = RPL_EXIT_DIFFERENT; /* recomputed from rows no stepctl command wrote */
    smac_key_wipe(&key);
    sqlite3_close(db);
    return rc;
}

static const char explain_help[] =
    "usage: stepctl explain ID [--db control.db] [--store-key-file F]\n"
    "\n"
    "Answers in plain words the seven questions of the decision loop for a recorded\n"
    "decision: the bounded action and its owner, the evidence and every exclusion reason,\n"
    "the comparison rule, the shared resources and commitments counted, what is\n"
    "authorized, the observations that decide the step, and what follows each outcome.\n"
    "ID may also name a grant (what it authorizes, its three durations, its reservation,\n"
    "what ends it, what happened) or a next decision (the step, the observations that\n"
    "counted, the evaluation of the next step, the outcome).\n"
    "With --store-key-file F (default $STEPCTL_STORE_KEY_FILE) a keyed store's MACs are\n"
    "checked too; the first broken one is printed after the answer (store_tampered).\n"
    "exit: 0, 64 usage, 65 unknown ID or a key not control.db's, 66 control.db cannot be\n"
    "      opened or is not usable (opened read-only), 70 internal\n";

int stepctl_cmd_explain(int argc, char **argv)
{
    struct cli_args a;
    int rc = parse_args(argc, argv, "dk", true, &a);
    if (rc != CLI_OK || a.help || !a.id) {
        bool ok = rc == CLI_OK && a.help;
        fputs(explain_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    struct store_key key;
    bool have = false;
    if ((rc = open_keyed(&a, "explain", &db, &key, &have)) != CLI_OK) {
        smac_key_wipe(&key);
        return rc;
    }
    /* A grant or a next decision, else a decision. */
    int loop = xpl_loop(stdout, db, a.id, cli_now_ms());
    struct rec_loaded l;
    rc = loop < 0 ? CLI_SOFTWARE : loop == 0 ? CLI_OK : load(db, "explain", a.id, &l);
    if (loop == 1 && rc == CLI_OK) {
        xpl_write(stdout, l.result);
        rec_loaded_free(&l);
    }
    if (rc == CLI_OK)
        store_tampered(stdout, db, have ? &key : NULL); /* after the explanation, never instead */
    smac_key_wipe(&key);
    if (loop < 0)
        fprintf(stderr, "stepctl explain: control.db: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}
