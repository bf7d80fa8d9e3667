/* build/bench/tunnel_link RTT_MS RATE_BPS LOSS: the bench's two network
 * namespaces joined by the repository's link emulator
 * (bench/datachannel/netns_link.h: the TUN link emulator where there is a
 * TUN device) of that round trip, rate and random loss. Prints
 * "link SENDER_NS RECEIVER_NS SENDER_ADDRESS RECEIVER_ADDRESS METHOD" and
 * keeps the link until its standard input closes; then removes it all.
 * bench/tunnel/tunnel.py drives it. */
#include "netns_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tunnel_link RTT_MS RATE_BPS LOSS\n");
        return 2;
    }
    char error[256];
    netns_link *link = netns_link_create_rated((unsigned)atoi(argv[1]), strtoull(argv[2], NULL, 10),
                                               error, sizeof error);
    if (!link) {
        fprintf(stderr, "tunnel_link: %s\n", error);
        return 1;
    }
    double loss = atof(argv[3]);
    if (loss > 0 && netns_link_set_loss(link, loss) != 0) {
        fprintf(stderr, "tunnel_link: loss needs the TUN link emulator\n");
        netns_link_destroy(link);
        return 1;
    }
    printf("link %s %s %s %s %s\n", netns_link_namespace(link, NETNS_LINK_SENDER),
           netns_link_namespace(link, NETNS_LINK_RECEIVER), NETNS_LINK_SENDER_ADDRESS,
           NETNS_LINK_RECEIVER_ADDRESS, netns_link_method(link));
    fflush(stdout);
    char buffer[64];
    while (read(0, buffer, sizeof buffer) > 0) {
    }
    tun_emulator_counters c;
    netns_link_counters(link, &c);
    fprintf(stderr, "tunnel_link: carried=%llu queue_drops=%llu random_drops=%llu\n",
            (unsigned long long)c.carried, (unsigned long long)c.queue_drops,
            (unsigned long long)c.random_drops);
    netns_link_destroy(link);
    return 0;
}
