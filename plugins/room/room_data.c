/* A publisher's data channel messages reach its subscribers: each message
 * goes to every subscriber watching it that has a data channel open, on
 * that channel (its first open one), through the core's relay_data (bounded
 * per subscriber, drops counted by the core and here). */
#include "room.h"

#include <string.h>

void room_data_on_channel(void *state, uint16_t stream_id, const char *label, bool open)
{
    room_peer *peer = state;
    int expected = 0;
    if (open)
        atomic_compare_exchange_strong(&peer->data_stream, &expected, (int)stream_id + 1);
    else {
        expected = (int)stream_id + 1;
        atomic_compare_exchange_strong(&peer->data_stream, &expected, 0);
    }
}

typedef struct {
    moat_plugin_session *handle;
    uint16_t stream_id;
} data_target;

/* Up to `max` subscribers of `publisher` with a channel, from index *from
 * on, referenced; *from moves past those scanned. Room lock held. */
static size_t take_targets(room *r, room_peer *publisher, size_t *from, data_target *targets,
                           size_t max)
{
    size_t n = 0;
    for (; *from < r->n_subscribers && n < max; (*from)++) {
        room_peer *s = r->subscribers[*from];
        int stream = atomic_load(&s->data_stream);
        if (s->source != publisher || stream == 0)
            continue;
        targets[n].handle = s->handle;
        targets[n].stream_id = (uint16_t)(stream - 1);
        publisher->gateway->handle_ref(targets[n++].handle);
    }
    return n;
}

void room_data_on_data(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                       size_t length)
{
    room_peer *peer = state;
    if (peer->hung_up || !peer->publisher || !peer->gateway->relay_data)
        return;
    atomic_fetch_add_explicit(&peer->data_messages, 1, memory_order_relaxed);
    data_target targets[ROOM_FANOUT_CHUNK];
    room *r = peer->room;
    size_t from = 0;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t n = take_targets(r, peer, &from, targets, ROOM_FANOUT_CHUNK);
        bool more = from < r->n_subscribers;
        pthread_mutex_unlock(&r->lock);
        for (size_t i = 0; i < n; i++) {
            if (peer->gateway->relay_data(targets[i].handle, targets[i].stream_id, ppid, data,
                                          length) != 0)
                atomic_fetch_add_explicit(&peer->data_dropped, 1, memory_order_relaxed);
            peer->gateway->handle_unref(targets[i].handle);
        }
        if (!more)
            break;
    }
}
