/* test_plan_geo.c - WGS-84 geodesic distance and the EUA coverage check. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "plan_gen.h"
#include "test_skip.h"
#include "plan_geo.h"

/* 01: Vincenty's own test line, Flinders Peak - Buninyong: 54 972.271 m. */
static void geo_01_vincenty_reference(void **state)
{
    (void)state;
    double d = 0;
    double lat1 = -(37 + 57 / 60.0 + 3.72030 / 3600), lon1 = 144 + 25 / 60.0 + 29.52440 / 3600;
    double lat2 = -(37 + 39 / 60.0 + 10.15610 / 3600), lon2 = 143 + 55 / 60.0 + 35.38390 / 3600;
    assert_true(plan_geo_vincenty(lat1, lon1, lat2, lon2, &d));
    assert_true(fabs(d - 54972.271) < 0.01);
    /* the sphere is off by tens of metres over 55 km */
    assert_true(fabs(plan_geo_haversine(lat1, lon1, lat2, lon2) - d) > 10.0);
}

/* 02: coincident points, symmetry, antimeridian, radius boundary. */
static void geo_02_edges(void **state)
{
    (void)state;
    double d = -1, e = -1;
    assert_true(plan_geo_vincenty(-37.8, 144.9, -37.8, 144.9, &d));
    assert_true(d == 0.0);
    assert_true(plan_geo_vincenty(-37.81, 144.95, -37.82, 144.97, &d));
    assert_true(plan_geo_vincenty(-37.82, 144.97, -37.81, 144.95, &e));
    assert_true(fabs(d - e) < 1e-6);
    assert_true(plan_geo_covers(0.0, 179.9995, 0.0, -179.9995, 300)); /* ~111 m */
    assert_true(plan_geo_covers(-37.8, 144.9, -37.8, 144.9, 0));
    /* nearly antipodal (where Vincenty may not converge): never covered */
    assert_false(plan_geo_covers(0.0, 0.0, 0.5, 179.7, 300));
    assert_false(plan_geo_valid(NAN, 0));
    assert_false(plan_geo_valid(91, 0));
}

/* 03: the published shares 8.8 % / 74.4 % / 16.8 % with a 300 m geodesic
 * radius (72 / 607 / 137 of 816 users). */
static void geo_03_corpus_eua_coverage_matches_paper(void **state)
{
    (void)state;
    plan_points sites, users;
    plan_coverage c;
    char err[256];
    const char *dir = PLAN_CORPUS_DIR "/eua";
    test_skip_unless(dir);
    assert_int_equal(plan_eua_load(dir, &sites, &users, err, sizeof err), PLAN_GEN_OK);
    assert_int_equal(sites.n, 125);
    assert_int_equal(users.n, 816);
    plan_coverage_count(&sites, &users, 300, false, &c);
    assert_int_equal(c.below10, 72);
    assert_int_equal(c.from10to20, 607);
    assert_int_equal(c.above20, 137);
    assert_true(fabs(100.0 * c.below10 / 816 - 8.8) < 0.05);
    assert_true(fabs(100.0 * c.from10to20 / 816 - 74.4) < 0.05);
    assert_true(fabs(100.0 * c.above20 / 816 - 16.8) < 0.05);
    /* haversine moves one user across the 10-site boundary: 8.7 / 74.5 */
    plan_coverage_count(&sites, &users, 300, true, &c);
    assert_int_equal(c.below10, 71);
    assert_int_equal(c.from10to20, 608);
    plan_points_free(&sites);
    plan_points_free(&users);
}

/* 04: bad CSVs are refused, never half-read. */
static void geo_04_csv_errors(void **state)
{
    (void)state;
    plan_points p;
    char err[256];
    char path[] = "/tmp/plan_geo_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("Latitude,Longitude\n-37.8,144.9\nnot,a number\n", f);
    fclose(f);
    assert_int_equal(plan_csv_points(path, &p, err, sizeof err), PLAN_GEN_INVALID);
    assert_non_null(strstr(err, ":3:"));
    remove(path);
    assert_int_equal(plan_csv_points("/nonexistent/x.csv", &p, err, sizeof err),
                     PLAN_GEN_NOFILE);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(geo_01_vincenty_reference),
        cmocka_unit_test(geo_02_edges),
        cmocka_unit_test(geo_03_corpus_eua_coverage_matches_paper),
        cmocka_unit_test(geo_04_csv_errors),
    };
    test_select(argc, argv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
