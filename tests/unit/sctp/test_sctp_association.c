/* Associations back to back in memory: establishment, DCEP and negotiated
 * channels, message types, sizes, hostile DCEP, backpressure (a receiver
 * that stops reading closes its window without losing anything). */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "sctp/dcep.h"
#include "sctp/sctp_association.h"
#include "sctp/sctp_association_private.h"
#include "sctp_test_link.h"

static void test_up_both_ways(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    g_assert_cmpint(link.client.down_events, ==, 0);
    g_assert_cmpint(link.server.down_events, ==, 0);
    /* Every packet fits one DTLS record under the configured MTU. */
    g_assert_cmpuint(link.client.largest_packet, <=, MOAT_SCTP_MTU);
    g_assert_cmpuint(link.server.largest_packet, <=, MOAT_SCTP_MTU);
    sctp_test_link_clear(&link);
}

static bool both_up(sctp_test_link *link, void *arg)
{
    return link->client.up_events > 0 && link->server.up_events > 0;
}

static bool server_down(sctp_test_link *link, void *arg)
{
    return link->server.down_events > 0;
}

/* An abort (a drain cut at gateway shutdown) reaches the peer: its ABORT
 * goes out through send_packet, and the peer's association ends at once.
 * A plain free drops the ABORT: the peer learns nothing. */
static void test_abort_tells_the_peer(void)
{
    for (int abort = 0; abort < 2; abort++) {
        sctp_test_link link;
        sctp_test_link_init(&link, 0);
        sctp_test_link_connect(&link);
        size_t sent = link.client.packets_sent;
        if (abort)
            moat_sctp_association_abort(link.client.assoc);
        else
            moat_sctp_association_free(link.client.assoc);
        link.client.assoc = NULL;
        g_assert_cmpuint(link.client.packets_sent, ==, sent + (abort ? 1 : 0));
        g_assert_cmpint(link.client.down_events, ==, 0); /* no callback but send_packet */
        g_assert_true(sctp_test_link_pump_until(&link, server_down, NULL, 5) == (bool)abort);
        sctp_test_link_clear(&link);
    }
}

/* Only one side calls connect: the other is started by the INIT it
 * receives, as when DTLS comes up on one side first. Both directions. */
static void test_up_one_side_connects(void)
{
    for (int server_first = 0; server_first < 2; server_first++) {
        sctp_test_link link;
        sctp_test_link_init(&link, 0);
        sctp_test_end *first = server_first ? &link.server : &link.client;
        g_assert_cmpint(moat_sctp_association_connect(first->assoc), ==, 0);
        g_assert_true(sctp_test_link_pump_until(&link, both_up, NULL, 1000));
        /* A late connect is harmless. */
        g_assert_cmpint(moat_sctp_association_connect(first->peer->assoc), ==, 0);
        sctp_test_link_pump(&link, 10);
        g_assert_cmpint(link.client.up_events, ==, 1);
        g_assert_cmpint(link.server.up_events, ==, 1);
        uint16_t id = sctp_test_link_open(&link, first->peer, "reverse", "", true, -1, -1);
        g_assert_cmpuint(id % 2, ==, server_first ? 0 : 1);
        sctp_test_link_clear(&link);
    }
}

/* Messages between matching channels, checked on the receiving end. */
static void exchange(sctp_test_link *link, sctp_test_end *from, uint16_t id, const char *text)
{
    guint before = from->peer->messages->len;
    g_assert_cmpint(sctp_test_link_send(link, from, id, MOAT_SCTP_PPID_STRING,
                                        (const uint8_t *)text, strlen(text)),
                    ==, 0);
    sctp_test_link_pump(link, 1);
    g_assert_cmpuint(from->peer->messages->len, ==, before + 1);
    const sctp_test_message *m = sctp_test_end_message(from->peer, before);
    g_assert_cmpuint(m->stream_id, ==, id);
    g_assert_cmpuint(m->ppid, ==, MOAT_SCTP_PPID_STRING);
    gsize length;
    const char *data = g_bytes_get_data(m->data, &length);
    g_assert_cmpmem(data, length, text, strlen(text));
}

