/* plan_geo.h - geodesic distance on the WGS-84 ellipsoid and coverage.
 *
 * Vincenty's inverse formula (accurate to about 0.1 mm); the spherical
 * haversine is kept only to show the difference it makes (it moves one EUA
 * user across the 10-station boundary).
 */
#ifndef PLAN_GEO_H
#define PLAN_GEO_H

#include <stdbool.h>

/* Distance in metres; false when the iteration does not converge (nearly
 * antipodal points), in which case *metres is left untouched. */
bool plan_geo_vincenty(double lat1, double lon1, double lat2, double lon2,
                       double *metres);
/* Great-circle distance on the mean Earth sphere (R = 6371008.8 m). */
double plan_geo_haversine(double lat1, double lon1, double lat2, double lon2);
/* Covered when the geodesic distance is at most radius_m.  A point pair
 * Vincenty cannot resolve is thousands of km apart: never covered. */
bool plan_geo_covers(double lat1, double lon1, double lat2, double lon2,
                     double radius_m);
bool plan_geo_valid(double lat, double lon);

#endif
