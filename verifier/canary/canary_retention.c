/* canary_retention.c - see canary_retention.h. */
#include "canary_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evidence.h"

static bool is_png_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 4 && !strcmp(name + n - 4, ".png");
}

/* Removes the PNGs of one target folder (an fd of it) modified before
 * before_s; the count removed.  Relative to the folder's fd (unlinkat,
 * fstatat without following links): a name swapped for a link meanwhile
 * is never followed out of the folder. */
static long prune_folder(int dfd, time_t before_s)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    long n = 0;
    struct dirent *e;
    struct stat st;
    while ((e = readdir(d)))
        if (is_png_name(e->d_name) && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode) && st.st_mtime < before_s && unlinkat(dirfd(d), e->d_name, 0) == 0)
            n++;
    closedir(d);
    return n;
}

/* The pictures older than before_s in every target folder of dir. */
static long prune_pictures(const char *dir, time_t before_s)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* no picture was written yet */
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
            n += prune_folder(fd, before_s);
    }
    closedir(d);
    return n;
}

int canary_retention_run(const char *evidence_path, const struct store_key *key, const char *diff_dir, const struct canary_retention *r,
                         int64_t now_ms, const struct canary_log *log)
{
    struct evidence_db *db = NULL;
    char err[512] = "";
    struct evidence_prune_opts o = {now_ms, r->keep_ms, r->keep_mismatch_ms, 0};
    struct evidence_prune_result res;
    enum evidence_rc rc = evidence_open_keyed(evidence_path, EVIDENCE_OPEN_RW, key, &db, err, sizeof err);
    if (rc == EVIDENCE_OK)
        rc = evidence_prune(db, &o, &res, err, sizeof err);
    evidence_close(db);
    if (rc != EVIDENCE_OK) {
        canary_log_event(log, "prune_failed", "%s", err);
        return -1;
    }
    json_t *j = evidence_prune_json(&res);
    if (j && diff_dir && r->keep_mismatch_ms > 0)
        json_object_set_new(j, "pictures_removed",
                            json_integer(prune_pictures(diff_dir, (time_t)((now_ms - r->keep_mismatch_ms) / 1000))));
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    canary_log_event(log, "prune", "%s", text ? text : "done");
    free(text);
    json_decref(j);
    return 0;
}
