/* avlog.c - FFmpeg log callback (see avlog.h). */
#include "avlog.h"

#include <stdarg.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/log.h>

#include "side.h"

static void avlog_callback(void *avcl, int level, const char *fmt, va_list vl)
{
    const AVClass *cls = avcl ? *(const AVClass **)avcl : NULL;
    if (cls && cls->class_name && !strcmp(cls->class_name, "AVCodecContext")) {
        struct side_log *log = ((AVCodecContext *)avcl)->opaque;
        if (log && level <= AV_LOG_ERROR)
            atomic_fetch_add(&log->errors, 1);
        if (log && level <= AV_LOG_ERROR && fmt && !strncmp(fmt, "mmco", 4))
            atomic_fetch_add(&log->ref_marking, 1);
        if (log && fmt && strstr(fmt, "Increasing reorder buffer"))
            atomic_fetch_add(&log->reorder_growth, 1);
    }
    if (level <= av_log_get_level())
        av_log_default_callback(avcl, level, fmt, vl);
}

void avlog_install(int level)
{
    av_log_set_level(level);
    av_log_set_callback(avlog_callback);
}