static void test_dcep_open(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);

    uint16_t a = sctp_test_link_open(&link, &link.client, "chat", "json-v1", false, 3, -1);
    g_assert_cmpuint(a % 2, ==, 0); /* the DTLS client's ids are even */
    const moat_data_channel_info *got =
        &g_array_index(link.server.opened, moat_data_channel_info, 0);
    g_assert_cmpstr(got->label, ==, "chat");
    g_assert_cmpstr(got->protocol, ==, "json-v1");
    g_assert_false(got->ordered);
    g_assert_cmpint(got->max_retransmits, ==, 3);
    g_assert_cmpint(got->max_lifetime_ms, ==, -1);
    g_assert_false(got->negotiated);

    uint16_t b = sctp_test_link_open(&link, &link.server, "files", "", true, -1, 2500);
    g_assert_cmpuint(b % 2, ==, 1);
    got = &g_array_index(link.client.opened, moat_data_channel_info, 0);
    g_assert_cmpstr(got->label, ==, "files");
    g_assert_cmpstr(got->protocol, ==, "");
    g_assert_true(got->ordered);
    g_assert_cmpint(got->max_retransmits, ==, -1);
    g_assert_cmpint(got->max_lifetime_ms, ==, 2500);

    /* The opener never reports its own channel as opened by the peer. */
    g_assert_cmpuint(link.client.opened->len, ==, 1);
    g_assert_cmpuint(link.server.opened->len, ==, 1);
    moat_data_channel_info info;
    g_assert_cmpint(moat_sctp_association_channel_info(link.server.assoc, a, &info), ==, 0);
    g_assert_cmpstr(info.label, ==, "chat");

    exchange(&link, &link.client, a, "hello server");
    exchange(&link, &link.server, a, "hello client");
    exchange(&link, &link.server, b, "on b");
    exchange(&link, &link.client, b, "back on b");

    /* The ACK came back: the opener's channel is no longer forced ordered. */
    moat_data_channel *ch = moat_data_channel_table_find(link.client.assoc->channels, a);
    g_assert_nonnull(ch);
    g_assert_false(ch->ack_pending);
    sctp_test_link_clear(&link);
}

/* A channel opened before the association is up goes out once it is. */
static void test_open_before_up(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    moat_data_channel_info info = sctp_test_channel_info("early", "", true, -1, -1);
    uint16_t id;
    g_assert_cmpint(moat_sctp_association_open_channel(link.client.assoc, &info, &id), ==, 0);
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_STRING,
                                               (const uint8_t *)"x", 1),
                    ==, -ENOTCONN);
    sctp_test_link_connect(&link);
    sctp_test_link_pump(&link, 1);
    g_assert_cmpuint(link.server.opened->len, ==, 1);
    g_assert_cmpstr(g_array_index(link.server.opened, moat_data_channel_info, 0).label, ==,
                    "early");
    exchange(&link, &link.client, id, "after up");
    sctp_test_link_clear(&link);
}

/* Closing a channel that never reached the wire ends it locally. */
static void test_close_before_up(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    moat_data_channel_info info = sctp_test_channel_info("never", "", true, -1, -1);
    uint16_t id;
    g_assert_cmpint(moat_sctp_association_open_channel(link.client.assoc, &info, &id), ==, 0);
    g_assert_cmpint(moat_sctp_association_close_channel(link.client.assoc, id), ==, 0);
    g_assert_cmpuint(link.client.closed->len, ==, 1);
    g_assert_cmpuint(g_array_index(link.client.closed, uint16_t, 0), ==, id);
    sctp_test_link_connect(&link);
    sctp_test_link_pump(&link, 5);
    g_assert_cmpuint(link.server.opened->len, ==, 0);
    sctp_test_link_clear(&link);
}

static void test_negotiated(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    moat_data_channel_info info = sctp_test_channel_info("pre-agreed", "", true, -1, -1);
    info.negotiated = true;
    info.stream_id = 7;
    uint16_t id = 0;
    g_assert_cmpint(moat_sctp_association_open_channel(link.client.assoc, &info, &id), ==, 0);
    g_assert_cmpuint(id, ==, 7);
    g_assert_cmpint(moat_sctp_association_open_channel(link.server.assoc, &info, &id), ==, 0);
    g_assert_cmpuint(id, ==, 7);
    /* The same id twice on one side is refused. */
    g_assert_cmpint(moat_sctp_association_open_channel(link.server.assoc, &info, &id), ==, -EEXIST);
    sctp_test_link_pump(&link, 5);
    /* No DCEP went over the wire: nobody saw an OPEN. */
    g_assert_cmpuint(link.client.opened->len, ==, 0);
    g_assert_cmpuint(link.server.opened->len, ==, 0);
    exchange(&link, &link.client, 7, "negotiated one way");
    exchange(&link, &link.server, 7, "negotiated other way");
    moat_sctp_counters c;
    moat_sctp_association_counters(link.server.assoc, &c);
    g_assert_cmpuint(c.messages_dropped, ==, 0);
    g_assert_cmpuint(c.messages_received, ==, 1);
    sctp_test_link_clear(&link);
}

