/* RTP ingest sessions (session_plain.c) against hostile senders: a plain
 * ingest latches the first sender of a valid RTP packet (a malformed datagram
 * latches nothing); an SRTP ingest delivers only what authenticates, a
 * stranger's forgeries sent first latch nothing, and after the latch the
 * stranger's copies of authentic packets and the sender's replays are
 * dropped with their reasons; a datagram from one of Moat's own sockets (a
 * call leg aimed at the ingest's port) is a loop, before or after a latch. */
#include "session_harness.h"

#include "session/session_internal.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

static uint64_t delivered(session_harness *h)
{
    return *(uint64_t *)h->session->plugin_state; /* the counting plugin's */
}

/* A VP8-ish RTP packet of the harness peer's stream. */
static size_t rtp(uint8_t *out, uint16_t sequence)
{
    memset(out, 0, 200);
    out[0] = 0x80;
    out[1] = 96;
    out[2] = (uint8_t)(sequence >> 8);
    out[3] = (uint8_t)sequence;
    out[8] = (uint8_t)(HARNESS_REMOTE_SSRC >> 24);
    out[9] = (uint8_t)(HARNESS_REMOTE_SSRC >> 16);
    out[10] = (uint8_t)(HARNESS_REMOTE_SSRC >> 8);
    out[11] = (uint8_t)HARNESS_REMOTE_SSRC;
    out[12] = 0x10; /* VP8 descriptor: S bit */
    return 100;
}

static struct sockaddr_in6 stranger_of(const session_harness *h)
{
    struct sockaddr_in6 from = h->path.remote;
    from.sin6_addr.s6_addr[15] ^= 0x5a;
    return from;
}

static void feed(session_harness *h, const struct sockaddr_in6 *from, uint8_t *data, size_t length)
{
    moat_session_plain_handle(h->session, from, data, length, MOAT_DATAGRAM_CAPACITY);
}

static void test_srtp_ingest_latches_only_an_authentic_sender(void)
{
    session_harness h;
    session_harness_init(&h);
    session_harness_create_plain_srtp(&h, NULL);
    struct sockaddr_in6 stranger = stranger_of(&h);
    static uint8_t packet[MOAT_DATAGRAM_CAPACITY], copy[MOAT_DATAGRAM_CAPACITY];

    /* Forgeries first: the stranger has no key. */
    for (uint16_t seq = 1; seq <= 5; seq++) {
        size_t length = rtp(packet, seq);
        memset(packet + 12, 0xA5, length - 12); /* no valid tag */
        feed(&h, &stranger, packet, length);
    }
    g_assert_cmpuint(delivered(&h), ==, 0);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_AUTH), ==, 5);
    g_assert_false(h.session->plain_latched);

    /* The sender's authentic packets are delivered and latch it. */
    size_t copy_length = 0;
    for (uint16_t seq = 100; seq < 110; seq++) {
        size_t length = rtp(packet, seq);
        g_assert_cmpint(moat_srtp_protect_rtp(h.peer_srtp, packet, &length, sizeof packet), ==,
                        MOAT_SRTP_OK);
        if (seq == 100) {
            memcpy(copy, packet, length);
            copy_length = length;
        }
        feed(&h, &h.path.remote, packet, length);
    }
    g_assert_cmpuint(delivered(&h), ==, 10);
    g_assert_true(h.session->plain_latched);

    /* The stranger's copy of an authentic packet: another tuple. */
    memcpy(packet, copy, copy_length);
    feed(&h, &stranger, packet, copy_length);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_UNKNOWN_TUPLE), ==, 1);
    /* The sender's own replay: a replay. */
    memcpy(packet, copy, copy_length);
    feed(&h, &h.path.remote, packet, copy_length);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_REPLAY), ==, 1);
    g_assert_cmpuint(delivered(&h), ==, 10);
    session_harness_clear(&h);
}

static void test_plain_ingest_latches_a_valid_packet_only(void)
{
    session_harness h;
    session_harness_init(&h);
    session_harness_create_plain(&h, NULL);
    struct sockaddr_in6 stranger = stranger_of(&h);
    static uint8_t packet[MOAT_DATAGRAM_CAPACITY];

    memset(packet, 0, 20);
    feed(&h, &stranger, packet, 20); /* RTP version 0: malformed */
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_MALFORMED), ==, 1);
    g_assert_false(h.session->plain_latched);

    feed(&h, &h.path.remote, packet, rtp(packet, 1));
    g_assert_cmpuint(delivered(&h), ==, 1);
    g_assert_true(h.session->plain_latched);
    feed(&h, &stranger, packet, rtp(packet, 2));
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_UNKNOWN_TUPLE), ==, 1);
    g_assert_cmpuint(delivered(&h), ==, 1);
    session_harness_clear(&h);
}

static void test_ingest_takes_nothing_from_moats_own_sockets(void)
{
    session_harness h;
    session_harness_init(&h);
    moat_own_sockets *own = moat_own_sockets_new_with_hosts(NULL, 0);
    moat_worker_set_own_sockets(h.worker, own);
    session_harness_create_plain(&h, NULL);
    uint16_t port = h.session->plain_port;
    g_assert_cmpuint(port, !=, 0);
    g_assert_true(moat_own_sockets_holds(own, port)); /* no call leg may aim here */
    /* A call leg's socket on the sender's (loopback) address. */
    struct sockaddr_in6 leg = h.path.remote;
    leg.sin6_port = htons(41002);
    moat_own_sockets_hold(own, 41002);
    static uint8_t packet[MOAT_DATAGRAM_CAPACITY];

    feed(&h, &leg, packet, rtp(packet, 1));
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_LOOP), ==, 1);
    g_assert_cmpuint(delivered(&h), ==, 0);
    g_assert_false(h.session->plain_latched);

    /* The real sender latches; its address is the leg's, the leg's relay
     * still takes nothing (the latch is by address). */
    feed(&h, &h.path.remote, packet, rtp(packet, 2));
    g_assert_true(h.session->plain_latched);
    feed(&h, &leg, packet, rtp(packet, 3));
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_LOOP), ==, 2);
    g_assert_cmpuint(delivered(&h), ==, 1);
    /* The leg closed: that port is anyone's again. */
    moat_own_sockets_release(own, 41002);
    feed(&h, &leg, packet, rtp(packet, 4));
    g_assert_cmpuint(delivered(&h), ==, 2);

    session_harness_clear(&h);
    g_assert_false(moat_own_sockets_holds(own, port)); /* unmarked with its close */
    moat_own_sockets_free(own);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session-plain/srtp-latches-only-authentic",
                    test_srtp_ingest_latches_only_an_authentic_sender);
    g_test_add_func("/session-plain/plain-latches-valid-only",
                    test_plain_ingest_latches_a_valid_packet_only);
    g_test_add_func("/session-plain/own-sockets-are-a-loop",
                    test_ingest_takes_nothing_from_moats_own_sockets);
    return g_test_run();
}
