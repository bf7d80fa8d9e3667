"""Data-channel memory limits ([limits] datachannel_total_mib and
datachannel_session_bytes) against aiortc peers: beyond the gateway's total,
a new session gets no data channels (counted as a datachannel_limit drop)
while earlier sessions keep echoing, and a session that hangs up gives its
share back. A session whose echoes the total cannot hold any more is slowed
down (it stops reading: backpressure), it loses nothing it acknowledged."""
import asyncio
import random
import time

from conftest import Gateway
from datachannel_peer import DataChannelPeer

MIB = 1024 * 1024


def test_total_limit_refuses_channels_beyond_it_and_frees_on_hangup():
    # Each association reserves 3 MiB (socket buffers and reassembly): one
    # session fits in 4 MiB, a second does not.
    gw = Gateway(workers=1, env={"MOAT_LIMITS_DATACHANNEL_TOTAL_MIB": "4"})
    try:
        assert gw.metric("moat_datachannel_memory_limit_bytes") == 4 * MIB

        async def scenario():
            first = await DataChannelPeer(gw.base, [{"label": "first"}]).connect()
            try:
                assert gw.metric("moat_datachannel_memory_bytes") >= 3 * MIB
                second = DataChannelPeer(gw.base, [{"label": "second"}])
                refused = False
                try:
                    await second.connect(timeout=5)
                except asyncio.TimeoutError:
                    refused = True
                finally:
                    await second.close()
                assert refused, "a second session got data channels past the total limit"
                assert gw.drops("datachannel_limit") >= 1
                # The first session is unaffected.
                channel = first.channels[0]
                channel.send("still here")
                await channel.wait_received(1, time.monotonic() + 10)
                assert channel.received == ["still here"]
                assert await first.delete() == 200
            finally:
                await first.close()
            # Its share comes back once it has ended (the second session, whose
            # peer is gone, holds none).
            deadline = time.monotonic() + 10
            while gw.metric("moat_datachannel_memory_bytes") > 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            assert gw.metric("moat_datachannel_memory_bytes") == 0
            third = await DataChannelPeer(gw.base, [{"label": "third"}]).connect()
            try:
                channel = third.channels[0]
                channel.send(b"\x01" * 1000)
                await channel.wait_received(1, time.monotonic() + 10)
                assert channel.received == [b"\x01" * 1000]
            finally:
                await third.close()

        asyncio.run(scenario())
    finally:
        assert gw.stop() == 0


def test_limits_rejected_below_the_association_share():
    """The per-session limit cannot be set below what one association holds
    plus 1 MiB of queue."""
    import subprocess
    from conftest import MOAT
    result = subprocess.run([str(MOAT), "--datachannel-session-bytes", "1048576", "--http-port",
                             "1"], capture_output=True, text=True, timeout=10)
    assert result.returncode != 0
    assert "datachannel_session_bytes" in result.stderr + result.stdout


def test_total_limit_slows_the_sender_down_instead_of_dropping():
    """4 MiB in all: the association holds 3 MiB, so about 1 MiB is left for
    echoes waiting to be sent. The peer sends 8 MiB, paced only by its own
    bufferedAmount: the gateway stops reading while the total is nearly
    spent, and every message comes back (the old gateway refused the echoes
    beyond the total and counted them as datachannel_limit drops)."""
    gw = Gateway(workers=1, env={"MOAT_LIMITS_DATACHANNEL_TOTAL_MIB": "4"})
    rng = random.Random(4)
    messages = [i.to_bytes(4, "big") + rng.randbytes(16 * 1024 - 4) for i in range(512)]
    try:
        async def scenario():
            peer = await DataChannelPeer(gw.base, [{"label": "bulk"}]).connect()
            channel = peer.channels[0]
            deadline = time.monotonic() + 40
            try:
                await channel.send_buffered(messages, deadline, 2 * MIB, 512 * 1024)
                await channel.wait_received(len(messages), deadline)
                return list(channel.received)
            finally:
                await peer.delete()
                await peer.close()

        received = asyncio.run(scenario())
        assert len(received) == len(messages) and received == messages, \
            f"{len(received)} of {len(messages)} messages came back"
        assert gw.drops("datachannel_limit") == 0
        assert gw.metric("moat_datachannel_receive_pauses_total") > 0
    finally:
        assert gw.stop() == 0
