/* player_rig.h - a real player for the tests: hls.js (pinned, from the npm
 * registry) on a small page in Debian's headless chromium.
 *
 * Input: the playback URL (a multivariant or media playlist on any loopback
 * server with CORS).  Output: the page's reports, one JSON object per line
 * in rig->origin.report (fields in tests/player/page/player.js and
 * docs/testing.md), and whatever request logs the caller's servers keep
 * (exactav-cdnd: cdn_rig.h).  The page is served by its own exactav-cdnd
 * (rig->origin, another origin than any CDN), which also receives the
 * reports; files the caller puts in rig->page_root (a static multivariant
 * playlist, a steering manifest) are served there too.
 *
 *   player_rig_need(...)                          skip (exit 77) without chromium, hls.js or corpus
 *   player_rig_start(&rig, dir)                   page origin up
 *   player_rig_open(&rig, playback_url, NULL)     chromium plays it
 *   player_rig_wait(&rig, pred, ctx, seconds)     the first report that satisfies pred
 *   player_rig_stop(&rig)                         chromium's process group and the origin end
 */
#ifndef PLAYER_RIG_H
#define PLAYER_RIG_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "cdn_rig.h"

struct player_rig {
    char dir[PATH_MAX];       /* the caller's temporary directory */
    char page_root[PATH_MAX]; /* dir/page: player.html, player.js, hls.min.js */
    struct cdn_proc origin;   /* serves page_root, receives POST /report */
    pid_t chromium;           /* leader of its own process group; 0 when not running */
    char page_url[8192 + 64];
};

/* The chromium binary ($EXACTAV_CHROMIUM, else /usr/bin/chromium) or NULL. */
const char *player_rig_chromium(void);

/* Exits 77 with a message when chromium is absent, when hls.js cannot be
 * installed because npm is absent, or when a needed path is absent (the
 * corpus); fails the test when npm is there but the install fails. */
void player_rig_need(const char *const *paths);

/* Copies the page and hls.min.js into dir/page and starts their origin. 0 or -1. */
int player_rig_start(struct player_rig *rig, const char *dir);

/* Opens player.html?src=playback_url[&page_params] in a fresh headless
 * chromium (its own --user-data-dir under dir, output in dir/chromium.log).
 * page_params: NULL, or more page parameters ("credentials=1&period=250").
 * 0 or -1. */
int player_rig_open(struct player_rig *rig, const char *playback_url, const char *page_params);

/* Every report so far (an array, oldest first). */
json_t *player_rig_reports(const struct player_rig *rig);

/* Polls the reports until pred(latest report, ctx) holds; that report
 * (caller decrefs) or NULL after timeout_s. */
json_t *player_rig_wait(const struct player_rig *rig, bool (*pred)(const json_t *, void *),
                        void *ctx, int timeout_s);

/* Ends chromium (SIGTERM to its group, SIGKILL after 5 s) and the origin. */
void player_rig_stop(struct player_rig *rig);

#endif
