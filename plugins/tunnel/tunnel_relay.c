/* A peer's messages to its partner: one binary message is one IP packet,
 * handed as it is to the partner's channel through the core's relay_data
 * (bounded per target, with backpressure on the sender's association);
 * anything else is dropped and counted by reason. */
#include "tunnel.h"

#include "sctp/data_channel.h"

int tunnel_message_check(uint32_t ppid, size_t length)
{
    if (ppid != MOAT_SCTP_PPID_BINARY || length == 0)
        return TUNNEL_DROP_NOT_BINARY;
    if (length > TUNNEL_MAX_MESSAGE || length > MOAT_PLUGIN_RELAY_DATA_MAX)
        return TUNNEL_DROP_OVERSIZED;
    return -1;
}

static void drop(tunnel_peer *peer, tunnel_drop_reason reason)
{
    atomic_fetch_add_explicit(&peer->dropped[reason], 1, memory_order_relaxed);
}

void tunnel_on_data(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                    size_t length)
{
    tunnel_peer *peer = state;
    (void)stream_id;
    if (peer->hung_up)
        return;
    atomic_fetch_add_explicit(&peer->received, 1, memory_order_relaxed);
    int bad = tunnel_message_check(ppid, length);
    if (bad >= 0) {
        drop(peer, (tunnel_drop_reason)bad);
        return;
    }
    uint16_t target_stream = 0;
    tunnel_drop_reason reason = TUNNEL_DROP_NO_PEER;
    moat_plugin_session *target = tunnel_partner(peer, &target_stream, &reason);
    if (!target) {
        drop(peer, reason);
        return;
    }
    if (peer->gateway->relay_data(target, target_stream, ppid, data, length) == 0) {
        atomic_fetch_add_explicit(&peer->relayed, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&peer->relayed_bytes, length, memory_order_relaxed);
    } else {
        drop(peer, TUNNEL_DROP_RELAY_REFUSED);
    }
    peer->gateway->handle_unref(target);
}

void tunnel_on_channel(void *state, uint16_t stream_id, const char *label, bool open)
{
    tunnel_peer *peer = state;
    (void)label;
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
