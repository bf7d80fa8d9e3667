"""Data-channel memory limits ([limits] datachannel_total_mib and
datachannel_session_bytes) against aiortc peers: beyond the gateway's total,
a new session gets no data channels (counted as a datachannel_limit drop)
while earlier sessions keep echoing, and a session that hangs up gives its
share back."""
import asyncio
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
