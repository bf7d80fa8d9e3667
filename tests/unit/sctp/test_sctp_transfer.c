/* Associations back to back in memory: bulk ordered transfer, partial
 * reliability over a lossy wire, closing channels, graceful shutdown, and
 * freeing from inside callbacks. */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include <usrsctp.h>

#include "sctp/sctp_association.h"
#include "sctp/sctp_association_private.h"
#include "sctp/sctp_tuning.h"
#include "sctp_test_link.h"

/* The socket option choosing an association's congestion control: usrsctp
 * implements it (netinet/sctp.h) but its public header does not name it. */
#ifndef SCTP_PLUGGABLE_CC
#define SCTP_PLUGGABLE_CC 0x00001202
#endif

/* Message i of a run: its size and bytes follow from i alone, so the
 * receiver can check them without keeping what was sent. */
static size_t message_size(guint i, size_t max)
{
    /* A uniform draw almost never gives 0; every 50th message is empty. */
    if (i % 50 == 0)
        return 0;
    GRand *rand = g_rand_new_with_seed(1000 + i);
    size_t size = (size_t)g_rand_int_range(rand, 0, (gint32)max + 1);
    g_rand_free(rand);
    return size;
}

static uint8_t *message_bytes(guint i, size_t size)
{
    uint8_t *bytes = g_malloc(size > 0 ? size : 1);
    GRand *rand = g_rand_new_with_seed(5000 + i);
    for (size_t k = 0; k < size; k++)
        bytes[k] = (uint8_t)g_rand_int(rand);
    g_rand_free(rand);
    return bytes;
}

static bool received_at_least(sctp_test_link *link, void *arg)
{
    return link->server.messages->len >= GPOINTER_TO_UINT(arg);
}

static void test_ordered_random_sizes(void)
{
    enum { COUNT = 2000 };
    const size_t max = 64 * 1024;
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "ordered", "", true, -1, -1);
    for (guint i = 0; i < COUNT; i++) {
        size_t size = message_size(i, max);
        uint8_t *bytes = message_bytes(i, size);
        g_assert_cmpint(
            sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, bytes, size), ==,
            0);
        g_free(bytes);
    }
    g_assert_true(
        sctp_test_link_pump_until(&link, received_at_least, GUINT_TO_POINTER(COUNT), 5000));
    g_assert_cmpuint(link.server.messages->len, ==, COUNT);
    size_t empty = 0;
    for (guint i = 0; i < COUNT; i++) {
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        size_t size = message_size(i, max);
        uint8_t *bytes = message_bytes(i, size);
        gsize length;
        const void *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpuint(m->ppid, ==,
                         size == 0 ? MOAT_SCTP_PPID_BINARY_EMPTY : MOAT_SCTP_PPID_BINARY);
        g_assert_cmpmem(data, length, bytes, size);
        empty += size == 0;
        g_free(bytes);
    }
    moat_sctp_counters counters;
    moat_sctp_association_counters(link.client.assoc, &counters);
    g_assert_cmpuint(counters.messages_sent, ==, COUNT);
    g_assert_cmpuint(empty, ==, COUNT / 50);
    /* Everything acknowledged: nothing left buffered, and sender dry said so. */
    sctp_test_link_pump(&link, 50);
    g_assert_cmpuint(moat_sctp_association_buffered_amount(link.client.assoc), ==, 0);
    g_assert_cmpuint(link.client.dry_events, >, 0);
    g_test_message("%zu of %u messages were empty; %" G_GUINT64_FORMAT " ticks", empty, COUNT,
                   link.ticks);
    sctp_test_link_clear(&link);
}

/* The writable hook of the next test: sends one more tiny message, as a
 * session flushing its relay queue does, and stops the test if it is called
 * over and over without the peer acknowledging anything. */
static uint16_t tiny_stream;
static unsigned tiny_resent;

