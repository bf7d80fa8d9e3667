/* Unit tests for the room's data-channel fan-out (plugins/room/room_data.c)
 * over a fake gateway: a subscriber leaving while the fan-out relays (the
 * room lock released, as room_leave swap-removes it) costs nobody else the
 * message; a subscriber's second channel takes over when its first closes,
 * also its 17th when the first 16 close. */
#include <glib.h>
#include <stdlib.h>

#include "room.h"

#define N 200

static room the_room;
static room_peer publisher, subscribers[N];
static int got[N];
static int calls;

static void no_ref(moat_plugin_session *handle) {}

static int relay(moat_plugin_session *handle, uint16_t stream_id, uint32_t ppid,
                 const uint8_t *data, size_t length)
{
    int index = (int)(intptr_t)handle - 1;
    got[index]++;
    if (++calls == 1) { /* another thread: subscriber 0 leaves */
        pthread_mutex_lock(&the_room.lock);
        for (size_t i = 0; i < the_room.n_subscribers; i++) {
            if (the_room.subscribers[i] == &subscribers[0]) {
                the_room.subscribers[i] = the_room.subscribers[--the_room.n_subscribers];
                break;
            }
        }
        pthread_mutex_unlock(&the_room.lock);
    }
    g_assert_cmpuint(stream_id, ==, (unsigned)(index % 3));
    return 0;
}

static moat_gateway_calls gateway = {.handle_ref = no_ref, .handle_unref = no_ref};

static void setup(void)
{
    gateway.relay_data = relay;
    pthread_mutex_init(&the_room.lock, NULL);
    the_room.subscribers = calloc(N, sizeof *the_room.subscribers);
    the_room.n_subscribers = 0;
    publisher = (room_peer){.gateway = &gateway, .room = &the_room, .publisher = true};
    for (int i = 0; i < N; i++) {
        subscribers[i] = (room_peer){.gateway = &gateway,
                                     .handle = (moat_plugin_session *)(intptr_t)(i + 1),
                                     .source = &publisher};
        room_data_on_channel(&subscribers[i], (uint16_t)(i % 3), "viewer", true);
        the_room.subscribers[the_room.n_subscribers++] = &subscribers[i];
        got[i] = 0;
    }
    calls = 0;
}

static void test_a_leave_mid_fanout_costs_nobody_else(void)
{
    setup();
    const uint8_t message[4] = {1, 2, 3, 4};
    room_data_on_data(&publisher, 1, 53, message, sizeof message);
    for (int i = 1; i < N; i++)
        g_assert_cmpint(got[i], ==, 1);
    free(the_room.subscribers);
}

static void test_second_channel_takes_over(void)
{
    setup();
    room_peer *s = &subscribers[3]; /* its channel: stream 0 */
    room_data_on_channel(s, 7, "second", true);
    g_assert_cmpint(atomic_load(&s->data_stream), ==, 1);
    room_data_on_channel(s, 0, "viewer", false);
    g_assert_cmpint(atomic_load(&s->data_stream), ==, 8);
    room_data_on_channel(s, 7, "second", false);
    g_assert_cmpint(atomic_load(&s->data_stream), ==, 0);
    free(the_room.subscribers);
}

/* Before, only 16 open channels were remembered: the 17th was forgotten,
 * and once the first 16 closed the subscriber got nothing. */
static void test_seventeenth_channel_takes_over(void)
{
    setup();
    room_peer *s = &subscribers[3]; /* its channel: stream 0 */
    for (uint16_t id = 2; id <= 32; id += 2)
        room_data_on_channel(s, id, "more", true);
    for (uint16_t id = 0; id <= 30; id += 2)
        room_data_on_channel(s, id, "", false);
    g_assert_cmpint(atomic_load(&s->data_stream), ==, 33);
    room_data_on_channel(s, 2047, "last", true);
    room_data_on_channel(s, 32, "", false);
    g_assert_cmpint(atomic_load(&s->data_stream), ==, 2048);
    room_data_on_channel(s, 2047, "", false);
    g_assert_cmpint(atomic_load(&s->data_stream), ==, 0);
    free(the_room.subscribers);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/data/leave-mid-fanout", test_a_leave_mid_fanout_costs_nobody_else);
    g_test_add_func("/room/data/second-channel", test_second_channel_takes_over);
    g_test_add_func("/room/data/seventeenth-channel", test_seventeenth_channel_takes_over);
    return g_test_run();
}
