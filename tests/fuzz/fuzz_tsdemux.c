/* fuzz_tsdemux.c - the access-unit layer on arbitrary bytes: TS scanner,
 * PSI and PES (tsdemux.c), FFmpeg's parsers, NAL scanning (h264nal.c).
 * The input is cut into up to three segments (joins restart continuity)
 * and read with a program selection chosen by the first byte.
 * Invariants: no crash, no leak; every access unit is non-empty; times are
 * 33-bit (or absent) and audio units inside their modulus; the stored
 * parameter sets write exactly the size they announce. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "au.h"
#include "bsrc.h"

static bool check_au(void *opaque, const struct au *au)
{
    struct au_demux *a = opaque;
    assert(au->size > 0 && au->data);
    assert(au->pts == AU_NO_TS || (au->pts >= 0 && au->pts < ((int64_t)1 << 33)));
    assert(au->dts == AU_NO_TS || (au->dts >= 0 && au->dts < ((int64_t)1 << 33)));
    assert(!au->timed || (au->units >= 0 && au->units < AU_UNITS_MOD));
    if (au->track == TSD_VIDEO) {
        const struct h264_ps *ps = &a->t[TSD_VIDEO].ps;
        size_t n = h264_ps_size(ps);
        uint8_t *buf = malloc(n ? n : 1);
        assert(buf && h264_ps_write(ps, buf) == n);
        free(buf);
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    struct tsd_select sel = {.reference = data[0] & 1, .want_video = 1, .want_audio = data[0] >> 1 & 1,
                             .program = data[0] & 4 ? data[0] >> 3 : 0};
    size_t cut1 = size * data[1] / 256, cut2 = cut1 + (size - cut1) * data[2] / 256;
    data += 3, size -= 3;
    cut1 = cut1 > size ? size : cut1;
    cut2 = cut2 > size ? size : cut2;
    struct bsrc_segment segs[3] = {
        {.data = data, .len = cut1},
        {.data = data + cut1, .len = cut2 - cut1, .joins_previous = sel.want_audio},
        {.data = data + cut2, .len = size - cut2},
    };
    struct bsrc b;
    struct au_demux a;
    if (bsrc_init(&b, segs, 3))
        return 0;
    if (au_demux_init(&a, &sel, check_au, &a, &b) == 0)
        au_demux_run(&a);
    au_demux_free(&a);
    bsrc_close(&b);
    return 0;
}
