/* hls: media playlist parser and segment selection (verifier/hls.h).
 * Hand-written cases first, then every playlist of the shared corpus
 * (skipped with a message when EXACTAV_CORPUS_DIR is absent). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hls.h"
#include "test_skip.h"
#include "uri.h"

#ifndef EXACTAV_CORPUS_DIR
#define EXACTAV_CORPUS_DIR ""
#endif

/* ---- helpers ---- */

static enum hls_status parse_n(const char *s, size_t n, struct hls_playlist *pl, struct hls_error *err)
{
  enum hls_status st = hls_parse(s, n, pl, err);
  assert_int_equal(err->status, st);
  return st;
}

static enum hls_status parse(const char *s, struct hls_playlist *pl, struct hls_error *err)
{
  return parse_n(s, strlen(s), pl, err);
}

/* Parses s, expects status want at line; the playlist is freed. */
static void expect_status_n(const char *s, size_t n, enum hls_status want, unsigned long line)
{
  struct hls_playlist pl;
  struct hls_error err;
  enum hls_status st = parse_n(s, n, &pl, &err);
  if (st != want || err.line != line)
    print_error("got %s at line %lu (%s), want %s at line %lu\n", hls_status_code(st), err.line, err.message,
                hls_status_code(want), line);
  assert_int_equal(st, want);
  assert_int_equal(err.line, line);
  if (st != HLS_OK) assert_true(err.message[0] != '\0');
  if (st != HLS_OK && st != HLS_E_MASTER_PLAYLIST) {
    assert_int_equal(pl.kind, HLS_KIND_NONE); /* nothing half-parsed survives */
    assert_null(pl.segments);
    assert_int_equal(pl.segment_count, 0);
  }
  hls_playlist_free(&pl);
}

static void expect_status(const char *s, enum hls_status want, unsigned long line)
{
  expect_status_n(s, strlen(s), want, line);
}

#define HEAD "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"

/* ---- 1. the basic shape ---- */

static void hls_01_minimal_media_playlist(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  assert_int_equal(parse(HEAD "#EXTINF:9.5,first\na.ts\n#EXTINF:10,\nb/c.ts?x=1\n#EXT-X-ENDLIST\n", &pl, &err), HLS_OK);
  assert_int_equal(pl.kind, HLS_KIND_MEDIA);
  assert_int_equal(pl.target_duration, 10);
  assert_int_equal(pl.media_sequence, 0);
  assert_false(pl.has_media_sequence);
  assert_int_equal(pl.version, 1);
  assert_false(pl.has_version);
  assert_true(pl.endlist);
  assert_int_equal(pl.segment_count, 2);
  const struct hls_segment *s = pl.segments;
  assert_string_equal(s[0].uri, "a.ts");
  assert_string_equal(s[0].duration_text, "9.5");
  assert_string_equal(s[0].title, "first");
  assert_int_equal(s[0].duration_num, 95);
  assert_int_equal(s[0].duration_den, 10);
  assert_int_equal(s[0].duration_ms, 9500);
  assert_int_equal(s[0].media_sequence, 0);
  assert_int_equal(s[0].line, 4);
  assert_false(s[0].has_byterange);
  assert_false(s[0].discontinuity);
  assert_false(s[0].has_program_date_time);
  assert_null(s[0].program_date_time_text);
  assert_string_equal(s[1].uri, "b/c.ts?x=1");
  assert_string_equal(s[1].title, "");
  assert_int_equal(s[1].media_sequence, 1);
  assert_int_equal(s[1].line, 6);
  hls_playlist_free(&pl);
  hls_playlist_free(&pl); /* idempotent */
  assert_null(pl.storage);
}

/* CRLF, blank lines, comments and unknown tags; leading blank lines before
 * #EXTM3U are blank lines (RFC 8216 4.1 ignores them). */
static void hls_02_crlf_blank_lines_comments_unknown_tags(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = "\r\n\n#EXTM3U\r\n# a comment\r\n#EXT-X-VERSION:3\r\n#EXT-X-UNKNOWN-TAG:A=\"b\"\r\n"
                  "#EXT-X-INDEPENDENT-SEGMENTS\r\n#EXTX-NOT-A-TAG\r\n#EXT-X-TARGETDURATION:6\r\n\r\n"
                  "#EXT-X-PLAYLIST-TYPE:VOD\r\n#EXTINF:6.0,t\r\n#EXT-X-GAP-LIKE\r\ns.ts\r\n#EXT-X-ENDLIST";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_int_equal(pl.version, 3);
  assert_true(pl.has_version);
  assert_int_equal(pl.segment_count, 1);
  assert_string_equal(pl.segments[0].uri, "s.ts");
  assert_string_equal(pl.segments[0].title, "t");
  assert_int_equal(pl.segments[0].line, 14);
  assert_true(pl.endlist);
  hls_playlist_free(&pl);
}

/* EXTINF: exact rational, ms rounding, tolerated missing comma. */
static void hls_03_extinf_duration_forms(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = HEAD "#EXTINF:10\na.ts\n#EXTINF:2.000000\nb.ts\n#EXTINF:0.0005,x, y\nc.ts\n"
                       "#EXTINF:6.006000000000001,\nd.ts\n#EXTINF:1.,\ne.ts\n#EXTINF:.25,\nf.ts\n"
                       "#EXTINF:0009.9994,\ng.ts\n#EXTINF:10,\xc3\xa9t\xc3\xa9\tand tab\nh.ts\n";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_int_equal(pl.segment_count, 8);
  const struct hls_segment *g = pl.segments;
  assert_string_equal(g[0].duration_text, "10");
  assert_string_equal(g[0].title, "");
  assert_int_equal(g[0].duration_ms, 10000);
  assert_int_equal(g[1].duration_num, 2);
  assert_int_equal(g[1].duration_den, 1);
  assert_string_equal(g[1].duration_text, "2.000000");
  assert_string_equal(g[2].title, "x, y");
  assert_int_equal(g[2].duration_ms, 1); /* 0.5 ms rounds up */
  assert_int_equal(g[3].duration_num, 6006); /* digits after the 9th dropped, then trailing zeros */
  assert_int_equal(g[3].duration_den, 1000);
  assert_int_equal(g[3].duration_ms, 6006);
  assert_int_equal(g[4].duration_ms, 1000);
  assert_int_equal(g[5].duration_ms, 250);
  assert_int_equal(g[6].duration_num, 99994);
  assert_int_equal(g[6].duration_ms, 9999);
  assert_string_equal(g[7].title, "\xc3\xa9t\xc3\xa9\tand tab");
  hls_playlist_free(&pl);
}

/* EXT-X-BYTERANGE length@offset, and length alone continuing the previous
 * sub-range of the same URI (RFC 8216 4.3.2.2), before or after EXTINF. */
static void hls_04_byterange_explicit_and_continued(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = HEAD "#EXTINF:1,\n#EXT-X-BYTERANGE:100@50\nv.ts\n#EXT-X-BYTERANGE:200\n#EXTINF:1,\nv.ts\n"
                       "#EXTINF:1,\n#EXT-X-BYTERANGE:7\nv.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:5@0\nw.ts\n";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_int_equal(pl.segment_count, 4);
  const struct hls_segment *g = pl.segments;
  assert_true(g[0].has_byterange && g[0].byterange_offset_explicit);
  assert_int_equal(g[0].byterange_length, 100);
  assert_int_equal(g[0].byterange_offset, 50);
  assert_false(g[1].byterange_offset_explicit);
  assert_int_equal(g[1].byterange_offset, 150);
  assert_int_equal(g[1].byterange_length, 200);
  assert_int_equal(g[2].byterange_offset, 350);
  assert_int_equal(g[3].byterange_offset, 0);
  hls_playlist_free(&pl);
}

static void hls_05_byterange_continuation_refused(void **state)
{
  (void)state;
  /* no previous segment */
  expect_status(HEAD "#EXTINF:1,\n#EXT-X-BYTERANGE:10\nv.ts\n", HLS_E_BYTERANGE_CONTINUATION, 5);
  /* previous segment is another resource */
  expect_status(HEAD "#EXTINF:1,\n#EXT-X-BYTERANGE:10@0\nv.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:10\nw.ts\n",
                HLS_E_BYTERANGE_CONTINUATION, 8);
  /* previous segment is the whole resource, not a sub-range */
  expect_status(HEAD "#EXTINF:1,\nv.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:10\nv.ts\n", HLS_E_BYTERANGE_CONTINUATION, 7);
  /* same resource written differently is a different URI line */
  expect_status(HEAD "#EXTINF:1,\n#EXT-X-BYTERANGE:10@0\nv.ts\n#EXTINF:1,\n#EXT-X-BYTERANGE:10\n./v.ts\n",
                HLS_E_BYTERANGE_CONTINUATION, 8);
  /* the end of a range past 2^64 */
  expect_status(HEAD "#EXTINF:1,\n#EXT-X-BYTERANGE:2@18446744073709551615\nv.ts\n", HLS_E_NUMBER_RANGE, 5);
  expect_status(HEAD "#EXTINF:1,\n#EXT-X-BYTERANGE:0@0\nv.ts\n", HLS_E_MALFORMED_TAG, 4);
}

