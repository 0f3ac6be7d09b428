/* plan_cli.c - `stepctl plan`: argument parsing, input, run, output.
 *
 * Exit codes: 0 ok, 64 usage, 65 invalid input (the message names the
 * field), 66 a file cannot be opened, 70 internal, 75 optimal not proven
 * within its time limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_algo.h"
#include "plan_gen.h"
#include "plan_json.h"
#include "stepctl.h"

enum { EX_OK_ = 0, EX_USAGE_ = 64, EX_DATAERR_ = 65, EX_NOINPUT_ = 66, EX_SOFTWARE_ = 70,
       EX_TIMELIMIT_ = 75 /* sysexits EX_TEMPFAIL: a larger budget may succeed */ };

typedef enum { OUT_TEXT = 0, OUT_JSON, OUT_TSV } out_mode;

typedef struct {
    plan_algo algo;
    const char *input, *eua, *coverage, *write_input;
    bool synthetic, haversine, help;
    out_mode out;
    int n_out; /* --json and --tsv given: at most one */
    long time_limit_ms;
    double radius_m;
    plan_gen_opts gen;
} plan_args;

static const char usage_text[] =
    "usage: stepctl plan [--algorithm NAME] (--input PLAN.json | --eua DIR | --synthetic)\n"
    "                    (... | --overload RATIO)\n"
    "                    [--users N] [--servers N] [--seed S] [--demand LO:HI]\n"
    "                    [--weight-a A] [--capacity-scale X] [--write-input FILE]\n"
    "                    [--time-limit-ms MS] [--json | --tsv]\n"
    "       stepctl plan --coverage DIR [--radius M] [--haversine]\n"
    "\n"
    "Assigns each live viewer one edge server and one bitrate, maximising the sum of\n"
    "gift-weighted QoE under per-server bandwidth D_m and transcoding CPU C_m (LUA\n"
    "model, docs/lua.md).  Servers not admitted (input \"admission\" not PASS) are\n"
    "never assigned; viewers no admitted server can take are reported unserved.\n"
    "\n"
    "  --algorithm NAME   lua (default; the paper's greedy), lua-ls (ours: Lagrangian\n"
    "                     prices + multi-start local search, polynomial), df (lowest\n"
    "                     delay first, expected bitrate), mhcp\n"
    "                     (most remaining space, highest bitrate), random (seeded by\n"
    "                     --seed), optimal (exact 0-1 ILP via GLPK, at most 20000\n"
    "                     decision variables, --time-limit-ms)\n"
    "  --input FILE       the instance as JSON (schema in docs/lua.md)\n"
    "  --eua DIR          generate an instance from the EUA data set in DIR: the\n"
    "                     --servers sites nearest a random site, --users viewers in\n"
    "                     their overlap (paper section 4.1 settings)\n"
    "  --synthetic        generate uniform servers/viewers (~15 servers per viewer)\n"
    "  --overload RATIO   generate an overloaded instance: --servers servers 350 m\n"
    "                     apart along a street (a viewer sees one or two), uneven\n"
    "                     D_m and C_m scaled so that demand / capacity\n"
    "                     = users x R / sum (D_m + C_m / H) = RATIO\n"
    "  --users N, --servers N   generated size (default 100 x 10)\n"
    "  --seed S           seed for generators and random (default 1)\n"
    "  --demand LO:HI     interaction demand I_v range when generating (default 0:3)\n"
    "  --weight-a A       QoE weight a when generating (default 5)\n"
    "  --capacity-scale X generated D_m = 40X Mbps, C_m = 15X vCPU (default 1)\n"
    "  --write-input FILE also write the instance as PLAN.json\n"
    "  --time-limit-ms MS optimal: GLPK's time budget (default 30000, at most 3600000)\n"
    "  --json             (or --tsv, not both) print the full result: per-viewer server, bitrate, latency,\n"
    "                     interaction, QoE; per-server load; aggregate metrics\n"
    "  --tsv              print one line: algorithm viewers servers seed served\n"
    "                     unserved mean_latency_ms mean_bitrate_mbps mean_interaction\n"
    "                     mean_bitrate_drop_mbps switch_count mean_switches mean_qoe\n"
    "                     weighted_qoe elapsed_ms mean_qoe_served\n"
    "  --coverage DIR     print how many EUA users see <10, 10-20, >20 sites within\n"
    "                     --radius metres (default 300; WGS-84 geodesic, Vincenty;\n"
    "                     --haversine uses the sphere instead)\n"
    "\n"
    "exit: 0 ok, 64 usage, 65 invalid input (names the field; optimal beyond its size\n"
    "limit), 66 a file cannot be opened, 70 internal error, 75 optimal not proven\n"
    "within --time-limit-ms (no allocation is printed)\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "stepctl plan: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see stepctl plan --help)\n");
    return EX_USAGE_;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || x != x)
        return false;
    *out = x;
    return true;
}