static bool all_opened(sctp_test_link *link, void *arg)
{
    return link->server.opened->len >= GPOINTER_TO_UINT(arg);
}

static bool all_received(sctp_test_link *link, void *arg)
{
    return link->server.messages->len >= GPOINTER_TO_UINT(arg);
}

static void test_thousand_channels(void)
{
    enum { CHANNELS = 1000 };
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t *ids = g_new(uint16_t, CHANNELS);
    for (unsigned i = 0; i < CHANNELS; i++) {
        char label[32];
        g_snprintf(label, sizeof label, "channel-%u", i);
        moat_data_channel_info info = sctp_test_channel_info(label, "", true, -1, -1);
        g_assert_cmpint(moat_sctp_association_open_channel(link.client.assoc, &info, &ids[i]), ==,
                        0);
    }
    g_assert_true(sctp_test_link_pump_until(&link, all_opened, GUINT_TO_POINTER(CHANNELS), 2000));
    g_assert_cmpuint(link.server.opened->len, ==, CHANNELS);
    for (unsigned i = 0; i < CHANNELS; i++) {
        const moat_data_channel_info *info =
            &g_array_index(link.server.opened, moat_data_channel_info, i);
        char label[32];
        g_snprintf(label, sizeof label, "channel-%u", i);
        g_assert_cmpuint(info->stream_id, ==, ids[i]);
        g_assert_cmpstr(info->label, ==, label);
    }
    for (unsigned i = 0; i < CHANNELS; i++) {
        char text[32];
        g_snprintf(text, sizeof text, "message %u", i);
        g_assert_cmpint(sctp_test_link_send(&link, &link.client, ids[i], MOAT_SCTP_PPID_STRING,
                                            (const uint8_t *)text, strlen(text)),
                        ==, 0);
    }
    g_assert_true(sctp_test_link_pump_until(&link, all_received, GUINT_TO_POINTER(CHANNELS), 2000));
    g_assert_cmpuint(link.server.messages->len, ==, CHANNELS);
    /* Ordered channels, one message each: each arrives on its own stream. */
    bool *seen = g_new0(bool, 65536);
    for (unsigned i = 0; i < CHANNELS; i++) {
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        g_assert_false(seen[m->stream_id]);
        seen[m->stream_id] = true;
        unsigned index = 0;
        while (index < CHANNELS && ids[index] != m->stream_id)
            index++;
        g_assert_cmpuint(index, <, CHANNELS);
        char text[32];
        g_snprintf(text, sizeof text, "message %u", index);
        gsize length;
        const void *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpmem(data, length, text, strlen(text));
    }
    g_free(seen);
    g_free(ids);
    sctp_test_link_clear(&link);
}

static void test_message_types(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "types", "", true, -1, -1);
    const uint8_t binary[] = {0x00, 0xff, 0x10, 0x00};
    sctp_test_end *c = &link.client;
    g_assert_cmpint(
        sctp_test_link_send(&link, c, id, MOAT_SCTP_PPID_STRING, (const uint8_t *)"text", 4), ==,
        0);
    g_assert_cmpint(sctp_test_link_send(&link, c, id, MOAT_SCTP_PPID_BINARY, binary, 4), ==, 0);
    g_assert_cmpint(sctp_test_link_send(&link, c, id, MOAT_SCTP_PPID_STRING, NULL, 0), ==, 0);
    g_assert_cmpint(sctp_test_link_send(&link, c, id, MOAT_SCTP_PPID_BINARY, NULL, 0), ==, 0);
    g_assert_cmpint(sctp_test_link_send(&link, c, id, MOAT_SCTP_PPID_STRING_EMPTY, NULL, 0), ==, 0);
    /* DCEP's PPID and unknown ones are not the session's to send. */
    g_assert_cmpint(moat_sctp_association_send(c->assoc, id, MOAT_SCTP_PPID_DCEP, binary, 1), ==,
                    -EINVAL);
    g_assert_cmpint(moat_sctp_association_send(c->assoc, id, 52, binary, 1), ==, -EINVAL);
    g_assert_cmpint(moat_sctp_association_send(c->assoc, 999, MOAT_SCTP_PPID_BINARY, binary, 1), ==,
                    -ENOENT);
    sctp_test_link_pump(&link, 2);
    const struct {
        uint32_t ppid;
        size_t length;
    } expected[] = {
        {MOAT_SCTP_PPID_STRING, 4},       {MOAT_SCTP_PPID_BINARY, 4},
        {MOAT_SCTP_PPID_STRING_EMPTY, 0}, {MOAT_SCTP_PPID_BINARY_EMPTY, 0},
        {MOAT_SCTP_PPID_STRING_EMPTY, 0},
    };
    g_assert_cmpuint(link.server.messages->len, ==, G_N_ELEMENTS(expected));
    for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        g_assert_cmpuint(m->ppid, ==, expected[i].ppid);
        g_assert_cmpuint(g_bytes_get_size(m->data), ==, expected[i].length);
    }
    gsize length;
    const void *data = g_bytes_get_data(sctp_test_end_message(&link.server, 1)->data, &length);
    g_assert_cmpmem(data, length, binary, sizeof binary);
    moat_sctp_counters counters;
    moat_sctp_association_counters(c->assoc, &counters);
    g_assert_cmpuint(counters.messages_sent, ==, 5);
    g_assert_cmpuint(counters.bytes_sent, ==, 8);
    moat_sctp_association_counters(link.server.assoc, &counters);
    g_assert_cmpuint(counters.messages_received, ==, 5);
    g_assert_cmpuint(counters.bytes_received, ==, 8);
    sctp_test_link_clear(&link);
}

