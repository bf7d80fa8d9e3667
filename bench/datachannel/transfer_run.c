/* One timed bulk transfer between two child processes (sender and receiver, each
 * with its own SCTP stack), the receiver's measurement window and its report to
 * the parent through a pipe. */
#include "transfer_run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double transfer_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void transfer_window_init(transfer_window *w, const transfer_params *params)
{
    memset(w, 0, sizeof *w);
    w->warmup_s = params->warmup_s;
    w->window_s = params->window_s;
    w->first_s = -1;
}

bool transfer_window_add(transfer_window *w, double now_s, size_t length)
{
    if (w->closed)
        return true;
    if (w->first_s < 0)
        w->first_s = now_s;
    double since_first = now_s - w->first_s;
    if (since_first >= w->warmup_s + w->window_s) {
        w->closed = true;
        return true;
    }
    if (since_first >= w->warmup_s) {
        w->bytes += length;
        w->messages++;
    }
    return false;
}

void transfer_window_result(const transfer_window *w, transfer_result *result)
{
    memset(result, 0, sizeof *result);
    result->measured = w->closed && w->messages > 0;
    result->messages = w->messages;
    result->megabytes_per_second = (double)w->bytes / w->window_s / 1e6;
    if (!result->measured)
        snprintf(result->detail, sizeof result->detail, "the window did not complete");
}

static pid_t start_side(transfer_side side, void *arg, int report_fd, int unused_fd)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* The child: its result goes to the pipe (the sender's nowhere). */
    if (unused_fd >= 0)
        close(unused_fd);
    transfer_result result;
    memset(&result, 0, sizeof result);
    side(arg, &result);
    if (report_fd >= 0) {
        ssize_t written = write(report_fd, &result, sizeof result);
        _exit(written == (ssize_t)sizeof result ? 0 : 1);
    }
    _exit(0);
}

/* SIGTERM first, so that a side run under a profiler (valgrind
 * --trace-children) writes its profile; SIGKILL if it is still there a
 * moment later. */
static void stop_child(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        pid_t done = waitpid(pid, NULL, WNOHANG);
        if (done == pid || (done < 0 && errno != EINTR))
            return;
        struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static bool read_report(int fd, double timeout_s, transfer_result *result)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    size_t have = 0;
    double deadline = transfer_now_s() + timeout_s;
    while (have < sizeof *result) {
        int wait_ms = (int)((deadline - transfer_now_s()) * 1000);
        if (wait_ms <= 0 || poll(&pfd, 1, wait_ms) <= 0)
            return false;
        ssize_t n = read(fd, (char *)result + have, sizeof *result - have);
        if (n <= 0)
            return false;
        have += (size_t)n;
    }
    return true;
}

void transfer_run(transfer_side sender, void *sender_arg, transfer_side receiver,
                  void *receiver_arg, double timeout_s, transfer_result *result)
{
    memset(result, 0, sizeof *result);
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        snprintf(result->detail, sizeof result->detail, "pipe: %s", strerror(errno));
        return;
    }
    pid_t receiver_pid = start_side(receiver, receiver_arg, pipe_fds[1], pipe_fds[0]);
    pid_t sender_pid = start_side(sender, sender_arg, -1, pipe_fds[0]);
    close(pipe_fds[1]);
    /* A second beyond the sides' own deadline, for the report to arrive. */
    if (receiver_pid < 0 || sender_pid < 0)
        snprintf(result->detail, sizeof result->detail, "fork: %s", strerror(errno));
    else if (!read_report(pipe_fds[0], timeout_s + 1, result)) {
        memset(result, 0, sizeof *result);
        snprintf(result->detail, sizeof result->detail, "no report from the receiver");
    }
    close(pipe_fds[0]);
    stop_child(sender_pid);
    stop_child(receiver_pid);
}
