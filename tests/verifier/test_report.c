/* test_report.c - the writers format what they are given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report.h"

static json_t *sample_report(void)
{
    return json_pack("{s:s, s:s, s:s, s:{s:s, s:i, s:s}, s:{s:I, s:I}, s:i, s:s,"
                     " s:{s:s, s:s, s:i, s:i, s:i, s:{s:i, s:I, s:s, s:i, s:i}},"
                     " s:n}",
                     "evidence_id", "abc", "verdict", "MISMATCH", "reason", "video_pixels",
                     "profile", "id", "exact-av-v1", "version", 1, "fingerprint", "0123456789abcdef0123",
                     "interval", "start", (json_int_t)8589930000LL, "end", (json_int_t)18750,
                     "time_offset", 0, "observed_at", "2026-11-29T14:00:00.000Z",
                     "video", "verdict", "MISMATCH", "reason", "video_pixels", "reference_frames", 120,
                     "candidate_frames", 120, "compared_frames", 120,
                     "first_mismatch", "index", 60, "pts", (json_int_t)8589936000LL, "plane", "Y", "x", 10, "y", 20,
                     "audio");
}

static char *capture(int (*writer)(FILE *, const json_t *), const json_t *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(writer(f, rep), 0);
    fclose(f);
    return buf;
}

static void t01_json_writer_round_trips(void **state)
{
    (void)state;
    json_t *rep = sample_report();
    char *text = capture(report_write_json, rep);
    json_error_t jerr;
    json_t *back = json_loads(text, 0, &jerr);
    assert_non_null(back);
    assert_true(json_equal(rep, back));
    json_decref(back);
    json_decref(rep);
    free(text);
}

static void t02_human_writer_names_the_first_difference(void **state)
{
    (void)state;
    json_t *rep = sample_report();
    char *text = capture(report_write_human, rep);
    assert_non_null(strstr(text, "verdict:  MISMATCH (video_pixels)"));
    assert_non_null(strstr(text, "frame 60 (pts 8589936000), Y at x=10 y=20"));
    assert_non_null(strstr(text, "reference has no audio"));
    json_decref(rep);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_json_writer_round_trips),
        cmocka_unit_test(t02_human_writer_names_the_first_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