static void resend_tiny(sctp_test_end *end)
{
    static const uint8_t tiny[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (end->writable_events > 10000)
        g_error("writable reported %u times: the association spins", end->writable_events);
    if (moat_sctp_association_send(end->assoc, tiny_stream, MOAT_SCTP_PPID_BINARY, tiny,
                                   sizeof tiny) == 0)
        tiny_resent++;
}

/* usrsctp refuses a send with EAGAIN when its chunk limit is reached
 * (sctp_max_chunks_on_queue, chunks sent and not yet acknowledged), which
 * tiny messages reach long before the byte buffer is half full. A send
 * refused there used to report writable at once (half the bytes free), the
 * owner's retry was refused again, and the association looped inside its
 * own delivery for ever: the worker never read its socket again, so the
 * SACK that would free the queue never came. Now writable waits for the
 * peer's progress: the refused send returns, and what was refused goes once
 * SACKs come. The limit is lowered here so that the initial congestion
 * window's tiny chunks reach it. */
static void test_chunk_limit_refusal_does_not_spin(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    tiny_stream = sctp_test_link_open(&link, &link.client, "tiny", "", true, -1, -1);
    tiny_resent = 0;
    link.client.writable_hook = resend_tiny;
    usrsctp_sysctl_set_sctp_max_chunks_on_queue(64);
    static const uint8_t tiny[8] = {0};
    int rc = 0;
    unsigned queued = 0;
    while ((rc = moat_sctp_association_send(link.client.assoc, tiny_stream, MOAT_SCTP_PPID_BINARY,
                                            tiny, sizeof tiny)) == 0)
        queued++;
    g_assert_cmpint(rc, ==, -EAGAIN);
    /* The chunk limit, not the bytes, refused it. */
    g_assert_cmpuint(moat_sctp_association_buffered_amount(link.client.assoc), <,
                     MOAT_SCTP_SOCKET_BUFFER_SIZE / 4);
    unsigned writable_before = link.client.writable_events;
    g_assert_cmpuint(writable_before, <=, 1);
    link.client.writable_hook = NULL;
    sctp_test_link_pump(&link, 200);
    usrsctp_sysctl_set_sctp_max_chunks_on_queue(MOAT_SCTP_MAX_CHUNKS_ON_QUEUE);
    g_assert_cmpuint(link.client.writable_events, >, writable_before);
    g_assert_cmpuint(link.server.messages->len, ==, queued + tiny_resent);
    sctp_test_link_clear(&link);
}

static void test_buffer_full_then_writable(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "fill", "", true, -1, -1);
    /* Nothing is pumped, so nothing is acknowledged: the buffer fills. */
    uint8_t *chunk = g_malloc0(64 * 1024);
    int rc = 0;
    unsigned queued = 0;
    while ((rc = moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY, chunk,
                                            64 * 1024)) == 0)
        queued++;
    g_assert_cmpint(rc, ==, -EAGAIN);
    g_assert_cmpuint(queued, >=, 8);
    g_assert_cmpuint(moat_sctp_association_buffered_amount(link.client.assoc), >=,
                     (size_t)queued * 64 * 1024);
    sctp_test_link_pump(&link, 100);
    g_assert_cmpuint(link.client.writable_events, ==, 1);
    g_assert_cmpuint(link.server.messages->len, ==, queued);
    g_assert_cmpint(
        moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY, chunk, 64 * 1024),
        ==, 0);
    g_free(chunk);
    sctp_test_link_clear(&link);
}

/* Every message of an unordered-lossy run either delivered or given up. */
static bool all_accounted(sctp_test_link *link, void *arg)
{
    moat_sctp_counters sender, receiver;
    moat_sctp_association_counters(link->client.assoc, &sender);
    moat_sctp_association_counters(link->server.assoc, &receiver);
    return receiver.messages_received + sender.messages_abandoned >= GPOINTER_TO_UINT(arg);
}

/* Sets the congestion control new associations of the end's socket get
 * (usrsctp's SCTP_CC_*), in place of the stack-wide MOAT_SCTP_CC_MODULE. */
static void set_congestion_control(sctp_test_end *end, uint32_t module)
{
    struct sctp_assoc_value value;
    memset(&value, 0, sizeof value);
    value.assoc_id = SCTP_FUTURE_ASSOC;
    value.assoc_value = module;
    g_assert_cmpint(
        usrsctp_setsockopt(end->assoc->sock, IPPROTO_SCTP, SCTP_PLUGGABLE_CC, &value, sizeof value),
        ==, 0);
}

