"""Backpressure on reliable data channels (issue 20): what the gateway's SCTP
acknowledged reaches the plugin and comes back, however far the sender runs
ahead of the echoes. An aiortc peer sends 32 MiB in 16 KiB messages to the
echo plugin at the default limits, paced only by its own bufferedAmount (as a
browser application is: send while bufferedAmount is under a high-water mark,
then wait for bufferedamountlow), so the gateway must slow the sender down
(stop reading, the receive window closes) instead of dropping echoes once its
queue is full. Every message must come back byte-exact and in order, nothing
may be counted as a datachannel_limit drop, and the bulk transfer must switch
no flood detector on (neither the transport's nor the worker socket's)."""
import asyncio
import random
import time

from datachannel_peer import DataChannelPeer

KIB = 1024
MIB = 1024 * KIB
MESSAGE = 16 * KIB
COUNT = 2048  # 32 MiB
# A browser application's pacing: keep up to 4 MiB in the channel's buffer,
# top it up when it falls under 1 MiB.
HIGH_WATER = 4 * MIB
LOW_WATER = 1 * MIB
TRANSFER_S = 45


def numbered_messages(seed, count, size):
    rng = random.Random(seed)
    return [index.to_bytes(4, "big") + rng.randbytes(size - 4) for index in range(count)]


def first_loss(expected, received):
    for index, (want, got) in enumerate(zip(expected, received)):
        if want != got:
            return f"message {index} differs (got number {int.from_bytes(got[:4], 'big')})"
    return f"{len(received)} of {len(expected)} messages came back"


def detector_switches(gateway):
    m = gateway.metrics()
    return (m.get("moat_detector_switches_on_total", 0.0),
            m.get("moat_detector_worker_switches_on_total", 0.0))


def test_32_mib_paced_by_buffered_amount_all_echoed(gateway):
    messages = numbered_messages(20, COUNT, MESSAGE)
    switches_before = detector_switches(gateway)

    async def scenario():
        peer = await DataChannelPeer(gateway.base, [{"label": "bulk"}]).connect()
        channel = peer.channels[0]
        started = time.monotonic()
        deadline = started + TRANSFER_S
        try:
            sent = await channel.send_buffered(messages, deadline, HIGH_WATER, LOW_WATER)
            await channel.wait_received(COUNT, deadline)
            elapsed = time.monotonic() - started
            return sent, channel.received, elapsed, channel.closed.is_set(), await peer.delete()
        finally:
            await peer.close()

    sent, received, elapsed, closed, status = asyncio.run(scenario())
    drops = gateway.drops("datachannel_limit")
    print(f"32 MiB echoed: {len(received)} of {sent} messages in {elapsed:.1f} s, "
          f"{drops:.0f} datachannel_limit drops")
    assert not closed, "the channel closed during the transfer"
    assert sent == COUNT, f"only {sent} messages sent within {TRANSFER_S} s"
    assert received == messages, first_loss(messages, received)
    assert drops == 0
    assert status == 200
    m = gateway.metrics()
    assert m["moat_datachannel_messages_received_total"] == COUNT
    assert m["moat_datachannel_messages_sent_total"] == COUNT
    assert m["moat_datachannel_bytes_sent_total"] == COUNT * MESSAGE
    assert detector_switches(gateway) == switches_before, \
        "legitimate data-channel traffic switched a flood detector on"
