/* promtool.h - Prometheus' own checks in the tests (Debian's prometheus
 * package, scripts/install-deps): `promtool check metrics` over a scraped
 * /metrics text, and the Prometheus server for the alert tests.  Without the
 * package a test says so with a SKIPPED: line and exits TEST_SKIP_EXIT. */
#ifndef TESTS_PROMTOOL_H
#define TESTS_PROMTOOL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_skip.h"

/* Ends the process with TEST_SKIP_EXIT when program is not on PATH. */
static inline void promtool_skip_unless(const char *program)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", program);
    if (system(cmd) == 0)
        return;
    printf("SKIPPED: %s is not installed (Debian package prometheus: scripts/install-deps)\n", program);
    fflush(stdout);
    exit(TEST_SKIP_EXIT);
}

/* `promtool check metrics < file`: its exit code; what it says (lint
 * problems: a missing HELP, a counter without _total...) goes to out_file. */
static inline int promtool_check_metrics(const char *file, const char *out_file)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "promtool check metrics < '%s' > '%s' 2>&1", file, out_file);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* A port on 127.0.0.1 that was free a moment ago (bound, read, closed). */
static inline int promtool_free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* GET /-/ready on 127.0.0.1:port answers 200 (a raw HTTP/1.0 request:
 * no HTTP client is needed for it). */
static inline int promtool_ready(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    static const char req[] = "GET /-/ready HTTP/1.0\r\n\r\n";
    char buf[64] = "";
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok = 0;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1) &&
        read(fd, buf, sizeof buf - 1) > 12)
        ok = strncmp(buf + 9, "200", 3) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* A real Prometheus server for a test: its own config (yaml, written to
 * dir/prometheus.yml) and data directory (dir/tsdb), on 127.0.0.1:*port
 * (chosen here), its output in dir/prometheus.log.  Returns its pid once
 * /-/ready answers 200 (at most 60 s), or -1.  Stop it with
 * promtool_server_stop; it is killed when the test process ends. */
static inline pid_t promtool_server_start(const char *dir, const char *yaml, int *port)
{
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/prometheus.yml", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs(yaml, f) < 0 || fclose(f) != 0)
        return -1;
    *port = promtool_free_port();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed */
        snprintf(cmd, sizeof cmd, "exec prometheus --config.file=%s/prometheus.yml "
                 "--storage.tsdb.path=%s/tsdb --web.listen-address=127.0.0.1:%d "
                 ">%s/prometheus.log 2>&1", dir, dir, *port, dir);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; pid > 0 && i < 240; i++) {
        if (promtool_ready(*port))
            return pid;
        usleep(250000);
    }
    if (pid > 0)
        kill(pid, SIGKILL), waitpid(pid, NULL, 0);
    return -1;
}

static inline void promtool_server_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

#endif
