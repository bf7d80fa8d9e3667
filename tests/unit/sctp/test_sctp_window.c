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
    /* Half the default session memory, within the TCP-like window cap. */
    g_assert_cmpuint(receive, ==, MIN(MOAT_SCTP_SESSION_BYTES_DEFAULT / 2, MOAT_SCTP_MAX_WINDOW));
    /* However much memory a session may use, no window passes the cap. */
    moat_sctp_association_set_memory_limit(link.client.assoc, 64u * 1024u * 1024u);
    moat_sctp_association_buffer_sizes(link.client.assoc, &send, &receive);
    g_assert_cmpuint(receive, ==, MOAT_SCTP_MAX_WINDOW);
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

/* `end` received messages 0..count-1, each whole and in order; bytes is
 * scratch space for the largest message. */
static void assert_received_all(const sctp_test_end *end, guint count, uint8_t *bytes)
{
    g_assert_cmpuint(end->messages->len, ==, count);
    for (guint i = 0; i < count; i++) {
        const sctp_test_message *m = sctp_test_end_message(end, i);
        size_t size = message_size(i);
        fill_message(i, bytes, size);
        gsize length;
        const void *data = g_bytes_get_data(m->data, &length);
        g_assert_cmpmem(data, length, bytes, size);
    }
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
    assert_received_all(&link.server, COUNT, bytes);
    g_free(bytes);
    sctp_test_link_clear(&link);
}

/* A budget of fixed capacity that records what it lent. */
typedef struct {
    size_t capacity, lent, most_lent;
    unsigned refusals;
} test_budget;

static bool budget_take(void *user, size_t bytes)
{
    test_budget *b = user;
    if (bytes > b->capacity - b->lent) {
        b->refusals++;
        return false;
    }
    b->lent += bytes;
    b->most_lent = MAX(b->most_lent, b->lent);
    return true;
}

static void budget_give(void *user, size_t bytes)
{
    test_budget *b = user;
    g_assert_cmpuint(bytes, <=, b->lent);
    b->lent -= bytes;
}

static size_t above_base(size_t size)
{
    return size > MOAT_SCTP_SOCKET_BUFFER_SIZE ? size - MOAT_SCTP_SOCKET_BUFFER_SIZE : 0;
}

/* What an owner's periodic tick does. */
static bool nothing_lent(sctp_test_link *link, void *arg)
{
    test_budget **budgets = arg;
    moat_sctp_association_tick(link->client.assoc);
    moat_sctp_association_tick(link->server.assoc);
    return budgets[0]->lent == 0 && budgets[1]->lent == 0;
}

/* What the budget lent is exactly what both buffers hold above the base. */
static void assert_charged(const moat_sctp_association *a, const test_budget *b)
{
    size_t send, receive;
    moat_sctp_association_buffer_sizes(a, &send, &receive);
    g_assert_cmpuint(b->lent, ==, above_base(send) + above_base(receive));
    g_assert_cmpuint(b->lent, <=, b->capacity);
}

/* With a budget, INIT borrows the receive half and gives it back once up;
 * a transfer grows the buffers only as far as the budget lends; freeing
 * gives back everything; the data arrives whole and in order. */
static void test_budget_pays_for_growth(void)
{
    enum { COUNT = 600 };
    const size_t limit = 8 * 1024 * 1024;
    test_budget client_budget = {.capacity = 512 * 1024};
    test_budget server_budget = {.capacity = 64 * 1024 * 1024};
    moat_sctp_memory_budget cb = {budget_take, budget_give, &client_budget};
    moat_sctp_memory_budget sb = {budget_take, budget_give, &server_budget};
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    link.tick_sleep_us = 200;
    moat_sctp_association_set_memory_limit(link.client.assoc, limit);
    moat_sctp_association_set_memory_limit(link.server.assoc, limit);
    moat_sctp_association_set_memory_budget(link.client.assoc, &cb);
    moat_sctp_association_set_memory_budget(link.server.assoc, &sb);
    size_t send, receive;
    /* The client's budget cannot lend the half: INIT offers the base. */
    moat_sctp_association_buffer_sizes(link.client.assoc, &send, &receive);
    g_assert_cmpuint(receive, ==, MOAT_SCTP_SOCKET_BUFFER_SIZE);
    g_assert_cmpuint(client_budget.refusals, >, 0);
    /* The server's can, until the association is up. */
    moat_sctp_association_buffer_sizes(link.server.assoc, &send, &receive);
    g_assert_cmpuint(receive, ==, limit / 2);
    assert_charged(link.server.assoc, &server_budget);
    sctp_test_link_connect(&link);
    moat_sctp_association_buffer_sizes(link.server.assoc, &send, &receive);
    g_assert_cmpuint(receive, ==, MOAT_SCTP_SOCKET_BUFFER_SIZE);
    g_assert_cmpuint(server_budget.lent, ==, 0);

    uint16_t id = sctp_test_link_open(&link, &link.client, "bulk", "", true, -1, -1);
    uint8_t *bytes = g_malloc(48 * 1024);
    for (guint i = 0; i < COUNT; i++) {
        size_t size = message_size(i);
        fill_message(i, bytes, size);
        g_assert_cmpint(
            sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, bytes, size), ==,
            0);
        assert_charged(link.client.assoc, &client_budget);
        assert_charged(link.server.assoc, &server_budget);
    }
    g_test_message("lent at most: client %zu, server %zu", client_budget.most_lent,
                   server_budget.most_lent);
    g_assert_cmpuint(server_budget.most_lent, >, 0);
    /* Idle for more than a second of real time, with the owner's periodic
     * tick: the growth is given back while the association stays up. */
    link.tick_sleep_us = 1000;
    test_budget *budgets[2] = {&client_budget, &server_budget};
    g_assert_true(sctp_test_link_pump_until(&link, nothing_lent, budgets, 3000));
    g_assert_cmpint(link.client.down_events, ==, 0);
    g_assert_cmpuint(client_budget.lent, ==, 0);
    g_assert_cmpuint(server_budget.lent, ==, 0);
    assert_charged(link.client.assoc, &client_budget);
    assert_charged(link.server.assoc, &server_budget);
    moat_sctp_association_shutdown(link.client.assoc);
    g_assert_true(sctp_test_link_pump_until(&link, both_down, NULL, 6000));
    g_assert_cmpuint(client_budget.most_lent, <=, client_budget.capacity);
    assert_received_all(&link.server, COUNT, bytes);
    g_free(bytes);
    sctp_test_link_clear(&link);
    g_assert_cmpuint(client_budget.lent, ==, 0);
    g_assert_cmpuint(server_budget.lent, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/window/defaults", test_defaults);
    g_test_add_func("/sctp/window/limit-shrinks", test_limit_shrinks);
    g_test_add_func("/sctp/window/grown-windows-lossy-transfer", test_grown_windows_lossy_transfer);
    g_test_add_func("/sctp/window/budget-pays-for-growth", test_budget_pays_for_growth);
    return g_test_run();
}
