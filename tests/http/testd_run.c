/* testd_run: see testd_run.h. */
#include "testd_run.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int testd_run_start_args(const char *binary, const char *root, const char *const extra[],
                         pid_t *pid)
{
    char portfile[512];
    snprintf(portfile, sizeof portfile, "%s/port", root);
    const char *argv[16] = {binary, "--root", root, "--port", "0", "--port-file", portfile};
    size_t n = 7;
    for (size_t i = 0; extra && extra[i] && i < 8; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    *pid = fork();
    if (*pid < 0)
        return 0;
    if (*pid == 0) {
        execv(binary, (char *const *)argv);
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

int testd_run_start(const char *binary, const char *root, pid_t *pid)
{
    return testd_run_start_args(binary, root, NULL, pid);
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