static bool parse_range(const char *s, double *lo, double *hi)
{
    char buf[64];
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof buf)
        return false;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    return parse_double(buf, lo) && parse_double(colon + 1, hi) && *lo >= 0 && *hi >= *lo;
}

/* Options that take a value; returns 0, or an exit code. */
static int parse_valued(plan_args *a, const char *opt, const char *val)
{
    long n;
    if (strcmp(opt, "--algorithm") == 0) {
        a->algo = plan_algo_parse(val);
        return a->algo == PLAN_ALGO_NONE ? usage_error("unknown algorithm '%s'", val) : 0;
    }
    if (strcmp(opt, "--input") == 0) a->input = val;
    else if (strcmp(opt, "--eua") == 0) a->eua = val;
    else if (strcmp(opt, "--coverage") == 0) a->coverage = val;
    else if (strcmp(opt, "--write-input") == 0) a->write_input = val;
    else if (strcmp(opt, "--users") == 0 && parse_long(val, 1, PLAN_MAX_VIEWERS, &n)) a->gen.users = (int)n;
    else if (strcmp(opt, "--servers") == 0 && parse_long(val, 1, 10000, &n)) a->gen.servers = (int)n;
    else if (strcmp(opt, "--seed") == 0 && parse_long(val, 0, 0x7fffffffL, &n)) a->gen.seed = (uint64_t)n;
    else if (strcmp(opt, "--demand") == 0 && parse_range(val, &a->gen.demand_lo, &a->gen.demand_hi)) ;
    else if (strcmp(opt, "--weight-a") == 0 && parse_double(val, &a->gen.a) && a->gen.a >= 0) ;
    else if (strcmp(opt, "--capacity-scale") == 0 && parse_double(val, &a->gen.capacity_scale) &&
             a->gen.capacity_scale > 0) ;
    else if (strcmp(opt, "--overload") == 0 && parse_double(val, &a->gen.overload) &&
             a->gen.overload > 0 && a->gen.overload <= 1e6) ;
    else if (strcmp(opt, "--radius") == 0 && parse_double(val, &a->radius_m) && a->radius_m >= 0) ;
    else if (strcmp(opt, "--time-limit-ms") == 0 &&
             parse_long(val, 1, PLAN_OPTIMAL_TIME_LIMIT_MAX_MS, &a->time_limit_ms)) ;
    else return usage_error("bad value for option: %s", opt);
    return 0;
}

static bool takes_value(const char *opt)
{
    static const char *const valued[] = {"--algorithm", "--input", "--eua", "--coverage",
        "--write-input", "--users", "--servers", "--seed", "--demand", "--weight-a",
        "--capacity-scale", "--radius", "--time-limit-ms", "--overload"};
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
        if (strcmp(opt, valued[i]) == 0)
            return true;
    return false;
}

