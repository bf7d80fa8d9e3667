/* The TUN device the tunnel carries: created (IFF_TUN | IFF_NO_PI, so each
 * read is one IP packet), given its MTU and IPv4 address and brought up. */
#ifndef TUN_DEVICE_H
#define TUN_DEVICE_H

#include <stddef.h>

/* name: the wanted name ("" lets the kernel pick); the name it got is
 * written to out_name (16 bytes). Returns the non-blocking fd, or -1 with a
 * message in error (without CAP_NET_ADMIN it says so). */
int tun_device_open(const char *name, const char *cidr, unsigned mtu, char out_name[16],
                    char *error, size_t error_size);

#endif
