/* htmlreport.c - the evidence as one static HTML page (see htmlreport.h). */
#include "htmlreport.h"

#include <stdbool.h>
#include <string.h>

#include "util.h"

#define MAX_UNKNOWN_HUES 8       /* distinct colours for UNKNOWN reasons; more share the last */
#define MAX_REASONS 64

static const char STYLE[] =
    "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222;background:#fff}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em}h3{font-size:1em;margin:1em 0 .3em}"
    "table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
    "td.t{white-space:nowrap}"
    ".tl{display:flex;flex-wrap:wrap;gap:2px;margin:.3em 0}"
    ".seg{display:inline-block;width:14px;height:22px;border-radius:2px}"
    ".MATCH{background:#2e9d44}.MISMATCH{background:#d7191c}"
    ".u0{background:#f0a30a}.u1{background:#7f7fff}.u2{background:#999}.u3{background:#c77cc7}"
    ".u4{background:#5bc0de}.u5{background:#b8860b}.u6{background:#8fbc8f}.u7{background:#555}"
    ".PASS{color:#2e9d44}.VIOLATION{color:#d7191c}.UNKNOWN{color:#b8860b}"
    ".legend span.seg{vertical-align:middle;margin-right:4px}.legend{margin:.3em 0}"
    ".meta{color:#555}img.thumb{height:90px;border:1px solid #ccc;margin-right:4px;vertical-align:middle}";

void htmlreport_escape(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fputs("&#xfffd;", out);   /* a control character is shown, never acted on */
            else
                fputc(c, out);
        }
    }
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* The escaped values of keys, separated by sep (markup of ours). */
static void write_fields(FILE *out, const json_t *o, const char *const *keys, size_t n, const char *sep)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(sep, out);
        htmlreport_escape(out, jstr(o, keys[i]));
    }
}

static void write_time(FILE *out, const json_t *o, const char *key)
{
    char at[32];
    util_rfc3339((int64_t)json_integer_value(json_object_get(o, key)), at);
    fputs(at, out);
}

/* ---- UNKNOWN reasons: one colour each, in order of first appearance ---- */

struct reasons {
    const char *name[MAX_REASONS];
    int n;
};

static int reason_hue(struct reasons *r, const char *reason)
{
    int i = 0;
    while (i < r->n && strcmp(r->name[i], reason))
        i++;
    if (i == r->n && r->n < MAX_REASONS)
        r->name[r->n++] = reason;
    return i < MAX_UNKNOWN_HUES ? i : MAX_UNKNOWN_HUES - 1;
}

/* ---- links to the pictures ---- */

/* A file path as a URL: an absolute path becomes file://, a relative one
 * stays relative (to the page); every byte outside the unreserved set and
 * '/' is percent-encoded, so no scheme, query or markup can come from it. */
static void write_file_url(FILE *out, const char *path)
{
    if (path[0] == '/')
        fputs("file://", out);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
            fputc(*p, out);
        else
            fprintf(out, "%%%02X", *p);
    }
}

static void write_pictures(FILE *out, const json_t *check)
{
    static const char *const kinds[] = {"video_reference", "video_candidate", "video_difference", "audio_plot"};
    const char *text = json_string_value(json_object_get(check, "diff_images"));
    json_t *files = text ? json_loads(text, 0, NULL) : NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *path = json_string_value(json_object_get(files, kinds[i]));
        if (!path || !path[0])
            continue;
        fputs("<a class=\"pic\" href=\"", out);
        write_file_url(out, path);
        fputs("\">", out);
        if (!strcmp(kinds[i], "video_difference") || !strcmp(kinds[i], "audio_plot")) {
            fputs("<img class=\"thumb\" alt=\"\" src=\"", out);
            write_file_url(out, path);
            fputs("\">", out);
        }
        fprintf(out, "%s</a> ", kinds[i]);
    }
    json_decref(files);
}