static int parse_args(int argc, char **argv, plan_args *a)
{
    memset(a, 0, sizeof *a);
    a->algo = PLAN_ALGO_LUA;
    a->radius_m = 300.0;
    a->time_limit_ms = PLAN_OPTIMAL_TIME_LIMIT_MS;
    plan_gen_opts_default(&a->gen);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (takes_value(o)) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", o);
            int rc = parse_valued(a, o, argv[++i]);
            if (rc)
                return rc;
        } else if (strcmp(o, "--json") == 0) a->out = OUT_JSON, a->n_out++;
        else if (strcmp(o, "--tsv") == 0) a->out = OUT_TSV, a->n_out++;
        else if (strcmp(o, "--synthetic") == 0) a->synthetic = true;
        else if (strcmp(o, "--haversine") == 0) a->haversine = true;
        else if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) a->help = true;
        else return usage_error("unknown argument '%s'", o);
    }
    if (a->n_out > 1)
        return usage_error("%s", "--json and --tsv are two output formats: give one");
    int sources = (a->input != NULL) + (a->eua != NULL) + a->synthetic + (a->coverage != NULL) +
                  (a->gen.overload > 0);
    if (!a->help && sources != 1)
        return usage_error("%s", "give exactly one of --input, --eua, --synthetic, --overload, "
                           "--coverage");
    return 0;
}

static int gen_exit(plan_gen_status st)
{
    return st == PLAN_GEN_OK ? EX_OK_ : st == PLAN_GEN_NOFILE ? EX_NOINPUT_
         : st == PLAN_GEN_NOMEM ? EX_SOFTWARE_ : EX_DATAERR_;
}

static int run_coverage(const plan_args *a)
{
    plan_points sites, users;
    plan_coverage c;
    char err[512] = "";
    plan_gen_status st = plan_eua_load(a->coverage, &sites, &users, err, sizeof err);
    if (st != PLAN_GEN_OK) {
        fprintf(stderr, "stepctl plan: %s\n", err);
        return gen_exit(st);
    }
    plan_coverage_count(&sites, &users, a->radius_m, a->haversine, &c);
    double n = c.users > 0 ? c.users : 1;
    printf("sites %d users %d radius_m %g distance %s\n", sites.n, c.users, a->radius_m,
           a->haversine ? "haversine" : "vincenty-wgs84");
    printf("below10 %d %.1f%%\nfrom10to20 %d %.1f%%\nabove20 %d %.1f%%\nuncovered %d max %d\n",
           c.below10, 100.0 * c.below10 / n, c.from10to20, 100.0 * c.from10to20 / n,
           c.above20, 100.0 * c.above20 / n, c.uncovered, c.max_sites);
    plan_points_free(&sites);
    plan_points_free(&users);
    return EX_OK_;
}

static int load_instance(const plan_args *a, plan_instance *in)
{
    char err[512] = "";
    if (a->input) {
        plan_load_status st = plan_json_load_file(a->input, in, err, sizeof err);
        if (st != PLAN_LOAD_OK)
            fprintf(stderr, "stepctl plan: %s\n", err);
        return st == PLAN_LOAD_OK ? EX_OK_ : st == PLAN_LOAD_NOFILE ? EX_NOINPUT_
             : st == PLAN_LOAD_NOMEM ? EX_SOFTWARE_ : EX_DATAERR_;
    }
    plan_gen_status st;
    if (a->synthetic) {
        st = plan_gen_synthetic(&a->gen, in, err, sizeof err);
    } else if (a->gen.overload > 0) {
        st = plan_gen_overload(&a->gen, in, err, sizeof err);
    } else {
        plan_points sites, users;
        st = plan_eua_load(a->eua, &sites, &users, err, sizeof err);
        if (st == PLAN_GEN_OK) {
            st = plan_gen_eua(&sites, &users, &a->gen, in, err, sizeof err);
            plan_points_free(&sites);
            plan_points_free(&users);
        }
    }
    if (st != PLAN_GEN_OK)
        fprintf(stderr, "stepctl plan: %s\n", err[0] ? err : "out of memory");
    return gen_exit(st);
}

static int write_json(json_t *j, const char *path)
{
    int rc = path ? json_dump_file(j, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10))
                  : json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    if (!path && rc == 0)
        fputc('\n', stdout);
    return rc;
}

