/* libFuzzer target for verifier/hls.h: parse arbitrary bytes, check the
 * invariants of an accepted playlist, then select ranges taken from the
 * input and from the playlist itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hls.h"
#include "uri.h"

#define CHECK(c)                                                  \
  do {                                                            \
    if (!(c)) {                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      abort();                                                    \
    }                                                             \
  } while (0)

static void check_segments(const struct hls_playlist *pl)
{
  CHECK(pl->kind == HLS_KIND_MEDIA);
  CHECK(pl->segment_count <= HLS_MAX_SEGMENTS);
  for (size_t i = 0; i < pl->segment_count; i++) {
    const struct hls_segment *s = &pl->segments[i];
    CHECK(s->uri && s->uri[0] && s->duration_text && s->title);
    CHECK(s->media_sequence == pl->media_sequence + i);
    CHECK(s->duration_den >= 1 && s->duration_den <= 1000000000u);
    CHECK(s->duration_num / s->duration_den <= pl->target_duration);
    if (s->has_byterange) CHECK(s->byterange_length > 0 && s->byterange_offset <= UINT64_MAX - s->byterange_length);
    CHECK(s->has_program_date_time == (s->program_date_time_text != NULL));
    CHECK((s->key.method == HLS_KEY_AES_128) == (s->key.uri != NULL));
    if (s->key.uri) CHECK(s->key.uri[0]);
    if (s->key.method == HLS_KEY_NONE) CHECK(!s->key.has_iv);
  }
}

/* A duration of num/10^k s (k <= 9, below 10^9 s) in ns: exact, no overflow. */
static uint64_t ns(uint64_t num, uint64_t den)
{
  CHECK(den >= 1 && den <= 1000000000u && 1000000000u % den == 0);
  return num * (1000000000u / den);
}

/* Parts: each in exactly one parent (a segment or the open segment), in
 * order, with consecutive indices, none longer than PART-TARGET. */
static void check_parts(const struct hls_playlist *pl)
{
  CHECK(pl->part_count <= HLS_MAX_PARTS && (pl->part_count == 0 || pl->part_target.present));
  size_t next = 0;
  for (size_t i = 0; i <= pl->segment_count; i++) {
    const struct hls_segment *s = i < pl->segment_count ? &pl->segments[i] : &pl->open_segment;
    if (i == pl->segment_count && !pl->has_open_segment) break;
    if (s->part_count) CHECK(s->part_first == next);
    CHECK(s->part_count <= HLS_MAX_PARTS_PER_SEGMENT);
    for (size_t k = 0; k < s->part_count; k++) {
      const struct hls_part *q = &pl->parts[s->part_first + k];
      CHECK(q->uri && q->uri[0] && q->duration_text && q->part_index == k && q->media_sequence == s->media_sequence);
      CHECK(ns(q->duration_num, q->duration_den) <= ns(pl->part_target.num, pl->part_target.den));
      if (q->has_byterange) CHECK(q->byterange_length > 0 && q->byterange_offset <= UINT64_MAX - q->byterange_length);
    }
    next += s->part_count;
  }
  CHECK(next == pl->part_count);
  if (pl->has_open_segment) CHECK(pl->open_segment.uri == NULL && pl->open_segment.part_count > 0);
  if (pl->preload_part.present) CHECK(pl->preload_part.uri && pl->preload_part.uri[0]);
  if (pl->preload_map.present) CHECK(pl->preload_map.uri && pl->preload_map.uri[0]);
}

static void check_select(const struct hls_playlist *pl, uint64_t a, uint64_t b)
{
  struct hls_selection sel;
  struct hls_error err;
  enum hls_status st = hls_select(pl, a, b, &sel, &err);
  CHECK(err.status == st);
  if (st != HLS_OK) {
    CHECK(sel.count == 0);
    return;
  }
  CHECK(sel.count == b - a + 1 && sel.first_index + sel.count <= pl->segment_count);
  CHECK(pl->segments[sel.first_index].media_sequence == a);
  for (size_t i = 1; i < sel.count; i++) CHECK(!pl->segments[sel.first_index + i].discontinuity);
}

static uint64_t read_u64(const uint8_t *d, size_t n, size_t at)
{
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && at + i < n; i++) v = v << 8 | d[at + i];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct hls_playlist pl;
  struct hls_error err;
  (void)hls_looks_like_playlist(data, size);
  enum hls_status st = hls_parse(data, size, &pl, &err);
  CHECK(err.status == st && hls_status_class(st) != HLS_CLASS_UNSET);
  CHECK(strlen(err.message) < sizeof err.message);
  if (st == HLS_OK) {
    check_segments(&pl);
    check_parts(&pl);
    size_t n = pl.segment_count;
    uint64_t x = read_u64(data, size, 0), y = read_u64(data, size, 8);
    check_select(&pl, x, y);
    if (n > 0) {
      check_select(&pl, pl.media_sequence, pl.media_sequence + n - 1);
      check_select(&pl, pl.media_sequence + x % n, pl.media_sequence + y % n);
      char url[URI_MAX_OUTPUT];
      (void)uri_resolve("https://cdn.example/live/index.m3u8?Signature=s", pl.segments[x % n].uri, url, sizeof url);
    }
  } else if (st == HLS_E_MASTER_PLAYLIST) {
    CHECK(pl.kind == HLS_KIND_MASTER && pl.segment_count == 0);
    for (size_t i = 0; i < pl.variant_count; i++) CHECK(pl.variants[i].uri != NULL);
  } else {
    CHECK(pl.kind == HLS_KIND_NONE && pl.segments == NULL && pl.storage == NULL);
  }
  hls_playlist_free(&pl);
  return 0;
}
