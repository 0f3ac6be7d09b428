/* dlv_variants.c - every pathway must offer the same variants.
 *
 * HLS Content Steering moves a player between pathways by matching each
 * variant of one pathway with "the same" variant of another: hls.js keeps a
 * fallback pathway only when its variant list lines up with the current one
 * (the same renditions, in the same BANDWIDTH order, with equal CODECS,
 * RESOLUTION and FRAME-RATE); otherwise it drops the pathway silently and
 * the viewer has no fallback.  So paths.json whose pathways differ there is
 * refused at start, naming the member, instead of failing in a player.
 * BANDWIDTH itself may differ from path to path (CDNs measure differently),
 * only its order must not. */
#include "dlv_paths.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int differ(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int differ(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int sign3(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* One attribute of rendition name, equal on both paths. */
static int same_attr(const struct dlv_path *first, const struct dlv_path *p, const char *name,
                     const char *member, const char *want, const char *got, char *err,
                     size_t errlen)
{
    if (!strcmp(want, got))
        return 0;
    return differ(err, errlen,
                  "paths.%s.renditions.%s.%s: \"%s\" differs from paths.%s.renditions.%s.%s "
                  "\"%s\": every pathway must carry the same variants (hls.js drops a fallback "
                  "pathway whose CODECS, RESOLUTION or FRAME-RATE differ)",
                  p->id, name, member, got, first->id, name, member, want);
}

/* p against first: the same names in the same order, equal attributes,
 * the same BANDWIDTH order. */
static int same_variants(const struct dlv_path *first, const struct dlv_path *p, char *err,
                         size_t errlen)
{
    for (size_t i = 0; i < first->n; i++)
        if (!dlv_path_rendition(p, first->r[i].name))
            return differ(err, errlen,
                          "paths.%s.renditions.%s: missing (paths.%s has it): every pathway "
                          "must carry the same renditions",
                          p->id, first->r[i].name, first->id);
    for (size_t i = 0; i < p->n; i++) {
        const struct dlv_rendition *mine = &p->r[i], *want = &first->r[i];
        if (!dlv_path_rendition(first, mine->name))
            return differ(err, errlen,
                          "paths.%s.renditions.%s: paths.%s has no such rendition: every "
                          "pathway must carry the same renditions",
                          p->id, mine->name, first->id);
        if (strcmp(mine->name, want->name))
            return differ(err, errlen,
                          "paths.%s.renditions.%s: listed where paths.%s lists %s: every "
                          "pathway must list its renditions in the same order",
                          p->id, mine->name, first->id, want->name);
        if (same_attr(first, p, mine->name, "codecs", want->codecs, mine->codecs, err, errlen) ||
            same_attr(first, p, mine->name, "resolution", want->resolution, mine->resolution,
                      err, errlen) ||
            same_attr(first, p, mine->name, "frame_rate", want->frame_rate, mine->frame_rate,
                      err, errlen))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (sign3(mine->bandwidth, p->r[j].bandwidth) !=
                sign3(want->bandwidth, first->r[j].bandwidth))
                return differ(err, errlen,
                              "paths.%s.renditions.%s.bandwidth: orders %s and %s otherwise "
                              "than paths.%s does: every pathway must rank its variants in the "
                              "same BANDWIDTH order",
                              p->id, mine->name, p->r[j].name, mine->name, first->id);
    }
    return 0;
}

int dlv_paths_check_variants(const struct dlv_paths *ps, char *err, size_t errlen)
{
    for (size_t i = 1; i < ps->n; i++)
        if (same_variants(&ps->p[0], &ps->p[i], err, errlen))
            return -1;
    return 0;
}