static bool got_messages(sctp_test_link *link, void *arg)
{
    return link->client.messages->len + link->server.messages->len >= GPOINTER_TO_UINT(arg);
}

static void test_large_message(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "bulk", "", true, -1, -1);
    size_t size = MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE;
    uint8_t *payload = g_malloc(size);
    GRand *rand = g_rand_new_with_seed(7);
    for (size_t i = 0; i < size; i++)
        payload[i] = (uint8_t)g_rand_int(rand);
    g_rand_free(rand);
    g_assert_cmpint(
        sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, payload, size), ==, 0);
    g_assert_true(sctp_test_link_pump_until(&link, got_messages, GUINT_TO_POINTER(1), 2000));
    const sctp_test_message *m = sctp_test_end_message(&link.server, 0);
    gsize length;
    const void *data = g_bytes_get_data(m->data, &length);
    g_assert_cmpmem(data, length, payload, size);
    /* And back. */
    g_assert_cmpint(
        sctp_test_link_send(&link, &link.server, id, MOAT_SCTP_PPID_BINARY, data, length), ==, 0);
    g_assert_true(sctp_test_link_pump_until(&link, got_messages, GUINT_TO_POINTER(2), 2000));
    m = sctp_test_end_message(&link.client, 0);
    data = g_bytes_get_data(m->data, &length);
    g_assert_cmpmem(data, length, payload, size);
    g_assert_cmpuint(link.client.largest_packet, <=, MOAT_SCTP_MTU);
    g_assert_cmpuint(link.server.largest_packet, <=, MOAT_SCTP_MTU);
    g_free(payload);
    sctp_test_link_clear(&link);
}

/* With I-DATA (RFC 8260) on both ends, a small message on another channel
 * is not held up behind a large one queued before it. */
static void test_large_does_not_block_small(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t bulk = sctp_test_link_open(&link, &link.client, "bulk", "", true, -1, -1);
    uint16_t chat = sctp_test_link_open(&link, &link.client, "chat", "", true, -1, -1);
    size_t size = MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE;
    uint8_t *payload = g_malloc0(size);
    g_assert_cmpint(
        moat_sctp_association_send(link.client.assoc, bulk, MOAT_SCTP_PPID_BINARY, payload, size),
        ==, 0);
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, chat, MOAT_SCTP_PPID_STRING,
                                               (const uint8_t *)"hi", 2),
                    ==, 0);
    g_assert_true(sctp_test_link_pump_until(&link, got_messages, GUINT_TO_POINTER(2), 2000));
    g_assert_cmpuint(sctp_test_end_message(&link.server, 0)->stream_id, ==, chat);
    g_assert_cmpuint(sctp_test_end_message(&link.server, 1)->stream_id, ==, bulk);
    g_assert_cmpuint(g_bytes_get_size(sctp_test_end_message(&link.server, 1)->data), ==, size);
    g_free(payload);
    sctp_test_link_clear(&link);
}