static void hls_06_discontinuity_and_media_sequence(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = "#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:18446744073709551613\n#EXT-X-DISCONTINUITY-SEQUENCE:7\n"
                  "#EXT-X-TARGETDURATION:4\n#EXT-X-DISCONTINUITY\n#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n"
                  "#EXT-X-DISCONTINUITY\n#EXTINF:4,\nc.ts\n";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_true(pl.has_media_sequence);
  assert_int_equal(pl.discontinuity_sequence, 7);
  assert_int_equal(pl.segment_count, 3);
  assert_true(pl.segments[0].discontinuity);
  assert_false(pl.segments[1].discontinuity);
  assert_true(pl.segments[2].discontinuity);
  assert_int_equal(pl.segments[2].media_sequence, UINT64_MAX);
  assert_false(pl.endlist);
  hls_playlist_free(&pl);
  /* one more segment would need media sequence number 2^64 */
  expect_status("#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:18446744073709551615\n#EXT-X-TARGETDURATION:4\n"
                "#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n",
                HLS_E_NUMBER_RANGE, 7);
}

static void expect_pdt(const char *text, int64_t ms)
{
  char buf[256];
  snprintf(buf, sizeof buf, HEAD "#EXT-X-PROGRAM-DATE-TIME:%s\n#EXTINF:1,\na.ts\n", text);
  struct hls_playlist pl;
  struct hls_error err;
  enum hls_status st = parse(buf, &pl, &err);
  if (st != HLS_OK) print_error("%s: %s\n", text, err.message);
  assert_int_equal(st, HLS_OK);
  assert_true(pl.segments[0].has_program_date_time);
  assert_string_equal(pl.segments[0].program_date_time_text, text);
  if (pl.segments[0].program_date_time_ms != ms)
    print_error("%s: got %lld want %lld\n", text, (long long)pl.segments[0].program_date_time_ms, (long long)ms);
  assert_true(pl.segments[0].program_date_time_ms == ms);
  hls_playlist_free(&pl);
}

static void hls_07_program_date_time(void **state)
{
  (void)state;
  expect_pdt("2024-03-04T23:02:17.684Z", 1709593337684);
  expect_pdt("2018-12-31T09:47:22+08:00", 1546220842000);
  expect_pdt("2016-06-22T09:20:16.166-04:00", 1466601616166);
  expect_pdt("2016-06-22T09:20:16.1669-0400", 1466601616166); /* beyond ms: dropped */
  expect_pdt("2016-06-22T13:20:16.1+00", 1466601616100);
  expect_pdt("1970-01-01T00:00:00Z", 0);
  expect_pdt("1969-12-31T23:59:59.5Z", -500);
  expect_pdt("2000-02-29T00:00:00z", 951782400000);
  const char *bad[] = {"2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-03-04 23:02:17Z", "2024-03-04T23:02:17",
                       "2024-03-04T24:00:00Z", "2024-03-04T23:60:00Z", "2024-03-04T23:02:17.Z",
                       "2024-03-04T23:02:17+8:00", "2024-03-04T23:02:17+08:", "2024-03-04T23:02:17Z ",
                       "24-03-04T23:02:17Z", "2024-03-04T23:02:17+24:00", "x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char buf[256];
    snprintf(buf, sizeof buf, HEAD "#EXT-X-PROGRAM-DATE-TIME:%s\n#EXTINF:1,\na.ts\n", bad[i]);
    expect_status(buf, HLS_E_MALFORMED_DATE, 3);
  }
}

/* RFC 8216 4.3.3.1: rounded EXTINF <= EXT-X-TARGETDURATION, wherever the
 * tag appears. */
static void hls_08_targetduration_missing_or_too_small(void **state)
{
  (void)state;
  expect_status("#EXTM3U\n#EXTINF:1,\na.ts\n", HLS_E_NO_TARGETDURATION, 0);
  expect_status(HEAD "#EXTINF:10.5,\na.ts\n", HLS_E_TARGETDURATION_TOO_SMALL, 4);
  expect_status(HEAD "#EXTINF:10.499,\na.ts\n", HLS_OK, 0);
  expect_status("#EXTM3U\n#EXTINF:4,\na.ts\n#EXTINF:6,\nb.ts\n#EXT-X-TARGETDURATION:5\n",
                HLS_E_TARGETDURATION_TOO_SMALL, 5);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:0\n#EXTINF:0.4,\na.ts\n", HLS_OK, 0);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:10\n", HLS_OK, 0); /* live, no segment yet */
}

static void hls_09_outside_profile_key_map_iframes(void **state)
{
  (void)state;
  expect_status(HEAD "#EXT-X-KEY:METHOD=NONE\n#EXTINF:1,\na.ts\n", HLS_OK, 0);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128,URI=\"k.bin\"\n#EXTINF:1,\na.ts\n", HLS_OK, 0);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128\n#EXTINF:1,\na.ts\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128,URI=k.bin\n#EXTINF:1,\na.ts\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x000102030405060708090a0b0c0d0e0f00\n",
                HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x0g\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",KEYFORMAT=\"com.apple.streamingkeydelivery\"\n",
                HLS_E_KEY_METHOD, 3);
  expect_status(HEAD "#EXT-X-KEY:URI=\"k\",METHOD=SAMPLE-AES,IV=0x01\n#EXTINF:1,\na.ts\n", HLS_E_KEY_METHOD, 3);
  expect_status(HEAD "#EXT-X-KEY:URI=\"k\"\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=\"NONE\"\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:1,\na.m4s\n", HLS_OK, 0);   /* fMP4: issue 20 */
  expect_status(HEAD "#EXT-X-I-FRAMES-ONLY\n", HLS_E_IFRAMES_ONLY, 3);
  assert_int_equal(hls_status_class(HLS_E_KEY_METHOD), HLS_CLASS_OUTSIDE_PROFILE);
  assert_int_equal(hls_status_class(HLS_E_IFRAMES_ONLY), HLS_CLASS_OUTSIDE_PROFILE);
}

/* Issue 20: an AES-128 key is in force from its tag to the next one
 * (RFC 8216 4.3.2.4), with the tag's IV or none (the media sequence number
 * is then the IV: hlskey.h); METHOD=NONE ends it. */
static void hls_25_aes128_key_in_force_until_the_next_tag(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = HEAD "#EXTINF:1,\na.ts\n"
                  "#EXT-X-KEY:METHOD=AES-128,URI=\"https://k.example/k?t=1\",IV=0X0A0b\n#EXTINF:1,\nb.ts\n"
                  "#EXTINF:1,\nc.ts\n#EXT-X-KEY:METHOD=AES-128,URI=\"k2\",KEYFORMAT=\"identity\"\n#EXTINF:1,\nd.ts\n"
                  "#EXT-X-KEY:METHOD=NONE\n#EXTINF:1,\ne.ts\n";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_int_equal(pl.segment_count, 5);
  assert_int_equal(pl.segments[0].key.method, HLS_KEY_NONE);
  for (int i = 1; i <= 2; i++) {
    assert_int_equal(pl.segments[i].key.method, HLS_KEY_AES_128);
    assert_string_equal(pl.segments[i].key.uri, "https://k.example/k?t=1");
    assert_true(pl.segments[i].key.has_iv);
    static const uint8_t iv[16] = {[14] = 0x0a, [15] = 0x0b};
    assert_memory_equal(pl.segments[i].key.iv, iv, 16);
  }
  assert_string_equal(pl.segments[3].key.uri, "k2");
  assert_false(pl.segments[3].key.has_iv);
  assert_int_equal(pl.segments[4].key.method, HLS_KEY_NONE);
  assert_null(pl.segments[4].key.uri);
  hls_playlist_free(&pl);
}

