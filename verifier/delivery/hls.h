/* hls: HLS media playlist parser (RFC 8216) for Exact-AV profile v1, and
 * the declared segment selection by media sequence number.
 *
 * hls_parse() reads a playlist held in memory (untrusted bytes from a CDN)
 * into plain structs.  It is strict where a lenient reading could change
 * what is verified (BOM, byte ranges, target duration, encryption, fMP4)
 * and documents its few tolerances in docs/hls.md.  URIs are kept exactly
 * as written; resolve them with uri_resolve() against the playlist's
 * effective URL.  No I/O, no global state; every size is bounded.
 *
 * Usage:
 *   struct hls_playlist pl;  struct hls_error err;
 *   enum hls_status st = hls_parse(bytes, len, &pl, &err);
 *   ... st == HLS_OK: pl.kind == HLS_KIND_MEDIA, pl.segments[]
 *   ... st == HLS_E_MASTER_PLAYLIST: pl.kind == HLS_KIND_MASTER, pl.variants[]
 *   hls_playlist_free(&pl);   (always, whatever st is)
 */
#ifndef EXACTAV_HLS_H
#define EXACTAV_HLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HLS_MAX_PLAYLIST_BYTES ((size_t)4 * 1024 * 1024)
#define HLS_MAX_LINE_BYTES ((size_t)16384) /* without the line end */
#define HLS_MAX_SEGMENTS ((size_t)100000)
#define HLS_MAX_VARIANTS ((size_t)1024)
#define HLS_MAX_PARTS ((size_t)100000)          /* EXT-X-PART tags in one playlist */
#define HLS_MAX_PARTS_PER_SEGMENT ((size_t)1024) /* EXT-X-PART tags of one parent segment */
#define HLS_MESSAGE_MAX 160

/* Outcome of hls_parse / hls_select.  The zero value is a failure. */
enum hls_status {
  HLS_E_UNSET = 0,                /* nothing was parsed */
  HLS_OK,
  /* caller or resource problems */
  HLS_E_ARG,                      /* NULL pointer */
  HLS_E_NOMEM,
  HLS_E_TOO_LARGE,                /* more than HLS_MAX_PLAYLIST_BYTES */
  HLS_E_LINE_TOO_LONG,            /* a line longer than HLS_MAX_LINE_BYTES */
  HLS_E_TOO_MANY_SEGMENTS,        /* more than HLS_MAX_SEGMENTS / HLS_MAX_VARIANTS */
  /* invalid delivery (RFC 8216 violations) */
  HLS_E_BOM,                      /* UTF-8 byte order mark (RFC 8216 4.1) */
  HLS_E_NO_EXTM3U,                /* first line is not #EXTM3U */
  HLS_E_CONTROL_CHAR,             /* NUL or another control character */
  HLS_E_ENCODING,                 /* not UTF-8 */
  HLS_E_WHITESPACE,               /* whitespace where RFC 8216 4.1 forbids it */
  HLS_E_MALFORMED_TAG,            /* a known tag with a bad shape */
  HLS_E_MALFORMED_NUMBER,         /* decimal-integer / decimal-floating-point */
  HLS_E_MALFORMED_ATTRIBUTES,     /* attribute list (RFC 8216 4.2) */
  HLS_E_MALFORMED_DATE,           /* EXT-X-PROGRAM-DATE-TIME */
  HLS_E_DUPLICATE_TAG,            /* a tag that may appear once appears twice */
  HLS_E_URI_WITHOUT_EXTINF,       /* a segment URI with no EXTINF before it */
  HLS_E_DANGLING_SEGMENT_TAGS,    /* segment tags at the end with no URI */
  HLS_E_NO_TARGETDURATION,        /* EXT-X-TARGETDURATION missing */
  HLS_E_TARGETDURATION_TOO_SMALL, /* a rounded EXTINF exceeds it (4.3.3.1) */
  HLS_E_HEADER_TAG_LATE,          /* EXT-X-MEDIA-SEQUENCE / -DISCONTINUITY-SEQUENCE after a segment */
  HLS_E_MALFORMED_URI,            /* a URI line that is not an RFC 3986 URI reference */
  HLS_E_BYTERANGE_CONTINUATION,   /* length without offset, no previous sub-range of the same URI */
  HLS_E_NUMBER_RANGE,             /* a sum overflows 64 bits */
  HLS_E_MIXED_PLAYLIST,           /* master and media tags together */
  /* outside Exact-AV profile v1 (valid HLS, not verifiable) */
  HLS_E_KEY_METHOD,               /* EXT-X-KEY METHOD other than NONE and AES-128, or a KEYFORMAT other than identity */
  HLS_E_MAP,                      /* EXT-X-MAP without a quoted URI, or a bad BYTERANGE */
  HLS_E_IFRAMES_ONLY,             /* EXT-X-I-FRAMES-ONLY */
  /* usage errors */
  HLS_E_MASTER_PLAYLIST,          /* a master playlist: pl->variants lists the choices */
  HLS_E_NOT_MEDIA,                /* hls_select on something else than a parsed media playlist */
  HLS_E_SELECT_RANGE,             /* first_seq > last_seq */
  HLS_E_SELECT_NOT_FOUND,         /* a media sequence number is not in the playlist */
  HLS_E_SELECT_DISCONTINUITY,     /* the selection crosses EXT-X-DISCONTINUITY */
  /* Low-Latency HLS (RFC 8216bis), added at the end: values are stored */
  HLS_E_MALFORMED_PART,           /* EXT-X-PART / EXT-X-PART-INF with a bad shape */
  HLS_E_NO_PART_TARGET,           /* EXT-X-PART without EXT-X-PART-INF:PART-TARGET */
  HLS_E_PART_TOO_LONG,            /* a part's DURATION exceeds PART-TARGET */
  HLS_E_TOO_MANY_PARTS,           /* more than HLS_MAX_PARTS / HLS_MAX_PARTS_PER_SEGMENT */
  HLS_E_MALFORMED_SERVER_CONTROL, /* EXT-X-SERVER-CONTROL with a bad shape */
  HLS_E_MALFORMED_PRELOAD_HINT,   /* EXT-X-PRELOAD-HINT with a bad shape */
  HLS_E_DELTA_UPDATE              /* EXT-X-SKIP: a playlist delta update (outside profile v1) */
};

