/* credential.c - checks of user-given headers and cookies (see credential.h). */
#include "credential.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* An HTTP token (RFC 9110 5.6.2) of n bytes. */
static bool http_token(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !(isalnum((unsigned char)s[i]) || strchr("!#$%&'*+-.^_`|~", s[i])))
            return false;
    return n > 0;
}

static bool bad_byte(bool cookie, unsigned char ch)
{
    if (cookie)
        return ch <= 0x20 || ch >= 0x7f || ch == '"' || ch == ',' || ch == ';' || ch == '\\';
    return (ch < 0x20 && ch != '\t') || ch == 0x7f;
}

int credential_check(bool cookie, const char *arg, char *why, size_t n)
{
    size_t name = strcspn(arg, cookie ? "=" : ":"), total = strlen(arg);
    int shown = (int)(name > 64 ? 64 : name);
    if (!http_token(arg, name) || !arg[name]) {
        snprintf(why, n, cookie ? "wants name=value (a token name)" : "wants 'Name: value' (a token name)");
        return -1;
    }
    for (size_t i = name + 1; i < total; i++)
        if (bad_byte(cookie, (unsigned char)arg[i])) {
            snprintf(why, n, "%.*s: the value has a character %s cannot send", shown, arg,
                     cookie ? "a cookie" : "a header");
            return -1;
        }
    static const char *const refused[] = {"Host", "Content-Length", "Transfer-Encoding", "Cookie",
                                          "Range", "Connection"};
    for (size_t i = 0; !cookie && i < sizeof refused / sizeof refused[0]; i++)
        if (name == strlen(refused[i]) && !strncasecmp(arg, refused[i], name)) {
            snprintf(why, n, "%s: exactav sets this header itself%s", refused[i], i == 3 ? " (use a cookie)" : "");
            return -1;
        }
    return 0;
}