static void hls_10_master_playlist_lists_variants(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = "#EXTM3U\n#EXT-X-VERSION:4\n"
                  "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",URI=\"a.m3u8\"\n"
                  "#EXT-X-STREAM-INF:BANDWIDTH=1280000,RESOLUTION=640x360,CODECS=\"avc1.4d401e,mp4a.40.2\",AUDIO=\"a\"\n"
                  "low/index.m3u8\n"
                  "#EXT-X-STREAM-INF:AVERAGE-BANDWIDTH=1,BANDWIDTH=2560000,FRAME-RATE=29.970\n"
                  "https://cdn.example/hi/index.m3u8?Signature=x\n";
  assert_int_equal(parse(s, &pl, &err), HLS_E_MASTER_PLAYLIST);
  assert_int_equal(hls_status_class(HLS_E_MASTER_PLAYLIST), HLS_CLASS_USAGE);
  assert_int_equal(pl.kind, HLS_KIND_MASTER);
  assert_int_equal(pl.segment_count, 0);
  assert_int_equal(pl.variant_count, 2);
  assert_string_equal(pl.variants[0].uri, "low/index.m3u8");
  assert_int_equal(pl.variants[0].bandwidth, 1280000);
  assert_string_equal(pl.variants[0].resolution, "640x360");
  assert_string_equal(pl.variants[0].codecs, "avc1.4d401e,mp4a.40.2");
  assert_int_equal(pl.variants[0].line, 5);
  assert_string_equal(pl.variants[1].uri, "https://cdn.example/hi/index.m3u8?Signature=x");
  assert_int_equal(pl.variants[1].bandwidth, 2560000);
  assert_null(pl.variants[1].resolution);
  assert_null(pl.variants[1].codecs);
  struct hls_selection sel;
  assert_int_equal(hls_select(&pl, 0, 0, &sel, &err), HLS_E_NOT_MEDIA);
  hls_playlist_free(&pl);
  expect_status("#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\nlow.m3u8\n", HLS_E_MALFORMED_ATTRIBUTES, 2);
  expect_status("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=1280\nl.m3u8\n", HLS_E_MALFORMED_ATTRIBUTES, 2);
  expect_status("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=avc1\nl.m3u8\n", HLS_E_MALFORMED_ATTRIBUTES, 2);
  expect_status("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", HLS_E_DANGLING_SEGMENT_TAGS, 2);
  /* master and media tags together */
  expect_status(HEAD "#EXT-X-STREAM-INF:BANDWIDTH=1\nl.m3u8\n", HLS_E_MIXED_PLAYLIST, 3);
  expect_status("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nl.m3u8\n#EXTINF:1,\na.ts\n", HLS_E_MIXED_PLAYLIST, 4);
}

static void hls_11_bom_and_missing_extm3u(void **state)
{
  (void)state;
  expect_status("\xEF\xBB\xBF" HEAD "#EXTINF:1,\na.ts\n", HLS_E_BOM, 1);
  assert_int_equal(hls_status_class(HLS_E_BOM), HLS_CLASS_INVALID_DELIVERY);
  expect_status("# comment\n" HEAD, HLS_E_NO_EXTM3U, 1);
  expect_status("#EXTM3U \n#EXT-X-TARGETDURATION:1\n", HLS_E_NO_EXTM3U, 1);
  expect_status("#EXTM3Ux\n#EXT-X-TARGETDURATION:1\n", HLS_E_NO_EXTM3U, 1);
  expect_status("#EXT-X-TARGETDURATION:1\n#EXTM3U\n", HLS_E_NO_EXTM3U, 1);
  expect_status("", HLS_E_NO_EXTM3U, 0);
  expect_status("\n\r\n", HLS_E_NO_EXTM3U, 2);
  expect_status("a.ts\n", HLS_E_NO_EXTM3U, 1);
  expect_status_n("\x47\x40\x00\x10", 4, HLS_E_CONTROL_CHAR, 1); /* an MPEG-TS packet */
  expect_status("\n\n#EXTM3U\n#EXT-X-TARGETDURATION:1\n", HLS_OK, 0);
  expect_status(HEAD "#EXTM3U\n", HLS_E_DUPLICATE_TAG, 3);
}

/* Truncated tags, signs, overflow, junk after values, attribute lists. */
static void hls_12_malformed_tags_and_numbers(void **state)
{
  (void)state;
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION\n", HLS_E_MALFORMED_TAG, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:\n", HLS_E_MALFORMED_TAG, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:-1\n", HLS_E_MALFORMED_NUMBER, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:+5\n", HLS_E_MALFORMED_NUMBER, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:1e3\n", HLS_E_MALFORMED_NUMBER, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:10 \n", HLS_E_MALFORMED_NUMBER, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:18446744073709551616\n", HLS_E_NUMBER_RANGE, 2);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:18446744073709551615\n", HLS_OK, 0);
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:99999999999999999999999\n", HLS_E_NUMBER_RANGE, 2);
  expect_status("#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:1.5\n", HLS_E_MALFORMED_NUMBER, 2);
  expect_status("#EXTM3U\n#EXT-X-VERSION:x\n", HLS_E_MALFORMED_NUMBER, 2);
  expect_status(HEAD "#EXT-X-ENDLIST:YES\n", HLS_E_MALFORMED_TAG, 3);
  expect_status(HEAD "#EXT-X-ENDLIST \n", HLS_E_MALFORMED_TAG, 3);
  expect_status(HEAD "#EXT-X-DISCONTINUITY:1\n", HLS_E_MALFORMED_TAG, 3);
  expect_status(HEAD "#EXTINF\n", HLS_E_MALFORMED_TAG, 3);
  expect_status(HEAD "#EXTINF:\n", HLS_E_MALFORMED_TAG, 3);
  expect_status(HEAD "#EXTINF:,x\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF:-1,\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF:abc,\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF:1.2.3,\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF: 1,\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF:.,\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF:1e2,\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXTINF:1000000000,\n", HLS_E_NUMBER_RANGE, 3);
  expect_status(HEAD "#EXT-X-BYTERANGE:10@\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXT-X-BYTERANGE:@5\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXT-X-BYTERANGE:1@2@3\n", HLS_E_MALFORMED_NUMBER, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=NONE,\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=NONE,URI=\"k\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=NONE,METHOD=NONE\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=NONE, URI=\"k\"\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:method=NONE\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-KEY:METHOD=NONE,URI=\"k\"x\n", HLS_E_MALFORMED_ATTRIBUTES, 3);
  expect_status(HEAD "#EXT-X-PROGRAM-DATE-TIME\n", HLS_E_MALFORMED_TAG, 3);
  /* quoted strings may hold commas and '=' (RFC 8216 4.2) */
  expect_status(HEAD "#EXT-X-KEY:URI=\"a,b=c\",METHOD=NONE\n#EXTINF:1,\na.ts\n", HLS_OK, 0);
}

static void hls_13_nul_control_and_encoding(void **state)
{
  (void)state;
  static const char nul_in_uri[] = HEAD "#EXTINF:1,\na\0.ts\n";
  expect_status_n(nul_in_uri, sizeof nul_in_uri - 1, HLS_E_CONTROL_CHAR, 4);
  static const char nul_in_tag[] = HEAD "#EXTINF:1\0,\na.ts\n";
  expect_status_n(nul_in_tag, sizeof nul_in_tag - 1, HLS_E_CONTROL_CHAR, 3);
  static const char nul_first[] = "\0#EXTM3U\n";
  expect_status_n(nul_first, sizeof nul_first - 1, HLS_E_CONTROL_CHAR, 1);
  expect_status(HEAD "#EXTINF:1,a\x01\na.ts\n", HLS_E_CONTROL_CHAR, 3);
  expect_status(HEAD "#EXTINF:1,\na\r.ts\n", HLS_E_CONTROL_CHAR, 4);
  expect_status(HEAD "#EXTINF:1,\na.ts\r\r\n", HLS_E_CONTROL_CHAR, 4);
  expect_status(HEAD "#EXTINF:1,\x7f\na.ts\n", HLS_E_CONTROL_CHAR, 3);
  expect_status(HEAD "#EXTINF:1,\xc0\x80\na.ts\n", HLS_E_ENCODING, 3);    /* overlong NUL */
  expect_status(HEAD "#EXTINF:1,\xed\xa0\x80\na.ts\n", HLS_E_ENCODING, 3); /* surrogate */
  expect_status(HEAD "#EXTINF:1,\xff\na.ts\n", HLS_E_ENCODING, 3);
  expect_status(HEAD "#EXTINF:1,\xe2\x82\na.ts\n", HLS_E_ENCODING, 3); /* truncated */
  expect_status(HEAD "#EXTINF:1,\xf0\x9f\x8e\xac\na.ts\n", HLS_OK, 0);
  expect_status(HEAD "#EXTINF:1,\na\xc3\xa9.ts\n", HLS_E_MALFORMED_URI, 4); /* IRIs are not URIs */
  expect_status(HEAD "#EXTINF:1,\na<b>.ts\n", HLS_E_MALFORMED_URI, 4);
}