/* How a caller should report a status (the zero value is a failure). */
enum hls_class {
  HLS_CLASS_UNSET = 0,
  HLS_CLASS_OK,
  HLS_CLASS_INTERNAL,         /* arguments, memory */
  HLS_CLASS_INVALID_DELIVERY, /* the CDN delivered a malformed playlist: UNKNOWN */
  HLS_CLASS_OUTSIDE_PROFILE,  /* valid HLS that profile v1 cannot verify: UNKNOWN */
  HLS_CLASS_USAGE             /* master playlist, bad selection: a usage error */
};

/* Where and why parsing failed.  line is 1-based, 0 when not tied to a line. */
struct hls_error {
  enum hls_status status;
  unsigned long line;
  char message[HLS_MESSAGE_MAX];
};

enum hls_kind { HLS_KIND_NONE = 0, HLS_KIND_MEDIA, HLS_KIND_MASTER };

/* The encryption of a segment (EXT-X-KEY, RFC 8216 4.3.2.4), in force
 * from the tag to the next one.  Only the methods profile v1 can check. */
enum hls_key_method { HLS_KEY_NONE = 0, HLS_KEY_AES_128 };

struct hls_key {
  enum hls_key_method method;
  const char *uri;           /* AES-128: the key's URI as written.  A credential (it often
                              * carries a token, and reaching it gives the key): never
                              * print, log or store it, not even redacted */
  bool has_iv;               /* IV given; else the media sequence number is the IV */
  uint8_t iv[16];            /* big-endian 128-bit value */
};

/* One media segment.  Strings point into the playlist's own storage (valid
 * until hls_playlist_free) and are NUL-terminated. */
struct hls_segment {
  const char *uri;           /* the URI line as written */
  const char *duration_text; /* EXTINF duration as written, e.g. "2.000000" */
  const char *title;         /* EXTINF title, "" when none */
  uint64_t duration_num;     /* duration = duration_num / duration_den seconds; digits */
  uint64_t duration_den;     /* after the 9th decimal are dropped (den = 10^0 ... 10^9) */
  uint64_t duration_ms;      /* rounded to the nearest ms, halves up */
  uint64_t media_sequence;
  bool has_byterange;
  uint64_t byterange_length;
  uint64_t byterange_offset; /* explicit, or continued from the previous segment */
  bool byterange_offset_explicit;
  bool discontinuity;        /* EXT-X-DISCONTINUITY before this segment */
  bool has_program_date_time;
  int64_t program_date_time_ms;       /* UTC ms since 1970 (fraction beyond ms dropped) */
  const char *program_date_time_text; /* as written, NULL when absent */
  struct hls_key key;        /* the EXT-X-KEY in force for this segment */
  unsigned long line;        /* line of the URI */
  /* EXT-X-MAP in effect for this segment (RFC 8216 4.3.2.5): the fMP4 init
   * segment it needs, NULL when none (MPEG-TS) */
  const char *map_uri;       /* the URI attribute as written */
  bool map_has_byterange;
  uint64_t map_byterange_length;
  uint64_t map_byterange_offset; /* 0 when the BYTERANGE gives none */
  /* Low-Latency HLS: the EXT-X-PART tags before this segment's URI are its
   * parts, pl->parts[part_first .. part_first + part_count); 0 when none */
  size_t part_first;
  size_t part_count;
};

/* One partial segment (EXT-X-PART, RFC 8216bis 4.4.4.9). */
struct hls_part {
  const char *uri;           /* the URI attribute as written */
  const char *duration_text; /* DURATION as written */
  uint64_t duration_num;     /* as hls_segment */
  uint64_t duration_den;
  uint64_t duration_ms;
  uint64_t media_sequence;   /* of the parent segment */
  size_t part_index;         /* 0-based index within the parent segment */
  bool independent;          /* INDEPENDENT=YES */
  bool gap;                  /* GAP=YES: the part is not available */
  bool has_byterange;
  uint64_t byterange_length;
  uint64_t byterange_offset; /* explicit, or continued from the previous part */
  bool byterange_offset_explicit;
  unsigned long line;
};

