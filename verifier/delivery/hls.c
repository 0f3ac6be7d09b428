/* hls: HLS media playlist parser and segment selection (see hls.h and
 * docs/hls.md).  The text is copied once into pl->storage; line ends and
 * separators are overwritten with NULs so that every string in the result
 * points into that copy. */
#include "hls.h"

#include "uri.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTRS 64

struct pending {          /* segment tags seen since the last URI line */
  bool any;
  unsigned long first_line;
  bool extinf;
  const char *duration_text;
  const char *title;
  uint64_t duration_num, duration_den;
  bool byterange;
  uint64_t br_length, br_offset;
  bool br_offset_explicit;
  bool discontinuity;
  bool pdt;
  int64_t pdt_ms;
  const char *pdt_text;
};

struct parser {
  struct hls_playlist *pl;
  struct hls_error *err;
  unsigned long line;
  size_t seg_cap, var_cap;
  struct pending pend;
  bool stream_inf;        /* an EXT-X-STREAM-INF waits for its URI */
  unsigned long stream_inf_line;
  struct hls_variant variant;
  struct hls_key key;     /* the EXT-X-KEY in force (RFC 8216 4.3.2.4) */
  bool seen_extm3u, seen_target, seen_sequence, seen_version, seen_dseq;
  bool seen_media, seen_master;
  struct {                /* the EXT-X-MAP in effect: applies to every later segment */
    const char *uri;
    bool byterange;
    uint64_t length, offset;
  } map;
  size_t part_cap;
  size_t seg_part_first;  /* pl->parts[seg_part_first ..] wait for their parent's URI */
};

struct attr {
  const char *name;
  size_t name_len;
  char *value;
  size_t value_len;
  bool quoted;
};

/* Records the first failure with its line; returns st for tail calls.
 * Messages never quote URIs or attribute values: a signed query could be
 * in them, and the caller stores the message. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static enum hls_status fail(struct parser *p, enum hls_status st, const char *fmt, ...)
{
  assert(st != HLS_OK && st != HLS_E_UNSET);
  p->err->status = st;
  p->err->line = p->line;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- numbers (RFC 8216 4.2) ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* decimal-integer: [0-9]+ in 0 .. 2^64-1. */
static enum hls_status parse_u64(const char *s, size_t n, uint64_t *v)
{
  if (n == 0) return HLS_E_MALFORMED_NUMBER;
  uint64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_digit(s[i])) return HLS_E_MALFORMED_NUMBER;
    unsigned d = (unsigned)(s[i] - '0');
    if (x > (UINT64_MAX - d) / 10) return HLS_E_NUMBER_RANGE;
    x = x * 10 + d;
  }
  *v = x;
  return HLS_OK;
}

/* decimal-floating-point as num/den with den = 10^k, k <= 9.  At most 9
 * significant integer digits; fraction digits after the 9th are dropped
 * (they cannot change a rounding to whole seconds or to ms). */
static enum hls_status parse_decimal(const char *s, size_t n, uint64_t *num, uint64_t *den)
{
  size_t i = 0, digits = 0, int_digits = 0, frac_kept = 0;
  uint64_t ip = 0, fp = 0, d = 1;
  for (; i < n && is_digit(s[i]); i++, digits++) {
    if (ip == 0 && s[i] == '0') continue; /* leading zeros */
    if (++int_digits > 9) return HLS_E_NUMBER_RANGE;
    ip = ip * 10 + (uint64_t)(s[i] - '0');
  }
  if (i < n && s[i] == '.') {
    for (i++; i < n && is_digit(s[i]); i++, digits++) {
      if (frac_kept == 9) continue;
      fp = fp * 10 + (uint64_t)(s[i] - '0');
      d *= 10;
      frac_kept++;
    }
  }
  if (i != n || digits == 0) return HLS_E_MALFORMED_NUMBER;
  while (d > 1 && fp % 10 == 0) fp /= 10, d /= 10;
  *num = ip * d + fp;
  *den = d;
  return HLS_OK;
}

static uint64_t rounded_seconds(uint64_t num, uint64_t den)
{
  return num / den + ((num % den) * 2 >= den && den > 1 ? 1 : 0);
}

static uint64_t rounded_ms(uint64_t num, uint64_t den)
{
  return num / den * 1000 + ((num % den) * 1000 + den / 2) / den;
}

/* ---- EXT-X-PROGRAM-DATE-TIME: YYYY-MM-DDThh:mm:ss[.f](Z|+hh:mm|+hhmm|+hh) ---- */

static bool digits_at(const char *s, size_t n, size_t at, size_t k, int *v)
{
  if (at + k > n) return false;
  int x = 0;
  for (size_t i = at; i < at + k; i++) {
    if (!is_digit(s[i])) return false;
    x = x * 10 + (s[i] - '0');
  }
  *v = x;
  return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int y, int m, int d)
{
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
  static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : dim[m - 1];
}

/* Parses the zone at s[i..n): Z, +hh:mm, +hhmm or +hh; minutes east of UTC. */
static bool parse_zone(const char *s, size_t n, size_t i, int *minutes)
{
  int hh = 0, mm = 0;
  if (i + 1 == n && (s[i] == 'Z' || s[i] == 'z')) {
    *minutes = 0;
    return true;
  }
  if (i >= n || (s[i] != '+' && s[i] != '-') || !digits_at(s, n, i + 1, 2, &hh)) return false;
  size_t j = i + 3;
  if (j < n && s[j] == ':') j++;
  if (j < n && (!digits_at(s, n, j, 2, &mm) || j + 2 != n)) return false;
  if (j == n && s[j - 1] == ':') return false; /* "+hh:" */
  if (hh > 23 || mm > 59) return false;
  *minutes = (s[i] == '-' ? -1 : 1) * (hh * 60 + mm);
  return true;
}

static bool parse_date_time(const char *s, int64_t *ms)
{
  size_t n = strlen(s);
  int y, mo, d, h, mi, sec, zone = 0;
  if (!digits_at(s, n, 0, 4, &y) || n < 19 || s[4] != '-' || !digits_at(s, n, 5, 2, &mo) || s[7] != '-' ||
      !digits_at(s, n, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || !digits_at(s, n, 11, 2, &h) ||
      s[13] != ':' || !digits_at(s, n, 14, 2, &mi) || s[16] != ':' || !digits_at(s, n, 17, 2, &sec))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59) return false;
  size_t i = 19;
  int frac_ms = 0, scale = 100;
  if (i < n && s[i] == '.') {
    size_t start = ++i;
    for (; i < n && is_digit(s[i]); i++, scale /= 10) frac_ms += scale * (s[i] - '0');
    if (i == start) return false;
  }
  if (!parse_zone(s, n, i, &zone)) return false;
  int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - (int64_t)zone * 60;
  *ms = t * 1000 + frac_ms;
  return true;
}

/* ---- attribute lists (RFC 8216 4.2) ---- */