static void hls_14_uri_without_extinf_and_dangling_tags(void **state)
{
  (void)state;
  expect_status(HEAD "a.ts\n", HLS_E_URI_WITHOUT_EXTINF, 3);
  expect_status(HEAD "#EXTINF:1,\na.ts\nb.ts\n", HLS_E_URI_WITHOUT_EXTINF, 5);
  expect_status(HEAD "#EXT-X-BYTERANGE:1@0\na.ts\n", HLS_E_URI_WITHOUT_EXTINF, 4);
  expect_status(HEAD "#EXTINF:1,\na.ts\n#EXTINF:1,\n", HLS_E_DANGLING_SEGMENT_TAGS, 5);
  expect_status(HEAD "#EXTINF:1,\na.ts\n#EXT-X-DISCONTINUITY\n#EXT-X-ENDLIST\n", HLS_E_DANGLING_SEGMENT_TAGS, 5);
  expect_status(HEAD "#EXTINF:1,\na.ts\n#EXT-X-PROGRAM-DATE-TIME:2024-03-04T23:02:17Z", HLS_E_DANGLING_SEGMENT_TAGS, 5);
}

static void hls_15_duplicates_and_late_header_tags(void **state)
{
  (void)state;
  expect_status(HEAD "#EXT-X-TARGETDURATION:10\n", HLS_E_DUPLICATE_TAG, 3);
  expect_status(HEAD "#EXT-X-VERSION:3\n#EXT-X-VERSION:3\n", HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXT-X-MEDIA-SEQUENCE:1\n#EXT-X-MEDIA-SEQUENCE:1\n", HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXTINF:1,\n#EXTINF:1,\na.ts\n", HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXT-X-BYTERANGE:1@0\n#EXT-X-BYTERANGE:1@0\n", HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXT-X-DISCONTINUITY\n#EXT-X-DISCONTINUITY\n", HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXT-X-PROGRAM-DATE-TIME:2024-03-04T23:02:17Z\n#EXT-X-PROGRAM-DATE-TIME:2024-03-04T23:02:17Z\n",
                HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXT-X-ENDLIST\n#EXT-X-ENDLIST\n", HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXTINF:1,\na.ts\n#EXT-X-MEDIA-SEQUENCE:5\n", HLS_E_HEADER_TAG_LATE, 5);
  expect_status(HEAD "#EXTINF:1,\n#EXT-X-MEDIA-SEQUENCE:5\n", HLS_E_HEADER_TAG_LATE, 4);
  expect_status(HEAD "#EXTINF:1,\na.ts\n#EXT-X-DISCONTINUITY-SEQUENCE:5\n", HLS_E_HEADER_TAG_LATE, 5);
  /* ENDLIST may sit anywhere (RFC 8216 4.3.3.4) */
  expect_status(HEAD "#EXT-X-ENDLIST\n#EXTINF:1,\na.ts\n", HLS_OK, 0);
}

static void hls_16_whitespace_refused(void **state)
{
  (void)state;
  expect_status(HEAD "#EXTINF:1,\n a.ts\n", HLS_E_WHITESPACE, 4);
  expect_status(HEAD "#EXTINF:1,\na.ts \n", HLS_E_WHITESPACE, 4);
  expect_status(HEAD "#EXTINF:1,\n\ta.ts\n", HLS_E_WHITESPACE, 4);
  expect_status(HEAD "   \n", HLS_E_WHITESPACE, 3);
  expect_status(" #EXTM3U\n", HLS_E_NO_EXTM3U, 1);
}

static char *repeat_playlist(size_t segments, size_t *len)
{
  const char *head = HEAD, *seg = "#EXTINF:1,\ns.ts\n";
  size_t n = strlen(head) + segments * strlen(seg);
  char *s = malloc(n + 1);
  assert_non_null(s);
  char *p = s + strlen(head);
  memcpy(s, head, strlen(head));
  for (size_t i = 0; i < segments; i++, p += strlen(seg)) memcpy(p, seg, strlen(seg));
  *p = '\0';
  *len = n;
  return s;
}

static void hls_17_bounds(void **state)
{
  (void)state;
  size_t len;
  char *s = repeat_playlist(HLS_MAX_SEGMENTS, &len);
  struct hls_playlist pl;
  struct hls_error err;
  assert_int_equal(parse_n(s, len, &pl, &err), HLS_OK);
  assert_int_equal(pl.segment_count, HLS_MAX_SEGMENTS);
  assert_int_equal(pl.segments[HLS_MAX_SEGMENTS - 1].media_sequence, HLS_MAX_SEGMENTS - 1);
  hls_playlist_free(&pl);
  free(s);
  s = repeat_playlist(HLS_MAX_SEGMENTS + 1, &len);
  expect_status_n(s, len, HLS_E_TOO_MANY_SEGMENTS, 3 + 2 * HLS_MAX_SEGMENTS + 1);
  free(s);

  /* size: HLS_MAX_PLAYLIST_BYTES + 1 is refused before anything is read */
  char *big = malloc(HLS_MAX_PLAYLIST_BYTES + 1);
  assert_non_null(big);
  memset(big, '\n', HLS_MAX_PLAYLIST_BYTES + 1);
  expect_status_n(big, HLS_MAX_PLAYLIST_BYTES + 1, HLS_E_TOO_LARGE, 0);
  free(big);

  /* line length: HLS_MAX_LINE_BYTES is fine (a comment), one more is not */
  size_t hl = strlen(HEAD);
  char *line = malloc(hl + HLS_MAX_LINE_BYTES + 3);
  assert_non_null(line);
  memcpy(line, HEAD, hl);
  memset(line + hl, 'x', HLS_MAX_LINE_BYTES + 1);
  line[hl] = '#';
  line[hl + HLS_MAX_LINE_BYTES] = '\r'; /* the CR of a CRLF does not count */
  line[hl + HLS_MAX_LINE_BYTES + 1] = '\n';
  expect_status_n(line, hl + HLS_MAX_LINE_BYTES + 2, HLS_OK, 0);
  line[hl + HLS_MAX_LINE_BYTES] = 'x';
  expect_status_n(line, hl + HLS_MAX_LINE_BYTES + 2, HLS_E_LINE_TOO_LONG, 3);
  free(line);

  /* NULL arguments */
  assert_int_equal(hls_parse(NULL, 5, &pl, &err), HLS_E_ARG);
  assert_int_equal(hls_parse("#EXTM3U", 7, NULL, &err), HLS_E_ARG);
  assert_int_equal(hls_parse("#EXTM3U\n#EXT-X-TARGETDURATION:1\n", 31, &pl, NULL), HLS_OK);
  hls_playlist_free(&pl);
}

static void hls_18_select_by_media_sequence(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  struct hls_selection sel;
  const char *s = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:100\n"
                  "#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:2,\nc.ts\n"
                  "#EXTINF:2,\nd.ts\n#EXTINF:2,\ne.ts\n";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_int_equal(hls_select(&pl, 100, 101, &sel, &err), HLS_OK);
  assert_int_equal(err.status, HLS_OK);
  assert_int_equal(sel.first_index, 0);
  assert_int_equal(sel.count, 2);
  assert_int_equal(sel.first_seq, 100);
  assert_int_equal(sel.last_seq, 101);
  /* a discontinuity before the first selected segment is fine */
  assert_int_equal(hls_select(&pl, 102, 104, &sel, &err), HLS_OK);
  assert_int_equal(sel.first_index, 2);
  assert_int_equal(sel.count, 3);
  assert_int_equal(hls_select(&pl, 103, 103, &sel, NULL), HLS_OK);
  assert_int_equal(sel.count, 1);
  /* failures leave an empty selection */
  assert_int_equal(hls_select(&pl, 101, 102, &sel, &err), HLS_E_SELECT_DISCONTINUITY);
  assert_int_equal(sel.count, 0);
  assert_int_equal(err.line, 10);
  assert_int_equal(hls_select(&pl, 100, 104, &sel, &err), HLS_E_SELECT_DISCONTINUITY);
  assert_int_equal(hls_select(&pl, 99, 100, &sel, &err), HLS_E_SELECT_NOT_FOUND);
  assert_int_equal(hls_select(&pl, 104, 105, &sel, &err), HLS_E_SELECT_NOT_FOUND);
  assert_int_equal(hls_select(&pl, 0, UINT64_MAX, &sel, &err), HLS_E_SELECT_NOT_FOUND);
  assert_int_equal(hls_select(&pl, 102, 101, &sel, &err), HLS_E_SELECT_RANGE);
  assert_int_equal(sel.count, 0);
  assert_int_equal(hls_status_class(HLS_E_SELECT_NOT_FOUND), HLS_CLASS_USAGE);
  assert_int_equal(hls_select(NULL, 1, 1, &sel, &err), HLS_E_ARG);
  assert_int_equal(hls_select(&pl, 1, 1, NULL, &err), HLS_E_ARG);
  hls_playlist_free(&pl);
  /* a freed (zeroed) playlist is not a media playlist */
  assert_int_equal(hls_select(&pl, 100, 100, &sel, &err), HLS_E_NOT_MEDIA);
  /* an empty live playlist has nothing to select */
  assert_int_equal(parse("#EXTM3U\n#EXT-X-TARGETDURATION:2\n", &pl, &err), HLS_OK);
  assert_int_equal(hls_select(&pl, 0, 0, &sel, &err), HLS_E_SELECT_NOT_FOUND);
  hls_playlist_free(&pl);
}

static void hls_19_looks_like_playlist(void **state)
{
  (void)state;
  assert_true(hls_looks_like_playlist("#EXTM3U\n", 8));
  assert_true(hls_looks_like_playlist("#EXTM3U", 7));
  assert_true(hls_looks_like_playlist("\xEF\xBB\xBF#EXTM3U\r\n", 12)); /* recognised, then refused */
  assert_true(hls_looks_like_playlist("\r\n\n#EXTM3U\n", 11));
  assert_false(hls_looks_like_playlist("#EXTM3", 6));
  assert_false(hls_looks_like_playlist("\x47\x40\x00\x10", 4));
  assert_false(hls_looks_like_playlist("", 0));
  assert_false(hls_looks_like_playlist(NULL, 10));
}

static void hls_20_status_codes_and_classes(void **state)
{
  (void)state;
  enum hls_status zero = 0;
  assert_int_not_equal(zero, HLS_OK);
  assert_int_equal(hls_status_class(zero), HLS_CLASS_UNSET);
  assert_string_equal(hls_status_code(zero), "unset");
  assert_string_equal(hls_status_code(HLS_OK), "ok");
  assert_int_equal(hls_status_class(HLS_OK), HLS_CLASS_OK);
  /* every status has its own code and a class */
  for (int a = HLS_E_UNSET; a <= HLS_E_DELTA_UPDATE; a++) {
    assert_string_not_equal(hls_status_code((enum hls_status)a), "unknown");
    assert_string_not_equal(hls_status_message((enum hls_status)a), "unknown status");
    if (a != HLS_E_UNSET) assert_int_not_equal(hls_status_class((enum hls_status)a), HLS_CLASS_UNSET);
    for (int b = a + 1; b <= HLS_E_DELTA_UPDATE; b++)
      assert_string_not_equal(hls_status_code((enum hls_status)a), hls_status_code((enum hls_status)b));
  }
  assert_string_equal(hls_status_code((enum hls_status)999), "unknown");
  assert_int_equal(hls_status_class((enum hls_status)999), HLS_CLASS_UNSET);
}

/* ---- corpus ---- */

static char *read_corpus(const char *rel, size_t *len)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", EXACTAV_CORPUS_DIR, rel);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = malloc(HLS_MAX_PLAYLIST_BYTES + 1);
  assert_non_null(buf);
  *len = fread(buf, 1, HLS_MAX_PLAYLIST_BYTES + 1, f);
  fclose(f);
  return buf;
}

