/* testd_run: see testd_run.h. */
#include "testd_run.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int testd_run_start(const char *binary, const char *root, pid_t *pid)
{
    char portfile[512];
    snprintf(portfile, sizeof portfile, "%s/port", root);
    *pid = fork();
    if (*pid < 0)
        return 0;
    if (*pid == 0) {
        execl(binary, binary, "--root", root, "--port", "0", "--port-file", portfile, (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 400 && !port; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (!port)
            usleep(25000);
    }
    return port;
}

int testd_run_stop(pid_t pid)
{
    int status = 0;
    if (pid <= 0)
        return -1;
    kill(pid, SIGTERM);
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
