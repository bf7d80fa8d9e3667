/* A bulk transfer over a lossless wire with a 100 ms one-way delay must take
 * no retransmission timeout: every SACK that moves the cumulative ack
 * restarts the T3-rtx timer (RFC 9260 §6.3.2 R3). Debian's usrsctp 0.9.5
 * does not restart it on its fast SACK path, so it fires RTO.Min (1 s) into
 * the transfer although nothing was lost; Moat links usrsctp with
 * scripts/patches/usrsctp-express-sack-t3-restart.patch, which this test
 * guards. The delay lives in this file: packets wait in a queue per
 * direction, stamped with the virtual tick they are due. */
#include <errno.h>
#include <string.h>

#include <glib.h>
#include <usrsctp.h>

#include "sctp/sctp_association.h"
#include "sctp/sctp_stack.h"
#include "sctp_test_link.h"

/* One-way delay and transfer length, in 10 ms ticks of the SCTP clock. */
enum { DELAY_TICKS = 10, TRANSFER_TICKS = 300, MESSAGE_SIZE = 16 * 1024 };

typedef struct {
    uint64_t due; /* tick at which the packet reaches the peer */
    GBytes *packet;
} delayed_packet;

typedef struct {
    sctp_test_link *link;
    GQueue to_server, to_client; /* delayed_packet, oldest first */
} delayed_wire;

static void delay_packet(sctp_test_end *end, const uint8_t *packet, size_t length, void *user)
{
    delayed_wire *w = user;
    delayed_packet *d = g_new(delayed_packet, 1);
    d->due = w->link->ticks + DELAY_TICKS;
    d->packet = g_bytes_new(packet, length);
    g_queue_push_tail(end == &w->link->client ? &w->to_server : &w->to_client, d);
}

/* Moves the packets that are due into the receiving end's inbox. */
static void deliver_due(delayed_wire *w, GQueue *queue, sctp_test_end *to)
{
    delayed_packet *d;
    while ((d = g_queue_peek_head(queue)) != NULL && d->due <= w->link->ticks) {
        g_queue_pop_head(queue);
        g_queue_push_tail(&to->inbox, d->packet);
        g_free(d);
    }
}

static void delayed_packet_free(gpointer p)
{
    delayed_packet *d = p;
    g_bytes_unref(d->packet);
    g_free(d);
}

/* Replaces the link's instant wire by the delayed one, both directions. */
static void delayed_wire_attach(delayed_wire *w, sctp_test_link *link)
{
    memset(w, 0, sizeof *w);
    w->link = link;
    g_queue_init(&w->to_server);
    g_queue_init(&w->to_client);
    sctp_test_end *ends[] = {&link->client, &link->server};
    for (size_t i = 0; i < G_N_ELEMENTS(ends); i++) {
        ends[i]->wire_enabled = false;
        ends[i]->tap = delay_packet;
        ends[i]->tap_user = w;
    }
}

static void delayed_wire_clear(delayed_wire *w)
{
    g_queue_clear_full(&w->to_server, delayed_packet_free);
    g_queue_clear_full(&w->to_client, delayed_packet_free);
}

/* Queues messages until the send buffer is full (bounded per call). */
static void top_up(sctp_test_end *from, uint16_t id, const uint8_t *bytes, guint *sent)
{
    for (int i = 0; i < 256; i++) {
        int rc =
            moat_sctp_association_send(from->assoc, id, MOAT_SCTP_PPID_BINARY, bytes, MESSAGE_SIZE);
        if (rc == -EAGAIN)
            return;
        g_assert_cmpint(rc, ==, 0);
        (*sent)++;
    }
}

static uint32_t t3_timeouts(void)
{
    struct sctpstat stat;
    memset(&stat, 0, sizeof stat);
    usrsctp_get_stat(&stat);
    return stat.sctps_timodata;
}

/* Data is in flight at every tick for three seconds of a 200 ms round
 * trip; the windows (a 512 KiB memory limit) keep the volume small. No
 * packet is lost, so no T3-rtx timer may expire, and every message sent
 * arrives whole and in order. */
static void test_no_t3_timeout_when_acks_advance(void)
{
    const size_t limit = 512 * 1024;
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    moat_sctp_association_set_memory_limit(link.client.assoc, limit);
    moat_sctp_association_set_memory_limit(link.server.assoc, limit);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "bulk", "", true, -1, -1);
    delayed_wire wire;
    delayed_wire_attach(&wire, &link);
    uint8_t *bytes = g_malloc(MESSAGE_SIZE);
    for (size_t i = 0; i < MESSAGE_SIZE; i++)
        bytes[i] = (uint8_t)(i * 31u);

    uint32_t t3_before = t3_timeouts();
    guint sent = 0;
    uint64_t start = link.ticks;
    while (link.ticks - start < TRANSFER_TICKS) {
        deliver_due(&wire, &wire.to_server, &link.server);
        deliver_due(&wire, &wire.to_client, &link.client);
        sctp_test_link_pump(&link, 0);
        top_up(&link.client, id, bytes, &sent);
        g_assert_cmpuint(moat_sctp_association_buffered_amount(link.client.assoc), >, 0);
        sctp_test_link_pump(&link, 1);
    }
    uint32_t t3 = t3_timeouts() - t3_before;
    uint32_t srtt_ms = 0, cwnd = 0;
    g_assert_cmpint(moat_sctp_association_path_status(link.client.assoc, &srtt_ms, &cwnd), ==, 0);
    guint received = link.server.messages->len;
    g_test_message("sent %u messages, %u arrived, cwnd %u, T3 timeouts %u", sent, received, cwnd,
                   t3);

    g_assert_cmpuint(link.client.packets_dropped + link.server.packets_dropped, ==, 0);
    g_assert_cmpuint(t3, ==, 0);
    /* Enough round trips completed that the window must have opened. */
    g_assert_cmpuint(received, >, 64);
    for (guint i = 0; i < received; i++) {
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        gsize length;
        const uint8_t *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpuint(length, ==, MESSAGE_SIZE);
        g_assert_true(memcmp(data, bytes, MESSAGE_SIZE) == 0);
    }
    g_free(bytes);
    sctp_test_link_clear(&link);
    delayed_wire_clear(&wire);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/long-rtt/no-t3-timeout-when-acks-advance",
                    test_no_t3_timeout_when_acks_advance);
    return g_test_run();
}