static bool is_attr_name_char(char c) { return (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-'; }

/* Parses one AttributeName=AttributeValue at *s; advances past it. */
static bool parse_one_attr(char **s, struct attr *a)
{
  char *q = *s;
  a->name = q;
  while (is_attr_name_char(*q)) q++;
  a->name_len = (size_t)(q - a->name);
  if (a->name_len == 0 || *q != '=') return false;
  q++;
  a->quoted = *q == '"';
  if (a->quoted) {
    char *close = strchr(q + 1, '"');
    if (!close) return false;
    a->value = q + 1;
    a->value_len = (size_t)(close - q - 1);
    q = close + 1;
  } else {
    a->value = q;
    while (*q && *q != ',' && *q != '"' && *q != ' ' && *q != '\t') q++;
    a->value_len = (size_t)(q - a->value);
    if (a->value_len == 0) return false;
  }
  *s = q;
  return true;
}

/* Splits s into attrs; on success NUL-terminates every name and value. */
static enum hls_status parse_attrs(struct parser *p, char *s, struct attr *a, size_t *count)
{
  size_t n = 0;
  if (!s || !*s) return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "empty attribute list");
  for (;;) {
    if (n == MAX_ATTRS) return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "more than %d attributes", MAX_ATTRS);
    if (!parse_one_attr(&s, &a[n]))
      return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "malformed attribute %zu", n + 1);
    for (size_t i = 0; i < n; i++)
      if (a[i].name_len == a[n].name_len && memcmp(a[i].name, a[n].name, a[n].name_len) == 0)
        return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "attribute %.*s appears twice", (int)a[n].name_len, a[n].name);
    n++;
    if (*s == '\0') break;
    if (*s != ',' || s[1] == '\0')
      return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "malformed separator after attribute %zu", n);
    s++;
  }
  for (size_t i = 0; i < n; i++) { /* after the scan: separators are no longer needed */
    ((char *)a[i].name)[a[i].name_len] = '\0';
    a[i].value[a[i].value_len] = '\0';
  }
  *count = n;
  return HLS_OK;
}

static const struct attr *find_attr(const struct attr *a, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(a[i].name, name) == 0) return &a[i];
  return NULL;
}

/* ---- playlist-level tags ---- */

static enum hls_status tag_u64(struct parser *p, const char *name, char *v, bool *seen, uint64_t *dst)
{
  if (*seen) return fail(p, HLS_E_DUPLICATE_TAG, "%s appears twice", name);
  *seen = true;
  enum hls_status st = parse_u64(v, strlen(v), dst);
  if (st != HLS_OK) return fail(p, st, "%s value \"%.24s\" is not a decimal-integer", name, v);
  return HLS_OK;
}

static enum hls_status t_extm3u(struct parser *p, char *v)
{
  (void)v;
  return fail(p, HLS_E_DUPLICATE_TAG, "#EXTM3U appears twice");
}

static enum hls_status t_version(struct parser *p, char *v)
{
  p->pl->has_version = true;
  return tag_u64(p, "EXT-X-VERSION", v, &p->seen_version, &p->pl->version);
}

static enum hls_status t_target(struct parser *p, char *v)
{
  return tag_u64(p, "EXT-X-TARGETDURATION", v, &p->seen_target, &p->pl->target_duration);
}

static enum hls_status header_late(struct parser *p, const char *name)
{
  if (p->pl->segment_count == 0 && !p->pend.any && p->pl->part_count == 0) return HLS_OK;
  return fail(p, HLS_E_HEADER_TAG_LATE, "%s after the first media segment", name);
}

static enum hls_status t_sequence(struct parser *p, char *v)
{
  enum hls_status st = header_late(p, "EXT-X-MEDIA-SEQUENCE");
  if (st != HLS_OK) return st;
  p->pl->has_media_sequence = true;
  return tag_u64(p, "EXT-X-MEDIA-SEQUENCE", v, &p->seen_sequence, &p->pl->media_sequence);
}

static enum hls_status t_dseq(struct parser *p, char *v)
{
  enum hls_status st = header_late(p, "EXT-X-DISCONTINUITY-SEQUENCE");
  if (st != HLS_OK) return st;
  return tag_u64(p, "EXT-X-DISCONTINUITY-SEQUENCE", v, &p->seen_dseq, &p->pl->discontinuity_sequence);
}

static enum hls_status t_endlist(struct parser *p, char *v)
{
  (void)v;
  if (p->pl->endlist) return fail(p, HLS_E_DUPLICATE_TAG, "EXT-X-ENDLIST appears twice");
  p->pl->endlist = true;
  return HLS_OK;
}

/* ---- encryption (RFC 8216 4.3.2.4) ---- */

static int hex_digit(char c)
{
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* IV: a hexadecimal-sequence ("0x" + 1..32 hex digits) for a 128-bit
 * unsigned integer, stored big-endian (fewer digits are leading zeros). */
static bool parse_iv(const char *v, uint8_t iv[16])
{
  if (v[0] != '0' || (v[1] != 'x' && v[1] != 'X')) return false;
  size_t n = strlen(v + 2);
  if (n == 0 || n > 32) return false;
  memset(iv, 0, 16);
  for (size_t i = 0; i < n; i++) {
    int d = hex_digit(v[2 + n - 1 - i]);  /* from the least significant digit */
    if (d < 0) return false;
    iv[15 - i / 2] |= (uint8_t)(i % 2 ? d << 4 : d);
  }
  return true;
}

/* Only what profile v1 can check is accepted: no encryption, or whole
 * segments in AES-128 CBC with an identity key.  Sample encryption
 * (SAMPLE-AES) needs the codec layer and a DRM system: outside profile. */
static enum hls_status t_key(struct parser *p, char *v)
{
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  const struct attr *m = find_attr(a, n, "METHOD");
  if (!m || m->quoted) return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "EXT-X-KEY without an unquoted METHOD");
  if (strcmp(m->value, "NONE") == 0) {
    memset(&p->key, 0, sizeof p->key);
    return HLS_OK;
  }
  if (strcmp(m->value, "AES-128") != 0)
    return fail(p, HLS_E_KEY_METHOD, "EXT-X-KEY METHOD=%.32s: only AES-128 (whole segments) is in profile v1", m->value);
  const struct attr *format = find_attr(a, n, "KEYFORMAT");
  if (format && (!format->quoted || strcmp(format->value, "identity") != 0))
    return fail(p, HLS_E_KEY_METHOD, "EXT-X-KEY KEYFORMAT other than \"identity\" is outside profile v1");
  const struct attr *uri = find_attr(a, n, "URI");
  if (!uri || !uri->quoted || uri->value_len == 0)
    return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "EXT-X-KEY METHOD=AES-128 without a quoted URI");
  struct uri_parts u;
  if (uri_parse(uri->value, &u) != URI_OK) return fail(p, HLS_E_MALFORMED_URI, "EXT-X-KEY URI is not a URI reference");
  const struct attr *iv = find_attr(a, n, "IV");
  struct hls_key k = {.method = HLS_KEY_AES_128, .uri = uri->value, .has_iv = iv != NULL};
  if (iv && (iv->quoted || !parse_iv(iv->value, k.iv)))
    return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "EXT-X-KEY IV is not a hexadecimal-sequence of at most 128 bits");
  p->key = k;
  return HLS_OK;
}

/* A quoted "<n>[@<o>]" with n > 0 and o + n within 64 bits; *off is 0 and
 * *has_off false without "@o". */
static bool parse_quoted_range(const struct attr *a, uint64_t *len, uint64_t *off, bool *has_off)
{
  char *at = strchr(a->value, '@');
  size_t nlen = at ? (size_t)(at - a->value) : strlen(a->value);
  *off = 0;
  *has_off = at != NULL;
  return a->quoted && parse_u64(a->value, nlen, len) == HLS_OK && *len > 0 &&
         (!at || parse_u64(at + 1, strlen(at + 1), off) == HLS_OK) && *off <= UINT64_MAX - *len;
}

