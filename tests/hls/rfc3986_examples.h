/* RFC 3986 section 5.4: the 42 reference resolution examples against the
 * base "http://a/b/c/d;p?q" (5.4.1 normal: 23, 5.4.2 abnormal: 19; the
 * strict-parser result for "http:g").  Shared by test_uri.c and
 * curlu_table.c. */
#ifndef EXACTAV_TESTS_RFC3986_EXAMPLES_H
#define EXACTAV_TESTS_RFC3986_EXAMPLES_H

#define RFC3986_BASE "http://a/b/c/d;p?q"

struct rfc3986_example {
  const char *ref;
  const char *expected;
};

static const struct rfc3986_example RFC3986_NORMAL[] = {
    {"g:h", "g:h"},
    {"g", "http://a/b/c/g"},
    {"./g", "http://a/b/c/g"},
    {"g/", "http://a/b/c/g/"},
    {"/g", "http://a/g"},
    {"//g", "http://g"},
    {"?y", "http://a/b/c/d;p?y"},
    {"g?y", "http://a/b/c/g?y"},
    {"#s", "http://a/b/c/d;p?q#s"},
    {"g#s", "http://a/b/c/g#s"},
    {"g?y#s", "http://a/b/c/g?y#s"},
    {";x", "http://a/b/c/;x"},
    {"g;x", "http://a/b/c/g;x"},
    {"g;x?y#s", "http://a/b/c/g;x?y#s"},
    {"", "http://a/b/c/d;p?q"},
    {".", "http://a/b/c/"},
    {"./", "http://a/b/c/"},
    {"..", "http://a/b/"},
    {"../", "http://a/b/"},
    {"../g", "http://a/b/g"},
    {"../..", "http://a/"},
    {"../../", "http://a/"},
    {"../../g", "http://a/g"},
};

static const struct rfc3986_example RFC3986_ABNORMAL[] = {
    {"../../../g", "http://a/g"},
    {"../../../../g", "http://a/g"},
    {"/./g", "http://a/g"},
    {"/../g", "http://a/g"},
    {"g.", "http://a/b/c/g."},
    {".g", "http://a/b/c/.g"},
    {"g..", "http://a/b/c/g.."},
    {"..g", "http://a/b/c/..g"},
    {"./../g", "http://a/b/g"},
    {"./g/.", "http://a/b/c/g/"},
    {"g/./h", "http://a/b/c/g/h"},
    {"g/../h", "http://a/b/c/h"},
    {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
    {"g;x=1/../y", "http://a/b/c/y"},
    {"g?y/./x", "http://a/b/c/g?y/./x"},
    {"g?y/../x", "http://a/b/c/g?y/../x"},
    {"g#s/./x", "http://a/b/c/g#s/./x"},
    {"g#s/../x", "http://a/b/c/g#s/../x"},
    {"http:g", "http:g"},
};

#define RFC3986_NORMAL_COUNT (sizeof RFC3986_NORMAL / sizeof RFC3986_NORMAL[0])
#define RFC3986_ABNORMAL_COUNT (sizeof RFC3986_ABNORMAL / sizeof RFC3986_ABNORMAL[0])

#endif
