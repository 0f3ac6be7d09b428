/* test_profile_once.h - the embedded profile, loaded once per test program,
 * for the in-process verifier tests (include after cmocka.h: it asserts). */
#ifndef TEST_PROFILE_ONCE_H
#define TEST_PROFILE_ONCE_H

#include <stdbool.h>

#include <libavutil/log.h>

#include "avlog.h"
#include "profile.h"

/* FFmpeg's log is quiet: the tests read the reports, not the log. */
static inline const struct profile *test_profile_once(void)
{
    static struct profile p;
    static bool loaded;
    char err[512];
    if (!loaded) {
        avlog_install(AV_LOG_QUIET);
        assert_int_equal(profile_load(NULL, &p, err, sizeof err), 0);
        loaded = true;
    }
    return &p;
}

#endif