/* #EXT-X-MAP:URI="...",BYTERANGE="<n>[@<o>]" (RFC 8216 4.3.2.5): the init
 * segment of every following segment, until the next EXT-X-MAP. */
static enum hls_status t_map(struct parser *p, char *v)
{
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  const struct attr *u = find_attr(a, n, "URI"), *br = find_attr(a, n, "BYTERANGE");
  if (!u || !u->quoted || !u->value[0]) return fail(p, HLS_E_MAP, "EXT-X-MAP without a quoted URI");
  struct uri_parts parts;
  if (uri_parse(u->value, &parts) != URI_OK) return fail(p, HLS_E_MAP, "EXT-X-MAP URI is not a URI reference");
  p->map.uri = u->value;
  p->map.byterange = br != NULL;
  p->map.length = p->map.offset = 0;
  bool explicit_offset;
  if (br && !parse_quoted_range(br, &p->map.length, &p->map.offset, &explicit_offset))
    return fail(p, HLS_E_MAP, "EXT-X-MAP BYTERANGE is not a quoted <n>[@<o>]");
  return HLS_OK;
}

/* ---- tags outside profile v1 ---- */

static enum hls_status t_iframes(struct parser *p, char *v)
{
  (void)v;
  return fail(p, HLS_E_IFRAMES_ONLY, "EXT-X-I-FRAMES-ONLY: I-frame playlists are outside profile v1");
}

/* ---- media segment tags ---- */

static void pending_touch(struct parser *p)
{
  if (!p->pend.any) p->pend.first_line = p->line;
  p->pend.any = true;
}

/* #EXTINF:<duration>,[<title>]  (a missing comma is tolerated: title "") */
static enum hls_status t_extinf(struct parser *p, char *v)
{
  if (p->pend.extinf) return fail(p, HLS_E_DUPLICATE_TAG, "two EXTINF tags for one segment");
  char *comma = strchr(v, ',');
  size_t dlen = comma ? (size_t)(comma - v) : strlen(v);
  enum hls_status st = parse_decimal(v, dlen, &p->pend.duration_num, &p->pend.duration_den);
  if (st != HLS_OK)
    return fail(p, st, "EXTINF duration \"%.*s\" is not a decimal-floating-point", (int)(dlen > 24 ? 24 : dlen), v);
  p->pend.title = comma ? comma + 1 : v + dlen;
  if (comma) *comma = '\0';
  p->pend.duration_text = v;
  p->pend.extinf = true;
  pending_touch(p);
  return HLS_OK;
}

/* #EXT-X-BYTERANGE:<n>[@<o>] */
static enum hls_status t_byterange(struct parser *p, char *v)
{
  if (p->pend.byterange) return fail(p, HLS_E_DUPLICATE_TAG, "two EXT-X-BYTERANGE tags for one segment");
  char *at = strchr(v, '@');
  size_t nlen = at ? (size_t)(at - v) : strlen(v);
  enum hls_status st = parse_u64(v, nlen, &p->pend.br_length);
  if (st == HLS_OK && at) st = parse_u64(at + 1, strlen(at + 1), &p->pend.br_offset);
  if (st != HLS_OK) return fail(p, st, "EXT-X-BYTERANGE \"%.40s\" is not <n>[@<o>]", v);
  if (p->pend.br_length == 0) return fail(p, HLS_E_MALFORMED_TAG, "EXT-X-BYTERANGE of length 0");
  p->pend.br_offset_explicit = at != NULL;
  p->pend.byterange = true;
  pending_touch(p);
  return HLS_OK;
}

static enum hls_status t_discontinuity(struct parser *p, char *v)
{
  (void)v;
  if (p->pend.discontinuity) return fail(p, HLS_E_DUPLICATE_TAG, "two EXT-X-DISCONTINUITY tags for one segment");
  p->pend.discontinuity = true;
  pending_touch(p);
  return HLS_OK;
}

static enum hls_status t_pdt(struct parser *p, char *v)
{
  if (p->pend.pdt) return fail(p, HLS_E_DUPLICATE_TAG, "two EXT-X-PROGRAM-DATE-TIME tags for one segment");
  if (!parse_date_time(v, &p->pend.pdt_ms))
    return fail(p, HLS_E_MALFORMED_DATE, "EXT-X-PROGRAM-DATE-TIME \"%.40s\" is not an ISO 8601 date-time", v);
  p->pend.pdt_text = v;
  p->pend.pdt = true;
  pending_touch(p);
  return HLS_OK;
}

/* ---- Low-Latency HLS (RFC 8216bis 4.4.3.7, 4.4.3.8, 4.4.4.9, 4.4.5.3) ---- */

static enum hls_status grow(struct parser *p, void **arr, size_t *cap, size_t count, size_t elem, size_t max);

/* An unquoted decimal-floating-point attribute; absent leaves d->present false. */
static bool duration_attr(const struct attr *a, struct hls_duration *d)
{
  memset(d, 0, sizeof *d);
  if (!a) return true;
  if (a->quoted || parse_decimal(a->value, a->value_len, &d->num, &d->den) != HLS_OK) return false;
  d->ms = rounded_ms(d->num, d->den);
  d->present = true;
  return true;
}

/* An unquoted enumerated-string YES or NO; absent is NO. */
static bool yes_no_attr(const struct attr *a, bool *v)
{
  *v = false;
  if (!a) return true;
  if (a->quoted) return false;
  *v = strcmp(a->value, "YES") == 0;
  return *v || strcmp(a->value, "NO") == 0;
}

/* A quoted, non-empty URI reference. */
static bool uri_attr(const struct attr *a)
{
  struct uri_parts u;
  return a && a->quoted && a->value[0] && uri_parse(a->value, &u) == URI_OK;
}

/* Exact duration in ns (den is 10^k, k <= 9, and at most 9 integer digits:
 * below 10^18, no overflow), to compare durations without rounding. */
static uint64_t duration_ns(uint64_t num, uint64_t den)
{
  assert(den >= 1 && den <= 1000000000u && 1000000000u % den == 0);
  return num * (1000000000u / den);
}

/* #EXT-X-PART-INF:PART-TARGET=<s>: required with parts, once, > 0. */
static enum hls_status t_part_inf(struct parser *p, char *v)
{
  if (p->pl->part_target.present) return fail(p, HLS_E_DUPLICATE_TAG, "EXT-X-PART-INF appears twice");
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  struct hls_duration d;
  if (!duration_attr(find_attr(a, n, "PART-TARGET"), &d) || !d.present || d.num == 0)
    return fail(p, HLS_E_MALFORMED_PART, "EXT-X-PART-INF without a positive decimal-floating-point PART-TARGET");
  p->pl->part_target = d;
  return HLS_OK;
}

/* #EXT-X-SERVER-CONTROL: once; CAN-SKIP-DATERANGES only with CAN-SKIP-UNTIL. */
static enum hls_status t_server_control(struct parser *p, char *v)
{
  struct hls_server_control *c = &p->pl->server_control;
  if (c->present) return fail(p, HLS_E_DUPLICATE_TAG, "EXT-X-SERVER-CONTROL appears twice");
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  if (!yes_no_attr(find_attr(a, n, "CAN-BLOCK-RELOAD"), &c->can_block_reload) ||
      !yes_no_attr(find_attr(a, n, "CAN-SKIP-DATERANGES"), &c->can_skip_dateranges))
    return fail(p, HLS_E_MALFORMED_SERVER_CONTROL, "EXT-X-SERVER-CONTROL: a YES/NO attribute is neither");
  if (!duration_attr(find_attr(a, n, "CAN-SKIP-UNTIL"), &c->can_skip_until) ||
      !duration_attr(find_attr(a, n, "HOLD-BACK"), &c->hold_back) ||
      !duration_attr(find_attr(a, n, "PART-HOLD-BACK"), &c->part_hold_back))
    return fail(p, HLS_E_MALFORMED_SERVER_CONTROL, "EXT-X-SERVER-CONTROL: a duration is not a decimal-floating-point");
  if (c->can_skip_dateranges && !c->can_skip_until.present)
    return fail(p, HLS_E_MALFORMED_SERVER_CONTROL, "EXT-X-SERVER-CONTROL: CAN-SKIP-DATERANGES without CAN-SKIP-UNTIL");
  c->present = true;
  return HLS_OK;
}

