/* The room's fan-out (room_fanout.h): per publisher, the gateway's fan-out
 * list of the subscribers watching it, republished whenever the room's
 * membership or a subscriber's source changes; and the per-packet scan for
 * simulcast layers, which subscribers choose packet by packet. */
#include "room_fanout.h"
#include "room_simulcast.h"

#include <glib.h>

void room_fanout_open(room_peer *publisher)
{
    const moat_gateway_calls *g = publisher->gateway;
    if (g->fanout_new && g->fanout_set && g->fanout_send && g->fanout_free)
        publisher->fanout = g->fanout_new(publisher->handle);
}

void room_fanout_close(room_peer *publisher)
{
    if (publisher->fanout)
        publisher->gateway->fanout_free(publisher->fanout);
    publisher->fanout = NULL;
    g_free(publisher->layer_targets);
    publisher->layer_targets = NULL;
    publisher->layer_targets_size = 0;
}

void room_fanout_rebuild(room *r)
{
    /* Membership changes only: an allocation is fine here. */
    moat_plugin_session **handles = g_new(moat_plugin_session *, r->n_subscribers + 1);
    for (size_t p = 0; p < r->n_publishers; p++) {
        room_peer *publisher = r->publishers[p];
        if (!publisher->fanout)
            continue;
        size_t n = 0;
        for (size_t i = 0; i < r->n_subscribers; i++) {
            if (r->subscribers[i]->source == publisher)
                handles[n++] = r->subscribers[i]->handle;
        }
        publisher->gateway->fanout_set(publisher->fanout, handles, n);
    }
    g_free(handles);
}

bool room_fanout_send(room_peer *publisher, const moat_rtp_packet *p, int layer)
{
    if (!publisher->fanout || layer >= 0)
        return false;
    publisher->gateway->fanout_send(publisher->fanout, p->data, p->length);
    return true;
}

/* The subscribers watching `layer` of the publisher, referenced, into its
 * layer_targets (grown to the room's subscriber count). Room lock held. */
static size_t take_layer_targets(room *r, room_peer *publisher, int layer)
{
    if (publisher->layer_targets_size < r->n_subscribers) {
        size_t size = MAX(r->n_subscribers, 2 * publisher->layer_targets_size);
        publisher->layer_targets = g_renew(moat_plugin_session *, publisher->layer_targets, size);
        publisher->layer_targets_size = size;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->n_subscribers; i++) {
        room_peer *s = r->subscribers[i];
        if (s->source != publisher || !room_simulcast_wants(s, layer))
            continue;
        publisher->layer_targets[n] = s->handle;
        publisher->gateway->handle_ref(publisher->layer_targets[n++]);
    }
    return n;
}

void room_fanout_send_layer(room_peer *publisher, const moat_rtp_packet *p, int layer)
{
    /* Every target under one hold of the lock, so that one leaving
     * meanwhile (room_leave swap-removes) cannot move another past the
     * scan; served outside it: a subscriber on this worker is served right
     * away and may take the lock itself (room_forward.c). */
    room *r = publisher->room;
    pthread_mutex_lock(&r->lock);
    size_t n = take_layer_targets(r, publisher, layer);
    pthread_mutex_unlock(&r->lock);
    if (n)
        publisher->gateway->relay_rtp_many(publisher->layer_targets, n, p->data, p->length);
    for (size_t i = 0; i < n; i++)
        publisher->gateway->handle_unref(publisher->layer_targets[i]);
}
