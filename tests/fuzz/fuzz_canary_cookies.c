/* fuzz_canary_cookies.c - the cookies a session's master playlist sets
 * (canary_cookies.h) on arbitrary Set-Cookie values: each input line is one
 * value, the first line the URL whose request is asked about.  Invariants:
 * no crash, no leak; the result fits its buffer and every name=value sent
 * is one the input set. */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "canary_cookies.h"

#define MAX_LINES 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *lines[MAX_LINES + 1] = {0}, *at = text;
    size_t n = 0;
    while (n < MAX_LINES && at) {
        lines[n++] = at;
        at = strchr(at, '\n');
        if (at)
            *at++ = '\0';
    }
    static const char *const from[] = {"https://api.example.com/v1/sessions/s/master.m3u8",
                                       "http://127.0.0.1:8080/m.m3u8"};
    char out[256];
    for (size_t i = 0; i < 2; i++) {
        const char *url = n > 1 && lines[0][0] ? lines[0] : "https://cdn.example.com/ch1/x.m3u8";
        if (canary_cookies_for((const char *const *)(lines + 1), from[i], url, out, sizeof out) != 0) {
            assert(out[0] == '\0');
            continue;
        }
        assert(strlen(out) < sizeof out);
        /* each "; "-separated pair starts one of the values (after spaces) */
        for (char *pair = out; *pair;) {
            size_t len = strcspn(pair, ";");
            bool found = false;
            for (size_t k = 1; k < n && !found; k++) {
                const char *v = lines[k];
                while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\f' || *v == '\v')
                    v++;
                found = !strncmp(v, pair, len);
            }
            assert(found);
            pair += len;
            while (*pair == ';' || *pair == ' ')
                pair++;
        }
    }
    free(text);
    return 0;
}
