/* Unit tests for the room's per-packet simulcast fan-out
 * (plugins/room/room_fanout.c) over a fake gateway: a subscriber leaving
 * while the fan-out relays (the room lock released, room_leave swap-removes
 * it) costs nobody else the packet; only subscribers of this publisher that
 * want the packet's layer are sent it; every reference taken is given back. */
#include <glib.h>
#include <stdlib.h>

#include "room_fanout.h"

#define N 300 /* more than one relay call's stack of targets */

static room the_room;
static room_peer publisher, other_publisher, subscribers[N];
static int got[N];
static int calls, refs;

/* The layer choice is room_simulcast.c's: here a subscriber wants the
 * layers of its mask (0: every layer). */
bool room_simulcast_wants(const room_peer *s, int layer)
{
    unsigned mask = atomic_load(&s->layer_mask);
    return mask == 0 || (mask & (1u << layer)) != 0;
}

static void ref(moat_plugin_session *handle)
{
    refs++;
}
static void unref(moat_plugin_session *handle)
{
    refs--;
}

static void leave(room_peer *peer)
{
    pthread_mutex_lock(&the_room.lock);
    for (size_t i = 0; i < the_room.n_subscribers; i++) {
        if (the_room.subscribers[i] == peer) {
            the_room.subscribers[i] = the_room.subscribers[--the_room.n_subscribers];
            break;
        }
    }
    pthread_mutex_unlock(&the_room.lock);
}

static size_t relay_many(moat_plugin_session *const *handles, size_t n, const uint8_t *packet,
                         size_t length)
{
    if (++calls == 1)
        leave(&subscribers[0]); /* another thread, while this relays */
    for (size_t i = 0; i < n; i++)
        got[(intptr_t)handles[i] - 1]++;
    return n;
}

static moat_gateway_calls gateway = {
    .handle_ref = ref, .handle_unref = unref, .relay_rtp_many = relay_many};

static void setup(void)
{
    pthread_mutex_init(&the_room.lock, NULL);
    the_room.subscribers = calloc(N, sizeof *the_room.subscribers);
    the_room.n_subscribers = 0;
    publisher = (room_peer){.gateway = &gateway, .room = &the_room, .publisher = true};
    other_publisher = publisher;
    for (int i = 0; i < N; i++) {
        subscribers[i] = (room_peer){.gateway = &gateway,
                                     .handle = (moat_plugin_session *)(intptr_t)(i + 1),
                                     .source = &publisher};
        the_room.subscribers[the_room.n_subscribers++] = &subscribers[i];
        got[i] = 0;
    }
    calls = refs = 0;
}

static void teardown(void)
{
    room_fanout_close(&publisher);
    free(the_room.subscribers);
}

static void test_a_leave_mid_fanout_costs_nobody_else(void)
{
    setup();
    uint8_t data[12] = {0x80, 96};
    moat_rtp_packet p = {.data = data, .length = sizeof data};
    room_fanout_send_layer(&publisher, &p, 1);
    /* The one that left may or may not have had it; everyone else did. */
    for (int i = 1; i < N; i++)
        g_assert_cmpint(got[i], ==, 1);
    g_assert_cmpint(refs, ==, 0);
    /* The next packet: everyone still there, once. */
    room_fanout_send_layer(&publisher, &p, 1);
    for (int i = 1; i < N; i++)
        g_assert_cmpint(got[i], ==, 2);
    g_assert_cmpint(refs, ==, 0);
    teardown();
}

static void test_only_this_publishers_subscribers_of_the_layer(void)
{
    setup();
    for (int i = 0; i < N; i++) {
        if (i % 3 == 1)
            subscribers[i].source = &other_publisher;
        if (i % 3 == 2)
            atomic_store(&subscribers[i].layer_mask, 1u << 0); /* layer 0 only */
    }
    calls = 1; /* nobody leaves */
    uint8_t data[12] = {0x80, 96};
    moat_rtp_packet p = {.data = data, .length = sizeof data};
    room_fanout_send_layer(&publisher, &p, 2);
    for (int i = 0; i < N; i++)
        g_assert_cmpint(got[i], ==, i % 3 == 0 ? 1 : 0);
    room_fanout_send_layer(&publisher, &p, 0);
    for (int i = 0; i < N; i++)
        g_assert_cmpint(got[i], ==, i % 3 == 0 ? 2 : i % 3 == 2 ? 1 : 0);
    g_assert_cmpint(refs, ==, 0);
    teardown();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/fanout/leave-mid-fanout", test_a_leave_mid_fanout_costs_nobody_else);
    g_test_add_func("/room/fanout/publisher-and-layer",
                    test_only_this_publishers_subscribers_of_the_layer);
    return g_test_run();
}
