/* A session's stream tables are allocated as streams appear, not at their
 * maximum: the outgoing ones at creation, one per m-line the peer receives
 * on; the incoming ones at an SSRC's first authenticated packet, growing
 * 2, 4, 8, 16 and keeping what earlier streams counted; a 17th SSRC is
 * relayed but not tracked. */
#include "session_harness.h"

#include "session/session_internal.h"

#include <glib.h>
#include <string.h>

#define FIRST_SSRC 0x1000u

static void start(session_harness *h)
{
    session_harness_init(h);
    session_harness_create(h, NULL);
    moat_worker_set_now_us(h->worker, 1000000);
    session_harness_key(h);
}

/* One RTP packet from the peer on `ssrc`, protected with the peer's keys. */
static void peer_sends(session_harness *h, uint32_t ssrc, uint16_t sequence)
{
    uint8_t packet[256] = {0x80, 96};
    packet[2] = (uint8_t)(sequence >> 8);
    packet[3] = (uint8_t)sequence;
    uint32_t timestamp = sequence * 960u;
    for (int i = 0; i < 4; i++) {
        packet[4 + i] = (uint8_t)(timestamp >> (24 - 8 * i));
        packet[8 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
    }
    size_t length = 12 + 40;
    g_assert_cmpint(moat_srtp_protect_rtp(h->peer_srtp, packet, &length, sizeof packet), ==, 0);
    moat_session_handle_srtp(h->session, NULL, packet, length, sizeof packet);
}

static const moat_incoming_stream *find(const moat_session *session, uint32_t ssrc)
{
    for (size_t i = 0; i < session->n_incoming; i++) {
        if (session->incoming[i].ssrc == ssrc)
            return &session->incoming[i];
    }
    return NULL;
}

static void test_outgoing_sized_by_negotiation(void)
{
    session_harness h;
    start(&h);
    g_assert_cmpuint(h.session->n_outgoing, ==, 1);
    g_assert_cmphex(h.session->outgoing[0].ssrc, ==, HARNESS_LOCAL_SSRC);
    session_harness_clear(&h);

    /* An m-line the peer only sends on: nothing to send, no table. */
    session_harness_init(&h);
    h.negotiation.media[0].peer_receives = false;
    session_harness_create(&h, NULL);
    g_assert_cmpuint(h.session->n_outgoing, ==, 0);
    g_assert_null(h.session->outgoing);
    session_harness_clear(&h);
}

static void test_incoming_grow_with_ssrcs(void)
{
    session_harness h;
    start(&h);
    g_assert_cmpuint(h.session->incoming_capacity, ==, 0);
    /* Rounds of one packet per SSRC, a new SSRC joining each round, 20 in
     * all: every stream's statistics must survive each growth. */
    uint16_t sequence[20] = {0};
    size_t capacity_seen[21] = {0};
    for (uint32_t joined = 1; joined <= 20; joined++) {
        for (uint32_t s = 0; s < joined; s++)
            peer_sends(&h, FIRST_SSRC + s, sequence[s]++);
        capacity_seen[joined] = h.session->incoming_capacity;
    }
    g_assert_cmpuint(capacity_seen[1], ==, 2);
    g_assert_cmpuint(capacity_seen[2], ==, 2);
    g_assert_cmpuint(capacity_seen[3], ==, 4);
    g_assert_cmpuint(capacity_seen[5], ==, 8);
    g_assert_cmpuint(capacity_seen[9], ==, 16);
    g_assert_cmpuint(capacity_seen[20], ==, 16);
    g_assert_cmpuint(h.session->n_incoming, ==, MOAT_SESSION_MAX_STREAMS);
    for (uint32_t s = 0; s < 20; s++) {
        const moat_incoming_stream *stream = find(h.session, FIRST_SSRC + s);
        if (s >= MOAT_SESSION_MAX_STREAMS) {
            g_assert_null(stream);
            continue;
        }
        g_assert_nonnull(stream);
        /* SSRC s joined in round s + 1 and sent once per round after. */
        g_assert_cmpuint(stream->packets, ==, 20 - s);
        g_assert_cmpuint(stream->stats.received, ==, 20 - s);
    }
    /* Receiver reports cover the tracked streams (run under ASan: no read
     * past the table). */
    moat_worker_set_now_us(h.worker, 10000000);
    moat_session_media_tick(h.session, 10000000);
    session_harness_flush(&h);
    size_t datagrams = 0;
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, >, 0);
    session_harness_clear(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/streams/outgoing-sized-by-negotiation",
                    test_outgoing_sized_by_negotiation);
    g_test_add_func("/session/streams/incoming-grow-with-ssrcs", test_incoming_grow_with_ssrcs);
    return g_test_run();
}