/* Ends the process as skipped (exit 77) when the corpus is absent. */
static void need_corpus(void)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/playlists", EXACTAV_CORPUS_DIR);
  test_skip_unless(path);
}

struct corpus_case {
  const char *file;
  enum hls_status status;
  unsigned long line;   /* of the error */
  size_t segments;      /* when HLS_OK */
};

/* The expected outcome of every file of corpus/playlists (docs/hls.md). */
static const struct corpus_case CORPUS[] = {
    {"DERIVED_m3u8py_SIMPLE_PLAYLIST_bom.m3u8", HLS_E_BOM, 1, 0},
    {"DERIVED_m3u8py_SIMPLE_PLAYLIST_crlf.m3u8", HLS_OK, 0, 1},
    {"grafov_media-playlist-with-byterange.m3u8", HLS_OK, 0, 3},
    {"grafov_media-playlist-with-discontinuity.m3u8", HLS_E_NO_EXTM3U, 1, 0}, /* comment lines before #EXTM3U */
    {"grafov_media-playlist-with-program-date-time.m3u8", HLS_OK, 0, 4},
    {"grafov_wowza-vod-chunklist.m3u8", HLS_OK, 0, 522},
    {"hlsjs_byterange-before-extinf.m3u8", HLS_E_TARGETDURATION_TOO_SMALL, 8, 0}, /* EXTINF 1000000 > 1 */
    {"hlsjs_byterange-before-map.m3u8", HLS_OK, 0, 3},   /* fMP4 (EXT-X-MAP): issue 20 */
    {"hlsjs_multiple-map.m3u8", HLS_OK, 0, 2},          /* a MAP that changes */
    {"m3u8py_DISCONTINUITY_PLAYLIST_WITH_PROGRAM_DATE_TIME.m3u8", HLS_OK, 0, 8},
    {"m3u8py_MAP_URI_PLAYLIST_WITH_BYTERANGE.m3u8", HLS_OK, 0, 2},
    {"m3u8py_MULTIPLE_MAP_URI_PLAYLIST.m3u8", HLS_OK, 0, 3},    /* AES-128 and fMP4: both read (issue 20) */
    {"m3u8py_PLAYLIST_USING_BYTERANGES.m3u8", HLS_OK, 0, 3},
    {"m3u8py_PLAYLIST_WITH_SLASH_IN_QUERY_STRING.m3u8", HLS_E_DANGLING_SEGMENT_TAGS, 13, 0}, /* ends on EXTINF */
    {"m3u8py_relative-playlist.m3u8", HLS_E_MALFORMED_ATTRIBUTES, 4, 0}, /* ", IV=" */
    {"shaka_hls-ts-rollover_playlist.m3u8", HLS_OK, 0, 10},
    {"videojs_byteRange.m3u8", HLS_E_BYTERANGE_CONTINUATION, 13, 0}, /* continues another URI */
    {"videojs_dateTime.m3u8", HLS_OK, 0, 2},
    {"videojs_diff-init-key.m3u8", HLS_OK, 0, 11},              /* AES-128 and fMP4: both read */
    {"videojs_discontinuity.m3u8", HLS_OK, 0, 9},
    {"videojs_fmp4.m3u8", HLS_OK, 0, 2},
    {"videojs_whiteSpace.m3u8", HLS_E_WHITESPACE, 4, 0},
};

static void hls_21_corpus_playlists_outcomes(void **state)
{
  (void)state;
  need_corpus();
  for (size_t i = 0; i < sizeof CORPUS / sizeof CORPUS[0]; i++) {
    const struct corpus_case *c = &CORPUS[i];
    char rel[512];
    size_t len = 0;
    snprintf(rel, sizeof rel, "playlists/%s", c->file);
    char *buf = read_corpus(rel, &len);
    if (!buf) print_error("cannot read %s\n", rel);
    assert_non_null(buf);
    struct hls_playlist pl;
    struct hls_error err;
    enum hls_status st = hls_parse(buf, len, &pl, &err);
    print_message("%-58s %s line %lu %s\n", c->file, hls_status_code(st), err.line, err.message);
    if (st != c->status || err.line != c->line)
      print_error("%s: got %s at line %lu, want %s at line %lu\n", c->file, hls_status_code(st), err.line,
                  hls_status_code(c->status), c->line);
    assert_int_equal(st, c->status);
    assert_int_equal(err.line, c->line);
    assert_int_equal(pl.segment_count, c->segments);
    hls_playlist_free(&pl);
    free(buf);
  }
}

static void parse_corpus(const char *rel, struct hls_playlist *pl)
{
  size_t len = 0;
  char *buf = read_corpus(rel, &len);
  assert_non_null(buf);
  struct hls_error err;
  assert_int_equal(hls_parse(buf, len, pl, &err), HLS_OK);
  free(buf); /* the playlist keeps its own copy */
}

