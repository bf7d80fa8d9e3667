/* The room's fan-out lists (room_fanout.h): per publisher, the gateway's
 * fan-out list of the subscribers watching it, republished whenever the
 * room's membership or a subscriber's source changes. */
#include "room_fanout.h"

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