/* RFC 8216bis 4.4.4.9: a BYTERANGE without offset continues the previous
 * part, which must exist and be a sub-range of the same URI. */
static enum hls_status continue_part_range(struct parser *p, struct hls_part *part)
{
  const struct hls_playlist *pl = p->pl;
  const struct hls_part *prev = pl->part_count ? &pl->parts[pl->part_count - 1] : NULL;
  if (!prev || !prev->has_byterange || strcmp(prev->uri, part->uri) != 0)
    return fail(p, HLS_E_BYTERANGE_CONTINUATION,
                "EXT-X-PART BYTERANGE without offset, but the previous part is not a sub-range of the same URI");
  if (prev->byterange_offset > UINT64_MAX - prev->byterange_length ||
      prev->byterange_offset + prev->byterange_length > UINT64_MAX - part->byterange_length)
    return fail(p, HLS_E_NUMBER_RANGE, "part byte range offset overflows");
  part->byterange_offset = prev->byterange_offset + prev->byterange_length;
  return HLS_OK;
}

/* Reads the attributes of one EXT-X-PART into *part (URI, DURATION,
 * INDEPENDENT, GAP, BYTERANGE). */
static enum hls_status read_part(struct parser *p, char *v, struct hls_part *part)
{
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  const struct attr *uri = find_attr(a, n, "URI"), *dur = find_attr(a, n, "DURATION");
  const struct attr *br = find_attr(a, n, "BYTERANGE");
  struct hls_duration d;
  if (!uri_attr(uri)) return fail(p, HLS_E_MALFORMED_PART, "EXT-X-PART without a quoted URI reference");
  if (!duration_attr(dur, &d) || !d.present)
    return fail(p, HLS_E_MALFORMED_PART, "EXT-X-PART without a decimal-floating-point DURATION");
  if (!yes_no_attr(find_attr(a, n, "INDEPENDENT"), &part->independent) ||
      !yes_no_attr(find_attr(a, n, "GAP"), &part->gap))
    return fail(p, HLS_E_MALFORMED_PART, "EXT-X-PART INDEPENDENT or GAP is neither YES nor NO");
  part->uri = uri->value;
  part->duration_text = dur->value;
  part->duration_num = d.num;
  part->duration_den = d.den;
  part->duration_ms = d.ms;
  part->has_byterange = br != NULL;
  if (br && !parse_quoted_range(br, &part->byterange_length, &part->byterange_offset, &part->byterange_offset_explicit))
    return fail(p, HLS_E_MALFORMED_PART, "EXT-X-PART BYTERANGE is not a quoted <n>[@<o>]");
  return br && !part->byterange_offset_explicit ? continue_part_range(p, part) : HLS_OK;
}

/* #EXT-X-PART: a part of the parent segment whose URI comes next (or of
 * the open segment when none comes). */
static enum hls_status t_part(struct parser *p, char *v)
{
  struct hls_playlist *pl = p->pl;
  struct hls_part part;
  memset(&part, 0, sizeof part);
  part.line = p->line;
  if (pl->segment_count > UINT64_MAX - pl->media_sequence)
    return fail(p, HLS_E_NUMBER_RANGE, "media sequence number overflows");
  part.media_sequence = pl->media_sequence + pl->segment_count;
  part.part_index = pl->part_count - p->seg_part_first;
  if (part.part_index >= HLS_MAX_PARTS_PER_SEGMENT)
    return fail(p, HLS_E_TOO_MANY_PARTS, "more than %zu parts in one segment", HLS_MAX_PARTS_PER_SEGMENT);
  enum hls_status st = read_part(p, v, &part);
  if (st != HLS_OK) return st;
  st = grow(p, (void **)&pl->parts, &p->part_cap, pl->part_count, sizeof *pl->parts, HLS_MAX_PARTS);
  if (st == HLS_E_TOO_MANY_SEGMENTS) return fail(p, HLS_E_TOO_MANY_PARTS, "more than %zu parts", HLS_MAX_PARTS);
  if (st != HLS_OK) return st;
  pl->parts[pl->part_count++] = part;
  return HLS_OK;
}

/* #EXT-X-PRELOAD-HINT:TYPE=PART|MAP,URI="...",BYTERANGE-START=,BYTERANGE-LENGTH=
 * One per TYPE; another TYPE is ignored (RFC 8216bis 4.4.5.3). */
static enum hls_status t_preload_hint(struct parser *p, char *v)
{
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  const struct attr *type = find_attr(a, n, "TYPE"), *uri = find_attr(a, n, "URI");
  const struct attr *start = find_attr(a, n, "BYTERANGE-START"), *len = find_attr(a, n, "BYTERANGE-LENGTH");
  if (!type || type->quoted) return fail(p, HLS_E_MALFORMED_PRELOAD_HINT, "EXT-X-PRELOAD-HINT without an unquoted TYPE");
  struct hls_preload_hint *h = strcmp(type->value, "PART") == 0 ? &p->pl->preload_part
                               : strcmp(type->value, "MAP") == 0 ? &p->pl->preload_map
                                                                  : NULL;
  if (!h) return HLS_OK;
  if (h->present) return fail(p, HLS_E_DUPLICATE_TAG, "two EXT-X-PRELOAD-HINT tags of one TYPE");
  if (!uri_attr(uri)) return fail(p, HLS_E_MALFORMED_PRELOAD_HINT, "EXT-X-PRELOAD-HINT without a quoted URI reference");
  if ((start && (start->quoted || parse_u64(start->value, start->value_len, &h->byterange_start) != HLS_OK)) ||
      (len && (len->quoted || parse_u64(len->value, len->value_len, &h->byterange_length) != HLS_OK)) ||
      h->byterange_start > UINT64_MAX - h->byterange_length)
    return fail(p, HLS_E_MALFORMED_PRELOAD_HINT, "EXT-X-PRELOAD-HINT BYTERANGE-START/-LENGTH is not a decimal-integer");
  h->has_byterange_length = len != NULL;
  h->uri = uri->value;
  h->line = p->line;
  h->present = true;
  return HLS_OK;
}

/* EXT-X-SKIP replaces segments by a count (a delta update, asked for with
 * _HLS_skip): the segments it stands for cannot be verified. */
static enum hls_status t_skip(struct parser *p, char *v)
{
  (void)v;
  return fail(p, HLS_E_DELTA_UPDATE, "EXT-X-SKIP: playlist delta updates are outside profile v1");
}

/* ---- master playlist tags ---- */

static bool valid_resolution(const char *s)
{
  size_t i = 0, w = 0, h = 0;
  while (is_digit(s[i])) i++, w++;
  if (s[i] != 'x') return false;
  for (i++; is_digit(s[i]); i++) h++;
  return s[i] == '\0' && w > 0 && h > 0;
}