/* The details of the files that parse. */
static void hls_22_corpus_playlists_details(void **state)
{
  (void)state;
  need_corpus();
  struct hls_playlist pl;
  struct hls_selection sel;
  parse_corpus("playlists/DERIVED_m3u8py_SIMPLE_PLAYLIST_crlf.m3u8", &pl);
  assert_int_equal(pl.target_duration, 5220);
  assert_string_equal(pl.segments[0].uri, "http://media.example.com/entire.ts");
  assert_true(pl.endlist);
  hls_playlist_free(&pl);

  parse_corpus("playlists/grafov_media-playlist-with-byterange.m3u8", &pl);
  assert_int_equal(pl.segments[1].byterange_offset, 752321);
  assert_int_equal(pl.segments[2].byterange_length, 69864);
  assert_int_equal(pl.segments[2].byterange_offset, 752321 + 82112); /* continued */
  assert_false(pl.segments[2].byterange_offset_explicit);
  hls_playlist_free(&pl);

  parse_corpus("playlists/grafov_media-playlist-with-program-date-time.m3u8", &pl);
  assert_true(pl.segments[0].has_program_date_time);
  assert_true(pl.segments[0].program_date_time_ms == 1546220842000);
  assert_false(pl.segments[1].has_program_date_time);
  assert_int_equal(pl.segments[0].duration_ms, 14666);
  hls_playlist_free(&pl);

  parse_corpus("playlists/grafov_wowza-vod-chunklist.m3u8", &pl);
  assert_int_equal(pl.media_sequence, 1);
  assert_string_equal(pl.segments[0].title, "Title 1");
  assert_string_equal(pl.segments[521].uri, "media-b2000000_522.ts?wowzasessionid=2029972411");
  assert_int_equal(pl.segments[521].media_sequence, 522);
  assert_int_equal(pl.segments[521].duration_ms, 7200);
  assert_int_equal(hls_select(&pl, 1, 522, &sel, NULL), HLS_OK);
  assert_int_equal(sel.count, 522);
  char url[URI_MAX_OUTPUT];
  assert_int_equal(uri_resolve("https://wowza.example/vod/mp4:x.mp4/chunklist_b2000000.m3u8?wowzasessionid=2029972411",
                               pl.segments[0].uri, url, sizeof url),
                   URI_OK);
  assert_string_equal(url, "https://wowza.example/vod/mp4:x.mp4/media-b2000000_1.ts?wowzasessionid=2029972411");
  hls_playlist_free(&pl);

  parse_corpus("playlists/m3u8py_DISCONTINUITY_PLAYLIST_WITH_PROGRAM_DATE_TIME.m3u8", &pl);
  assert_int_equal(pl.segments[0].media_sequence, 50116);
  assert_true(pl.segments[5].discontinuity);
  assert_true(pl.segments[5].program_date_time_ms == 1407937015000);
  assert_int_equal(hls_select(&pl, 50116, 50120, &sel, NULL), HLS_OK);
  assert_int_equal(hls_select(&pl, 50120, 50121, &sel, NULL), HLS_E_SELECT_DISCONTINUITY);
  assert_int_equal(hls_select(&pl, 50121, 50123, &sel, NULL), HLS_OK);
  assert_int_equal(hls_select(&pl, 50121, 50124, &sel, NULL), HLS_E_SELECT_NOT_FOUND);
  hls_playlist_free(&pl);

  parse_corpus("playlists/m3u8py_PLAYLIST_USING_BYTERANGES.m3u8", &pl);
  assert_int_equal(pl.media_sequence, 0);
  assert_int_equal(pl.segments[2].byterange_offset, 834421);
  hls_playlist_free(&pl);

  parse_corpus("playlists/videojs_dateTime.m3u8", &pl);
  assert_true(pl.segments[1].program_date_time_ms == 1466601626166);
  assert_string_equal(pl.segments[1].program_date_time_text, "2016-06-22T09:20:26.166-04:00");
  hls_playlist_free(&pl);

  parse_corpus("playlists/videojs_discontinuity.m3u8", &pl);
  assert_string_equal(pl.segments[0].title, "0");
  assert_true(pl.segments[2].discontinuity && pl.segments[4].discontinuity && pl.segments[7].discontinuity);
  assert_int_equal(hls_select(&pl, 4, 6, &sel, NULL), HLS_OK);
  assert_int_equal(hls_select(&pl, 1, 2, &sel, NULL), HLS_E_SELECT_DISCONTINUITY);
  hls_playlist_free(&pl);
}

/* The real live stream whose PTS wraps inside segment ...28.ts. */
static void hls_23_rollover_stream_playlist(void **state)
{
  (void)state;
  need_corpus();
  struct hls_playlist pl;
  struct hls_selection sel;
  parse_corpus("media/hls-ts-rollover/playlist.m3u8", &pl);
  assert_int_equal(pl.version, 7);
  assert_int_equal(pl.target_duration, 2);
  assert_int_equal(pl.segment_count, 10);
  assert_true(pl.endlist);
  for (size_t i = 0; i < pl.segment_count; i++) {
    const struct hls_segment *s = &pl.segments[i];
    char name[64];
    snprintf(name, sizeof name, "360p30_h264_48k_160_aac_ts-00000000%02zu.ts", 24 + i);
    assert_string_equal(s->uri, name);
    assert_int_equal(s->media_sequence, i);
    assert_int_equal(s->duration_ms, 2000);
    assert_string_equal(s->title, "");
    assert_true(s->has_program_date_time);
    assert_true(s->program_date_time_ms == 1709593337684 + 2000 * (int64_t)i);
    assert_false(s->discontinuity);
    /* every segment resolves to a file that exists next to the playlist */
    char url[URI_MAX_OUTPUT];
    assert_int_equal(uri_resolve("http://127.0.0.1:8080/hls-ts-rollover/playlist.m3u8?Signature=s", s->uri, url,
                                 sizeof url),
                     URI_OK);
    char expect[128];
    snprintf(expect, sizeof expect, "http://127.0.0.1:8080/hls-ts-rollover/%s", name);
    assert_string_equal(url, expect);
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/media/hls-ts-rollover/%s", EXACTAV_CORPUS_DIR, s->uri);
    assert_int_equal(stat(path, &st), 0);
  }
  assert_int_equal(hls_select(&pl, 3, 5, &sel, NULL), HLS_OK); /* 27, 28 (the wrap), 29 */
  assert_int_equal(sel.first_index, 3);
  assert_int_equal(sel.count, 3);
  assert_string_equal(pl.segments[sel.first_index + 1].uri, "360p30_h264_48k_160_aac_ts-0000000028.ts");
  hls_playlist_free(&pl);
}

/* A transfer cut anywhere: every prefix is parsed without crashing, and is
 * either a complete playlist or refused as a delivery problem. */
static void hls_24_every_truncation_of_a_playlist(void **state)
{
  (void)state;
  const char *s = "#EXTM3U\r\n#EXT-X-VERSION:4\r\n#EXT-X-TARGETDURATION:10\r\n#EXT-X-MEDIA-SEQUENCE:7\r\n"
                  "#EXT-X-KEY:METHOD=NONE,URI=\"k,=\"\r\n#EXTINF:9.5,t\r\n#EXT-X-BYTERANGE:100@0\r\na.ts\r\n"
                  "#EXT-X-PROGRAM-DATE-TIME:2024-03-04T23:02:17.684+01:00\r\n#EXT-X-BYTERANGE:50\r\n#EXTINF:10,\r\n"
                  "a.ts\r\n#EXT-X-DISCONTINUITY\r\n#EXTINF:2.000000\r\nb.ts?x=/*~\r\n#EXT-X-ENDLIST\r\n";
  size_t n = strlen(s), ok = 0;
  for (size_t len = 0; len <= n; len++) {
    char *copy = malloc(len ? len : 1); /* exact size: ASan catches any read past the end */
    assert_non_null(copy);
    memcpy(copy, s, len);
    struct hls_playlist pl;
    struct hls_error err;
    enum hls_status st = hls_parse(copy, len, &pl, &err);
    if (st == HLS_OK) {
      ok++;
    } else {
      /* "METHOD=NONE" cut to "METHOD=NO" reads as an unsupported method */
      enum hls_class c = hls_status_class(st);
      assert_true(c == HLS_CLASS_INVALID_DELIVERY || (c == HLS_CLASS_OUTSIDE_PROFILE && st == HLS_E_KEY_METHOD));
    }
    hls_playlist_free(&pl);
    free(copy);
  }
  assert_true(ok > 0);
  expect_status("#EXTM3U\n#EXT-X-TARGETDUR", HLS_E_NO_TARGETDURATION, 0); /* an unknown tag */
  expect_status("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-KEY:METHOD=NONE,URI=\"k", HLS_E_MALFORMED_ATTRIBUTES, 3);
}

/* ---- Low-Latency HLS (RFC 8216bis) ---- */

#define LL_HEAD                                                                                  \
  "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-VERSION:9\n"                                         \
  "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.0,CAN-SKIP-UNTIL=24.0,HOLD-BACK=12\n" \
  "#EXT-X-PART-INF:PART-TARGET=1.00002\n#EXT-X-MEDIA-SEQUENCE:266\n#EXT-X-MAP:URI=\"init.mp4\"\n"

/* Parts belong to the segment whose URI follows them; parts after the last
 * URI are the open segment; hints and server control are read. */