static void print_result(const plan_args *a, const plan_instance *in, const plan_choice *ch,
                         double ms)
{
    plan_metrics m;
    plan_evaluate(in, ch, &m);
    if (a->out == OUT_TSV) {
        printf("%s\t%d\t%d\t%llu\t%d\t%d\t%.6f\t%.6f\t%.6f\t%.6f\t%d\t%.6f\t%.6f\t%.6f\t%.6f"
               "\t%.6f\n",
               plan_algo_name(a->algo), in->n_viewers, in->n_servers,
               (unsigned long long)a->gen.seed, m.served, m.unserved, m.mean_latency_ms,
               m.mean_bitrate_mbps, m.mean_interaction, m.mean_bitrate_drop_mbps,
               m.switches, m.mean_switches, m.mean_qoe, m.weighted_qoe, ms, m.mean_qoe_served);
        return;
    }
    printf("algorithm %s: %d viewers, %d servers, %d served, %d unserved, %.3f ms\n",
           plan_algo_name(a->algo), in->n_viewers, in->n_servers, m.served, m.unserved, ms);
    printf("mean latency %.1f ms, bitrate %.3f Mbps, interaction %.4f, bitrate drop %.3f "
           "Mbps, switches %d, mean QoE %.4f, weighted QoE %.4f\n", m.mean_latency_ms,
           m.mean_bitrate_mbps, m.mean_interaction, m.mean_bitrate_drop_mbps, m.switches,
           m.mean_qoe, m.weighted_qoe);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int plan_and_report(const plan_args *a, const plan_instance *in)
{
    char err[512] = "";
    plan_choice *ch = calloc((size_t)(in->n_viewers ? in->n_viewers : 1), sizeof *ch);
    if (!ch)
        return EX_SOFTWARE_;
    double t0 = now_ms();
    plan_status st = a->algo == PLAN_ALGO_OPTIMAL
                         ? plan_optimal(in, (int)a->time_limit_ms, ch, err, sizeof err)
                         : plan_run(in, a->algo, a->gen.seed, ch, err, sizeof err);
    double ms = now_ms() - t0;
    int rc = EX_OK_;
    if (st != PLAN_STATUS_OK) {
        fprintf(stderr, "stepctl plan: %s\n", err[0] ? err : "internal error");
        rc = st == PLAN_STATUS_TOO_LARGE    ? EX_DATAERR_
             : st == PLAN_STATUS_TIME_LIMIT ? EX_TIMELIMIT_
                                            : EX_SOFTWARE_;
    } else if (!plan_check(in, ch, err, sizeof err)) {
        /* An algorithm broke a constraint: a bug, never a result. */
        fprintf(stderr, "stepctl plan: internal: %s\n", err);
        rc = EX_SOFTWARE_;
    } else if (a->out == OUT_JSON) {
        json_t *j = plan_json_result(in, a->algo, ch, ms);
        rc = j && write_json(j, NULL) == 0 ? EX_OK_ : EX_SOFTWARE_;
        json_decref(j);
    } else {
        print_result(a, in, ch, ms);
    }
    free(ch);
    return rc;
}

int stepctl_cmd_plan(int argc, char **argv)
{
    plan_args a;
    plan_instance in;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    if (a.help) {
        fputs(usage_text, stdout);
        return EX_OK_;
    }
    if (a.coverage)
        return run_coverage(&a);
    rc = load_instance(&a, &in);
    if (rc)
        return rc;
    if (a.write_input) {
        json_t *j = plan_json_instance(&in);
        if (!j || write_json(j, a.write_input) != 0) {
            fprintf(stderr, "stepctl plan: %s: cannot write\n", a.write_input);
            rc = EX_NOINPUT_;
        }
        json_decref(j);
    }
    if (rc == 0)
        rc = plan_and_report(&a, &in);
    plan_instance_free(&in);
    fflush(stdout);
    return rc;
}