static enum hls_status t_stream_inf(struct parser *p, char *v)
{
  if (p->stream_inf) return fail(p, HLS_E_DUPLICATE_TAG, "two EXT-X-STREAM-INF tags for one URI");
  struct attr a[MAX_ATTRS];
  size_t n = 0;
  enum hls_status st = parse_attrs(p, v, a, &n);
  if (st != HLS_OK) return st;
  const struct attr *bw = find_attr(a, n, "BANDWIDTH");
  const struct attr *res = find_attr(a, n, "RESOLUTION");
  const struct attr *codecs = find_attr(a, n, "CODECS");
  memset(&p->variant, 0, sizeof p->variant);
  if (!bw || bw->quoted || parse_u64(bw->value, bw->value_len, &p->variant.bandwidth) != HLS_OK)
    return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "EXT-X-STREAM-INF without a valid BANDWIDTH");
  if (res && (res->quoted || !valid_resolution(res->value)))
    return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "EXT-X-STREAM-INF RESOLUTION is not <w>x<h>");
  if (codecs && !codecs->quoted) return fail(p, HLS_E_MALFORMED_ATTRIBUTES, "EXT-X-STREAM-INF CODECS is not quoted");
  p->variant.resolution = res ? res->value : NULL;
  p->variant.codecs = codecs ? codecs->value : NULL;
  p->stream_inf = true;
  p->stream_inf_line = p->line;
  return HLS_OK;
}

static enum hls_status t_master_other(struct parser *p, char *v)
{
  (void)p;
  (void)v;
  return HLS_OK;
}

/* ---- tag table ---- */

enum tag_value { VALUE_NONE, VALUE_REQUIRED };
enum tag_scope { SCOPE_ANY, SCOPE_MEDIA, SCOPE_MASTER };

struct tag_def {
  const char *name;
  enum tag_value value;
  enum tag_scope scope;
  enum hls_status (*handle)(struct parser *p, char *value);
};

static const struct tag_def TAGS[] = {
    {"EXTM3U", VALUE_NONE, SCOPE_ANY, t_extm3u},
    {"EXT-X-VERSION", VALUE_REQUIRED, SCOPE_ANY, t_version},
    {"EXT-X-TARGETDURATION", VALUE_REQUIRED, SCOPE_MEDIA, t_target},
    {"EXT-X-MEDIA-SEQUENCE", VALUE_REQUIRED, SCOPE_MEDIA, t_sequence},
    {"EXT-X-DISCONTINUITY-SEQUENCE", VALUE_REQUIRED, SCOPE_MEDIA, t_dseq},
    {"EXT-X-ENDLIST", VALUE_NONE, SCOPE_MEDIA, t_endlist},
    {"EXTINF", VALUE_REQUIRED, SCOPE_MEDIA, t_extinf},
    {"EXT-X-BYTERANGE", VALUE_REQUIRED, SCOPE_MEDIA, t_byterange},
    {"EXT-X-DISCONTINUITY", VALUE_NONE, SCOPE_MEDIA, t_discontinuity},
    {"EXT-X-PROGRAM-DATE-TIME", VALUE_REQUIRED, SCOPE_MEDIA, t_pdt},
    {"EXT-X-KEY", VALUE_REQUIRED, SCOPE_MEDIA, t_key},
    {"EXT-X-MAP", VALUE_REQUIRED, SCOPE_MEDIA, t_map},
    {"EXT-X-I-FRAMES-ONLY", VALUE_NONE, SCOPE_MEDIA, t_iframes},
    {"EXT-X-PART-INF", VALUE_REQUIRED, SCOPE_MEDIA, t_part_inf},
    {"EXT-X-SERVER-CONTROL", VALUE_REQUIRED, SCOPE_MEDIA, t_server_control},
    {"EXT-X-PART", VALUE_REQUIRED, SCOPE_MEDIA, t_part},
    {"EXT-X-PRELOAD-HINT", VALUE_REQUIRED, SCOPE_MEDIA, t_preload_hint},
    {"EXT-X-SKIP", VALUE_REQUIRED, SCOPE_MEDIA, t_skip},
    {"EXT-X-STREAM-INF", VALUE_REQUIRED, SCOPE_MASTER, t_stream_inf},
    {"EXT-X-I-FRAME-STREAM-INF", VALUE_REQUIRED, SCOPE_MASTER, t_master_other},
    {"EXT-X-MEDIA", VALUE_REQUIRED, SCOPE_MASTER, t_master_other},
    {"EXT-X-SESSION-DATA", VALUE_REQUIRED, SCOPE_MASTER, t_master_other},
    {"EXT-X-SESSION-KEY", VALUE_REQUIRED, SCOPE_MASTER, t_master_other},
};

static enum hls_status note_scope(struct parser *p, enum tag_scope scope, const char *what)
{
  if (scope == SCOPE_MEDIA) p->seen_media = true;
  if (scope == SCOPE_MASTER) p->seen_master = true;
  if (p->seen_media && p->seen_master)
    return fail(p, HLS_E_MIXED_PLAYLIST, "%s mixes master and media playlist tags", what);
  return HLS_OK;
}

/* A line starting "#EXT": the name is the run of [A-Z0-9-]; unknown tags
 * are ignored (RFC 8216 6.3.1), known ones must be followed by ':' or the
 * end of the line. */
static enum hls_status handle_tag(struct parser *p, char *line)
{
  size_t n = 1;
  while (is_attr_name_char(line[n])) n++;
  for (size_t i = 0; i < sizeof TAGS / sizeof TAGS[0]; i++) {
    const struct tag_def *t = &TAGS[i];
    if (strlen(t->name) != n - 1 || memcmp(t->name, line + 1, n - 1) != 0) continue;
    if (line[n] != '\0' && line[n] != ':') return fail(p, HLS_E_MALFORMED_TAG, "malformed #%s tag", t->name);
    char *value = line[n] == ':' ? line + n + 1 : NULL;
    if (t->value == VALUE_NONE && value) return fail(p, HLS_E_MALFORMED_TAG, "#%s takes no value", t->name);
    if (t->value == VALUE_REQUIRED && (!value || !*value))
      return fail(p, HLS_E_MALFORMED_TAG, "#%s needs a value", t->name);
    enum hls_status st = note_scope(p, t->scope, t->name);
    return st != HLS_OK ? st : t->handle(p, value);
  }
  return HLS_OK;
}

/* ---- URI lines ---- */

static enum hls_status grow(struct parser *p, void **arr, size_t *cap, size_t count, size_t elem, size_t max)
{
  if (count < *cap) return HLS_OK;
  if (count >= max) return fail(p, HLS_E_TOO_MANY_SEGMENTS, "more than %zu entries", max);
  size_t ncap = *cap ? *cap * 2 : 64;
  if (ncap > max) ncap = max;
  void *n = realloc(*arr, ncap * elem);
  if (!n) return fail(p, HLS_E_NOMEM, "out of memory");
  *arr = n;
  *cap = ncap;
  return HLS_OK;
}

/* RFC 8216 4.3.2.2: without an offset the range continues the previous
 * segment's sub-range of the same resource. */