static void hls_26_ll_parts_attach_to_their_parent(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  const char *s = LL_HEAD "#EXTINF:4.00008,\nfileSequence266.mp4\n"
                          "#EXT-X-PART:DURATION=1.00002,URI=\"p267.mp4\",BYTERANGE=\"1000@0\",INDEPENDENT=YES\n"
                          "#EXT-X-PART:DURATION=1,URI=\"p267.mp4\",BYTERANGE=\"2000\"\n"
                          "#EXT-X-PART:DURATION=1.00002,URI=\"p267.mp4\",BYTERANGE=\"500\",GAP=YES\n"
                          "#EXT-X-PART:DURATION=1.00002,URI=\"p267.mp4\",BYTERANGE=\"10@9000\",INDEPENDENT=NO\n"
                          "#EXTINF:4.00008,\nfileSequence267.mp4\n"
                          "#EXT-X-PROGRAM-DATE-TIME:2019-02-14T02:13:48.106Z\n"
                          "#EXT-X-PART:DURATION=0.5,URI=\"filePart268.0.mp4\",INDEPENDENT=YES\n"
                          "#EXT-X-PART:DURATION=1.00002,URI=\"filePart268.1.mp4\"\n"
                          "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"filePart268.2.mp4\"\n"
                          "#EXT-X-PRELOAD-HINT:TYPE=MAP,URI=\"init2.mp4\",BYTERANGE-START=10,BYTERANGE-LENGTH=20\n"
                          "#EXT-X-PRELOAD-HINT:TYPE=FUTURE,URI=\"ignored\"\n"
                          "#EXT-X-RENDITION-REPORT:URI=\"../1M/waitForMSN.php\",LAST-MSN=273,LAST-PART=2\n";
  assert_int_equal(parse(s, &pl, &err), HLS_OK);
  assert_int_equal(pl.segment_count, 2);
  assert_int_equal(pl.part_count, 6);
  const struct hls_server_control *c = &pl.server_control;
  assert_true(c->present && c->can_block_reload && !c->can_skip_dateranges);
  assert_true(c->part_hold_back.present && c->part_hold_back.ms == 1000);
  assert_true(c->hold_back.present && c->hold_back.ms == 12000 && c->can_skip_until.ms == 24000);
  assert_true(pl.part_target.present);
  assert_int_equal(pl.part_target.num, 100002);
  assert_int_equal(pl.part_target.den, 100000);
  assert_int_equal(pl.part_target.ms, 1000);
  /* segment 266 has no parts, 267 has four */
  assert_int_equal(pl.segments[0].part_count, 0);
  assert_int_equal(pl.segments[1].part_first, 0);
  assert_int_equal(pl.segments[1].part_count, 4);
  const struct hls_part *q = pl.parts;
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(q[i].media_sequence, 267);
    assert_int_equal(q[i].part_index, i);
    assert_string_equal(q[i].uri, "p267.mp4");
    assert_true(q[i].has_byterange);
  }
  assert_true(q[0].independent && !q[1].independent && !q[3].independent);
  assert_true(q[2].gap && !q[0].gap);
  assert_int_equal(q[0].byterange_offset, 0);
  assert_int_equal(q[1].byterange_offset, 1000); /* continues the previous part */
  assert_int_equal(q[1].byterange_length, 2000);
  assert_false(q[1].byterange_offset_explicit);
  assert_int_equal(q[2].byterange_offset, 3000);
  assert_int_equal(q[3].byterange_offset, 9000);
  assert_string_equal(q[1].duration_text, "1");
  assert_int_equal(q[0].line, 10);
  /* the open segment 268: two parts, the date-time before them */
  assert_true(pl.has_open_segment);
  const struct hls_segment *o = &pl.open_segment;
  assert_null(o->uri);
  assert_int_equal(o->media_sequence, 268);
  assert_int_equal(o->part_first, 4);
  assert_int_equal(o->part_count, 2);
  assert_true(o->has_program_date_time);
  assert_string_equal(o->map_uri, "init.mp4");
  assert_int_equal(pl.parts[5].part_index, 1);
  assert_int_equal(pl.parts[4].duration_ms, 500);
  assert_false(pl.parts[4].has_byterange);
  assert_true(pl.preload_part.present);
  assert_string_equal(pl.preload_part.uri, "filePart268.2.mp4");
  assert_false(pl.preload_part.has_byterange_length);
  assert_true(pl.preload_map.present && pl.preload_map.has_byterange_length);
  assert_int_equal(pl.preload_map.byterange_start, 10);
  assert_int_equal(pl.preload_map.byterange_length, 20);
  assert_string_equal(pl.preload_map.uri, "init2.mp4");
  /* whole segments are selected as before */
  struct hls_selection sel;
  assert_int_equal(hls_select(&pl, 266, 267, &sel, &err), HLS_OK);
  assert_int_equal(sel.count, 2);
  assert_int_equal(hls_select(&pl, 268, 268, &sel, &err), HLS_E_SELECT_NOT_FOUND);
  hls_playlist_free(&pl);
  /* a playlist whose parts all have parents has no open segment */
  assert_int_equal(parse(LL_HEAD "#EXT-X-PART:DURATION=1,URI=\"a.0.mp4\"\n#EXTINF:1,\na.mp4\n#EXT-X-ENDLIST\n", &pl, &err),
                   HLS_OK);
  assert_false(pl.has_open_segment);
  assert_int_equal(pl.segments[0].part_count, 1);
  assert_int_equal(pl.parts[0].media_sequence, 266);
  hls_playlist_free(&pl);
}

/* Malformed LL-HLS tags: each its status and line. */
static void hls_27_ll_malformed_tags(void **state)
{
  (void)state;
#define PART_INF "#EXT-X-PART-INF:PART-TARGET=1\n"
  /* EXT-X-PART */
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=p.mp4\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:URI=\"p.mp4\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=\"1\",URI=\"p.mp4\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=-1,URI=\"p.mp4\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p q\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",INDEPENDENT=yes\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",GAP=\"YES\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=10@0\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"0@0\"\n", HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"1@18446744073709551615\"\n",
                HLS_E_MALFORMED_PART, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"10\"\n", HLS_E_BYTERANGE_CONTINUATION, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"10@0\"\n"
                              "#EXT-X-PART:DURATION=1,URI=\"q.mp4\",BYTERANGE=\"10\"\n",
                HLS_E_BYTERANGE_CONTINUATION, 5);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"10@18446744073709551605\"\n"
                              "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"1\"\n",
                HLS_E_NUMBER_RANGE, 5);
  expect_status(HEAD PART_INF "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",URI=\"q.mp4\"\n", HLS_E_MALFORMED_ATTRIBUTES, 4);
  expect_status(HEAD PART_INF "#EXT-X-PART\n", HLS_E_MALFORMED_TAG, 4);
  /* EXT-X-PART-INF: required with parts, once, positive; parts within it, exactly */
  expect_status(HEAD "#EXT-X-PART:DURATION=1,URI=\"p.mp4\"\n#EXTINF:1,\na.ts\n", HLS_E_NO_PART_TARGET, 3);
  expect_status(HEAD "#EXT-X-PART-INF:PART-TARGET=0.0\n", HLS_E_MALFORMED_PART, 3);
  expect_status(HEAD "#EXT-X-PART-INF:PART-TARGET=x\n", HLS_E_MALFORMED_PART, 3);
  expect_status(HEAD "#EXT-X-PART-INF:TARGET=1\n", HLS_E_MALFORMED_PART, 3);
  expect_status(HEAD PART_INF PART_INF, HLS_E_DUPLICATE_TAG, 4);
  expect_status(HEAD "#EXT-X-PART-INF:PART-TARGET=0.33334\n#EXT-X-PART:DURATION=0.33334,URI=\"a.mp4\"\n"
                     "#EXT-X-PART:DURATION=0.333340001,URI=\"b.mp4\"\n",
                HLS_E_PART_TOO_LONG, 5);
  expect_status(HEAD "#EXT-X-PART:DURATION=1.000000001,URI=\"b.mp4\"\n" PART_INF, HLS_E_PART_TOO_LONG, 3);
  /* EXT-X-SERVER-CONTROL */
  expect_status(HEAD "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=TRUE\n", HLS_E_MALFORMED_SERVER_CONTROL, 3);
  expect_status(HEAD "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=\"3\"\n", HLS_E_MALFORMED_SERVER_CONTROL, 3);
  expect_status(HEAD "#EXT-X-SERVER-CONTROL:HOLD-BACK=1e3\n", HLS_E_MALFORMED_SERVER_CONTROL, 3);
  expect_status(HEAD "#EXT-X-SERVER-CONTROL:CAN-SKIP-DATERANGES=YES\n", HLS_E_MALFORMED_SERVER_CONTROL, 3);
  expect_status(HEAD "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES\n#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES\n",
                HLS_E_DUPLICATE_TAG, 4);
  /* EXT-X-PRELOAD-HINT */
  expect_status(HEAD "#EXT-X-PRELOAD-HINT:URI=\"p.mp4\"\n", HLS_E_MALFORMED_PRELOAD_HINT, 3);
  expect_status(HEAD "#EXT-X-PRELOAD-HINT:TYPE=\"PART\",URI=\"p.mp4\"\n", HLS_E_MALFORMED_PRELOAD_HINT, 3);
  expect_status(HEAD "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=p.mp4\n", HLS_E_MALFORMED_PRELOAD_HINT, 3);
  expect_status(HEAD "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"p.mp4\",BYTERANGE-START=-1\n", HLS_E_MALFORMED_PRELOAD_HINT, 3);
  expect_status(HEAD "#EXT-X-PRELOAD-HINT:TYPE=MAP,URI=\"i.mp4\",BYTERANGE-START=1,"
                     "BYTERANGE-LENGTH=18446744073709551615\n",
                HLS_E_MALFORMED_PRELOAD_HINT, 3);
  expect_status(HEAD "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"p.mp4\"\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"q.mp4\"\n",
                HLS_E_DUPLICATE_TAG, 4);
  /* EXT-X-SKIP: a delta update cannot be verified */
  expect_status(HEAD "#EXT-X-SKIP:SKIPPED-SEGMENTS=3\n#EXTINF:1,\na.ts\n", HLS_E_DELTA_UPDATE, 3);
  /* in a master playlist they are media tags */
  expect_status("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n" PART_INF, HLS_E_MIXED_PLAYLIST, 4);