static void numbered_message(uint8_t *out, size_t size, unsigned index)
{
    for (size_t i = 0; i < size; i++)
        out[i] = (uint8_t)(index * 31u + i * 7u);
    memcpy(out, &index, sizeof index);
}

/* Sends numbered messages from *sent on, pumping one tick whenever the send
 * buffer is full, for at most `attempts` tries or until `total`. */
static void send_numbered(sctp_test_link *link, uint16_t id, unsigned *sent, unsigned total,
                          unsigned attempts)
{
    uint8_t payload[16 * 1024];
    for (unsigned attempt = 0; attempt < attempts && *sent < total; attempt++) {
        numbered_message(payload, sizeof payload, *sent);
        int rc = moat_sctp_association_send(link->client.assoc, id, MOAT_SCTP_PPID_BINARY, payload,
                                            sizeof payload);
        if (rc == 0) {
            (*sent)++;
            continue;
        }
        g_assert_cmpint(rc, ==, -EAGAIN);
        sctp_test_link_pump(link, 1);
    }
}

/* The server stops reading after the first message (from inside its message
 * callback, as the gateway does): the client fills the server's window and
 * its own send buffer, then can hardly send more (a zero-window probe now
 * and then), for as long as the pause lasts; nothing more reaches the
 * server's owner and the association stays up. Resumed, every message
 * arrives, in order, byte-exact. */
static void test_paused_receiver_closes_the_window(void)
{
    enum { SIZE = 16 * 1024, TOTAL = 1200 };
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "bulk", "", true, -1, -1);
    link.server.pause_after = 1;
    unsigned sent = 0;
    /* 2000 tries, most of them a 10 ms tick: 20 s of SCTP time. */
    send_numbered(&link, id, &sent, TOTAL, 2000);
    /* The server's window (6 MiB) and the client's send buffer (1 MiB). */
    g_assert_cmpuint((size_t)sent * SIZE, >=, 4u * 1024 * 1024);
    g_assert_cmpuint((size_t)sent * SIZE, <=, 8u * 1024 * 1024);
    unsigned blocked_at = sent;
    send_numbered(&link, id, &sent, TOTAL, 1000);
    g_assert_cmpuint(sent - blocked_at, <=, 4);
    g_assert_cmpuint(link.server.messages->len, ==, 1);
    g_assert_cmpint(link.client.down_events + link.server.down_events, ==, 0);

    link.server.pause_after = 0;
    moat_sctp_association_pause_receive(link.server.assoc, false);
    uint8_t payload[SIZE];
    for (; sent < TOTAL; sent++) {
        numbered_message(payload, SIZE, sent);
        g_assert_cmpint(
            sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, payload, SIZE), ==,
            0);
    }
    g_assert_true(sctp_test_link_pump_until(&link, got_messages, GUINT_TO_POINTER(TOTAL), 5000));
    for (unsigned i = 0; i < TOTAL; i++) {
        numbered_message(payload, SIZE, i);
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        gsize length;
        const void *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpmem(data, length, payload, SIZE);
    }
    sctp_test_link_clear(&link);
}

static void test_oversized_rejected(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 1000);
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "small", "", true, -1, -1);
    uint8_t *payload = g_malloc0(MOAT_SCTP_SOCKET_BUFFER_SIZE + 1);
    g_assert_cmpint(
        moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY, payload, 1001), ==,
        -EMSGSIZE);
    g_assert_cmpint(
        moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY, payload, 1000), ==,
        0);
    sctp_test_link_pump(&link, 2);
    g_assert_cmpuint(link.server.messages->len, ==, 1);
    g_assert_cmpuint(g_bytes_get_size(sctp_test_end_message(&link.server, 0)->data), ==, 1000);
    sctp_test_link_clear(&link);

    /* Without a peer limit, ours applies: the whole message must fit the
     * send buffer. */
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    id = sctp_test_link_open(&link, &link.client, "big", "", true, -1, -1);
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY,
                                               payload, MOAT_SCTP_SOCKET_BUFFER_SIZE + 1),
                    ==, -EMSGSIZE);
    /* Above what we accept to receive, the peer's message is dropped whole
     * rather than buffered without bound. */
    g_assert_cmpint(sctp_test_link_send(&link, &link.server, id, MOAT_SCTP_PPID_BINARY, payload,
                                        MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE + 1),
                    ==, 0);
    exchange(&link, &link.server, id, "still fine");
    moat_sctp_counters counters;
    moat_sctp_association_counters(link.client.assoc, &counters);
    g_assert_cmpuint(counters.messages_dropped, ==, 1);
    g_assert_cmpuint(counters.messages_received, ==, 1);
    g_free(payload);
    sctp_test_link_clear(&link);
}

