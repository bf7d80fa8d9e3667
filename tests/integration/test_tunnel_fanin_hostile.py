"""Several lanes of one tunnel peer feeding one lane of the other (the
lane fallback: the other side has only lane 0), whose peer stops reading
for 6 s, under the 10 s after which a stalled peer's relayed copies are
shed. Every message the gateway acknowledged on a reliable ordered channel
must reach the receiver, in order per sending lane, with no drop counted
anywhere: each source stops reading past its own high-water mark, and the
target queues what they relayed even past its own limit. Before, the
target refused copies once its queue reached its 16 MiB limit, three
sources at 6.5 MiB each never paused, and about 4 in 5 messages were lost
(relay_refused, datachannel_limit, relay not_sent)."""
import asyncio
import time

import pytest

from tunnel_peer import TunnelPeer as Lane

pytestmark = pytest.mark.hostile

LANES = 3
MESSAGE = 60000
STALL_S = 6
BUFFERED = 2_000_000  # each sending lane keeps at most this much in aiortc
KEY_A = "A" * 20
KEY_B = "B" * 20
PAD = bytes(range(256)) * (MESSAGE // 256 + 1)


def message(lane, seq):
    head = bytes([lane]) + seq.to_bytes(4, "big")
    return head + PAD[:MESSAGE - len(head)]


def gate(pc):
    """The peer's SCTP takes nothing while state["stopped"] (as a stopped
    process: its datagrams are lost, the gateway's SCTP retransmits)."""
    sctp = pc.sctp
    handle = sctp._handle_data
    state = {"stopped": False}

    async def gated(data):
        if not state["stopped"]:
            await handle(data)
    sctp._handle_data = gated
    return state


def test_lanes_falling_back_to_one_slow_lane_lose_nothing(gateway):
    base = gateway.base + "/whip/tunnel/fanin"

    async def scenario():
        receiver = await Lane(f"{base}/{KEY_B}/0").connect()
        senders = [await Lane(f"{base}/{KEY_A}/{i}").connect() for i in range(LANES)]
        lanes = [receiver, *senders]
        try:
            # Each sending lane reaches the receiver's lane 0 (its own lane
            # i has no counterpart): one message each first.
            for i, s in enumerate(senders):
                s.channel.send(message(i, 0))
            deadline = time.monotonic() + 10
            while len(receiver.received) < LANES and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert len(receiver.received) == LANES, "the lanes do not reach the receiver"
            sent = [1] * LANES
            state = gate(receiver.pc)
            state["stopped"] = True
            started = time.monotonic()
            while time.monotonic() - started < STALL_S:
                for i, s in enumerate(senders):
                    if s.channel.bufferedAmount < BUFFERED:
                        s.channel.send(message(i, sent[i]))
                        sent[i] += 1
                await asyncio.sleep(0.005)
            state["stopped"] = False
            total = sum(sent)
            deadline = time.monotonic() + 60
            while len(receiver.received) < total and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)
            return sent, list(receiver.received)
        finally:
            for lane in lanes:
                await lane.close()

    sent, received = asyncio.run(scenario())
    m = gateway.metrics()
    counted = {k: v for k, v in m.items() if v and (
        k.startswith("moat_relay_dropped_data_messages_total")
        or k.startswith("moat_tunnel_dropped_messages_total")
        or k.startswith("moat_dropped_packets_total{reason=\"datachannel"))}
    print(f"sent {sent} ({sum(sent) * MESSAGE / 2**20:.0f} MiB), received {len(received)}, "
          f"pauses {m.get('moat_datachannel_receive_pauses_total', 0):.0f}, drops {counted}")
    # Enough was acknowledged during the stop to pass the target's own limit.
    assert sum(sent) * MESSAGE > 24 * 2**20, sent
    for i in range(LANES):
        got = [r for r in received if r[:1] == bytes([i])]
        assert got == [message(i, n) for n in range(sent[i])], \
            f"lane {i}: {len(got)} of {sent[i]} arrived in order"
    assert len(received) == sum(sent)
    assert gateway.drops("datachannel_limit") == 0
    assert gateway.drops("datachannel_stalled") == 0
    assert counted == {}
    assert m["moat_datachannel_receive_pauses_total"] > 0
