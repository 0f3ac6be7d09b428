/* avlog.h - routes FFmpeg's log to the decoding side it concerns.
 *
 * Some damage is only visible in FFmpeg's log ("Increasing reorder buffer"
 * means frames were dropped).  Each decoder context carries its side's
 * struct side_log in AVCodecContext.opaque; the callback sets flags there
 * and prints nothing unless verbose.  The callback keeps no state of its
 * own: FFmpeg's callback pointer is process-wide, so it is installed once
 * by main().
 */
#ifndef AVLOG_H
#define AVLOG_H

/* level: FFmpeg log level to print at (AV_LOG_QUIET by default). */
void avlog_install(int level);

#endif
