/* Several workers, one shared usrsctp: the main thread drives the SCTP clock
 * (it called moat_sctp_stack_handle_timers first) while worker threads run
 * their own pairs of associations. Every callback must run on the thread
 * that owns the association, even for packets usrsctp emits from timers
 * fired on the main thread. */
#include <string.h>

#include <glib.h>

#include "sctp/sctp_association.h"
#include "sctp/sctp_stack.h"
#include "sctp_test_link.h"

enum { WORKERS = 3, MESSAGES = 300 };

static gint workers_running;

static bool received_all(sctp_test_link *link, void *arg)
{
    return link->server.messages->len >= MESSAGES;
}

static bool both_down(sctp_test_link *link, void *arg)
{
    return link->client.down_events > 0 && link->server.down_events > 0;
}

static gpointer worker(gpointer arg)
{
    guint index = GPOINTER_TO_UINT(arg);
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    link.tick_sleep_us = 500;
    link.client.owner_thread = g_thread_self();
    link.server.owner_thread = g_thread_self();
    sctp_test_link_connect(&link);
    uint16_t id = sctp_test_link_open(&link, &link.client, "worker", "", true, -1, -1);
    GRand *rand = g_rand_new_with_seed(index);
    uint8_t *payload = g_malloc(16 * 1024);
    for (guint i = 0; i < MESSAGES; i++) {
        size_t size = (size_t)g_rand_int_range(rand, 1, 16 * 1024);
        memset(payload, (int)(i & 0xff), size);
        g_assert_cmpint(
            sctp_test_link_send(&link, &link.client, id, MOAT_SCTP_PPID_BINARY, payload, size), ==,
            0);
    }
    g_assert_true(sctp_test_link_pump_until(&link, received_all, NULL, 20000));
    for (guint i = 0; i < MESSAGES; i++) {
        gsize length;
        const uint8_t *data =
            g_bytes_get_data(sctp_test_end_message(&link.server, i)->data, &length);
        g_assert_cmpuint(data[0], ==, i & 0xff);
        g_assert_cmpuint(data[length - 1], ==, i & 0xff);
    }
    /* A graceful end needs timers (delayed SACK, SHUTDOWN exchange), and
     * those fire on the main thread. */
    moat_sctp_association_shutdown(link.client.assoc);
    g_assert_true(sctp_test_link_pump_until(&link, both_down, NULL, 20000));
    g_free(payload);
    g_rand_free(rand);
    sctp_test_link_clear(&link);
    g_atomic_int_dec_and_test(&workers_running);
    return NULL;
}

static void test_workers_share_the_stack(void)
{
    g_assert_cmpint(moat_sctp_stack_init(), ==, 0);
    /* The first caller drives the clock for the whole process. */
    moat_sctp_stack_handle_timers(MOAT_SCTP_TIMER_INTERVAL_MS);
    GThread *threads[WORKERS];
    g_atomic_int_set(&workers_running, WORKERS);
    for (guint i = 0; i < WORKERS; i++)
        threads[i] = g_thread_new("sctp-worker", worker, GUINT_TO_POINTER(i));
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (g_atomic_int_get(&workers_running) > 0 && g_get_monotonic_time() < deadline) {
        moat_sctp_stack_handle_timers(MOAT_SCTP_TIMER_INTERVAL_MS);
        g_usleep(1000);
    }
    g_assert_cmpint(g_atomic_int_get(&workers_running), ==, 0);
    for (guint i = 0; i < WORKERS; i++)
        g_thread_join(threads[i]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/threads/workers-share-the-stack", test_workers_share_the_stack);
    return g_test_run();
}
