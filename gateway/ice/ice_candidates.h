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

typedef struct {
    /* How many of the addresses the caller offers (0: every one): the
     * first `keep` written are the best choice of that many. */
    size_t keep;
    bool include_loopback;
    bool include_ipv6;
} moat_ice_gather_options;

struct ifaddrs;

/* The addresses of `list` (as getifaddrs gives it) worth offering, without
 * duplicates. Always skipped: interfaces down or up without carrier (not
 * IFF_RUNNING: an idle docker0), link-local IPv6 (fe80::/10, useless
 * without a scope in SDP). Loopback only with include_loopback, IPv6 only
 * with include_ipv6.
 * Order: non-loopback addresses (interface order) before loopback ones
 * (127/8, ::1). When more than options->keep are wanted, the first keep
 * written are those offered: the first address of each kind (IPv4, IPv6,
 * each loopback or not) and then the others in that order; the ones left
 * out follow, in the same order.
 * Returns how many are wanted (more than capacity when out is too small:
 * only capacity are written), or -1 without memory. */
int moat_ice_select_addresses(const struct ifaddrs *list, const moat_ice_gather_options *options,
                              moat_ice_address *out, size_t capacity);

/* The same for this host's interfaces (getifaddrs); -1 if it failed. */
int moat_ice_host_addresses(moat_ice_address *out, size_t capacity,
                            const moat_ice_gather_options *options);

/* 127.0.0.0/8 or ::1. */
bool moat_ice_address_is_loopback(const struct sockaddr *address);
/* The same for a numeric address; false for anything else. */
bool moat_ice_text_is_loopback(const char *text);

#define MOAT_ICE_TYPE_PREFERENCE_HOST 126u

/* RFC 8445 §5.1.2.1 for a host candidate:
 * 2^24 * 126 + 2^8 * local_preference + (256 - component).
 * local_preference is clamped to 0..65535 and component to 1..256. */
uint32_t moat_ice_host_priority(uint32_t local_preference, uint32_t component);

#endif