static enum hls_status resolve_byterange(struct parser *p, struct hls_segment *s)
{
  const struct pending *q = &p->pend;
  s->has_byterange = true;
  s->byterange_length = q->br_length;
  s->byterange_offset = q->br_offset;
  s->byterange_offset_explicit = q->br_offset_explicit;
  if (!q->br_offset_explicit) {
    const struct hls_segment *prev = p->pl->segment_count ? &p->pl->segments[p->pl->segment_count - 1] : NULL;
    if (!prev || !prev->has_byterange || strcmp(prev->uri, s->uri) != 0)
      return fail(p, HLS_E_BYTERANGE_CONTINUATION,
                  "EXT-X-BYTERANGE without offset, but the previous segment is not a sub-range of the same URI");
    if (prev->byterange_offset > UINT64_MAX - prev->byterange_length)
      return fail(p, HLS_E_NUMBER_RANGE, "byte range offset overflows");
    s->byterange_offset = prev->byterange_offset + prev->byterange_length;
  }
  if (s->byterange_offset > UINT64_MAX - s->byterange_length)
    return fail(p, HLS_E_NUMBER_RANGE, "byte range end overflows");
  return HLS_OK;
}

static enum hls_status add_segment(struct parser *p, const char *uri)
{
  struct hls_playlist *pl = p->pl;
  const struct pending *q = &p->pend;
  if (!q->extinf) return fail(p, HLS_E_URI_WITHOUT_EXTINF, "segment URI without EXTINF");
  if (pl->segment_count > UINT64_MAX - pl->media_sequence)
    return fail(p, HLS_E_NUMBER_RANGE, "media sequence number overflows");
  enum hls_status st = grow(p, (void **)&pl->segments, &p->seg_cap, pl->segment_count, sizeof *pl->segments,
                            HLS_MAX_SEGMENTS);
  if (st != HLS_OK) return st;
  struct hls_segment s;
  memset(&s, 0, sizeof s);
  s.uri = uri;
  s.line = p->line;
  s.duration_text = q->duration_text;
  s.title = q->title;
  s.duration_num = q->duration_num;
  s.duration_den = q->duration_den;
  s.duration_ms = rounded_ms(q->duration_num, q->duration_den);
  s.media_sequence = pl->media_sequence + pl->segment_count;
  s.discontinuity = q->discontinuity;
  s.has_program_date_time = q->pdt;
  s.program_date_time_ms = q->pdt_ms;
  s.program_date_time_text = q->pdt_text;
  s.key = p->key;
  if (q->byterange && (st = resolve_byterange(p, &s)) != HLS_OK) return st;
  s.map_uri = p->map.uri;
  s.map_has_byterange = p->map.byterange;
  s.map_byterange_length = p->map.length;
  s.map_byterange_offset = p->map.offset;
  s.part_first = p->seg_part_first;
  s.part_count = pl->part_count - p->seg_part_first;
  p->seg_part_first = pl->part_count;
  pl->segments[pl->segment_count++] = s;
  memset(&p->pend, 0, sizeof p->pend);
  return HLS_OK;
}

static enum hls_status add_variant(struct parser *p, const char *uri)
{
  struct hls_playlist *pl = p->pl;
  enum hls_status st = grow(p, (void **)&pl->variants, &p->var_cap, pl->variant_count, sizeof *pl->variants,
                            HLS_MAX_VARIANTS);
  if (st != HLS_OK) return st;
  p->variant.uri = uri;
  p->variant.line = p->line;
  pl->variants[pl->variant_count++] = p->variant;
  p->stream_inf = false;
  return HLS_OK;
}

static enum hls_status handle_uri(struct parser *p, const char *line)
{
  if (strpbrk(line, " \t")) return fail(p, HLS_E_WHITESPACE, "whitespace in a URI line");
  struct uri_parts u;
  enum uri_status us = uri_parse(line, &u);
  if (us != URI_OK) return fail(p, HLS_E_MALFORMED_URI, "URI line: %s", uri_status_message(us));
  if (p->stream_inf) return add_variant(p, line);
  enum hls_status st = note_scope(p, SCOPE_MEDIA, "a segment URI");
  return st != HLS_OK ? st : add_segment(p, line);
}

/* ---- lines ---- */

/* Length of the UTF-8 sequence at s[0..n), 0 when invalid (RFC 3629). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  size_t k;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) k = 2;
  else if (c >= 0xE0 && c <= 0xEF) k = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) k = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (k > n || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < k; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return k;
}

static enum hls_status check_bytes(struct parser *p, const char *line, size_t n)
{
  const unsigned char *s = (const unsigned char *)line;
  for (size_t i = 0; i < n;) {
    if (s[i] == 0 || (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
      return fail(p, HLS_E_CONTROL_CHAR, "control character 0x%02x at column %zu", s[i], i + 1);
    size_t k = utf8_seq(s + i, n - i);
    if (k == 0) return fail(p, HLS_E_ENCODING, "invalid UTF-8 at column %zu", i + 1);
    i += k;
  }
  return HLS_OK;
}

/* One line without its end (the NUL is already in place at line[n]). */
static enum hls_status handle_line(struct parser *p, char *line, size_t n)
{
  enum hls_status st = check_bytes(p, line, n);
  if (st != HLS_OK || n == 0) return st; /* blank lines are ignored (RFC 8216 4.1) */
  if (strspn(line, " \t") == n) return fail(p, HLS_E_WHITESPACE, "line of whitespace only");
  if (!p->seen_extm3u) {
    if (strcmp(line, "#EXTM3U") != 0) return fail(p, HLS_E_NO_EXTM3U, "the first line is not #EXTM3U");
    p->seen_extm3u = true;
    return HLS_OK;
  }
  if (strncmp(line, "#EXT", 4) == 0) return handle_tag(p, line);
  if (line[0] == '#') return HLS_OK; /* comment */
  return handle_uri(p, line);
}

static enum hls_status scan_lines(struct parser *p, char *text, size_t len)
{
  size_t pos = 0;
  while (pos < len) {
    p->line++;
    char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) : len;
    size_t next = nl ? end + 1 : len;
    if (end > pos && text[end - 1] == '\r') end--; /* CRLF */
    if (end - pos > HLS_MAX_LINE_BYTES)
      return fail(p, HLS_E_LINE_TOO_LONG, "line longer than %zu bytes", HLS_MAX_LINE_BYTES);
    text[end] = '\0';
    enum hls_status st = handle_line(p, text + pos, end - pos);
    if (st != HLS_OK) return st;
    pos = next;
  }
  return HLS_OK;
}

/* RFC 8216 4.3.3.1: every EXTINF rounded to the nearest integer must be
 * <= the target duration. */
static enum hls_status check_target(struct parser *p)
{
  const struct hls_playlist *pl = p->pl;
  if (!p->seen_target) {
    p->line = 0;
    return fail(p, HLS_E_NO_TARGETDURATION, "no EXT-X-TARGETDURATION");
  }
  for (size_t i = 0; i < pl->segment_count; i++) {
    const struct hls_segment *s = &pl->segments[i];
    if (rounded_seconds(s->duration_num, s->duration_den) > pl->target_duration) {
      p->line = s->line;
      return fail(p, HLS_E_TARGETDURATION_TOO_SMALL, "segment of %s s exceeds EXT-X-TARGETDURATION %llu",
                  s->duration_text, (unsigned long long)pl->target_duration);
    }
  }
  return HLS_OK;
}

/* RFC 8216bis 4.4.3.7 and 4.4.4.9: EXT-X-PART-INF is required with parts,
 * and no part is longer than PART-TARGET (exactly, no rounding). */
