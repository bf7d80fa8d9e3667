/* A publisher's data channel messages reach its subscribers: each message
 * goes to every subscriber watching it that has a data channel open, on
 * that channel (its first open one; another open one when that closes),
 * through the core's relay_data (bounded per subscriber, drops counted by
 * the core and here). */
#include "room.h"

#include <string.h>

void room_data_on_channel(void *state, uint16_t stream_id, const char *label, bool open)
{
    room_peer *peer = state;
    moat_open_channels_note(&peer->channels, stream_id, open);
    int expected = 0;
    if (open) {
        atomic_compare_exchange_strong(&peer->data_stream, &expected, (int)stream_id + 1);
    } else {
        /* The channel messages went to closed: another open one takes over. */
        expected = (int)stream_id + 1;
        int next = moat_open_channels_any(&peer->channels);
        atomic_compare_exchange_strong(&peer->data_stream, &expected, next);
    }
}

typedef struct {
    moat_plugin_session *handle;
    uint16_t stream_id;
} data_target;

/* Every subscriber of `publisher` with a channel, referenced, into
 * targets (room lock held: the whole list at once, so that one leaving
 * meanwhile cannot move another past the scan). */
static size_t take_targets(room *r, room_peer *publisher, data_target *targets)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_subscribers; i++) {
        room_peer *s = r->subscribers[i];
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
    data_target on_stack[ROOM_FANOUT_CHUNK];
    room *r = peer->room;
    pthread_mutex_lock(&r->lock);
    data_target *targets =
        r->n_subscribers <= ROOM_FANOUT_CHUNK ? on_stack : g_new(data_target, r->n_subscribers);
    size_t n = take_targets(r, peer, targets);
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < n; i++) {
        if (peer->gateway->relay_data(targets[i].handle, targets[i].stream_id, ppid, data,
                                      length) != 0)
            atomic_fetch_add_explicit(&peer->data_dropped, 1, memory_order_relaxed);
        peer->gateway->handle_unref(targets[i].handle);
    }
    if (targets != on_stack)
        g_free(targets);
}
