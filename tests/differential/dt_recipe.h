/* dt_recipe.h - the named, seeded recipes of the differential test.  A
 * recipe makes a reference and a candidate (and says how exactav is to be
 * run on them) in three families:
 *   encoder:   encoder settings (GOP, B-pyramid, open GOP, intra refresh,
 *              slices, interlacing), self-compared or repackaged;
 *   packaging: the same content packaged differently (PES packing, NAL
 *              placement, PIDs, programs, PCR PID, null packets, stream
 *              types, segments, byte ranges, HLS);
 *   edit:      a change of content or time (pixel, sample, frame drop or
 *              duplicate, timestamp shifts, channel count, colour tags, an
 *              extra track) or damage (flipped bytes, lost packets,
 *              truncation).
 * A recipe name plus a seed reproduces a case exactly. */
#ifndef DT_RECIPE_H
#define DT_RECIPE_H

#include "dt_case.h"
#include "dt_gen.h"

struct dt_recipe {
    const char *name;
    const char *kind;           /* encoder | packaging | edit */
    int klass;                  /* issue 8's class, 0: none */
    unsigned labels;            /* DT_VSET() bits: what the recipe means to produce */
    const char *what;
    int (*build)(struct dt_gen *g);
};

/* All recipes; *n set. */
const struct dt_recipe *dt_recipes(size_t *n);
const struct dt_recipe *dt_recipe_find(const char *name);

/* Make case c (c->dir must exist) from recipe r and seed.  0 or -1. */
int dt_recipe_build(struct dt_env *env, const struct dt_recipe *r, uint64_t seed,
                    struct dt_case *c);

#endif