/* DCEP is peer input: junk on PPID 50 is dropped, nothing else changes. */
static void test_malformed_dcep(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    const uint8_t short_open[] = {0x03, 0x00, 0x00};
    const uint8_t bad_type[] = {0x07, 0x00, 0x00, 0x00, 0x00, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    const uint8_t label_beyond[] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                    0x00, 0x01, 0x00, 0x00, 0x00, 'a',  'b'};
    const uint8_t bad_channel_type[] = {0x03, 0x05, 0x00, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    const uint8_t long_ack[] = {0x02, 0x02};
    const uint8_t empty_open[] = {0x03};
    /* Well-formed OPEN on the server's parity (aiortc picks parity by ICE
     * role): accepted while the id is free. */
    const uint8_t wrong_parity[] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
                                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    /* Invalid UTF-8 label: refused with a stream reset. */
    const uint8_t bad_label[] = {0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x01, 0x00, 0x00, 0xff};
    struct {
        const uint8_t *data;
        size_t length;
        uint16_t stream;
    } junk[] = {
        {short_open, sizeof short_open, 0},     {bad_type, sizeof bad_type, 2},
        {label_beyond, sizeof label_beyond, 4}, {bad_channel_type, sizeof bad_channel_type, 6},
        {long_ack, sizeof long_ack, 8},         {empty_open, sizeof empty_open, 10},
        {bad_label, sizeof bad_label, 14},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(junk); i++)
        g_assert_cmpint(moat_sctp_association_send_raw(link.client.assoc, junk[i].stream,
                                                       MOAT_SCTP_PPID_DCEP, junk[i].data,
                                                       junk[i].length, false, 0, 0),
                        ==, 0);
    /* User data on a stream without a channel is dropped too. */
    g_assert_cmpint(moat_sctp_association_send_raw(link.client.assoc, 16, MOAT_SCTP_PPID_STRING,
                                                   (const uint8_t *)"x", 1, false, 0, 0),
                    ==, 0);
    sctp_test_link_pump(&link, 20);
    g_assert_cmpuint(link.server.opened->len, ==, 0);
    g_assert_cmpuint(link.server.messages->len, ==, 0);
    moat_sctp_counters counters;
    moat_sctp_association_counters(link.server.assoc, &counters);
    g_assert_cmpuint(counters.messages_dropped, ==, G_N_ELEMENTS(junk) + 1);
    g_assert_cmpint(link.server.down_events, ==, 0);
    g_assert_cmpint(link.client.down_events, ==, 0);
    g_assert_cmpint(moat_sctp_association_send_raw(link.client.assoc, 13, MOAT_SCTP_PPID_DCEP,
                                                   wrong_parity, sizeof wrong_parity, false, 0, 0),
                    ==, 0);
    sctp_test_link_pump(&link, 20);
    g_assert_cmpuint(link.server.opened->len, ==, 1);
    /* Still usable. */
    uint16_t id = sctp_test_link_open(&link, &link.client, "after junk", "", true, -1, -1);
    exchange(&link, &link.client, id, "fine");
    sctp_test_link_clear(&link);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/association/up-both-ways", test_up_both_ways);
    g_test_add_func("/sctp/association/up-one-side-connects", test_up_one_side_connects);
    g_test_add_func("/sctp/association/dcep-open", test_dcep_open);
    g_test_add_func("/sctp/association/open-before-up", test_open_before_up);
    g_test_add_func("/sctp/association/close-before-up", test_close_before_up);
    g_test_add_func("/sctp/association/negotiated", test_negotiated);
    g_test_add_func("/sctp/association/thousand-channels", test_thousand_channels);
    g_test_add_func("/sctp/association/message-types", test_message_types);
    g_test_add_func("/sctp/association/large-message", test_large_message);
    g_test_add_func("/sctp/association/large-does-not-block-small",
                    test_large_does_not_block_small);
    g_test_add_func("/sctp/association/oversized-rejected", test_oversized_rejected);
    g_test_add_func("/sctp/association/paused-receiver-closes-the-window",
                    test_paused_receiver_closes_the_window);
    g_test_add_func("/sctp/association/malformed-dcep", test_malformed_dcep);
    g_test_add_func("/sctp/association/abort-tells-the-peer", test_abort_tells_the_peer);
    return g_test_run();
}
