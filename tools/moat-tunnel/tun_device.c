/* Creating and configuring the TUN device with ioctls (tun_device.h). */
#include "tun_device.h"
#include "tunnel_source.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *permission_hint(int error)
{
    return error == EPERM || error == EACCES
               ? " (moat-tunnel needs CAP_NET_ADMIN: run it as root, or grant it with "
                 "`setcap cap_net_admin+ep moat-tunnel`)"
               : "";
}

static int configure(const char *ifname, const char *cidr, unsigned mtu, char *error,
                     size_t error_size)
{
    struct in_addr address, mask;
    if (!tunnel_cidr_parse(cidr, &address, &mask)) {
        snprintf(error, error_size, "--address %s is not an IPv4 CIDR (a.b.c.d/len)", cidr);
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        snprintf(error, error_size, "socket: %s", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", ifname);
    const char *step = "MTU";
    ifr.ifr_mtu = (int)mtu;
    int rc = ioctl(s, SIOCSIFMTU, &ifr);
    struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
    if (rc == 0) {
        step = "address";
        memset(&ifr.ifr_addr, 0, sizeof ifr.ifr_addr);
        sin->sin_family = AF_INET;
        sin->sin_addr = address;
        rc = ioctl(s, SIOCSIFADDR, &ifr);
    }
    if (rc == 0) {
        step = "netmask";
        sin->sin_addr = mask;
        rc = ioctl(s, SIOCSIFNETMASK, &ifr);
    }
    if (rc == 0) {
        step = "flags";
        rc = ioctl(s, SIOCGIFFLAGS, &ifr);
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (rc == 0)
            rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    int saved = errno;
    close(s);
    if (rc != 0) {
        snprintf(error, error_size, "cannot set the %s of %s: %s%s", step, ifname, strerror(saved),
                 permission_hint(saved));
        return -1;
    }
    return 0;
}

int tun_device_open(const char *name, const char *cidr, unsigned mtu, char out_name[16],
                    char *error, size_t error_size)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int saved = errno;
        snprintf(error, error_size, "cannot open /dev/net/tun: %s%s", strerror(saved),
                 permission_hint(saved));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
        int saved = errno;
        snprintf(error, error_size, "cannot create the TUN device: %s%s", strerror(saved),
                 permission_hint(saved));
        close(fd);
        return -1;
    }
    snprintf(out_name, 16, "%s", ifr.ifr_name);
    if (configure(out_name, cidr, mtu, error, error_size) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
