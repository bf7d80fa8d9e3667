"""Reliable ordered data channels between aiortc and the echo plugin: every
message comes back byte-exact, with its type (string or binary), in order,
on its own channel; /metrics counts each message once each way."""
import asyncio
import random
import time

from datachannel_peer import DataChannelPeer, payload_length, random_message

MAX_SIZE = 64 * 1024
LARGEST = 256 * 1024  # what Moat advertises and accepts as a=max-message-size


def first_difference(expected, received):
    for index, (want, got) in enumerate(zip(expected, received)):
        if type(want) is not type(got) or want != got:
            return (f"message {index} differs: sent {type(want).__name__} of "
                    f"{payload_length(want)} bytes, got {type(got).__name__} of "
                    f"{payload_length(got)} bytes")
    return f"{len(received)} of {len(expected)} messages came back"


def datachannel_counters(gateway):
    m = gateway.metrics()
    return {key: m[f"moat_datachannel_{key}_total"]
            for key in ("messages_received", "messages_sent", "bytes_received", "bytes_sent",
                        "messages_abandoned")}


def test_10000_random_messages_echo_in_order(gateway):
    rng = random.Random(20240611)
    messages = [random_message(rng, max_size=MAX_SIZE) for _ in range(9996)]
    # The extremes, each type: empty (sent with PPID 56/57) and 64 KiB.
    for extreme in ("", b"", random_message(rng, MAX_SIZE), bytes(MAX_SIZE)):
        messages.insert(rng.randrange(len(messages)), extreme)
    messages.insert(rng.randrange(len(messages)), "x" * MAX_SIZE)
    messages.pop()  # still 10 000
    assert len(messages) == 10000
    strings = sum(isinstance(m, str) for m in messages)
    assert 4000 < strings < 6000
    total_bytes = sum(payload_length(m) for m in messages)

    async def scenario():
        peer = await DataChannelPeer(gateway.base, [{"label": "ordered"}]).connect()
        channel = peer.channels[0]
        deadline = time.monotonic() + 45
        try:
            await channel.send_paced(messages, deadline)
            await channel.wait_received(len(messages), deadline)
            return channel.received, await peer.delete()
        finally:
            await peer.close()

    received, status = asyncio.run(scenario())
    assert len(received) == len(messages) and received == messages, \
        first_difference(messages, received)
    assert all(type(a) is type(b) for a, b in zip(messages, received))
    assert status == 200
    counters = datachannel_counters(gateway)
    assert counters == {"messages_received": 10000, "messages_sent": 10000,
                        "bytes_received": total_bytes, "bytes_sent": total_bytes,
                        "messages_abandoned": 0}, counters


def test_256_kib_messages_round_trip(gateway):
    rng = random.Random(7)
    messages = [rng.randbytes(LARGEST), random_message(rng, LARGEST), "after the large ones"]
    # A string of exactly 256 KiB in UTF-8, mostly multi-byte characters.
    messages.insert(2, "\u00e9\u20ac" * (LARGEST // 5) + "a" * (LARGEST % 5))
    assert payload_length(messages[2]) == LARGEST

    async def scenario():
        peer = await DataChannelPeer(gateway.base, [{"label": "large"}]).connect()
        channel = peer.channels[0]
        try:
            for message in messages:
                channel.send(message)
            await channel.wait_received(len(messages), time.monotonic() + 30)
            return channel.received
        finally:
            await peer.delete()
            await peer.close()

    received = asyncio.run(scenario())
    assert received == messages, first_difference(messages, received)
    counters = datachannel_counters(gateway)
    total = sum(payload_length(m) for m in messages)
    assert counters["messages_received"] == counters["messages_sent"] == len(messages)
    assert counters["bytes_received"] == counters["bytes_sent"] == total


def test_100_channels_each_echo_their_own_messages(gateway):
    channels, per_channel = 100, 50
    specs = [{"label": f"channel-{i}"} for i in range(channels)]

    def message(channel, index):
        text = f"{channel}/{index}/" + "z" * (index * 37 % 300)
        return text if index % 2 else text.encode()

    async def scenario():
        peer = await DataChannelPeer(gateway.base, specs).connect(timeout=20)
        try:
            labels = [c.channel.label for c in peer.channels]
            assert labels == [s["label"] for s in specs]
            assert len({c.channel.id for c in peer.channels}) == channels
            # Round-robin, so every channel's messages are interleaved with
            # every other's on the association.
            for index in range(per_channel):
                for number, channel in enumerate(peer.channels):
                    channel.send(message(number, index))
                await asyncio.sleep(0)
            deadline = time.monotonic() + 30
            await asyncio.gather(*(c.wait_received(per_channel, deadline) for c in peer.channels))
            return [c.received for c in peer.channels]
        finally:
            await peer.delete()
            await peer.close()

    received = asyncio.run(scenario())
    for number, got in enumerate(received):
        expected = [message(number, index) for index in range(per_channel)]
        assert got == expected, f"channel {number}: " + first_difference(expected, got)
    counters = datachannel_counters(gateway)
    assert counters["messages_received"] == counters["messages_sent"] == channels * per_channel
