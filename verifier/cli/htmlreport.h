/* htmlreport.h - `exactav report`: the evidence as one static HTML page.
 *
 * One file, nothing fetched: no network, no script, inline CSS only (and a
 * Content-Security-Policy that forbids anything else).  A timeline per
 * path, channel, rendition and program version, one box per check in time
 * order (MATCH, MISMATCH, UNKNOWN coloured by reason), the checks that were
 * not MATCH listed with links to the pictures their report names
 * (diff_images), and the probes.  Every string from the evidence store is
 * HTML-escaped; a link is percent-encoded and only to a file path (never a
 * scheme of the input's choosing).
 */
#ifndef HTMLREPORT_H
#define HTMLREPORT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct htmlreport_info {
    const char *evidence_name;   /* shown in the heading */
    int64_t generated_ms, since_ms;
};

/* checks and probes as evidence_timeline returns them.  0, or -1 on a write error. */
int htmlreport_write(FILE *out, const struct htmlreport_info *info, const json_t *checks, const json_t *probes);

/* Writes s HTML-escaped (& < > " ' and control characters). */
void htmlreport_escape(FILE *out, const char *s);

#endif