/* Unordered, no retransmission, 5% of packets lost each way: most messages
 * arrive, the sender gives the others up and counts them. cc_module: the
 * congestion control of both ends (SCTP_CC_*), or -1 for Moat's. */
static void unordered_lossy(int cc_module)
{
    enum { COUNT = 2000 };
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    /* Real time passes per tick. A message lost near the end of a burst,
     * with too few packets after it for SACKs to strike it three times, is
     * given up only by the retransmission timeout, and usrsctp's timeout
     * takes only chunks outstanding for the RTO estimate by the real clock
     * (sctp_mark_all_for_resend: min_wait = now - (srtt + rttvar), a few
     * milliseconds here), while ticks alone advance its timers, not that
     * clock. Without the sleep the timeout fires, finds the chunk too
     * young, backs off and fires again until the pump ends: the message is
     * neither delivered nor given up, and behind it the send buffer fills
     * (with RFC 2581 congestion control, or a SACK for every 4th packet). */
    link.tick_sleep_us = 100;
    if (cc_module >= 0) {
        set_congestion_control(&link.client, (uint32_t)cc_module);
        set_congestion_control(&link.server, (uint32_t)cc_module);
    }
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "lossy", "", false, 0, -1);
    /* One message each way so the ACK is in: unordered sending needs it. */
    g_assert_cmpint(sctp_test_link_send(&link, &link.server, id, MOAT_SCTP_PPID_STRING,
                                        (const uint8_t *)"ack", 3),
                    ==, 0);
    sctp_test_link_pump(&link, 1);
    link.client.drop_rate = 0.05;
    link.server.drop_rate = 0.05;
    uint8_t payload[1000];
    for (guint i = 0; i < COUNT; i++) {
        memset(payload, (int)(i & 0xff), sizeof payload);
        memcpy(payload, &i, sizeof i);
        g_assert_cmpint(sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, payload,
                                            sizeof payload),
                        ==, 0);
        if (i % 16 == 15)
            sctp_test_link_pump(&link, 1);
    }
    /* Until every message is delivered or given up (the last ones by
     * retransmission timeouts), and a little longer for late duplicates. */
    g_assert_true(sctp_test_link_pump_until(&link, all_accounted, GUINT_TO_POINTER(COUNT), 6000));
    sctp_test_link_pump(&link, 100);
    moat_sctp_counters sender, receiver;
    moat_sctp_association_counters(link.client.assoc, &sender);
    moat_sctp_association_counters(link.server.assoc, &receiver);
    g_test_message("delivered %" G_GUINT64_FORMAT ", abandoned %" G_GUINT64_FORMAT
                   ", packets dropped %zu/%zu, %" G_GUINT64_FORMAT " ticks",
                   receiver.messages_received, sender.messages_abandoned,
                   link.client.packets_dropped, link.client.packets_sent, link.ticks);
    g_assert_cmpuint(link.client.packets_dropped, >, 0);
    g_assert_cmpuint(receiver.messages_received, >=, COUNT * 8 / 10);
    g_assert_cmpuint(receiver.messages_received, <, COUNT);
    g_assert_cmpuint(sender.messages_abandoned, >, 0);
    /* Every message was either delivered or given up. */
    g_assert_cmpuint(receiver.messages_received + sender.messages_abandoned, >=, COUNT);
    /* Each delivered message is whole and delivered once. */
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < link.server.messages->len; i++) {
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        gsize length;
        const uint8_t *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpuint(length, ==, sizeof payload);
        guint index;
        memcpy(&index, data, sizeof index);
        g_assert_false(g_hash_table_contains(seen, GUINT_TO_POINTER(index)));
        g_hash_table_add(seen, GUINT_TO_POINTER(index));
    }
    g_hash_table_unref(seen);
    g_assert_cmpint(link.client.down_events, ==, 0);
    sctp_test_link_clear(&link);
}

static void test_unordered_lossy(void)
{
    unordered_lossy(-1);
}

/* The same with RFC 9260's own congestion control (SCTP_CC_RFC2581, which
 * MOAT_SCTP_CC_MODULE may be): with the link's seeded losses one of the
 * last messages is lost with too few packets after it to be struck three
 * times, so only a retransmission timeout gives it up. */
