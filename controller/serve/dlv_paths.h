/* dlv_paths.h - the delivery configuration of `stepctl serve --paths`.
 *
 *   {"paths": {"C": {"renditions": {"r360": "https://d111.cloudfront.net/ch1/r360/live.m3u8"},
 *                    "auth": {"type": "cloudfront-url", "key_file": "k.pem",
 *                             "key_pair_id": "K2JCJMDEHXQW5F"},
 *                    "url_ttl_s": 300},
 *              "D": {"renditions": {"r360": "https://cdn-d.example/ch1/r360.m3u8"},
 *                    "auth": {"type": "none"}}},
 *    "steering_ttl_s": 10, "playlist_cache_ms": 1000}
 *
 * A rendition is a URL string, or an object {"url", "bandwidth", "codecs",
 * "resolution", "frame_rate"} for the multivariant playlist's attributes;
 * every path must offer the same variants (dlv_paths_check_variants).  Every member
 * not documented in docs/delivery.md is refused, the message naming it
 * ("paths.C.auth.kee_file: unknown key").  key_file is relative to the
 * directory of paths.json.  The parser only checks and copies; keys are
 * loaded by dlv_paths_load_keys (the fuzz target never touches files).
 */
#ifndef DLV_PATHS_H
#define DLV_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfsign.h"

#define DLV_MAX_PATHS 16
#define DLV_MAX_RENDITIONS 16
#define DLV_ID_MAX 64 /* path ids and rendition names: [A-Za-z0-9._-]{1,64} (PATHWAY-ID rules) */
#define DLV_URL_MAX 2048
#define DLV_MAX_FILE (256 * 1024)

/* The zero value signs nothing and serves nothing. */
enum dlv_auth { DLV_AUTH_UNSET = 0, DLV_AUTH_NONE, DLV_AUTH_CF_URL, DLV_AUTH_CF_COOKIES };

/* Where a rendition's media is, for telling which path served a fetch
 * (dlv_servedby.c): filled once when paths.json is read. */
struct dlv_place {
    bool ok; /* the URL has a place (an absolute http(s) URL) */
    char scheme[8];
    char host[256];
    long port;
    char dir[DLV_URL_MAX + 1];
};

struct dlv_rendition {
    char name[DLV_ID_MAX + 1];
    char url[DLV_URL_MAX + 1];     /* absolute http(s), no fragment */
    char resource[DLV_URL_MAX + 2]; /* the URL's directory + "*": the wildcard policy */
    int64_t bandwidth;             /* BANDWIDTH of the variant (default 1000000) */
    char codecs[129], resolution[33]; /* "" when not given */
    char frame_rate[16];              /* FRAME-RATE, a decimal ("25", "29.97"); "" when not given */
    struct dlv_place place;
};

struct dlv_path {
    char id[DLV_ID_MAX + 1];
    struct dlv_rendition r[DLV_MAX_RENDITIONS];
    size_t n;
    enum dlv_auth auth;
    char key_file[4096];
    char key_pair_id[CFSIGN_KEY_PAIR_ID_MAX + 1];
    enum cfsign_hash hash;
    char cookie_domain[256]; /* cloudfront-cookies: Domain attribute, "" for none */
    int64_t url_ttl_s;       /* signing paths: validity of each signed URL (default 300) */
    struct cfsign_key *key;  /* dlv_paths_load_keys */
};

struct dlv_paths {
    struct dlv_path p[DLV_MAX_PATHS];
    size_t n;
    int64_t steering_ttl_s;    /* TTL of the steering manifest (default 10) */
    int64_t playlist_cache_ms; /* life of a fetched live media playlist (default 1000) */
};

/* Parses len bytes of JSON.  base_dir: the directory key_file is relative
 * to ("." when NULL).  0, or -1 with err naming the member. */
int dlv_paths_parse(const char *text, size_t len, const char *base_dir, struct dlv_paths *out,
                    char *err, size_t errlen);
/* Loads the key of every signing path.  0, 66 (a key file cannot be read)
 * or 65 (no usable key), err naming the path. */
int dlv_paths_load_keys(struct dlv_paths *ps, char *err, size_t errlen);
void dlv_paths_free(struct dlv_paths *ps);

/* Which path served url (a URL a player fetched): the path whose
 * rendition has the same scheme, host and port and the longest directory
 * that url is below; NULL when none is (dlv_servedby.c). */
const char *dlv_paths_served_by(const struct dlv_paths *ps, const char *url);
/* Fills every rendition's place; -1 (err naming both) when two paths have
 * a rendition in the same place: their viewers' fetches could not be told
 * apart.  dlv_paths_parse calls it. */
int dlv_paths_locate(struct dlv_paths *ps, char *err, size_t errlen);

/* -1 (err naming the member) when the pathways' variant lists differ in
 * what hls.js matches across pathways: the same renditions in the same
 * order, the same BANDWIDTH order, equal codecs, resolution and frame_rate
 * (dlv_variants.c).  dlv_paths_parse calls it. */
int dlv_paths_check_variants(const struct dlv_paths *ps, char *err, size_t errlen);

/* The path with this id, or NULL. */
const struct dlv_path *dlv_paths_find(const struct dlv_paths *ps, const char *id);
/* The rendition of p with this name, or NULL. */
const struct dlv_rendition *dlv_path_rendition(const struct dlv_path *p, const char *name);

#endif
