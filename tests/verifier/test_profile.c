/* test_profile.c - DecodeProfile loading, runtime check, fingerprint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile.h"

static void t01_embedded_profile_loads_and_matches_this_runtime(void **state)
{
    (void)state;
    struct profile p;
    char err[512];
    assert_int_equal(profile_load(NULL, &p, err, sizeof err), 0);
    assert_string_equal(p.id, "exact-av-v1");
    assert_string_equal(p.video_decoder, "h264");
    assert_string_equal(p.audio_decoder, "aac");
    assert_int_equal(p.video_threads, 1);
    json_t *rt = profile_runtime_description();
    assert_int_equal(profile_check_runtime(&p, rt, err, sizeof err), 0);
    json_decref(rt);
    profile_free(&p);
}

static int write_variant(const char *path, const char *key1, const char *key2, json_t *value)
{
    struct profile p;
    char err[512];
    if (profile_load(NULL, &p, err, sizeof err))
        return -1;
    json_t *obj = key2 ? json_object_get(p.doc, key1) : p.doc;
    json_object_set_new(obj, key2 ? key2 : key1, value);
    int rc = json_dump_file(p.doc, path, 0);
    profile_free(&p);
    return rc;
}

static void t02_runtime_drift_is_reported_field_by_field(void **state)
{
    (void)state;
    char path[] = "/tmp/exactav-profile-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    assert_int_equal(write_variant(path, "runtime", "libavcodec", json_string("60.3.100")), 0);
    struct profile p;
    char err[512];
    assert_int_equal(profile_load(path, &p, err, sizeof err), 0);
    json_t *rt = profile_runtime_description();
    assert_int_equal(profile_check_runtime(&p, rt, err, sizeof err), -1);
    assert_non_null(strstr(err, "libavcodec: profile 60.3.100, runtime 59."));
    json_decref(rt);
    profile_free(&p);
    unlink(path);
}

static void t03_settings_v1_cannot_honour_are_refused(void **state)
{
    (void)state;
    char path[] = "/tmp/exactav-profile-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    struct profile p;
    char err[512];
    assert_int_equal(write_variant(path, "video", "thread_count", json_integer(4)), 0);
    assert_int_equal(profile_load(path, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "thread_count"));
    assert_int_equal(write_variant(path, "audio", "decoder", json_string("aac_fixed")), 0);
    assert_int_equal(profile_load(path, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "audio.decoder"));
    assert_int_equal(write_variant(path, "video", "flags", json_pack("[s]", "bitexact")), 0);
    assert_int_equal(profile_load(path, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "unaligned"));
    assert_int_equal(write_variant(path, "video", "flags", json_pack("[s, s, s]", "bitexact", "unaligned", "fast")), 0);
    assert_int_equal(profile_load(path, &p, err, sizeof err), -1);
    unlink(path);
}

static void t04_fingerprint_covers_profile_and_runtime(void **state)
{
    (void)state;
    struct profile p;
    char err[512], a[65], b[65], c[65];
    assert_int_equal(profile_load(NULL, &p, err, sizeof err), 0);
    json_t *rt = profile_runtime_description();
    profile_fingerprint(&p, rt, a);
    profile_fingerprint(&p, rt, b);
    assert_string_equal(a, b);
    assert_int_equal(strlen(a), 64);
    /* another machine's SIMD choice gives another fingerprint */
    json_object_set_new(rt, "cpu_flags", json_string("0x0"));
    profile_fingerprint(&p, rt, c);
    assert_string_not_equal(a, c);
    json_decref(rt);
    profile_free(&p);
}

static void t05_pinning_makes_a_new_version(void **state)
{
    (void)state;
    struct profile p;
    char err[512];
    assert_int_equal(profile_load(NULL, &p, err, sizeof err), 0);
    json_t *rt = profile_runtime_description();
    json_object_set_new(rt, "libavcodec", json_string("61.0.0"));
    json_t *pinned = profile_pin_to_runtime(&p, rt);
    assert_int_equal(json_integer_value(json_object_get(pinned, "version")), p.version + 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(pinned, "runtime"), "libavcodec")), "61.0.0");
    json_decref(pinned);
    json_decref(rt);
    profile_free(&p);
}

static void t06_broken_json_is_refused_with_a_line(void **state)
{
    (void)state;
    char path[] = "/tmp/exactav-profile-XXXXXX";
    int fd = mkstemp(path);
    assert_int_equal(write(fd, "{\n\"id\": \n", 9), 9);
    close(fd);
    struct profile p;
    char err[512];
    assert_int_equal(profile_load(path, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "line"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t01_embedded_profile_loads_and_matches_this_runtime),
        cmocka_unit_test(t02_runtime_drift_is_reported_field_by_field),
        cmocka_unit_test(t03_settings_v1_cannot_honour_are_refused),
        cmocka_unit_test(t04_fingerprint_covers_profile_and_runtime),
        cmocka_unit_test(t05_pinning_makes_a_new_version),
        cmocka_unit_test(t06_broken_json_is_refused_with_a_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
