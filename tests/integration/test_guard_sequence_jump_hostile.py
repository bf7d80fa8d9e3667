"""A stream of a peer without SRTP+ (aiortc, like a browser) whose sequence
number jumps ahead while its transport's detector enforces (review of the
flood defences, defect 2): 5000 packets sent and none arrived, as after a
100 s outage of 50 pkt/s audio. libsrtp accepts the jump (the same
roll-over counter, less than 2^15 ahead), but the stream guard dropped
every packet more than 4096 ahead of the highest authenticated index as
`index`, and only an authenticated packet moves that index: the stream was
dropped for good, in user space and in the kernel filter alike. Now packets
ahead of the window reach srtp_unprotect through the jump probe (20 a second
a stream, each with the same chance; in the kernel about 2 a 100 ms window
of a session) and the first one that authenticates re-centres the window.
Forgeries there cost that probe only (unit `prefilter_stream_guard`
/forgeries-ahead-cost-the-probe-only; `test_kernel_filter`'s flood 8000 to
28000 ahead still dies in the kernel as `index`)."""
import asyncio
import json

import pytest

from aiortc import RTCPeerConnection
from aiortc.rtp import is_rtcp

from aiortc_peer import ToneTrack, whip_delete, whip_publish
from conftest import Gateway

JUMP = 5000
BEFORE_S = 2.5
AFTER_S = 3.0
AUDIO_PPS = 50


def jump_after_toggle(pc):
    """The audio's RTP sequence numbers are JUMP ahead (before SRTP protects
    them, so they authenticate) once the returned dict's "on" is set."""
    transport = pc.getSenders()[0].transport
    send = transport._send_rtp
    state = {"on": False}

    async def shifted(data):
        if state["on"] and not is_rtcp(data):
            sequence = (int.from_bytes(data[2:4], "big") + JUMP) & 0xffff
            data = data[:2] + sequence.to_bytes(2, "big") + data[4:]
        await send(data)

    transport._send_rtp = shifted
    return state


def transport_of(gateway):
    transports = json.loads(gateway.get("/api/stats"))["transports"]
    assert len(transports) == 1, transports
    return transports[0]


@pytest.mark.parametrize("kernel", ["off", "on"])
def test_a_stream_that_jumps_ahead_recovers_while_enforcing(kernel):
    gateway = Gateway(workers=1, extra_args=("--prefilter-mode", "always",
                                             "--prefilter-kernel", kernel))
    try:
        if kernel == "on":
            assert gateway.metric("moat_kernel_filter_active") == 1

        async def run():
            pc = RTCPeerConnection()
            pc.addTrack(ToneTrack())
            jump = jump_after_toggle(pc)
            resource, _ = await whip_publish(pc, gateway.base + "/whip/echo")
            await asyncio.sleep(BEFORE_S)
            before = transport_of(gateway)
            jump["on"] = True
            await asyncio.sleep(AFTER_S)
            # /api/stats is a snapshot up to 0.5 s old.
            await asyncio.sleep(0.6)
            after = transport_of(gateway)
            await whip_delete(resource)
            await pc.close()
            return before, after

        before, after = asyncio.run(run())
    finally:
        assert gateway.stop() == 0, f"moat exited badly; log in {gateway.log_path}"
    assert before["enforcing"] and after["enforcing"], (before, after)
    assert before["srtpplus"] is None
    assert before["rtp_received"] >= AUDIO_PPS, before  # the stream had authenticated
    received = after["rtp_received"] - before["rtp_received"]
    index = after["drops"]["index"] - before["drops"]["index"]
    print(f"kernel {kernel}: after the jump {received} received, {index} dropped as index")
    # The stream goes on after the jump (before: nothing after it, every
    # packet an `index` drop).
    assert received >= 0.8 * AUDIO_PPS * AFTER_S, (received, before, after)
    # At most the packets before the window re-centred (the kernel learns
    # the new highest index at its next sync).
    assert index <= 5, (index, after["drops"])
    assert after["drops"]["auth"] == 0, after["drops"]
