/* Two network namespaces of the bench's own, joined by a link with a fixed
 * round-trip time: a veth pair with tc netem on both ends, or, on kernels
 * built without netem, a TUN device in each namespace and the in-process
 * link emulator. Everything is removed again by netns_link_destroy. Needs
 * root (CAP_NET_ADMIN and CAP_SYS_ADMIN for setns). */
#ifndef BENCH_DATACHANNEL_NETNS_LINK_H
#define BENCH_DATACHANNEL_NETNS_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "tun_emulator.h"

typedef struct netns_link netns_link;

typedef enum { NETNS_LINK_SENDER = 0, NETNS_LINK_RECEIVER = 1 } netns_link_side;

/* IPv4 addresses of the two ends. */
#define NETNS_LINK_SENDER_ADDRESS   "198.18.8.1"
#define NETNS_LINK_RECEIVER_ADDRESS "198.18.8.2"

/* A link of rtt_ms round trip and no rate limit. */
netns_link *netns_link_create(unsigned rtt_ms, char *error, size_t error_size);

/* A link of rtt_ms round trip and rate_bps in each direction. */
netns_link *netns_link_create_rated(unsigned rtt_ms, uint64_t rate_bps, char *error,
                                    size_t error_size);

/* Random loss (0..1) on the TUN link emulator; -1 over tc netem. */
int netns_link_set_loss(netns_link *link, double loss);

/* "tc netem" or "TUN link emulator". */
const char *netns_link_method(const netns_link *link);

/* The TUN emulator's packet counters so far (all zero over tc netem). */
void netns_link_counters(const netns_link *link, tun_emulator_counters *out);

/* socket(AF_INET, type, 0) made inside that side's namespace (it stays
 * there whatever process uses it); -1 on failure. */
int netns_link_socket(const netns_link *link, netns_link_side side, int type);

/* The name of that side's namespace and of its end of the link. */
const char *netns_link_namespace(const netns_link *link, netns_link_side side);
const char *netns_link_device(const netns_link *link, netns_link_side side);

void netns_link_destroy(netns_link *link);

/* Runs a command (ip, tc) quietly, argv NULL-terminated: its exit status,
 * or -1. For callers that change a link's namespaces further. */
int netns_link_run_quiet(const char *const argv[]);

#endif
