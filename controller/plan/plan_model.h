/* plan_model.h - the LUA edge user allocation model: instance, QoE, metrics.
 *
 * One instance = edge servers M, live viewers V, a bitrate ladder and the
 * QoE parameters.  Every formula of the paper whose image was lost is
 * reconstructed here; docs/lua.md states them and why (tests/plan proves the
 * stated properties).  Units: latency ms, bitrate Mbps, CPU vCPU.
 */
#ifndef PLAN_MODEL_H
#define PLAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define PLAN_ID_MAX 64          /* ids longer than this are rejected (65) */
#define PLAN_MAX_RUNGS 16       /* bitrate ladder size limit */
#define PLAN_MAX_SERVERS 100000
#define PLAN_MAX_VIEWERS 1000000
#define PLAN_UNSERVED (-1)      /* choice.server of a viewer nobody serves */
#define PLAN_EPS 1e-9           /* capacity tolerance (floating sums) */

/* Admission of a server: the zero value is the failing one, so a server
 * whose mask entry is missing or unreadable is never assigned. */
typedef enum { PLAN_ADMIT_DENIED = 0, PLAN_ADMIT_PASS = 1 } plan_admit;

typedef struct {
    double a, b, c, d;          /* QoE weights (paper: 5, 1, 1, 1) */
    double beta_ms;             /* interaction latency threshold (300) */
    double g_ms_per_mbps;       /* transcoding delay G (50) */
    double h_vcpu_per_mbps;     /* transcoding CPU H (0.5) */
    double gamma;               /* I_v = gamma * F_v */
    double alpha;               /* Y_v = 1 + alpha * ln(1 + p_v) */
    double k;                   /* jitter cost per Mbps dropped */
    double radius_m;            /* coverage radius for geometric M(v) */
    double viewer_edge_ms;      /* T_{m,v} when the input gives none */
    double unserved_qoe;        /* QoE charged to a viewer left unserved */
} plan_params;

typedef struct {
    char id[PLAN_ID_MAX];
    double lat, lon;
    double bandwidth_mbps;      /* D_m */
    double vcpu;                /* C_m */
    plan_admit admit;
} plan_server;

typedef struct {
    int server;                 /* index into servers */
    double latency_ms;          /* T_{m,v} */
} plan_link;

typedef struct {
    char id[PLAN_ID_MAX];
    double lat, lon;
    double freq;                /* F_v, bullet comments per unit time */
    double gift;                /* p_v */
    double expected_mbps;       /* R*_v */
    double prev_mbps;           /* previous period's bitrate, <0 = none */
    int prev_server;            /* previous server index, -1 = none */
    int streamer_edge;          /* m_{b_v} (server index) */
    double uplink_ms;           /* T_{b_v, m_{b_v}} */
    plan_link *links;           /* M(v), owned */
    int n_links;
    double demand;              /* I_v (derived) */
    double weight;              /* Y_v (derived) */
} plan_viewer;

typedef struct {
    plan_params p;
    double ladder[PLAN_MAX_RUNGS]; /* ascending; ladder[n-1] = source R */
    int n_rungs;
    plan_server *servers;
    int n_servers;
    double *edge_ms;            /* n_servers^2, T_{m,n}, diagonal 0 */
    plan_viewer *viewers;
    int n_viewers;
} plan_instance;

/* One decision per viewer. */
typedef struct {
    int server;                 /* server index or PLAN_UNSERVED */
    int rung;                   /* ladder index, valid when served */
} plan_choice;

/* Remaining capacity while an algorithm builds an allocation. */
typedef struct {
    double *bw;                 /* remaining D_m */
    double *cpu;                /* remaining C_m */
    int *count;                 /* viewers on m */
    int n;
} plan_load;

typedef struct {
    int viewers, served, unserved, switches;
    double mean_latency_ms;     /* over served viewers */
    double mean_bitrate_mbps;   /* over served viewers */
    double mean_interaction;    /* Q over served viewers */
    double mean_bitrate_drop_mbps; /* [prev - R_v]+ over served viewers */
    double mean_switches;       /* switches / viewers */
    double mean_qoe;            /* over all viewers (unserved_qoe counted) */
    double mean_qoe_served;     /* over served viewers only */
    double weighted_qoe;        /* objective: sum Y_v * QoE_v */
} plan_metrics;

/* How plan_read_file ended.  Zero value: nothing was read. */
typedef enum {
    PLAN_READ_FAILED = 0,
    PLAN_READ_OK,
    PLAN_READ_NOFILE,    /* cannot open, or a read error */
    PLAN_READ_TOO_LARGE, /* more than max_bytes */
    PLAN_READ_NOMEM
} plan_read_status;

/* Reads a whole file a user named, at most max_bytes, NUL-terminated;
 * NULL with *st and a message in err otherwise.  *len may be NULL. */
char *plan_read_file(const char *path, size_t max_bytes, size_t *len, plan_read_status *st,
                     char *err, size_t err_len);

void plan_params_default(plan_params *p);
void plan_instance_free(plan_instance *in);
/* Derives I_v and Y_v; call once after loading. */
void plan_instance_derive(plan_instance *in);

/* The reconstructed formulas (pure functions, tested one by one). */
double plan_demand(double freq, double gamma);
double plan_weight(double gift, double alpha);
double plan_interaction(double demand, double latency_ms, double beta_ms);
double plan_quality(double rate, double expected, double lowest_rung);
double plan_jitter(double prev_rate, double rate, double k);
double plan_switch_cost(int prev_server, int server);

double plan_transcode_cpu(const plan_instance *in, int rung);
double plan_latency(const plan_instance *in, int v, int link, int rung);
double plan_qoe(const plan_instance *in, int v, int link, int rung);
/* Index into viewers[v].links of server m, or -1 when m does not cover v. */
int plan_link_of(const plan_instance *in, int v, int m);

/* Capacity bookkeeping. */
int plan_load_init(plan_load *l, const plan_instance *in);
void plan_load_free(plan_load *l);
bool plan_load_fits(const plan_load *l, const plan_instance *in, int m, int rung);
void plan_load_add(plan_load *l, const plan_instance *in, int m, int rung);
void plan_load_remove(plan_load *l, const plan_instance *in, int m, int rung);
/* Lowest and highest rung that fit on m now; false when none fits. */
bool plan_load_range(const plan_load *l, const plan_instance *in, int m,
                     int *lo, int *hi);

/* Every constraint: coverage, admission, D_m, C_m.  Writes a reason. */
bool plan_check(const plan_instance *in, const plan_choice *ch,
                char *why, size_t why_len);
double plan_viewer_qoe(const plan_instance *in, int v, plan_choice c);
double plan_objective(const plan_instance *in, const plan_choice *ch);
void plan_evaluate(const plan_instance *in, const plan_choice *ch,
                   plan_metrics *out);

#endif