/* A decimal-floating-point duration of an LL-HLS attribute: num/den
 * seconds and ms as for EXTINF; present false when the attribute is absent. */
struct hls_duration {
  bool present;
  uint64_t num, den, ms;
};

/* EXT-X-SERVER-CONTROL (RFC 8216bis 4.4.3.8). */
struct hls_server_control {
  bool present;
  bool can_block_reload;     /* CAN-BLOCK-RELOAD=YES: _HLS_msn / _HLS_part are honoured */
  bool can_skip_dateranges;  /* CAN-SKIP-DATERANGES=YES */
  struct hls_duration can_skip_until;
  struct hls_duration hold_back;
  struct hls_duration part_hold_back;
};

/* EXT-X-PRELOAD-HINT (RFC 8216bis 4.4.5.3): the resource the server will
 * publish next, one per TYPE. */
struct hls_preload_hint {
  bool present;
  const char *uri;           /* the URI attribute as written */
  uint64_t byterange_start;  /* BYTERANGE-START, 0 when absent */
  bool has_byterange_length; /* BYTERANGE-LENGTH given; else up to the end of the resource */
  uint64_t byterange_length;
  unsigned long line;
};

/* One variant of a master playlist (EXT-X-STREAM-INF + its URI line). */
struct hls_variant {
  const char *uri;
  uint64_t bandwidth;
  const char *resolution; /* "1280x720", NULL when absent */
  const char *codecs;     /* without quotes, NULL when absent */
  unsigned long line;     /* line of the URI */
};

struct hls_playlist {
  enum hls_kind kind;
  uint64_t version;            /* EXT-X-VERSION, 1 when absent */
  bool has_version;
  uint64_t target_duration;    /* EXT-X-TARGETDURATION, seconds */
  uint64_t media_sequence;     /* EXT-X-MEDIA-SEQUENCE, 0 when absent */
  bool has_media_sequence;
  uint64_t discontinuity_sequence; /* EXT-X-DISCONTINUITY-SEQUENCE, 0 when absent */
  bool endlist;                /* EXT-X-ENDLIST seen */
  struct hls_segment *segments;
  size_t segment_count;
  struct hls_variant *variants;
  size_t variant_count;
  /* Low-Latency HLS; all zero for a playlist without its tags */
  struct hls_duration part_target; /* EXT-X-PART-INF:PART-TARGET */
  struct hls_server_control server_control;
  struct hls_part *parts;      /* every EXT-X-PART in playlist order */
  size_t part_count;
  /* Parts after the last segment URI (a live playlist that ends in parts):
   * the open segment, media sequence media_sequence + segment_count, not in
   * segments[].  Its uri is NULL and its duration 0; discontinuity,
   * program date-time, key and map are what would apply to it. */
  bool has_open_segment;
  struct hls_segment open_segment;
  struct hls_preload_hint preload_part; /* TYPE=PART */
  struct hls_preload_hint preload_map;  /* TYPE=MAP */
  char *storage;               /* owned copy of the text the strings point into */
};

/* The selected run of segments: segments[first_index .. first_index+count). */
struct hls_selection {
  size_t first_index;
  size_t count; /* 0 unless hls_select returned HLS_OK */
  uint64_t first_seq;
  uint64_t last_seq;
};

/* True when data starts (after an optional UTF-8 BOM and blank lines) with
 * "#EXTM3U": the content is a playlist, to be parsed (and maybe refused)
 * rather than decoded as MPEG-TS. */
bool hls_looks_like_playlist(const void *data, size_t len);

/* Parses len bytes.  out is overwritten (no need to initialise it); err may
 * be NULL.  On HLS_OK out is a media playlist; on HLS_E_MASTER_PLAYLIST out
 * holds the variants; on any other status out is empty.  Always call
 * hls_playlist_free(out) afterwards. */
enum hls_status hls_parse(const void *data, size_t len, struct hls_playlist *out, struct hls_error *err);

void hls_playlist_free(struct hls_playlist *pl);

/* Selects the segments with media sequence numbers first_seq..last_seq
 * (inclusive).  Fails when either number is not in the playlist, when
 * first_seq > last_seq, or when a segment after the first one carries
 * EXT-X-DISCONTINUITY (a discontinuity before the first one is fine).
 * sel is zeroed on failure; err may be NULL. */
enum hls_status hls_select(const struct hls_playlist *pl, uint64_t first_seq, uint64_t last_seq,
                           struct hls_selection *sel, struct hls_error *err);

/* Stable short code ("ok", "bom", ...), a human sentence, and the class. */
const char *hls_status_code(enum hls_status st);
const char *hls_status_message(enum hls_status st);
enum hls_class hls_status_class(enum hls_status st);

#endif
