/* Buffer sizing (sctp_window.c): the memory limit bounds both buffers and
 * the largest message, buffers that grow stay within it, and a transfer with
 * grown windows over a lossy wire still arrives whole, in order, and nothing
 * is lost when the association shuts down with data queued. */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "sctp/sctp_association.h"
#include "sctp/sctp_tuning.h"
#include "sctp_test_link.h"

static bool both_down(sctp_test_link *link, void *arg)
{
    return link->client.down_events > 0 && link->server.down_events > 0;
}

static void assert_within(const moat_sctp_association *a, size_t limit)
{
    size_t send, receive;
    moat_sctp_association_buffer_sizes(a, &send, &receive);
    g_assert_cmpuint(send, <=, limit / 2);
    g_assert_cmpuint(receive, <=, limit / 2);
    g_assert_cmpuint(send, >=, MOAT_SCTP_MIN_WINDOW);
    g_assert_cmpuint(receive, >=, MOAT_SCTP_MIN_WINDOW);
}

static void test_defaults(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    size_t send, receive;
    moat_sctp_association_buffer_sizes(link.client.assoc, &send, &receive);
    g_assert_cmpuint(send, ==, MOAT_SCTP_SOCKET_BUFFER_SIZE);
    g_assert_cmpuint(receive, ==, MOAT_SCTP_SESSION_BYTES_DEFAULT / 2);
    g_assert_cmpint(moat_sctp_association_set_mtu(link.client.assoc, MOAT_SCTP_MTU - 1), ==,
                    -EINVAL);
    g_assert_cmpint(moat_sctp_association_set_mtu(link.client.assoc, MOAT_SCTP_MAX_MTU + 1), ==,
                    -EINVAL);
    sctp_test_link_clear(&link);
}

/* A limit below the starting buffers shrinks them at once, and with them
 * the largest message we send; a tiny limit still leaves a working floor. */
static void test_limit_shrinks(void)
{
    const size_t limit = 512 * 1024;
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    sctp_test_link_connect(&link);
    moat_sctp_association_set_memory_limit(link.client.assoc, limit);
    assert_within(link.client.assoc, limit);
    uint16_t id = sctp_test_link_open(&link, &link.client, "small", "", true, -1, -1);
    uint8_t *payload = g_malloc0(limit / 2 + 1);
    g_assert_cmpint(moat_sctp_association_send(link.client.assoc, id, MOAT_SCTP_PPID_BINARY,
                                               payload, limit / 2 + 1),
                    ==, -EMSGSIZE);
    g_assert_cmpint(
        sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, payload, limit / 2), ==,
        0);
    sctp_test_link_pump(&link, 10);
    g_assert_cmpuint(link.server.messages->len, ==, 1);
    moat_sctp_association_set_memory_limit(link.client.assoc, 1000);
    size_t send, receive;
    moat_sctp_association_buffer_sizes(link.client.assoc, &send, &receive);
    g_assert_cmpuint(send, ==, MOAT_SCTP_MIN_WINDOW);
    g_assert_cmpuint(receive, ==, MOAT_SCTP_MIN_WINDOW);
    g_free(payload);
    sctp_test_link_clear(&link);
}

/* Message i: its size and bytes follow from i alone. */
static size_t message_size(guint i)
{
    return 1 + (i * 7919u) % (48 * 1024);
}

static void fill_message(guint i, uint8_t *bytes, size_t size)
{
    for (size_t k = 0; k < size; k++)
        bytes[k] = (uint8_t)(i * 31u + k * 7u);
    memcpy(bytes, &i, size < sizeof i ? size : sizeof i);
}

/* Bulk ordered data over a wire that loses 1% each way, with windows of a
 * 4 MiB limit (real time passes per tick so the send side's tuning runs):
 * every buffer stays within the limit, and after a shutdown asked
 * for with data still queued every message has arrived, byte-exact and in
 * order. */
static void test_grown_windows_lossy_transfer(void)
{
    enum { COUNT = 1500 };
    const size_t limit = 4 * 1024 * 1024;
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    link.tick_sleep_us = 200;
    sctp_test_link_connect(&link);
    moat_sctp_association_set_memory_limit(link.client.assoc, limit);
    moat_sctp_association_set_memory_limit(link.server.assoc, limit);
    uint16_t id = sctp_test_link_open(&link, &link.client, "bulk", "", true, -1, -1);
    link.client.drop_rate = 0.01;
    link.server.drop_rate = 0.01;
    uint8_t *bytes = g_malloc(48 * 1024);
    size_t largest_send = 0, largest_receive = 0;
    for (guint i = 0; i < COUNT; i++) {
        size_t size = message_size(i);
        fill_message(i, bytes, size);
        g_assert_cmpint(
            sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, bytes, size), ==,
            0);
        assert_within(link.client.assoc, limit);
        assert_within(link.server.assoc, limit);
        size_t send, receive;
        moat_sctp_association_buffer_sizes(link.client.assoc, &send, &receive);
        largest_send = MAX(largest_send, send);
        moat_sctp_association_buffer_sizes(link.server.assoc, &send, &receive);
        largest_receive = MAX(largest_receive, receive);
    }
    g_test_message("largest buffers: sender's send %zu, receiver's receive %zu", largest_send,
                   largest_receive);
    g_assert_cmpuint(largest_receive, ==, limit / 2);
    moat_sctp_association_shutdown(link.client.assoc);
    g_assert_true(sctp_test_link_pump_until(&link, both_down, NULL, 6000));
    assert_within(link.client.assoc, limit);
    assert_within(link.server.assoc, limit);
    g_assert_cmpuint(link.client.packets_dropped, >, 0);
    g_assert_cmpuint(link.server.messages->len, ==, COUNT);
    for (guint i = 0; i < COUNT; i++) {
        const sctp_test_message *m = sctp_test_end_message(&link.server, i);
        size_t size = message_size(i);
        fill_message(i, bytes, size);
        gsize length;
        const void *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpmem(data, length, bytes, size);
    }
    g_free(bytes);
    sctp_test_link_clear(&link);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/window/defaults", test_defaults);
    g_test_add_func("/sctp/window/limit-shrinks", test_limit_shrinks);
    g_test_add_func("/sctp/window/grown-windows-lossy-transfer", test_grown_windows_lossy_transfer);
    return g_test_run();
}