static enum hls_status check_parts(struct parser *p)
{
  const struct hls_playlist *pl = p->pl;
  if (pl->part_count == 0) return HLS_OK;
  if (!pl->part_target.present) {
    p->line = pl->parts[0].line;
    return fail(p, HLS_E_NO_PART_TARGET, "EXT-X-PART without EXT-X-PART-INF:PART-TARGET");
  }
  uint64_t target = duration_ns(pl->part_target.num, pl->part_target.den);
  for (size_t i = 0; i < pl->part_count; i++) {
    const struct hls_part *q = &pl->parts[i];
    if (duration_ns(q->duration_num, q->duration_den) > target) {
      p->line = q->line;
      return fail(p, HLS_E_PART_TOO_LONG, "part of %.24s s exceeds PART-TARGET", q->duration_text);
    }
  }
  return HLS_OK;
}

/* Parts after the last URI: the open segment.  Only tags that describe the
 * segment as a whole may wait with them (DISCONTINUITY, PROGRAM-DATE-TIME);
 * an EXTINF or EXT-X-BYTERANGE without its URI is a truncated transfer. */
static bool take_open_segment(struct parser *p)
{
  struct hls_playlist *pl = p->pl;
  const struct pending *q = &p->pend;
  if (pl->part_count == p->seg_part_first || q->extinf || q->byterange) return false;
  struct hls_segment *s = &pl->open_segment;
  memset(s, 0, sizeof *s);
  s->line = pl->parts[p->seg_part_first].line;
  s->duration_den = 1;
  s->media_sequence = pl->parts[p->seg_part_first].media_sequence;
  s->discontinuity = q->discontinuity;
  s->has_program_date_time = q->pdt;
  s->program_date_time_ms = q->pdt_ms;
  s->program_date_time_text = q->pdt_text;
  s->key = p->key;
  s->map_uri = p->map.uri;
  s->map_has_byterange = p->map.byterange;
  s->map_byterange_length = p->map.length;
  s->map_byterange_offset = p->map.offset;
  s->part_first = p->seg_part_first;
  s->part_count = pl->part_count - p->seg_part_first;
  pl->has_open_segment = true;
  return true;
}

static enum hls_status finish(struct parser *p)
{
  if (!p->seen_extm3u) return fail(p, HLS_E_NO_EXTM3U, "no #EXTM3U line");
  if (!p->stream_inf && take_open_segment(p)) memset(&p->pend, 0, sizeof p->pend);
  if (p->pend.any || p->stream_inf) {
    p->line = p->stream_inf ? p->stream_inf_line : p->pend.first_line;
    return fail(p, HLS_E_DANGLING_SEGMENT_TAGS, "tags at the end of the playlist with no URI after them");
  }
  if (p->seen_master) {
    p->pl->kind = HLS_KIND_MASTER;
    p->line = 0;
    return fail(p, HLS_E_MASTER_PLAYLIST, "a master playlist with %zu variants: choose one media playlist",
                p->pl->variant_count);
  }
  enum hls_status st = check_target(p);
  if (st == HLS_OK) st = check_parts(p);
  if (st == HLS_OK) p->pl->kind = HLS_KIND_MEDIA;
  return st;
}

bool hls_looks_like_playlist(const void *data, size_t len)
{
  const char *s = data;
  size_t i = 0;
  if (!s) return false;
  if (len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < len && (s[i] == '\r' || s[i] == '\n')) i++;
  return len - i >= 7 && memcmp(s + i, "#EXTM3U", 7) == 0;
}

void hls_playlist_free(struct hls_playlist *pl)
{
  if (!pl) return;
  free(pl->segments);
  free(pl->variants);
  free(pl->parts);
  free(pl->storage);
  memset(pl, 0, sizeof *pl);
}

static void clear_error(struct hls_error *err)
{
  memset(err, 0, sizeof *err);
}

enum hls_status hls_parse(const void *data, size_t len, struct hls_playlist *out, struct hls_error *err)
{
  struct hls_error local;
  if (!err) err = &local;
  clear_error(err);
  if (!out) return err->status = HLS_E_ARG;
  memset(out, 0, sizeof *out);
  out->version = 1;
  struct parser p;
  memset(&p, 0, sizeof p);
  p.pl = out;
  p.err = err;
  enum hls_status st;
  if (!data && len > 0) {
    st = fail(&p, HLS_E_ARG, "no data");
  } else if (len > HLS_MAX_PLAYLIST_BYTES) {
    st = fail(&p, HLS_E_TOO_LARGE, "playlist larger than %zu bytes", HLS_MAX_PLAYLIST_BYTES);
  } else if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
    p.line = 1;
    st = fail(&p, HLS_E_BOM, "UTF-8 byte order mark: RFC 8216 4.1 forbids it (invalid delivery)");
  } else if ((out->storage = malloc(len + 1)) == NULL) {
    st = fail(&p, HLS_E_NOMEM, "out of memory");
  } else {
    if (len) memcpy(out->storage, data, len);
    out->storage[len] = '\0';
    st = scan_lines(&p, out->storage, len);
    if (st == HLS_OK) st = finish(&p);
  }
  if (st != HLS_OK && st != HLS_E_MASTER_PLAYLIST) {
    hls_playlist_free(out);
  } else if (st == HLS_OK) {
    clear_error(err);
    err->status = HLS_OK;
  }
  return st;
}

/* ---- selection ---- */

static enum hls_status select_fail(struct hls_error *err, enum hls_status st, unsigned long line, const char *fmt,
                                   unsigned long long a)
{
  err->status = st;
  err->line = line;
  snprintf(err->message, sizeof err->message, fmt, a);
  return st;
}

/* Index of media sequence number seq; false when it is not in the playlist. */
static bool seq_index(const struct hls_playlist *pl, uint64_t seq, size_t *idx)
{
  uint64_t base = pl->media_sequence;
  if (seq < base || seq - base >= pl->segment_count) return false;
  *idx = (size_t)(seq - base);
  assert(pl->segments[*idx].media_sequence == seq);
  return true;
}

enum hls_status hls_select(const struct hls_playlist *pl, uint64_t first_seq, uint64_t last_seq,
                           struct hls_selection *sel, struct hls_error *err)
{
  struct hls_error local;
  if (!err) err = &local;
  clear_error(err);
  if (!sel) return err->status = HLS_E_ARG;
  memset(sel, 0, sizeof *sel);
  if (!pl) return err->status = HLS_E_ARG;
  if (pl->kind != HLS_KIND_MEDIA)
    return select_fail(err, HLS_E_NOT_MEDIA, 0, "kind %llu is not a parsed media playlist", (unsigned long long)pl->kind);
  if (first_seq > last_seq)
    return select_fail(err, HLS_E_SELECT_RANGE, 0, "first media sequence number %llu is after the last",
                       (unsigned long long)first_seq);
  size_t a, b;
  if (!seq_index(pl, first_seq, &a))
    return select_fail(err, HLS_E_SELECT_NOT_FOUND, 0, "media sequence number %llu is not in the playlist",
                       (unsigned long long)first_seq);
  if (!seq_index(pl, last_seq, &b))
    return select_fail(err, HLS_E_SELECT_NOT_FOUND, 0, "media sequence number %llu is not in the playlist",
                       (unsigned long long)last_seq);
  for (size_t i = a + 1; i <= b; i++)
    if (pl->segments[i].discontinuity)
      return select_fail(err, HLS_E_SELECT_DISCONTINUITY, pl->segments[i].line,
                         "the selection crosses EXT-X-DISCONTINUITY before media sequence number %llu",
                         (unsigned long long)pl->segments[i].media_sequence);
  sel->first_index = a;
  sel->count = b - a + 1;
  sel->first_seq = first_seq;
  sel->last_seq = last_seq;
  err->status = HLS_OK;
  return HLS_OK;
}

