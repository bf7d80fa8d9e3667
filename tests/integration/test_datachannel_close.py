"""Hanging up under load loses nothing: DELETE on the WHIP resource while
thousands of echoes are still queued in the gateway makes it send them all,
wait for the peer's acknowledgements, shut SCTP down, and only then send
DTLS close_notify. The peer sees every echo before its channel closes.

Why DELETE and not closing the PeerConnection: aiortc ends its side with an
SCTP ABORT, which by definition discards what is queued; the gateway's
graceful path (drain, SCTP SHUTDOWN, close_notify) is the one DELETE takes."""
import asyncio
import random
import re
import time

from datachannel_peer import DataChannelPeer, gateway_metrics

MESSAGES = 5000
MESSAGE_SIZE = 2000  # 10 MB in all: far more than SCTP's 1 MiB send buffer
# With backpressure the gateway reads only as fast as its echoes leave, so
# at the hang-up a few to a few thousand echoes are outstanding, and on a
# quick run none (the metric is polled over HTTP): such a run proves
# nothing about the drain and is tried again, a new session each time.
ATTEMPTS = 8


def test_hang_up_delivers_every_queued_echo_before_closing(gateway):
    rng = random.Random(99)
    messages = [f"{i:05d}:" + rng.randbytes(MESSAGE_SIZE // 2).hex()[: MESSAGE_SIZE - 6]
                for i in range(MESSAGES)]

    async def scenario(received_before):
        peer = await DataChannelPeer(gateway.base, [{"label": "drain"}]).connect()
        channel = peer.channels[0]
        try:
            for message in messages:
                channel.send(message)
            # Hang up as soon as the gateway has every message: most echoes
            # are then still in its queue or in flight.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                m = await gateway_metrics(gateway.base)
                received = m["moat_datachannel_messages_received_total"] - received_before
                if received >= MESSAGES:
                    break
                await asyncio.sleep(0.002)
            back_before_hang_up = len(channel.received)
            status = await peer.delete()
            await asyncio.wait_for(channel.closed.wait(), 15)
            # close_notify follows the SCTP shutdown.
            dtls = peer.pc.sctp.transport
            for _ in range(100):
                if dtls.state != "connected":
                    break
                await asyncio.sleep(0.05)
            return back_before_hang_up, status, channel, dtls.state
        finally:
            await peer.close()

    for attempt in range(ATTEMPTS):
        before = gateway.metrics()
        log_offset = len(gateway.log_text())
        back_before_hang_up, status, channel, dtls_state = asyncio.run(
            scenario(before.get("moat_datachannel_messages_received_total", 0)))
        if back_before_hang_up < MESSAGES:
            break
        print(f"attempt {attempt}: every echo was back before the hang-up; again")
    assert status == 200
    # The hang-up really came with echoes outstanding (with backpressure the
    # gateway reads only as fast as its echoes leave, so fewer are left at
    # the end than before: a few to a few thousand)...
    assert back_before_hang_up < MESSAGES, back_before_hang_up
    # ...and every one of them arrived before the channel reported closed.
    assert channel.received_when_closed == MESSAGES, \
        f"{channel.received_when_closed} of {MESSAGES} echoes before close " \
        f"({back_before_hang_up} before the hang-up)"
    assert channel.received == messages
    assert dtls_state == "closed"  # close_notify, not a failure

    m = gateway.metrics()
    assert m["moat_datachannel_messages_sent_total"] - \
        before.get("moat_datachannel_messages_sent_total", 0) == MESSAGES
    assert m["moat_sessions"] == 0
    log = gateway.log_text()[log_offset:]
    down = re.search(r"SCTP association down", log)
    ended = re.search(r"ended \(hang-up\)", log)
    assert down and ended and down.start() < ended.start(), \
        "the session ended before SCTP shut down"
