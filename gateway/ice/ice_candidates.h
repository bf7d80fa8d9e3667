/* Host candidates an ICE-lite session advertises: the machine's interface
 * addresses and their RFC 8445 priorities. */
#ifndef MOAT_ICE_CANDIDATES_H
#define MOAT_ICE_CANDIDATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct {
    struct sockaddr_storage address; /* port 0 */
    socklen_t length;
    char text[64]; /* numeric host, no port, no scope */
} moat_ice_address;

/* Up addresses from getifaddrs, in interface order, without duplicates.
 * Always skipped: down interfaces, link-local IPv6 (fe80::/10, useless
 * without a scope in SDP). Loopback only with include_loopback, IPv6 only
 * with include_ipv6. Returns how many were written to out (at most
 * capacity), or -1 if getifaddrs failed. */
int moat_ice_host_addresses(moat_ice_address *out, size_t capacity, bool include_loopback,
                            bool include_ipv6);

#define MOAT_ICE_TYPE_PREFERENCE_HOST 126u

/* RFC 8445 §5.1.2.1 for a host candidate:
 * 2^24 * 126 + 2^8 * local_preference + (256 - component).
 * local_preference is clamped to 0..65535 and component to 1..256. */
uint32_t moat_ice_host_priority(uint32_t local_preference, uint32_t component);

#endif
