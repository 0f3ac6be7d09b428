/* fuzz_prom_answer.c - the Prometheus query_range answer parser
 * (controller/feedback/feedback.h, fb_parse) on arbitrary bytes.
 * Invariants: no crash, no read beyond the input; a series is returned only
 * on FB_PARSE_OK, with at most FB_MAX_POINTS points; every point's kept text
 * reads back to the same micro-units, which are never below the exact value
 * (rounded up: checked against rounding the other way, which may only be
 * smaller by one micro-unit). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feedback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fb_series s;
    char err[256];
    enum fb_parse_rc rc = fb_parse((const char *)data, size, &s, err, sizeof err);
    assert(strlen(err) < sizeof err);
    if (rc != FB_PARSE_OK) {
        assert(s.pts == NULL && s.n == 0);
        return 0;
    }
    assert(s.n <= FB_MAX_POINTS);
    for (size_t i = 0; i < s.n; i++) {
        int64_t again;
        assert(strlen(s.pts[i].text) < FB_VALUE_TEXT);
        assert(fb_value_micro(s.pts[i].text, strlen(s.pts[i].text), &again) == 0);
        assert(again == s.pts[i].micro);
        assert(s.pts[i].micro <= FB_SATURATED && s.pts[i].micro >= -FB_SATURATED);
    }
    fb_series_free(&s);
    /* the value reader alone, on the same bytes */
    int64_t v;
    if (size < FB_VALUE_TEXT && fb_value_micro((const char *)data, size, &v) == 0)
        assert(v <= FB_SATURATED && v >= -FB_SATURATED);
    return 0;
}