/* ---- status names ---- */

struct status_info {
  enum hls_status st;
  const char *code;
  enum hls_class cls;
  const char *message;
};

static const struct status_info STATUS[] = {
    {HLS_E_UNSET, "unset", HLS_CLASS_UNSET, "nothing was parsed"},
    {HLS_OK, "ok", HLS_CLASS_OK, "parsed"},
    {HLS_E_ARG, "arg", HLS_CLASS_INTERNAL, "missing argument"},
    {HLS_E_NOMEM, "nomem", HLS_CLASS_INTERNAL, "out of memory"},
    {HLS_E_TOO_LARGE, "too_large", HLS_CLASS_INVALID_DELIVERY, "playlist too large"},
    {HLS_E_LINE_TOO_LONG, "line_too_long", HLS_CLASS_INVALID_DELIVERY, "playlist line too long"},
    {HLS_E_TOO_MANY_SEGMENTS, "too_many_segments", HLS_CLASS_INVALID_DELIVERY, "too many segments or variants"},
    {HLS_E_BOM, "bom", HLS_CLASS_INVALID_DELIVERY, "UTF-8 byte order mark (RFC 8216 4.1)"},
    {HLS_E_NO_EXTM3U, "no_extm3u", HLS_CLASS_INVALID_DELIVERY, "first line is not #EXTM3U"},
    {HLS_E_CONTROL_CHAR, "control_char", HLS_CLASS_INVALID_DELIVERY, "control character in the playlist"},
    {HLS_E_ENCODING, "encoding", HLS_CLASS_INVALID_DELIVERY, "playlist is not UTF-8"},
    {HLS_E_WHITESPACE, "whitespace", HLS_CLASS_INVALID_DELIVERY, "whitespace where RFC 8216 forbids it"},
    {HLS_E_MALFORMED_TAG, "malformed_tag", HLS_CLASS_INVALID_DELIVERY, "malformed tag"},
    {HLS_E_MALFORMED_NUMBER, "malformed_number", HLS_CLASS_INVALID_DELIVERY, "malformed number"},
    {HLS_E_MALFORMED_ATTRIBUTES, "malformed_attributes", HLS_CLASS_INVALID_DELIVERY, "malformed attribute list"},
    {HLS_E_MALFORMED_DATE, "malformed_date", HLS_CLASS_INVALID_DELIVERY, "malformed EXT-X-PROGRAM-DATE-TIME"},
    {HLS_E_DUPLICATE_TAG, "duplicate_tag", HLS_CLASS_INVALID_DELIVERY, "tag appears twice"},
    {HLS_E_URI_WITHOUT_EXTINF, "uri_without_extinf", HLS_CLASS_INVALID_DELIVERY, "segment URI without EXTINF"},
    {HLS_E_DANGLING_SEGMENT_TAGS, "dangling_segment_tags", HLS_CLASS_INVALID_DELIVERY, "segment tags without URI"},
    {HLS_E_NO_TARGETDURATION, "no_targetduration", HLS_CLASS_INVALID_DELIVERY, "no EXT-X-TARGETDURATION"},
    {HLS_E_TARGETDURATION_TOO_SMALL, "targetduration_too_small", HLS_CLASS_INVALID_DELIVERY,
     "a segment is longer than EXT-X-TARGETDURATION"},
    {HLS_E_HEADER_TAG_LATE, "header_tag_late", HLS_CLASS_INVALID_DELIVERY, "playlist tag after the first segment"},
    {HLS_E_MALFORMED_URI, "malformed_uri", HLS_CLASS_INVALID_DELIVERY, "segment URI is not a URI reference"},
    {HLS_E_BYTERANGE_CONTINUATION, "byterange_continuation", HLS_CLASS_INVALID_DELIVERY,
     "EXT-X-BYTERANGE without offset cannot continue the previous segment"},
    {HLS_E_NUMBER_RANGE, "number_range", HLS_CLASS_INVALID_DELIVERY, "number out of range"},
    {HLS_E_MIXED_PLAYLIST, "mixed_playlist", HLS_CLASS_INVALID_DELIVERY, "master and media tags mixed"},
    {HLS_E_KEY_METHOD, "key_method", HLS_CLASS_OUTSIDE_PROFILE, "encrypted segments (EXT-X-KEY) are outside profile v1"},
    {HLS_E_MAP, "map", HLS_CLASS_INVALID_DELIVERY, "EXT-X-MAP without a quoted URI, or a bad BYTERANGE"},
    {HLS_E_IFRAMES_ONLY, "iframes_only", HLS_CLASS_OUTSIDE_PROFILE, "I-frame playlists are outside profile v1"},
    {HLS_E_MASTER_PLAYLIST, "master_playlist", HLS_CLASS_USAGE, "a master playlist: choose a media playlist"},
    {HLS_E_NOT_MEDIA, "not_media", HLS_CLASS_USAGE, "not a media playlist"},
    {HLS_E_SELECT_RANGE, "select_range", HLS_CLASS_USAGE, "first media sequence number after the last"},
    {HLS_E_SELECT_NOT_FOUND, "select_not_found", HLS_CLASS_USAGE, "media sequence number not in the playlist"},
    {HLS_E_SELECT_DISCONTINUITY, "select_discontinuity", HLS_CLASS_USAGE, "selection crosses EXT-X-DISCONTINUITY"},
    {HLS_E_MALFORMED_PART, "malformed_part", HLS_CLASS_INVALID_DELIVERY, "malformed EXT-X-PART or EXT-X-PART-INF"},
    {HLS_E_NO_PART_TARGET, "no_part_target", HLS_CLASS_INVALID_DELIVERY, "EXT-X-PART without EXT-X-PART-INF"},
    {HLS_E_PART_TOO_LONG, "part_too_long", HLS_CLASS_INVALID_DELIVERY, "a part is longer than PART-TARGET"},
    {HLS_E_TOO_MANY_PARTS, "too_many_parts", HLS_CLASS_INVALID_DELIVERY, "too many parts"},
    {HLS_E_MALFORMED_SERVER_CONTROL, "malformed_server_control", HLS_CLASS_INVALID_DELIVERY,
     "malformed EXT-X-SERVER-CONTROL"},
    {HLS_E_MALFORMED_PRELOAD_HINT, "malformed_preload_hint", HLS_CLASS_INVALID_DELIVERY,
     "malformed EXT-X-PRELOAD-HINT"},
    {HLS_E_DELTA_UPDATE, "delta_update", HLS_CLASS_OUTSIDE_PROFILE, "playlist delta updates (EXT-X-SKIP) are outside profile v1"},
};

static const struct status_info *status_info(enum hls_status st)
{
  for (size_t i = 0; i < sizeof STATUS / sizeof STATUS[0]; i++)
    if (STATUS[i].st == st) return &STATUS[i];
  return NULL;
}

const char *hls_status_code(enum hls_status st)
{
  const struct status_info *i = status_info(st);
  return i ? i->code : "unknown";
}

const char *hls_status_message(enum hls_status st)
{
  const struct status_info *i = status_info(st);
  return i ? i->message : "unknown status";
}

enum hls_class hls_status_class(enum hls_status st)
{
  const struct status_info *i = status_info(st);
  return i ? i->cls : HLS_CLASS_UNSET;
}
