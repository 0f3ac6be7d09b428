/* difffile.c - where the pictures of a MISMATCH go (see diffpic.h): the
 * directory, made when missing, and file names that never replace a file. */
#include "diffpic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define DIFFPIC_MAX_SUFFIX 99

int diffpic_make_dir(const char *dir, char *err, size_t errlen)
{
    char buf[4096];
    if (!dir || !dir[0] || strlen(dir) >= sizeof buf) {
        snprintf(err, errlen, "--diff-dir: an empty or too long path");
        return -1;
    }
    memcpy(buf, dir, strlen(dir) + 1);
    /* each parent in turn, then the directory itself */
    for (char *p = buf + 1;; p++) {
        bool last = *p == '\0';
        if (*p != '/' && !last)
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) && errno != EEXIST) {
            snprintf(err, errlen, "--diff-dir %s: %s", buf, strerror(errno));
            return -1;
        }
        if (last)
            break;
        *p = '/';
    }
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--diff-dir %s: not a directory", dir);
        return -1;
    }
    return 0;
}

int diffpic_create(const char *dir, const char *stem, const char *suffix, char *path, size_t pathlen,
                   char *err, size_t errlen)
{
    for (int n = 1; n <= DIFFPIC_MAX_SUFFIX; n++) {
        char count[8] = "";
        if (n > 1)
            snprintf(count, sizeof count, "-%d", n);
        int len = snprintf(path, pathlen, "%s/%s%s%s.png", dir, stem, suffix, count);
        if (len < 0 || (size_t)len >= pathlen) {
            snprintf(err, errlen, "--diff-dir: path too long");
            return -1;
        }
        /* O_EXCL: an existing file (or a link planted there) is never written through */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
    }
    snprintf(err, errlen, "%s/%s%s.png and %d numbered variants exist: nothing replaced", dir, stem, suffix,
             DIFFPIC_MAX_SUFFIX - 1);
    return -1;
}
