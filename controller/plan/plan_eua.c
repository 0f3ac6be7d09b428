/* plan_eua.c - EUA CSV loading (bounded) and the coverage check. */
#include "plan_gen.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan_geo.h"

void plan_points_free(plan_points *p)
{
    free(p->lat);
    free(p->lon);
    p->lat = p->lon = NULL;
    p->n = 0;
}

/* Column index of a header field, case-insensitive; -1 if absent. */
static int column_of(const char *header, const char *name)
{
    int col = 0;
    size_t nl = strlen(name);
    for (const char *p = header;; col++) {
        const char *end = p + strcspn(p, ",\r\n");
        if ((size_t)(end - p) == nl && strncasecmp(p, name, nl) == 0)
            return col;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

/* Field `col` of a line (no quoting in these files' first columns). */
static bool field_num(const char *line, int col, double *out)
{
    const char *p = line;
    for (int c = 0; c < col; c++) {
        p = strchr(p, ',');
        if (!p)
            return false;
        p++;
    }
    char *end;
    *out = strtod(p, &end);
    return end != p && (*end == ',' || *end == '\r' || *end == '\n' || *end == '\0');
}

static plan_gen_status parse_rows(const char *path, char *buf, plan_points *out,
                                  char *err, size_t err_len)
{
    int clat = column_of(buf, "latitude"), clon = column_of(buf, "longitude");
    if (clat < 0 || clon < 0) {
        snprintf(err, err_len, "%s: header needs Latitude and Longitude columns", path);
        return PLAN_GEN_INVALID;
    }
    out->lat = malloc(PLAN_CSV_MAX_ROWS * sizeof *out->lat);
    out->lon = malloc(PLAN_CSV_MAX_ROWS * sizeof *out->lon);
    if (!out->lat || !out->lon)
        return PLAN_GEN_NOMEM;
    int line = 1;
    for (char *p = strchr(buf, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        char *row = p + 1;
        line++;
        if (*row == '\n' || *row == '\r')
            continue;
        double la, lo;
        if (out->n >= PLAN_CSV_MAX_ROWS || !field_num(row, clat, &la) ||
            !field_num(row, clon, &lo) || !plan_geo_valid(la, lo)) {
            snprintf(err, err_len, "%s:%d: %s", path, line,
                     out->n >= PLAN_CSV_MAX_ROWS ? "too many rows" : "bad latitude/longitude");
            return PLAN_GEN_INVALID;
        }
        out->lat[out->n] = la;
        out->lon[out->n] = lo;
        out->n++;
    }
    return PLAN_GEN_OK;
}

plan_gen_status plan_csv_points(const char *path, plan_points *out, char *err, size_t err_len)
{
    plan_gen_status st = PLAN_GEN_INVALID;
    memset(out, 0, sizeof *out);
    plan_read_status rs;
    char *buf = plan_read_file(path, PLAN_CSV_MAX_BYTES, NULL, &rs, err, err_len);
    if (!buf)
        return rs == PLAN_READ_NOFILE ? PLAN_GEN_NOFILE : rs == PLAN_READ_NOMEM ? PLAN_GEN_NOMEM : PLAN_GEN_INVALID;
    st = parse_rows(path, buf, out, err, err_len);
    free(buf);
    if (st != PLAN_GEN_OK)
        plan_points_free(out);
    return st;
}

plan_gen_status plan_eua_load(const char *dir, plan_points *sites, plan_points *users,
                              char *err, size_t err_len)
{
    char path[4096];
    memset(users, 0, sizeof *users);
    snprintf(path, sizeof path, "%s/site-optus-melbCBD.csv", dir);
    plan_gen_status st = plan_csv_points(path, sites, err, err_len);
    if (st != PLAN_GEN_OK)
        return st;
    snprintf(path, sizeof path, "%s/users-melbcbd-generated.csv", dir);
    st = plan_csv_points(path, users, err, err_len);
    if (st != PLAN_GEN_OK)
        plan_points_free(sites);
    return st;
}

int plan_coverage_count(const plan_points *sites, const plan_points *users, double radius_m,
                        bool haversine, plan_coverage *out)
{
    plan_coverage c = {0};
    c.users = users->n;
    for (int u = 0; u < users->n; u++) {
        int n = 0;
        for (int s = 0; s < sites->n; s++) {
            double d = haversine ? plan_geo_haversine(users->lat[u], users->lon[u],
                                                      sites->lat[s], sites->lon[s])
                                 : NAN;
            if (haversine ? d <= radius_m
                          : plan_geo_covers(users->lat[u], users->lon[u], sites->lat[s],
                                            sites->lon[s], radius_m))
                n++;
        }
        /* The paper's bins: < 10, 10 to 20 inclusive, > 20. */
        if (n < 10)
            c.below10++;
        else if (n <= 20)
            c.from10to20++;
        else
            c.above20++;
        if (n == 0)
            c.uncovered++;
        if (n > c.max_sites)
            c.max_sites = n;
    }
    *out = c;
    return 0;
}
