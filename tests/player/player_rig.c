/* player_rig.c - hls.js in headless chromium for the tests (player_rig.h). */
#include "player_rig.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* PLAYER_SOURCE_DIR (tests/player), PLAYER_NODE_DIR (where hls.js is
 * installed, in the build tree) and CDND_BIN come from CMake. */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

const char *player_rig_chromium(void)
{
    const char *env = getenv("EXACTAV_CHROMIUM");
    const char *bin = env && *env ? env : "/usr/bin/chromium";
    return access(bin, X_OK) == 0 ? bin : NULL;
}

void player_rig_need(const char *const *paths)
{
    if (!player_rig_chromium()) {
        printf("SKIPPED: no chromium (/usr/bin/chromium or $EXACTAV_CHROMIUM); "
               "scripts/install-deps --test installs Debian's\n");
        exit(77);
    }
    for (size_t i = 0; paths && paths[i]; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            printf("SKIPPED: %s is absent\n", paths[i]);
            exit(77);
        }
    }
    int st = system("'" PLAYER_SOURCE_DIR "/install-hlsjs' '" PLAYER_NODE_DIR "' >/dev/null");
    int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc == 77) {
        printf("SKIPPED: npm is absent, hls.js cannot be installed\n");
        exit(77);
    }
    if (rc != 0) {
        printf("FAILED: tests/player/install-hlsjs exited %d\n", rc);
        exit(1);
    }
}

static int copy_file(const char *from, const char *dir, const char *name)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s'", from, dir, name);
    return system(cmd) == 0 ? 0 : -1;
}

int player_rig_start(struct player_rig *rig, const char *dir)
{
    memset(rig, 0, sizeof *rig);
    snprintf(rig->dir, sizeof rig->dir, "%s", dir);
    snprintf(rig->page_root, sizeof rig->page_root, "%s/page", dir);
    if (mkdir(rig->page_root, 0755) != 0 && errno != EEXIST)
        return -1;
    if (copy_file(PLAYER_SOURCE_DIR "/page/player.html", rig->page_root, "player.html") ||
        copy_file(PLAYER_SOURCE_DIR "/page/player.js", rig->page_root, "player.js") ||
        copy_file(PLAYER_NODE_DIR "/node_modules/hls.js/dist/hls.min.js", rig->page_root,
                  "hls.min.js"))
        return -1;
    const char *args[] = {"--root", rig->page_root, NULL};
    return cdn_start(&rig->origin, CDND_BIN, dir, "origin", args);
}

int player_rig_open(struct player_rig *rig, const char *playback_url, const char *page_params)
{
    const char *bin = player_rig_chromium();
    if (!bin || rig->chromium)
        return -1;
    char *src = curl_easy_escape(NULL, playback_url, 0); /* a query value: & and = escaped */
    if (!src)
        return -1;
    int n = snprintf(rig->page_url, sizeof rig->page_url, "%s/player.html?src=%s%s%s",
                     rig->origin.base, src, page_params ? "&" : "", page_params ? page_params : "");
    curl_free(src);
    if (n < 0 || (size_t)n >= sizeof rig->page_url)
        return -1;
    char profile[PATH_MAX + 64], log[PATH_MAX + 64];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-profile", rig->dir);
    snprintf(log, sizeof log, "%s/chromium.log", rig->dir);
    /* The flags of docs/testing.md: no sandbox (root), no GPU, nothing that
     * reaches out to the network by itself, autoplay without a gesture. */
    const char *argv[] = {bin,
                          "--headless=new",
                          "--no-sandbox",
                          "--disable-gpu",
                          "--disable-quic",
                          "--no-first-run",
                          "--disable-background-networking",
                          "--disable-component-update",
                          "--disable-sync",
                          "--autoplay-policy=no-user-gesture-required",
                          "--mute-audio",
                          profile,
                          rig->page_url,
                          NULL};
    pid_t pid = cdn_spawn(argv, log, true);
    if (pid < 0)
        return -1;
    setpgid(pid, pid);
    rig->chromium = pid;
    return 0;
}

json_t *player_rig_reports(const struct player_rig *rig)
{
    return cdn_jsonl(rig->origin.report);
}

json_t *player_rig_wait(const struct player_rig *rig, bool (*pred)(const json_t *, void *),
                        void *ctx, int timeout_s)
{
    time_t end = time(NULL) + timeout_s;
    do {
        json_t *all = player_rig_reports(rig);
        size_t n = json_array_size(all);
        json_t *last = n ? json_incref(json_array_get(all, n - 1)) : NULL;
        json_decref(all);
        if (last && pred(last, ctx))
            return last;
        json_decref(last);
        sleep_ms(250);
    } while (time(NULL) < end);
    return NULL;
}

void player_rig_stop(struct player_rig *rig)
{
    if (rig->chromium > 0) {
        kill(-rig->chromium, SIGTERM);
        int st;
        bool gone = false;
        for (int i = 0; i < 100 && !gone; i++) {
            gone = waitpid(rig->chromium, &st, WNOHANG) == rig->chromium;
            if (!gone)
                sleep_ms(50);
        }
        kill(-rig->chromium, SIGKILL); /* whatever of the group is left */
        if (!gone)
            waitpid(rig->chromium, &st, 0);
        rig->chromium = 0;
    }
    cdn_stop(&rig->origin);
}
