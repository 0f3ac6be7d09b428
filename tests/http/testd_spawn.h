/* testd_spawn.h - starting exactav-testd from a test: the server on port 0
 * of 127.0.0.1, the port read back from its port file.  Header-only so that
 * any test executable can use it without another library. */
#ifndef TESTD_SPAWN_H
#define TESTD_SPAWN_H

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

/* Starts testd_bin --root root --port 0 --port-file portfile, then the
 * extra arguments (NULL-terminated, at most 8; may be NULL).  *pid is the
 * server's; returns its port, or 0 when it did not come up within 10 s. */
static inline int testd_spawn(const char *testd_bin, const char *root, const char *portfile,
                              const char *const extra[], pid_t *pid)
{
    const char *argv[16] = {testd_bin, "--root", root, "--port", "0", "--port-file", portfile};
    size_t n = 7;
    for (size_t i = 0; extra && extra[i] && i < 8; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    *pid = fork();
    if (*pid == 0) {
        execv(testd_bin, (char *const *)argv);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 200 && !port; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (!port)
            usleep(50000);
    }
    return port;
}

#endif