/* ---- the timeline of one scope ---- */

static bool same_scope(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"path_id", "channel", "rendition", "program_version"};
    for (size_t i = 0; i < 4; i++)
        if (strcmp(jstr(a, keys[i]), jstr(b, keys[i])))
            return false;
    return true;
}

static void write_segment(FILE *out, const json_t *c, struct reasons *rs)
{
    const char *verdict = jstr(c, "verdict"), *reason = jstr(c, "reason");
    if (!strcmp(verdict, "MATCH") || !strcmp(verdict, "MISMATCH"))
        fprintf(out, "<span class=\"seg %s\" title=\"", verdict);
    else
        fprintf(out, "<span class=\"seg UNKNOWN u%d\" title=\"", reason_hue(rs, reason));
    const json_t *seq = json_object_get(c, "media_sequence");
    if (json_is_integer(seq))
        fprintf(out, "segment %lld, ", (long long)json_integer_value(seq));
    write_time(out, c, "observed_at_ms");
    fputs(": ", out);
    htmlreport_escape(out, verdict);
    fputs(" ", out);
    htmlreport_escape(out, reason);
    fputs("\"></span>", out);
}

static void write_not_match(FILE *out, const json_t *checks, size_t from, size_t to)
{
    bool any = false;
    for (size_t i = from; i < to; i++) {
        const json_t *c = json_array_get(checks, i);
        if (!strcmp(jstr(c, "verdict"), "MATCH"))
            continue;
        if (!any)
            fputs("<table><tr><th>observed</th><th>segment</th><th>verdict</th><th>reason</th><th>evidence</th>"
                  "<th>pictures</th></tr>\n", out);
        any = true;
        fputs("<tr><td class=\"t\">", out);
        write_time(out, c, "observed_at_ms");
        fputs("</td><td>", out);
        if (json_is_integer(json_object_get(c, "media_sequence")))
            fprintf(out, "%lld", (long long)json_integer_value(json_object_get(c, "media_sequence")));
        fprintf(out, "</td><td class=\"%s\">", !strcmp(jstr(c, "verdict"), "MISMATCH") ? "VIOLATION" : "UNKNOWN");
        write_fields(out, c, (const char *const[]){"verdict", "reason"}, 2, "</td><td>");
        fputs("</td><td><code>", out);
        htmlreport_escape(out, jstr(c, "id"));
        fputs("</code></td><td>", out);
        write_pictures(out, c);
        fputs("</td></tr>\n", out);
    }
    if (any)
        fputs("</table>\n", out);
}

static void write_scope(FILE *out, const json_t *checks, size_t from, size_t to, struct reasons *rs)
{
    const json_t *first = json_array_get(checks, from);
    size_t count[3] = {0, 0, 0};
    static const char *const scope[] = {"path_id", "channel", "rendition", "program_version"};
    fputs("<section class=\"scope\"><h3>", out);
    write_fields(out, first, scope, 4, " &middot; ");
    fputs("</h3>\n<div class=\"tl\">", out);
    for (size_t i = from; i < to; i++) {
        const json_t *c = json_array_get(checks, i);
        const char *v = jstr(c, "verdict");
        count[!strcmp(v, "MATCH") ? 0 : !strcmp(v, "MISMATCH") ? 1 : 2]++;
        write_segment(out, c, rs);
    }
    fprintf(out, "</div>\n<p class=\"counts\">%zu checks: %zu MATCH, %zu MISMATCH, %zu UNKNOWN</p>\n", to - from,
            count[0], count[1], count[2]);
    write_not_match(out, checks, from, to);
    fputs("</section>\n", out);
}

