/* The bench's two network namespaces joined by a link of fixed round-trip time
 * (and optional rate): veth with tc netem, or TUN devices and the in-process
 * emulator where the kernel has no netem; torn down again after. */
#include "netns_link.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tun_emulator.h"

#define NAME_SIZE 32

struct netns_link {
    char namespaces[2][NAME_SIZE]; /* by netns_link_side */
    char devices[2][IFNAMSIZ];
    int tun_fds[2];
    tun_emulator *emulator;
    bool netem;
};

int netns_link_run_quiet(const char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int null_fd = open("/dev/null", O_WRONLY);
        if (null_fd >= 0) {
            dup2(null_fd, STDOUT_FILENO);
            dup2(null_fd, STDERR_FILENO);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define RUN(...) netns_link_run_quiet((const char *const[]){__VA_ARGS__, NULL})

static const char *const addresses[2] = {NETNS_LINK_SENDER_ADDRESS, NETNS_LINK_RECEIVER_ADDRESS};

static bool configure_address(const netns_link *link, int side, const char *prefix_or_peer)
{
    const char *ns = link->namespaces[side];
    const char *dev = link->devices[side];
    bool ok = RUN("ip", "-n", ns, "link", "set", "lo", "up") == 0;
    if (link->netem)
        ok = ok && RUN("ip", "-n", ns, "addr", "add", prefix_or_peer, "dev", dev) == 0;
    else
        ok = ok && RUN("ip", "-n", ns, "addr", "add", addresses[side], "peer", prefix_or_peer,
                       "dev", dev) == 0;
    /* Room for a whole SCTP window in one burst in the device queue (the
     * default of 1000, or 500 for TUN, drops part of such a burst). */
    return ok && RUN("ip", "-n", ns, "link", "set", dev, "txqueuelen", "100000", "up") == 0;
}

/* A veth pair with netem delaying each direction by half the RTT. */
static bool make_netem_link(netns_link *link, unsigned rtt_ms, uint64_t rate_bps)
{
    link->netem = true;
    if (RUN("ip", "link", "add", link->devices[0], "netns", link->namespaces[0], "type", "veth",
            "peer", "name", link->devices[1], "netns", link->namespaces[1]) != 0)
        return false;
    char delay[32], rate[32];
    snprintf(delay, sizeof delay, "%uus", rtt_ms * 500u);
    snprintf(rate, sizeof rate, "%llubit", (unsigned long long)rate_bps);
    const char *rate_word = rate_bps > 0 ? "rate" : "limit";
    const char *rate_value = rate_bps > 0 ? rate : "100000";
    for (int side = 0; side < 2; side++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%s/30", addresses[side]);
        if (!configure_address(link, side, prefix) ||
            RUN("ip", "netns", "exec", link->namespaces[side], "tc", "qdisc", "add", "dev",
                link->devices[side], "root", "netem", "delay", delay, rate_word, rate_value,
                "limit", "100000") != 0) {
            RUN("ip", "-n", link->namespaces[0], "link", "del", link->devices[0]);
            return false;
        }
    }
    return true;
}

static int open_tun(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(request.ifr_name, sizeof request.ifr_name, "%s", name);
    if (ioctl(fd, TUNSETIFF, &request) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A TUN device in each namespace (created here, then moved: the descriptor
 * follows the device) and the emulator thread between them. */
static bool make_tun_link(netns_link *link, unsigned rtt_ms, uint64_t rate_bps, char *error,
                          size_t error_size)
{
    link->netem = false;
    for (int side = 0; side < 2; side++) {
        link->tun_fds[side] = open_tun(link->devices[side]);
        if (link->tun_fds[side] < 0 ||
            RUN("ip", "link", "set", link->devices[side], "netns", link->namespaces[side]) != 0 ||
            !configure_address(link, side, addresses[1 - side])) {
            snprintf(error, error_size, "cannot set up TUN device %s", link->devices[side]);
            /* Closing a TUN descriptor removes its device, so netem can
             * take the names. */
            for (int i = 0; i < 2; i++) {
                if (link->tun_fds[i] >= 0)
                    close(link->tun_fds[i]);
                link->tun_fds[i] = -1;
            }
            return false;
        }
    }
    link->emulator = tun_emulator_start(link->tun_fds[0], link->tun_fds[1], rtt_ms * 500u, rate_bps,
                                        error, error_size);
    return link->emulator != NULL;
}

static netns_link *create(unsigned rtt_ms, uint64_t rate_bps, bool tun_first, char *error,
                          size_t error_size)
{
    netns_link *link = calloc(1, sizeof *link);
    if (link == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    link->tun_fds[0] = link->tun_fds[1] = -1;
    for (int side = 0; side < 2; side++) {
        snprintf(link->namespaces[side], NAME_SIZE, "moat-bench-%c%d", side ? 'r' : 's',
                 (int)getpid());
        snprintf(link->devices[side], IFNAMSIZ, "mb%c%d", side ? 'r' : 's', (int)getpid());
        if (RUN("ip", "netns", "add", link->namespaces[side]) != 0) {
            snprintf(error, error_size, "ip netns add %s failed", link->namespaces[side]);
            link->namespaces[side][0] = '\0';
            netns_link_destroy(link);
            return NULL;
        }
    }
    /* With a rate: the TUN emulator first, so that every run measures the
     * same link, and tc netem where there is no TUN device. Without one,
     * netem first, as before rates existed. */
    bool made = tun_first ? make_tun_link(link, rtt_ms, rate_bps, error, error_size) ||
                                make_netem_link(link, rtt_ms, rate_bps)
                          : make_netem_link(link, rtt_ms, rate_bps) ||
                                make_tun_link(link, rtt_ms, rate_bps, error, error_size);
    if (!made) {
        netns_link_destroy(link);
        return NULL;
    }
    return link;
}

netns_link *netns_link_create(unsigned rtt_ms, char *error, size_t error_size)
{
    return create(rtt_ms, 0, false, error, error_size);
}

netns_link *netns_link_create_rated(unsigned rtt_ms, uint64_t rate_bps, char *error,
                                    size_t error_size)
{
    return create(rtt_ms, rate_bps, true, error, error_size);
}

int netns_link_set_loss(netns_link *link, double loss)
{
    if (link->netem || !link->emulator)
        return -1;
    tun_emulator_set_loss(link->emulator, loss);
    return 0;
}

const char *netns_link_method(const netns_link *link)
{
    return link->netem ? "tc netem" : "TUN link emulator";
}

void netns_link_counters(const netns_link *link, tun_emulator_counters *out)
{
    tun_emulator_read_counters(link->emulator, out);
}

int netns_link_socket(const netns_link *link, netns_link_side side, int type)
{
    char path[64];
    snprintf(path, sizeof path, "/var/run/netns/%s", link->namespaces[side]);
    int original = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int target = open(path, O_RDONLY | O_CLOEXEC);
    int fd = -1;
    if (original >= 0 && target >= 0 && setns(target, CLONE_NEWNET) == 0) {
        fd = socket(AF_INET, type, 0);
        if (setns(original, CLONE_NEWNET) != 0) {
            /* Stuck in the bench's namespace: nothing after this is sound. */
            perror("setns back");
            abort();
        }
    }
    if (original >= 0)
        close(original);
    if (target >= 0)
        close(target);
    return fd;
}

const char *netns_link_namespace(const netns_link *link, netns_link_side side)
{
    return link->namespaces[side];
}

const char *netns_link_device(const netns_link *link, netns_link_side side)
{
    return link->devices[side];
}

void netns_link_destroy(netns_link *link)
{
    if (link == NULL)
        return;
    tun_emulator_stop(link->emulator);
    for (int side = 0; side < 2; side++) {
        if (link->tun_fds[side] >= 0)
            close(link->tun_fds[side]);
        /* Deleting a namespace deletes the devices in it. */
        if (link->namespaces[side][0] != '\0')
            RUN("ip", "netns", "del", link->namespaces[side]);
    }
    free(link);
}
