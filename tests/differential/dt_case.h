/* dt_case.h - one differential case: what the generator made and how
 * exactav is to be run on it.  Plain data, filled by a recipe (dt_recipe.c)
 * or by the mutation run (dt_mutate.c), read by the oracle and the runner. */
#ifndef DT_CASE_H
#define DT_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt_exec.h"

/* Verdicts; UNKNOWN is the zero value, as in the verifier. */
enum dt_verdict { DT_UNKNOWN = 0, DT_MATCH, DT_MISMATCH, DT_USAGE, DT_ERROR };
#define DT_VSET(v) (1u << (unsigned)(v))

const char *dt_verdict_name(enum dt_verdict v);
/* "MATCH|UNKNOWN" etc. for a set of DT_VSET() bits ("any" for none), into out. */
void dt_verdict_set_name(char *out, size_t size, unsigned set);

#define DT_MAX_SEGS 64
#define DT_MAX_EXTRA 8

/* A piece of a side's bytes: a whole file, or LEN bytes from OFF. */
struct dt_seg {
    char path[DT_PATH_MAX];
    bool ranged;
    uint64_t off, len;
    double duration; /* seconds, for EXTINF */
};

enum dt_cand_kind { DT_CAND_FILE = 0, DT_CAND_HLS };

struct dt_case {
    char name[64];          /* recipe name */
    uint64_t seed;
    int klass;              /* issue 8's class (1..14) this case exercises, 0: none */
    char kind[16];          /* encoder | packaging | edit | mutation */
    char dir[DT_PATH_MAX];  /* the case's own directory */
    char what[512];         /* one line: what was done */

    struct dt_seg ref[DT_MAX_SEGS];
    size_t nref;
    bool ref_bind;          /* reference given to exactav as a binding (exactav bind) */

    enum dt_cand_kind cand_kind;
    struct dt_seg cand[DT_MAX_SEGS]; /* in delivery order: the bytes exactav fetches */
    size_t ncand;
    char playlist[DT_PATH_MAX];      /* HLS: the media playlist written by the recipe */

    bool has_interval;
    uint64_t start, end;    /* --interval START:END (reference timeline, 90 kHz) */
    uint64_t offset;        /* --time-offset, reduced mod 2^33 */
    char extra[DT_MAX_EXTRA][64]; /* further verify options, verbatim */
    int nextra;

    unsigned labels;        /* DT_VSET() bits: what the recipe meant to produce (cross-checked
                             * against the oracle; 0: no intent, e.g. a mutant) */
};

#endif