static void write_legend(FILE *out, const struct reasons *rs)
{
    fputs("<div class=\"legend\"><span class=\"seg MATCH\"></span>MATCH &nbsp; "
          "<span class=\"seg MISMATCH\"></span>MISMATCH", out);
    for (int i = 0; i < rs->n; i++) {
        fprintf(out, " &nbsp; <span class=\"seg UNKNOWN u%d\"></span>UNKNOWN ",
                i < MAX_UNKNOWN_HUES ? i : MAX_UNKNOWN_HUES - 1);
        htmlreport_escape(out, rs->name[i]);
    }
    fputs("</div>\n", out);
}

static void write_timelines(FILE *out, const json_t *checks)
{
    struct reasons rs = {.n = 0};
    size_t n = json_array_size(checks);
    fputs("<h2 id=\"timeline\">Timeline per path and rendition</h2>\n", out);
    if (!n)
        fputs("<p>No checks in this time.</p>\n", out);
    for (size_t from = 0; from < n;) {
        size_t to = from + 1;
        while (to < n && same_scope(json_array_get(checks, from), json_array_get(checks, to)))
            to++;
        write_scope(out, checks, from, to, &rs);
        from = to;
    }
    if (n)
        write_legend(out, &rs);
}

/* ---- probes ---- */

static void write_int_cell(FILE *out, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    fputs("<td>", out);
    if (json_is_integer(v))
        fprintf(out, "%lld", (long long)json_integer_value(v));
    fputs("</td>", out);
}

static void write_probes(FILE *out, const json_t *probes)
{
    static const char *const text_cols[] = {"path_id", "channel", "rendition"};
    static const char *const int_cols[] = {"playlist_status", "header_status", "download_status", "tcp_connect_ms",
                                           "header_ttfb_ms", "download_ms"};
    fputs("<h2 id=\"probes\">Probes</h2>\n", out);
    if (!json_array_size(probes)) {
        fputs("<p>No probes in this time.</p>\n", out);
        return;
    }
    fputs("<table><tr><th>path</th><th>channel</th><th>rendition</th><th>observed</th><th>status</th><th>reason</th>"
          "<th>playlist</th><th>headers</th><th>download</th><th>connect ms</th><th>first byte ms</th>"
          "<th>download ms</th></tr>\n", out);
    size_t i;
    const json_t *p;
    json_array_foreach(probes, i, p) {
        fputs("<tr><td>", out);
        write_fields(out, p, text_cols, 3, "</td><td>");
        fputs("</td><td class=\"t\">", out);
        write_time(out, p, "observed_at_ms");
        const char *status = jstr(p, "status");
        bool known = !strcmp(status, "PASS") || !strcmp(status, "VIOLATION");
        fprintf(out, "</td><td class=\"%s\">", known ? status : "UNKNOWN");
        htmlreport_escape(out, status);
        fputs("</td><td>", out);
        htmlreport_escape(out, jstr(p, "reason"));
        fputs("</td>", out);
        for (size_t k = 0; k < sizeof int_cols / sizeof int_cols[0]; k++)
            write_int_cell(out, p, int_cols[k]);
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

int htmlreport_write(FILE *out, const struct htmlreport_info *info, const json_t *checks, const json_t *probes)
{
    char gen[32], since[32];
    util_rfc3339(info->generated_ms, gen);
    util_rfc3339(info->since_ms, since);
    /* the policy forbids every fetch but images from files (the pictures) and inline style */
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src file: 'self';"
                 " style-src 'unsafe-inline'\">\n<title>exactav evidence report</title>\n<style>%s</style>\n"
                 "</head><body>\n<h1>exactav evidence report</h1>\n<p class=\"meta\">evidence <code>", STYLE);
    htmlreport_escape(out, info->evidence_name);
    fprintf(out, "</code>, checks observed since %s, generated %s: %zu checks, %zu probes</p>\n",
            info->since_ms > 0 ? since : "the beginning", gen, json_array_size(checks), json_array_size(probes));
    write_timelines(out, checks);
    write_probes(out, probes);
    fputs("</body></html>\n", out);
    return ferror(out) ? -1 : 0;
}
