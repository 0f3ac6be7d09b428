/* grant_cli.c - `stepctl grant`, `revoke`, `grants list|show`, `release`.
 *
 * Exit codes (docs/cli.md): 0 done; 64 usage; 65 refused (the reason is
 * printed: a decision that cannot be granted, an option above the step, a
 * reservation that does not fit, an unknown or already closed grant); 66
 * control.db cannot be opened; 70 internal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliutil.h"
#include "clock.h"
#include "evidence_text.h"
#include "grant.h"
#include "ledger.h"
#include "num.h"
#include "output.h"
#include "record.h"
#include "smac_cli.h"
#include "stepctl.h"
#include "tbucket.h"

static const char grant_help[] =
    "usage: stepctl grant DECISION_ID --db control.db [--max-allocations N] [--max-rate R]\n"
    "                     [--burst B] [--valid-for S] [--url-ttl S] [--actor NAME] [--json]\n"
    "                     [--verification-allocations N] [--store-key-file F]\n"
    "\n"
    "Authorizes the step proposed by a recorded decision: cohort, path, program, policy and\n"
    "intent versions, validity, count and rate caps, the reservation in the commitments\n"
    "ledger and the stop conditions, in one transaction.  Every cap defaults to the step's\n"
    "(or the policy's) value and may only be lowered.\n"
    "\n"
    "  --max-allocations N  at most N new allocations (default: the step's max_allocations)\n"
    "  --max-rate R         token bucket rate per second, a decimal (default: the step's)\n"
    "  --burst B            token bucket size (default and maximum: policy.grant.max_burst)\n"
    "  --valid-for S        grant validity from now (default: until the step's window ends)\n"
    "  --url-ttl S          URL validity of each allocation (default and maximum:\n"
    "                       policy.grant.url_ttl_s)\n"
    "  --verification-allocations N\n"
    "                       allocations the canary may take as verification sessions\n"
    "                       (\"verification\": true, stepctl serve --verification-token-file):\n"
    "                       counted apart, never viewers, never in the QoE (default 0)\n"
    "  --actor NAME         who grants (recorded; default $USER)\n"
    "  --json               print the grant as JSON instead of its id\n"
    SMAC_CLI_HELP
    "\n"
    "Refused (exit 65, reason printed): a decision that proposed no step, is older than\n"
    "policy.grant.max_decision_age_s, is already granted, is under a changed policy version,\n"
    "a cohort that has an active grant, an option above the step, a reservation that does\n"
    "not fit the ledger.\n"
    "exit: 0 granted (prints grant_id), 64 usage, 65 refused or unknown decision (or a key\n"
    "      not control.db's), 66 control.db cannot be opened, 70 internal\n";


/* grant, revoke and release write (REC_WRITE: an existing control.db,
 * migrated to schema 2 first); grants only reads (REC_READ). */
static int open_db(const char *cmd, const char *path, enum rec_mode mode, const char *key_file,
                   sqlite3 **db)
{
    return smac_cli_open(cmd, path ? path : "control.db", mode, mode == REC_READ ? NULL : key_file,
                         db);
}

/* A message quoting stored or given text, escaped (evidence_text.h). */
static void say(const char *cmd, const char *prefix, const char *text)
{
    char shown[2048];
    fprintf(stderr, "stepctl %s: %s%s\n", cmd, prefix,
            evidence_text_escape(text, false, shown, sizeof shown));
}

static void print_json(json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(j);
}

/* The grant, its events and reservations as one object. */
static json_t *grant_detail(sqlite3 *db, const struct grt_grant *g, int64_t now)
{
    json_t *o = grt_json(g, now);
    if (o) {
        json_t *ev = grt_events_json(db, g->id), *res = ldg_grant_json(db, g->id);
        json_object_set_new(o, "events", ev ? ev : json_null());
        json_object_set_new(o, "reservations", res ? res : json_null());
    }
    return o;
}

static int parse_rate(const char *s, int64_t *out)
{
    if (!s)
        return CLI_OK;
    if (num_from_string(s, NUM_MAX_UNITS, out) != 0 || *out <= 0) {
        fprintf(stderr, "stepctl grant: --max-rate must be a positive decimal with at most 6 "
                        "decimals\n");
        return CLI_USAGE;
    }
    return CLI_OK;
}