static void test_unordered_lossy_rfc2581(void)
{
    unordered_lossy(SCTP_CC_RFC2581);
}

/* Partial reliability by lifetime: messages that cannot get through before
 * max_lifetime_ms are given up, counted, and never delivered late. usrsctp
 * checks lifetimes against the real clock, so this test sleeps. */
static void test_lifetime_expires(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "ttl", "", false, -1, 50);
    g_assert_cmpint(sctp_test_link_send(&link, &link.server, id, MOAT_SCTP_PPID_STRING,
                                        (const uint8_t *)"ack", 3),
                    ==, 0);
    sctp_test_link_pump(&link, 30);
    link.client.wire_enabled = false;
    for (int i = 0; i < 5; i++)
        g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_STRING,
                                                   (const uint8_t *)"late", 4),
                        ==, 0);
    g_usleep(120 * 1000);
    link.client.wire_enabled = true;
    sctp_test_link_pump(&link, 500);
    moat_sctp_counters sender, receiver;
    moat_sctp_association_counters(link.client.assoc, &sender);
    moat_sctp_association_counters(link.server.assoc, &receiver);
    g_assert_cmpuint(sender.messages_abandoned, ==, 5);
    g_assert_cmpuint(receiver.messages_received, ==, 0);
    /* The channel goes on. */
    g_assert_cmpint(sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_STRING,
                                        (const uint8_t *)"fresh", 5),
                    ==, 0);
    sctp_test_link_pump(&link, 5);
    moat_sctp_association_counters(link.server.assoc, &receiver);
    g_assert_cmpuint(receiver.messages_received, ==, 1);
    sctp_test_link_clear(&link);
}

static bool closed_both(sctp_test_link *link, void *arg)
{
    return link->client.closed->len > 0 && link->server.closed->len > 0;
}

static void test_close_channel(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t a = sctp_test_link_open(&link, &link.client, "a", "", true, -1, -1);
    uint16_t b = sctp_test_link_open(&link, &link.client, "b", "", true, -1, -1);
    /* Queued before the close, still delivered: the reset waits for it. */
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, a, MOAT_SCTP_PPID_STRING,
                                               (const uint8_t *)"last words", 10),
                    ==, 0);
    g_assert_cmpint(moat_sctp_association_close_channel(link.client.assoc, a), ==, 0);
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, a, MOAT_SCTP_PPID_STRING,
                                               (const uint8_t *)"x", 1),
                    ==, -EPIPE);
    g_assert_true(sctp_test_link_pump_until(&link, closed_both, NULL, 1000));
    sctp_test_link_pump(&link, 5);
    g_assert_cmpuint(link.server.messages->len, ==, 1);
    g_assert_cmpuint(link.server.closed->len, ==, 1);
    g_assert_cmpuint(g_array_index(link.server.closed, uint16_t, 0), ==, a);
    g_assert_cmpuint(link.client.closed->len, ==, 1);
    g_assert_cmpuint(g_array_index(link.client.closed, uint16_t, 0), ==, a);
    g_assert_cmpint(moat_sctp_association_send(link.server.assoc, a, MOAT_SCTP_PPID_STRING,
                                               (const uint8_t *)"x", 1),
                    ==, -ENOENT);
    moat_data_channel_info info;
    g_assert_cmpint(moat_sctp_association_channel_info(link.client.assoc, a, &info), ==, -ENOENT);
    g_assert_cmpint(moat_sctp_association_close_channel(link.client.assoc, a), ==, -ENOENT);

    /* The other channel is untouched, and the peer may close too. */
    g_assert_cmpint(sctp_test_link_send(&link, &link.server, b, MOAT_SCTP_PPID_STRING,
                                        (const uint8_t *)"b lives", 7),
                    ==, 0);
    sctp_test_link_pump(&link, 2);
    g_assert_cmpuint(link.client.messages->len, ==, 1);
    g_assert_cmpint(moat_sctp_association_close_channel(link.server.assoc, b), ==, 0);
    sctp_test_link_pump(&link, 20);
    g_assert_cmpuint(link.client.closed->len, ==, 2);
    g_assert_cmpuint(g_array_index(link.client.closed, uint16_t, 1), ==, b);
    g_assert_cmpuint(link.server.closed->len, ==, 2);

    /* Stream ids are free again: a new channel works. */
    uint16_t c = sctp_test_link_open(&link, &link.client, "c", "", true, -1, -1);
    g_assert_cmpint(
        sctp_test_link_send(&link, &link.client, c, MOAT_SCTP_PPID_STRING, (const uint8_t *)"c", 1),
        ==, 0);
    sctp_test_link_pump(&link, 2);
    g_assert_cmpuint(link.server.messages->len, ==, 2);
    g_assert_cmpint(link.client.down_events + link.server.down_events, ==, 0);
    sctp_test_link_clear(&link);
}