#undef PART_INF
}

/* Where LL-HLS meets the old rules: what an open segment may carry, header
 * tags after a part, the bounds, truncations; and a playlist without LL
 * tags reads as before (no parts, no open segment, nothing set). */
static void hls_28_ll_open_segment_bounds_and_old_playlists(void **state)
{
  (void)state;
  struct hls_playlist pl;
  struct hls_error err;
  /* an EXTINF or a BYTERANGE waiting with the trailing parts: truncated */
  expect_status(LL_HEAD "#EXT-X-PART:DURATION=1,URI=\"a.0.mp4\"\n#EXTINF:1,\n", HLS_E_DANGLING_SEGMENT_TAGS, 9);
  expect_status(LL_HEAD "#EXT-X-BYTERANGE:10@0\n#EXT-X-PART:DURATION=1,URI=\"a.0.mp4\"\n", HLS_E_DANGLING_SEGMENT_TAGS, 8);
  /* a discontinuity before the open segment's parts is the open segment's */
  assert_int_equal(parse(LL_HEAD "#EXTINF:1,\na.mp4\n#EXT-X-DISCONTINUITY\n#EXT-X-PART:DURATION=1,URI=\"b.0.mp4\"\n",
                         &pl, &err),
                   HLS_OK);
  assert_true(pl.has_open_segment && pl.open_segment.discontinuity);
  assert_int_equal(pl.open_segment.media_sequence, 267);
  assert_int_equal(pl.open_segment.line, 11);
  hls_playlist_free(&pl);
  /* a DISCONTINUITY with nothing after it is still dangling */
  expect_status(LL_HEAD "#EXTINF:1,\na.mp4\n#EXT-X-DISCONTINUITY\n", HLS_E_DANGLING_SEGMENT_TAGS, 10);
  /* a part is media segment content: header tags after it are late */
  expect_status(HEAD "#EXT-X-PART-INF:PART-TARGET=1\n#EXT-X-PART:DURATION=1,URI=\"a.0.mp4\"\n#EXT-X-MEDIA-SEQUENCE:5\n",
                HLS_E_HEADER_TAG_LATE, 5);
  /* bounds: parts per segment */
  size_t per = HLS_MAX_PARTS_PER_SEGMENT + 1, line = strlen("#EXT-X-PART:DURATION=1,URI=\"p.mp4\"\n");
  char *big = malloc(64 + per * line);
  assert_non_null(big);
  size_t n = (size_t)sprintf(big, "%s", HEAD "#EXT-X-PART-INF:PART-TARGET=1\n");
  for (size_t i = 0; i < per; i++) n += (size_t)sprintf(big + n, "#EXT-X-PART:DURATION=1,URI=\"p.mp4\"\n");
  expect_status_n(big, n, HLS_E_TOO_MANY_PARTS, 3 + per);
  /* one part fewer is fine: a segment of HLS_MAX_PARTS_PER_SEGMENT parts */
  n -= line;
  n += (size_t)sprintf(big + n, "#EXTINF:10,\ns.mp4\n");
  assert_int_equal(parse_n(big, n, &pl, &err), HLS_OK);
  assert_int_equal(pl.segments[0].part_count, HLS_MAX_PARTS_PER_SEGMENT);
  assert_int_equal(pl.parts[HLS_MAX_PARTS_PER_SEGMENT - 1].part_index, HLS_MAX_PARTS_PER_SEGMENT - 1);
  hls_playlist_free(&pl);
  free(big);
  /* a playlist without LL-HLS tags: every LL-HLS field stays zero */
  assert_int_equal(parse(HEAD "#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"10@5\"\n#EXTINF:9.5,\na.mp4\n#EXTINF:10,\nb.mp4\n",
                         &pl, &err),
                   HLS_OK);
  assert_int_equal(pl.part_count, 0);
  assert_null(pl.parts);
  assert_false(pl.has_open_segment || pl.server_control.present || pl.part_target.present);
  assert_false(pl.preload_part.present || pl.preload_map.present);
  for (size_t i = 0; i < pl.segment_count; i++) {
    assert_int_equal(pl.segments[i].part_first, 0);
    assert_int_equal(pl.segments[i].part_count, 0);
  }
  assert_int_equal(pl.segments[0].map_byterange_offset, 5);
  hls_playlist_free(&pl);
  /* every cut of an LL-HLS playlist parses or is refused as a delivery problem */
  const char *s = LL_HEAD "#EXTINF:4.00008,\ns266.mp4\n"
                          "#EXT-X-PART:DURATION=1.00002,URI=\"p267.mp4\",BYTERANGE=\"1000@0\",INDEPENDENT=YES\n"
                          "#EXT-X-PART:DURATION=1,URI=\"p267.mp4\",BYTERANGE=\"2000\",GAP=YES\n"
                          "#EXTINF:4.00008,\ns267.mp4\n#EXT-X-PART:DURATION=0.5,URI=\"p268.0.mp4\"\n"
                          "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"p268.1.mp4\",BYTERANGE-START=0\n";
  size_t len = strlen(s), ok = 0;
  for (size_t k = 0; k <= len; k++) {
    char *copy = malloc(k ? k : 1);
    assert_non_null(copy);
    memcpy(copy, s, k);
    enum hls_status st = hls_parse(copy, k, &pl, &err);
    if (st == HLS_OK) ok++;
    else assert_int_equal(hls_status_class(st), HLS_CLASS_INVALID_DELIVERY);
    hls_playlist_free(&pl);
    free(copy);
  }
  assert_true(ok > 0);
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hls_01_minimal_media_playlist),
      cmocka_unit_test(hls_02_crlf_blank_lines_comments_unknown_tags),
      cmocka_unit_test(hls_03_extinf_duration_forms),
      cmocka_unit_test(hls_04_byterange_explicit_and_continued),
      cmocka_unit_test(hls_05_byterange_continuation_refused),
      cmocka_unit_test(hls_06_discontinuity_and_media_sequence),
      cmocka_unit_test(hls_07_program_date_time),
      cmocka_unit_test(hls_08_targetduration_missing_or_too_small),
      cmocka_unit_test(hls_09_outside_profile_key_map_iframes),
      cmocka_unit_test(hls_10_master_playlist_lists_variants),
      cmocka_unit_test(hls_25_aes128_key_in_force_until_the_next_tag),
      cmocka_unit_test(hls_11_bom_and_missing_extm3u),
      cmocka_unit_test(hls_12_malformed_tags_and_numbers),
      cmocka_unit_test(hls_13_nul_control_and_encoding),
      cmocka_unit_test(hls_14_uri_without_extinf_and_dangling_tags),
      cmocka_unit_test(hls_15_duplicates_and_late_header_tags),
      cmocka_unit_test(hls_16_whitespace_refused),
      cmocka_unit_test(hls_17_bounds),
      cmocka_unit_test(hls_18_select_by_media_sequence),
      cmocka_unit_test(hls_19_looks_like_playlist),
      cmocka_unit_test(hls_20_status_codes_and_classes),
      cmocka_unit_test(hls_21_corpus_playlists_outcomes),
      cmocka_unit_test(hls_22_corpus_playlists_details),
      cmocka_unit_test(hls_23_rollover_stream_playlist),
      cmocka_unit_test(hls_24_every_truncation_of_a_playlist),
      cmocka_unit_test(hls_26_ll_parts_attach_to_their_parent),
      cmocka_unit_test(hls_27_ll_malformed_tags),
      cmocka_unit_test(hls_28_ll_open_segment_bounds_and_old_playlists),
  };
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  return cmocka_run_group_tests_name("hls", tests, NULL, NULL);
}