int stepctl_cmd_grant(int argc, char **argv)
{
    const char *db_path = NULL, *max = NULL, *rate = NULL, *burst = NULL, *valid = NULL,
               *ttl = NULL, *actor = NULL, *key_file = NULL, *verif = NULL, *pos[1];
    bool json = false, help;
    struct cli_opt opts[] = {{"--db", &db_path, NULL},       {"--max-allocations", &max, NULL},
                             {"--max-rate", &rate, NULL},    {"--burst", &burst, NULL},
                             {"--valid-for", &valid, NULL},  {"--url-ttl", &ttl, NULL},
                             {"--actor", &actor, NULL},      {"--json", NULL, &json},
                             {"--store-key-file", &key_file, NULL},
                             {"--verification-allocations", &verif, NULL}};
    size_t npos;
    int rc = cli_parse(argc, argv, opts, sizeof opts / sizeof opts[0], &help, pos, 1, &npos);
    if (rc != CLI_OK || help || npos != 1 || !db_path) {
        bool ok = rc == CLI_OK && help;
        fputs(grant_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    struct grt_options o = {pos[0], NULL, 0, 0, 0, 0, 0, 0};
    if ((rc = cli_actor("grant", actor, SIT_STR - 1, &o.actor)) != CLI_OK ||
        (rc = cli_int("grant", "--max-allocations", max, 1, 1000000000000LL,
                      &o.max_allocations)) != CLI_OK ||
        (rc = parse_rate(rate, &o.max_rate_micro)) != CLI_OK ||
        (rc = cli_int("grant", "--burst", burst, 1, TB_MAX_BURST, &o.burst)) != CLI_OK ||
        (rc = cli_int("grant", "--valid-for", valid, 1, 3153600000LL, &o.valid_for_s)) != CLI_OK ||
        (rc = cli_int("grant", "--url-ttl", ttl, 1, 3153600000LL, &o.url_ttl_s)) != CLI_OK ||
        (rc = cli_int("grant", "--verification-allocations", verif, 0, 1000000,
                      &o.verification_allocations)) != CLI_OK)
        return rc;
    sqlite3 *db = NULL;
    if ((rc = open_db("grant", db_path, REC_WRITE, key_file, &db)) != CLI_OK)
        return rc;
    struct grt_grant *g = malloc(sizeof *g);
    char why[768] = "";
    int64_t now = cli_now_ms();
    enum grt_outcome out = g ? grt_create(db, &o, now, g, why, sizeof why) : GRT_FAILED;
    if (out == GRT_CREATED) {
        /* Committed: only now is the grant printed. */
        if (json)
            print_json(grant_detail(db, g, now));
        else
            printf("%s\n", g->id);
        rc = CLI_OK;
    } else {
        say("grant", out == GRT_REFUSED ? "refused: " : out == GRT_NOT_FOUND ? "" : "internal: ",
            why[0] ? why : "out of memory");
        rc = out == GRT_FAILED ? CLI_SOFTWARE : CLI_DATA;
    }
    free(g);
    sqlite3_close(db);
    return rc;
}

/* Loads grant ID for a command; 0, 65 (unknown) or 70. */
static int load_grant(sqlite3 *db, const char *cmd, const char *id, struct grt_grant *g)
{
    /* A control.db of schema 1 (only a reader sees one) has no grants. */
    int r = rec_schema_version(db) < 2 ? 1 : grt_load(db, id, g);
    if (r == 0)
        return CLI_OK;
    fprintf(stderr, "stepctl %s: %s\n", cmd,
            r == 1 ? "no grant with this id" : sqlite3_errmsg(db));
    return r == 1 ? CLI_DATA : CLI_SOFTWARE;
}

static const char revoke_help[] =
    "usage: stepctl revoke GRANT_ID --reason TEXT [--db control.db] [--actor NAME]\n"
    "                      [--store-key-file F]\n"
    "\n"
    "Ends new issuance under the grant now, with the reason recorded.  URLs already issued\n"
    "are not revoked and playing sessions are not stopped: they stay counted as commitments\n"
    "(the grant's pending reservation is posted when allocations were issued).\n"
    "Refused clock_behind when this clock is behind control.db's high-water mark by more\n"
    "than 2 s (docs/security.md#time).\n"
    SMAC_CLI_HELP
    "exit: 0 revoked, 64 usage, 65 unknown grant, already closed, clock_behind or a key not\n"
    "      control.db's, 66 control.db cannot be opened, 70 internal\n";

static const char release_help[] =
    "usage: stepctl release GRANT_ID --reason TEXT [--db control.db] [--actor NAME]\n"
    "                      [--store-key-file F]\n"
    "\n"
    "Voids the grant's pending reservations with the reason recorded: the only way headroom\n"
    "comes back before its window ends.  Refused while the grant can still issue, and for\n"
    "posted reservations (a reservation is resolved once).  A grant whose validity ended by\n"
    "this clock is released only once the service confirmed it (a recorded expiry, or its\n"
    "heartbeat in control.db past valid_until_ms): refused expiry_unconfirmed otherwise.\n"
    "Refused clock_behind when this clock is behind control.db's high-water mark by more\n"
    "than 2 s (docs/security.md#time).\n"
    SMAC_CLI_HELP
    "exit: 0 released, 64 usage, 65 unknown grant, grant still active, nothing pending,\n"
    "      expiry_unconfirmed, clock_behind or a key not control.db's, 66 control.db cannot\n"
    "      be opened, 70 internal\n";

/* Release of a grant past its validity by this clock: allowed only once the
 * service confirmed it (grant.h: grt_expiry_confirmed), so a clock running
 * ahead cannot free headroom the service still honours.  CLI_OK or the
 * refusal's exit code. */
static int expiry_confirmed(sqlite3 *db, const struct grt_grant *g, int64_t now)
{
    if (grt_state(g, now) != GRT_EXPIRED)
        return CLI_OK; /* revoked, closed or exhausted: recorded in the row itself */
    int64_t hb = 0;
    int r = grt_expiry_confirmed(db, g, &hb);
    if (r < 0)
        return CLI_SOFTWARE;
    if (r == 1)
        return CLI_OK;
    fprintf(stderr,
            "stepctl release: refused: expiry_unconfirmed: the grant's validity ends at %lld ms "
            "and this clock reads %lld ms, but the service has confirmed time only up to %lld "
            "ms (its heartbeat; 0: none) and recorded no expiry; revoke the grant first, or "
            "wait for the service\n",
            (long long)g->valid_until_ms, (long long)now, (long long)hb);
    return CLI_DATA;
}

/* The write part of revoke / release, under BEGIN IMMEDIATE, at the acting
 * time of control.db's clock (clock.h). */
static int revoke_or_release(sqlite3 *db, const char *cmd, const char *id, const char *reason,
                             const char *actor, bool release)
{
    struct grt_grant g;
    int64_t clock = cli_now_ms(), now = 0;
    int rc = load_grant(db, cmd, id, &g), changed = 0;
    char line[256] = "";
    if (rc != CLI_OK)
        return rc;
    enum clk_rc c = clk_enter(db, clock, &now);
    if (c != CLK_OK) {
        clk_behind_text(line, sizeof line, clock, now);
        if (c == CLK_BEHIND)
            fprintf(stderr, "stepctl %s: refused: %s\n", cmd, line);
        rc = c == CLK_BEHIND ? CLI_DATA : CLI_SOFTWARE;
    } else if (!release) {
        int r = grt_close(db, &g, "revoked", NULL, reason, now, actor);
        if (r == 1)
            fprintf(stderr, "stepctl revoke: refused: already_closed: the grant is %s\n",
                    g.status);
        rc = r < 0 ? CLI_SOFTWARE : r == 1 ? CLI_DATA : CLI_OK;
        snprintf(line, sizeof line, "revoked %s", id);
    } else if (grt_state(&g, now) == GRT_ACTIVE) {
        fprintf(stderr, "stepctl release: refused: grant_active: revoke the grant first\n");
        rc = CLI_DATA;
    } else if ((rc = expiry_confirmed(db, &g, now)) != CLI_OK) {
        /* said */
    } else if (grt_settle(db, &g, now, actor) < 0 ||
               ldg_resolve(db, id, false, now, reason, &changed) < 0 ||
               (changed && grt_event(db, id, now, "reservations_voided", reason, actor) < 0)) {
        rc = CLI_SOFTWARE;
    } else if (!changed) {
        fprintf(stderr, "stepctl release: refused: nothing_pending: no pending reservation "
                        "(posted ones stay counted until their window ends)\n");
        rc = CLI_DATA;
    } else {
        snprintf(line, sizeof line, "voided %d reservations of %s", changed, id);
    }
    if (rc == CLI_SOFTWARE)
        fprintf(stderr, "stepctl %s: control.db: %s\n", cmd, sqlite3_errmsg(db));
    if (rc == CLI_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
        printf("%s\n", line);
        return CLI_OK;
    }
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc == CLI_OK ? CLI_SOFTWARE : rc;
}

static int close_cmd(int argc, char **argv, bool release)
{
    const char *db_path = NULL, *reason = NULL, *actor = NULL, *key_file = NULL, *pos[1];
    bool help;
    struct cli_opt opts[] = {{"--db", &db_path, NULL},
                             {"--reason", &reason, NULL},
                             {"--actor", &actor, NULL},
                             {"--store-key-file", &key_file, NULL}};
    size_t npos;
    const char *help_text = release ? release_help : revoke_help;
    int rc = cli_parse(argc, argv, opts, 4, &help, pos, 1, &npos);
    if (rc != CLI_OK || help || npos != 1 || !reason || !reason[0]) {
        bool ok = rc == CLI_OK && help;
        fputs(help_text, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    const char *who = NULL;
    if ((rc = cli_actor(argv[0], actor, SIT_STR - 1, &who)) != CLI_OK ||
        (rc = open_db(argv[0], db_path, REC_WRITE, key_file, &db)) != CLI_OK)
        return rc;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "stepctl %s: control.db: %s\n", argv[0], sqlite3_errmsg(db));
        rc = CLI_SOFTWARE;
    } else {
        rc = revoke_or_release(db, argv[0], pos[0], reason, who, release);
    }
    sqlite3_close(db);
    return rc;
}

int stepctl_cmd_revoke(int argc, char **argv)
{
    return close_cmd(argc, argv, false);
}

int stepctl_cmd_release(int argc, char **argv)
{
    return close_cmd(argc, argv, true);
}

static const char grants_help[] =
    "usage: stepctl grants list [--db control.db] [--json]\n"
    "       stepctl grants show GRANT_ID [--db control.db] [--json]\n"
    "\n"
    "list: one line per grant, newest first: id, state (active, revoked, closed, expired,\n"
    "      exhausted), path, cohort channel/rendition, used/max, valid until, decision.\n"
    "show: the grant with its validity, URL validity and expected play duration (three\n"
    "      separate quantities), caps, rate state, stop conditions, events and reservations.\n"
    "exit: 0, 64 usage, 65 unknown GRANT_ID, 66 control.db cannot be opened, 70 internal\n";

static int show_text(FILE *f, const void *arg)
{
    const json_t *o = arg;
    const json_t *v = json_object_get(o, "validity"), *r = json_object_get(o, "rate");
    const json_t *c = json_object_get(o, "cohort"), *cl = json_object_get(o, "closed");
    fprintf(f, "grant %s (%s)\n", json_string_value(json_object_get(o, "grant_id")),
            json_string_value(json_object_get(o, "state")));
    fprintf(f, "  decision        %s\n", json_string_value(json_object_get(o, "decision_id")));
    fprintf(f, "  path            %s\n", json_string_value(json_object_get(o, "path_id")));
    fprintf(f, "  cohort          %s %s %s %s %s %s\n", json_string_value(json_object_get(c, "channel")),
            json_string_value(json_object_get(c, "region")),
            json_string_value(json_object_get(c, "isp")),
            json_string_value(json_object_get(c, "client")),
            json_string_value(json_object_get(c, "build")),
            json_string_value(json_object_get(c, "rendition")));
    fprintf(f, "  grant validity  [%lld, %lld) ms\n",
            (long long)json_integer_value(json_object_get(v, "valid_from_ms")),
            (long long)json_integer_value(json_object_get(v, "valid_until_ms")));
    fprintf(f, "  URL validity    %lld s per allocation\n",
            (long long)json_integer_value(json_object_get(o, "url_ttl_s")));
    fprintf(f, "  expected play   %lld s\n",
            (long long)json_integer_value(json_object_get(o, "expected_play_s")));
    fprintf(f, "  allocations     %lld used of %lld\n",
            (long long)json_integer_value(json_object_get(o, "used")),
            (long long)json_integer_value(json_object_get(o, "max_allocations")));
    const json_t *vq = json_object_get(o, "verification");
    if (vq)
        fprintf(f, "  verification    %lld used of %lld (never viewers)\n",
                (long long)json_integer_value(json_object_get(vq, "used")),
                (long long)json_integer_value(json_object_get(vq, "max_allocations")));
    fprintf(f, "  rate            %.15g/s, burst %lld, %.3f tokens now\n",
            json_number_value(json_object_get(r, "max_rate_per_s")),
            (long long)json_integer_value(json_object_get(r, "burst")),
            json_number_value(json_object_get(r, "tokens")));
    if (json_is_object(cl))
        fprintf(f, "  closed          at %lld ms: %s\n",
                (long long)json_integer_value(json_object_get(cl, "at_ms")),
                json_string_value(json_object_get(cl, "reason")));
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(o, "events"), i, e)
        fprintf(f, "  event %-17s %lld ms by %s: %s\n", json_string_value(json_object_get(e, "kind")),
                (long long)json_integer_value(json_object_get(e, "at_ms")),
                json_string_value(json_object_get(e, "actor")),
                json_string_value(json_object_get(e, "reason")));
    json_array_foreach(json_object_get(o, "reservations"), i, e)
    {
        char amount[48];
        num_format(json_integer_value(json_object_get(e, "amount_micro")), amount, sizeof amount);
        fprintf(f, "  reservation %s%s%s/%s %s over [%lld, %lld): %s\n",
                json_string_value(json_object_get(e, "resource")),
                json_string_length(json_object_get(e, "scope")) ? ":" : "",
                json_string_value(json_object_get(e, "scope")),
                json_string_value(json_object_get(e, "metric")), amount,
                (long long)json_integer_value(json_object_get(e, "start_ms")),
                (long long)json_integer_value(json_object_get(e, "end_ms")),
                json_string_value(json_object_get(e, "state")));
    }
    return 0;
}

struct list_ctx {
    sqlite3 *db;
    bool json;
    json_t *arr; /* --json: the grants */
};

/* One line per grant on lines (or one object in c->arr); a CLI code. */
static int list_rows(FILE *lines, const void *arg)
{
    const struct list_ctx *c = arg;
    static const char sql[] = "SELECT id FROM grants ORDER BY created_at_ms DESC, id";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
        return CLI_SOFTWARE;
    int64_t now = cli_now_ms();
    int rc;
    struct grt_grant g;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
           grt_load(c->db, (const char *)sqlite3_column_text(st, 0), &g) == 0) {
        if (c->json) {
            json_array_append_new(c->arr, grt_json(&g, now));
            continue;
        }
        fprintf(lines, "%s  %-9s %-8s %s/%s  %lld/%lld  until %lld  decision %s\n", g.id,
                grt_state_name(grt_state(&g, now)), g.path_id, g.cohort.channel,
                g.cohort.rendition, (long long)g.allocated, (long long)g.max_allocations,
                (long long)g.valid_until_ms, g.decision_id);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? CLI_OK : CLI_SOFTWARE;
}

static int list(sqlite3 *db, bool json)
{
    struct list_ctx c = {db, json, json_array()};
    int rc = CLI_OK;
    /* A control.db of schema 1, read as it is, has no grants table: no grants. */
    if (rec_schema_version(db) >= 2)
        rc = json ? list_rows(stdout, &c) : out_escaped(stdout, list_rows, &c);
    if (rc < 0)
        rc = CLI_SOFTWARE;
    if (json && rc == CLI_OK)
        print_json(c.arr);
    else
        json_decref(c.arr);
    return rc;
}

int stepctl_cmd_grants(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "", *db_path = NULL, *pos[1];
    bool is_list = !strcmp(sub, "list"), is_show = !strcmp(sub, "show"), json = false, help;
    struct cli_opt opts[] = {{"--db", &db_path, NULL}, {"--json", NULL, &json}};
    size_t npos = 0;
    int rc = is_list || is_show
                 ? cli_parse(argc - 1, argv + 1, opts, 2, &help, pos, is_show ? 1 : 0, &npos)
                 : cli_parse(argc, argv, opts, 0, &help, pos, 0, &npos);
    if (rc != CLI_OK || help || !(is_list || is_show) || (is_show && npos != 1)) {
        bool ok = rc == CLI_OK && help;
        fputs(grants_help, ok ? stdout : stderr);
        return ok ? CLI_OK : CLI_USAGE;
    }
    sqlite3 *db = NULL;
    if ((rc = open_db("grants", db_path, REC_READ, NULL, &db)) != CLI_OK)
        return rc;
    if (is_list) {
        rc = list(db, json);
    } else {
        struct grt_grant g;
        if ((rc = load_grant(db, "grants show", pos[0], &g)) == CLI_OK) {
            json_t *o = grant_detail(db, &g, cli_now_ms());
            if (json)
                print_json(o);
            else if (out_escaped(stdout, show_text, o) < 0)
                rc = CLI_SOFTWARE;
            if (!json)
                json_decref(o);
        }
    }
    if (rc == CLI_SOFTWARE)
        fprintf(stderr, "stepctl grants: control.db: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}
