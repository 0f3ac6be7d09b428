/* plan_geo.c - Vincenty inverse on WGS-84, haversine, coverage. */
#include "plan_geo.h"

#include <math.h>

#define WGS84_A 6378137.0
#define WGS84_F (1.0 / 298.257223563)
#define DEG (M_PI / 180.0)
#define VINCENTY_MAX_ITER 200

bool plan_geo_valid(double lat, double lon)
{
    return isfinite(lat) && isfinite(lon) && lat >= -90.0 && lat <= 90.0 &&
           lon >= -180.0 && lon <= 180.0;
}

typedef struct { double sin_sigma, cos_sigma, sigma, cos2_alpha, cos_2sm; } vinc_state;

/* One iteration of lambda; returns the new lambda. */
static double vinc_step(double lambda, double L, double su1, double cu1, double su2,
                        double cu2, vinc_state *s)
{
    double sl = sin(lambda), cl = cos(lambda);
    double a = cu2 * sl, b = cu1 * su2 - su1 * cu2 * cl;
    s->sin_sigma = sqrt(a * a + b * b);
    s->cos_sigma = su1 * su2 + cu1 * cu2 * cl;
    s->sigma = atan2(s->sin_sigma, s->cos_sigma);
    double sin_alpha = s->sin_sigma > 0.0 ? cu1 * cu2 * sl / s->sin_sigma : 0.0;
    s->cos2_alpha = 1.0 - sin_alpha * sin_alpha;
    /* On the equator cos2_alpha = 0 and the term is defined as 0. */
    s->cos_2sm = s->cos2_alpha != 0.0 ? s->cos_sigma - 2.0 * su1 * su2 / s->cos2_alpha : 0.0;
    double C = WGS84_F / 16.0 * s->cos2_alpha * (4.0 + WGS84_F * (4.0 - 3.0 * s->cos2_alpha));
    return L + (1.0 - C) * WGS84_F * sin_alpha *
           (s->sigma + C * s->sin_sigma *
            (s->cos_2sm + C * s->cos_sigma * (-1.0 + 2.0 * s->cos_2sm * s->cos_2sm)));
}

bool plan_geo_vincenty(double lat1, double lon1, double lat2, double lon2, double *metres)
{
    const double b = (1.0 - WGS84_F) * WGS84_A;
    double L = (lon2 - lon1) * DEG;
    double u1 = atan((1.0 - WGS84_F) * tan(lat1 * DEG));
    double u2 = atan((1.0 - WGS84_F) * tan(lat2 * DEG));
    double su1 = sin(u1), cu1 = cos(u1), su2 = sin(u2), cu2 = cos(u2);
    double lambda = L;
    vinc_state s = {0};
    int it = 0;
    for (; it < VINCENTY_MAX_ITER; it++) {
        double next = vinc_step(lambda, L, su1, cu1, su2, cu2, &s);
        if (s.sin_sigma == 0.0) {
            *metres = 0.0; /* coincident points */
            return true;
        }
        bool done = fabs(next - lambda) < 1e-12;
        lambda = next;
        if (done)
            break;
    }
    if (it == VINCENTY_MAX_ITER)
        return false;
    double u_sq = s.cos2_alpha * (WGS84_A * WGS84_A - b * b) / (b * b);
    double A = 1.0 + u_sq / 16384.0 * (4096.0 + u_sq * (-768.0 + u_sq * (320.0 - 175.0 * u_sq)));
    double B = u_sq / 1024.0 * (256.0 + u_sq * (-128.0 + u_sq * (74.0 - 47.0 * u_sq)));
    double c2 = s.cos_2sm;
    double ds = B * s.sin_sigma *
                (c2 + B / 4.0 * (s.cos_sigma * (-1.0 + 2.0 * c2 * c2) -
                                 B / 6.0 * c2 * (-3.0 + 4.0 * s.sin_sigma * s.sin_sigma) *
                                     (-3.0 + 4.0 * c2 * c2)));
    *metres = b * A * (s.sigma - ds);
    return true;
}

double plan_geo_haversine(double lat1, double lon1, double lat2, double lon2)
{
    double p1 = lat1 * DEG, p2 = lat2 * DEG;
    double dp = p2 - p1, dl = (lon2 - lon1) * DEG;
    double h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2);
    if (h > 1.0)
        h = 1.0;
    return 2.0 * 6371008.8 * asin(sqrt(h));
}

bool plan_geo_covers(double lat1, double lon1, double lat2, double lon2, double radius_m)
{
    double d;
    /* Cheap reject first (generators test millions of pairs): a degree of
     * latitude is >= 110.5 km, of longitude >= 111.3 km * cos(lat) on WGS-84. */
    double maxlat = fmax(fabs(lat1), fabs(lat2)), dlon = fabs(lon1 - lon2);
    if (dlon > 180.0)
        dlon = 360.0 - dlon; /* across the antimeridian */
    if (fabs(lat1 - lat2) * 110000.0 > radius_m + 1.0)
        return false;
    if (maxlat < 89.0 && dlon * 111000.0 * cos(maxlat * DEG) > radius_m + 1.0)
        return false;
    if (!plan_geo_vincenty(lat1, lon1, lat2, lon2, &d))
        return false;
    return d <= radius_m;
}
