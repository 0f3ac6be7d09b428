/* report.h - writers of a verify report.  They format what they are given
 * (the jansson object built by verify.c) and decide nothing. */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include <jansson.h>

/* One JSON object, pretty-printed, then a newline. */
int report_write_json(FILE *out, const json_t *report);

/* A short human report: verdict, reason, first difference, counts. */
int report_write_human(FILE *out, const json_t *report);

#endif
