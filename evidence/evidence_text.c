/* evidence_text: escaping and the JSON error object (see evidence_text.h). */
#include "evidence_text.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *evidence_text_errno(int e, char *buf, size_t n)
{
    if (n && strerror_r(e, buf, n) != 0)
        snprintf(buf, n, "error %d", e);
    return buf;
}

void evidence_text_time(int64_t ms, char *buf, size_t n)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    if (ms < 0 || !gmtime_r(&s, &tm)) {
        snprintf(buf, n, "%" PRId64, ms);
        return;
    }
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03dZ", day, (int)(ms % 1000));
}

/* Length of the UTF-8 sequence at s (1..4) and its code point; 0 when the
 * bytes are not well-formed UTF-8 (overlong forms and surrogates included). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t len = s[0] >= 0xf5 ? 0 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (len == 0)
        return 0;
    uint32_t v = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/* Code points that change how text is shown without being visible. */
static bool invisible_control(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

struct ebuf {
    char *p;
    size_t n, len;
    bool full;
};

/* Appends a whole piece, or marks the buffer full ("..." at its end). */
static void append(struct ebuf *b, const char *s, size_t k)
{
    if (b->full)
        return;
    if (b->len + k + 4 > b->n) { /* room for "..." and the NUL */
        b->full = true;
        if (b->n >= 4) {
            size_t at = b->len + 3 < b->n ? b->len : b->n - 4;
            memcpy(b->p + at, "...", 4);
        }
        return;
    }
    memcpy(b->p + b->len, s, k);
    b->len += k;
    b->p[b->len] = '\0';
}

char *evidence_text_escape(const char *s, bool keep_newlines, char *out, size_t n)
{
    if (!out || n == 0)
        return out;
    struct ebuf b = {out, n, 0, false};
    out[0] = '\0';
    if (!s) {
        append(&b, "-", 1);
        return out;
    }
    const unsigned char *p = (const unsigned char *)s;
    while (*p && !b.full) {
        char esc[16];
        uint32_t cp = 0;
        size_t k = utf8_decode(p, &cp);
        if (*p == '\\') {
            append(&b, "\\\\", 2);
        } else if (*p == '\n' && keep_newlines) {
            append(&b, "\n", 1);
        } else if (k == 0 || *p < 0x20 || *p == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", *p);
            append(&b, esc, 4);
            k = 1;
        } else if (invisible_control(cp)) {
            int w = snprintf(esc, sizeof esc, "\\u{%04x}", (unsigned)cp);
            append(&b, esc, (size_t)w);
        } else {
            append(&b, (const char *)p, k);
        }
        p += k ? k : 1;
    }
    return out;
}

int evidence_text_fputs(FILE *f, const char *s)
{
    char buf[4096];
    size_t len = s ? strlen(s) : 0;
    /* Long values are written in pieces cut at character boundaries. */
    if (len < sizeof buf / 8)
        return fputs(evidence_text_escape(s, false, buf, sizeof buf), f) == EOF ? -1 : 0;
    char piece[256];
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t k = 0;
        while (p[k] && k < sizeof piece - 5) {
            uint32_t cp;
            size_t step = utf8_decode(p + k, &cp);
            k += step ? step : 1;
        }
        memcpy(piece, p, k);
        piece[k] = '\0';
        if (fputs(evidence_text_escape(piece, false, buf, sizeof buf), f) == EOF)
            return -1;
        p += k;
    }
    return 0;
}

const char *evidence_text_exit_kind(int exit_code)
{
    switch (exit_code) {
    case 3: return "not_found";
    case 64: return "usage";
    case 65: return "invalid_input";
    case 66: return "cannot_open";
    case 70: return "internal";
    case 75: return "time_limit";
    default: return "failed";
    }
}

int evidence_text_json_error(FILE *f, const char *program, const char *command, int exit_code,
                             const char *message)
{
    char generic[128];
    if (!message || !message[0]) {
        snprintf(generic, sizeof generic, "%s (exit %d); the details are on stderr",
                 evidence_text_exit_kind(exit_code), exit_code);
        message = generic;
    }
    /* jansson refuses invalid UTF-8: the message is escaped first. */
    char text[2048];
    evidence_text_escape(message, true, text, sizeof text);
    json_t *o = json_pack("{s:{s:s, s:o, s:i, s:s, s:s}}", "error", "program", program, "command",
                          command ? json_string(command) : json_null(), "exit", exit_code, "kind",
                          evidence_text_exit_kind(exit_code), "message", text);
    int rc = o && json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 && fputc('\n', f) != EOF
                 ? 0
                 : -1;
    json_decref(o);
    return fflush(f) == 0 ? rc : -1;
}

bool evidence_text_wants_json(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return false;
        if (!strcmp(argv[i], "--json"))
            return true;
    }
    return false;
}

/* Holds stdout in a temporary file; inactive (saved_stdout -1) when that
 * is impossible, and the command then prints directly. */
struct guard {
    int saved_stdout;
    FILE *held;
};

static void guard_begin(struct guard *g)
{
    g->saved_stdout = -1;
    g->held = tmpfile();
    if (!g->held || fflush(stdout) != 0)
        goto inactive;
    g->saved_stdout = dup(STDOUT_FILENO);
    if (g->saved_stdout < 0 || dup2(fileno(g->held), STDOUT_FILENO) < 0)
        goto inactive;
    return;
inactive:
    if (g->saved_stdout >= 0)
        close(g->saved_stdout);
    g->saved_stdout = -1;
    if (g->held)
        fclose(g->held);
    g->held = NULL;
}

/* Copies what was held to the real stdout; true when anything was printed
 * (or the guard was inactive). */
static bool guard_end(struct guard *g)
{
    if (g->saved_stdout < 0)
        return true;
    fflush(stdout);
    dup2(g->saved_stdout, STDOUT_FILENO);
    close(g->saved_stdout);
    g->saved_stdout = -1;
    bool printed = false;
    char buf[65536];
    size_t k;
    rewind(g->held);
    while ((k = fread(buf, 1, sizeof buf, g->held)) > 0) {
        printed = true;
        fwrite(buf, 1, k, stdout);
    }
    fflush(stdout);
    fclose(g->held);
    g->held = NULL;
    return printed;
}

int evidence_text_run(const char *program, const char *command, int (*fn)(int, char **), int argc,
                      char **argv, const char *(*message)(void))
{
    bool json = evidence_text_wants_json(argc, argv);
    struct guard g = {.saved_stdout = -1};
    if (json)
        guard_begin(&g);
    int rc = fn(argc, argv);
    bool printed = json ? guard_end(&g) : true;
    if (json && rc != 0 && !printed)
        evidence_text_json_error(stdout, program, command, rc, message ? message() : NULL);
    return rc;
}