static bool both_down(sctp_test_link *link, void *arg)
{
    return link->client.down_events > 0 && link->server.down_events > 0;
}

static void test_graceful_shutdown(void)
{
    enum { COUNT = 5000 };
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "drain", "", true, -1, -1);
    /* All queued without pumping: they are all in the send buffer when the
     * shutdown is asked for. */
    uint8_t payload[100];
    for (guint i = 0; i < COUNT; i++) {
        memset(payload, 0, sizeof payload);
        memcpy(payload, &i, sizeof i);
        g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY,
                                                   payload, sizeof payload),
                        ==, 0);
    }
    g_assert_cmpuint(moat_sctp_association_buffered_amount(link.client.assoc), >, 0);
    moat_sctp_association_shutdown(link.client.assoc);
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY,
                                               payload, sizeof payload),
                    ==, -ESHUTDOWN);
    g_assert_true(sctp_test_link_pump_until(&link, both_down, NULL, 3000));
    g_assert_cmpuint(link.server.messages_when_down, ==, COUNT);
    g_assert_cmpuint(link.server.messages->len, ==, COUNT);
    for (guint i = 0; i < COUNT; i++) {
        guint index;
        memcpy(&index, g_bytes_get_data(sctp_test_end_message(&link.server, i)->data, NULL),
               sizeof index);
        g_assert_cmpuint(index, ==, i);
    }
    g_assert_cmpint(link.client.down_events, ==, 1);
    g_assert_cmpint(link.server.down_events, ==, 1);
    sctp_test_link_clear(&link);
}

static bool client_down(sctp_test_link *link, void *arg)
{
    return link->client.down_events > 0;
}

static void test_peer_vanishes_then_free(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "gone", "", true, -1, -1);
    /* The server frees its association from inside its own callback as soon
     * as a message arrives; the ABORT that freeing produces is not passed
     * on, so the client only learns from its retransmissions failing. */
    link.server.free_on_message = true;
    g_assert_cmpint(sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_STRING,
                                        (const uint8_t *)"bye", 3),
                    ==, 0);
    sctp_test_link_pump(&link, 1);
    g_assert_null(link.server.assoc);
    g_assert_cmpuint(link.server.messages->len, ==, 1);
    /* The client frees itself when it notices the loss. */
    link.client.free_on_down = true;
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_STRING,
                                               (const uint8_t *)"anyone?", 7),
                    ==, 0);
    g_assert_true(sctp_test_link_pump_until(&link, client_down, NULL, 100000));
    g_assert_cmpint(link.client.down_events, ==, 1);
    g_assert_null(link.client.assoc);
    sctp_test_link_clear(&link);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/transfer/ordered-random-sizes", test_ordered_random_sizes);
    g_test_add_func("/sctp/transfer/buffer-full-then-writable", test_buffer_full_then_writable);
    g_test_add_func("/sctp/transfer/chunk-limit-refusal-does-not-spin",
                    test_chunk_limit_refusal_does_not_spin);
    g_test_add_func("/sctp/transfer/unordered-lossy", test_unordered_lossy);
    g_test_add_func("/sctp/transfer/unordered-lossy-rfc2581", test_unordered_lossy_rfc2581);
    g_test_add_func("/sctp/transfer/lifetime-expires", test_lifetime_expires);
    g_test_add_func("/sctp/transfer/close-channel", test_close_channel);
    g_test_add_func("/sctp/transfer/graceful-shutdown", test_graceful_shutdown);
    g_test_add_func("/sctp/transfer/peer-vanishes-then-free", test_peer_vanishes_then_free);
    return g_test_run();
}
