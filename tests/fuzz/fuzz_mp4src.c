/* fuzz_mp4src.c - the fMP4 access-unit layer on arbitrary bytes (issue 20):
 * the box scan (mp4box.c), FFmpeg's mov demuxer through the custom
 * AVIOContext, h264_mp4toannexb, the ADTS frames and the time mapping
 * (mp4src.c).  The input after three bytes is cut into two segments at the
 * offset its first two bytes give (big-endian; an init segment and a media
 * segment, or any other cut), and the third decides whether the first
 * segment is repeated after the second (a repeated or changed EXT-X-MAP).
 * Invariants: no crash, no leak; every access unit is non-empty; times are
 * 33-bit (or absent) and audio units inside their modulus; an ADTS frame's
 * length field says its size. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "au.h"
#include "bsrc.h"

static bool check_au(void *opaque, const struct au *au)
{
    (void)opaque;
    assert(au->size > 0 && au->data);
    assert(au->pts == AU_NO_TS || (au->pts >= 0 && au->pts < ((int64_t)1 << 33)));
    assert(au->dts == AU_NO_TS || (au->dts >= 0 && au->dts < ((int64_t)1 << 33)));
    assert(!au->timed || (au->units >= 0 && au->units < AU_UNITS_MOD));
    if (au->track == TSD_AUDIO)
        assert(au->size >= 7 && ((size_t)(au->data[3] & 3) << 11 | (size_t)au->data[4] << 3 | au->data[5] >> 5) ==
                                    au->size);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t cut = (size_t)data[0] << 8 | data[1];
    bool again = data[2] & 1;
    data += 3, size -= 3;
    cut = cut > size ? size : cut;
    struct bsrc_segment segs[3] = {
        {.data = data, .len = cut},
        {.data = data + cut, .len = size - cut},
        {.data = data, .len = cut},
    };
    struct tsd_select sel = {.want_video = 1, .want_audio = 1};
    struct bsrc b;
    struct au_demux a;
    if (bsrc_init(&b, segs, again ? 3 : 2))
        return 0;
    if (au_demux_init(&a, &sel, check_au, &a, &b) == 0)
        au_demux_run(&a);
    au_demux_free(&a);
    bsrc_close(&b);
    return 0;
}
