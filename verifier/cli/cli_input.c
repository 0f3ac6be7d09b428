/* cli_input.c - the checks every command makes on a local input before
 * anything reads it (see cli.h). */
#include "cli.h"

#include <stdint.h>

#include "exitcodes.h"
#include "mp4box.h"
#include "util.h"

#define TS_PACKET 188
#define TS_SYNC 0x47

/* The first bytes of an MPEG-TS: a sync byte at offset 0 and, when the file
 * is longer than one packet, at offset 188; or of an fMP4/CMAF file or
 * segment: an ISO BMFF box (mp4box.h, issue 20).  An HTML page or an empty
 * file fails here with a clear message instead of deep in the demuxer. */
static int looks_like_ts(const char *path, const char **why)
{
    uint8_t buf[TS_PACKET + 1];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    *why = n == 0 ? "it is empty" : "no sync byte 0x47 where a TS packet starts, nor an MP4 box";
    return (n > 0 && buf[0] == TS_SYNC && (n <= TS_PACKET || buf[TS_PACKET] == TS_SYNC)) ||
           mp4box_looks_like_mp4(buf, n);
}

int cli_check_input_file(const char *path, const char *what, bool mpegts, const char *cmd)
{
    char err[512];
    const char *why;
    if (util_check_regular_file(path, err, sizeof err))
        return cli_fail(EXACTAV_EXIT_NOINPUT, cmd, "%s: %s", what, err);
    if (mpegts && !looks_like_ts(path, &why))
        return cli_fail(EXACTAV_EXIT_UNUSABLE, cmd, "%s %s is not an MPEG-TS or fMP4 file (%s)", what, path, why);
    return 0;
}
