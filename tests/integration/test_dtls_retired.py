"""A media-only session drops OpenSSL's DTLS state once the peer's SRTP
proves the handshake is over (moat_dtls_retired_total), keeps echoing media
both ways, and still closes with close_notify in both directions: the
gateway's (WHIP DELETE) reaches aiortc's DTLS, aiortc's (pc.close()) ends the
session at once rather than by consent expiry. A session with a data channel
keeps its DTLS."""
import asyncio
import time

from aiortc import RTCPeerConnection

from aiortc_peer import Recorder, ToneTrack, whip_delete, whip_publish

RETIRE_WITHIN_S = 10  # the first SRTP, then two one-second trim ticks


async def metrics(gateway):
    return await asyncio.to_thread(gateway.metrics)


async def wait_metric(gateway, name, value, within_s):
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if (await metrics(gateway)).get(name, 0.0) == value:
            return True
        await asyncio.sleep(0.1)
    return False


async def audio_session(gateway, data_channel=False):
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack())
    if data_channel:
        pc.createDataChannel("chat")
    recorders = {}

    @pc.on("track")
    def on_track(track):
        recorders[track.kind] = Recorder(track)

    resource, _ = await whip_publish(pc, gateway.base + "/whip/echo")
    return pc, resource, recorders


def dtls_of(pc):
    return pc.getTransceivers()[0].sender.transport


async def media_keeps_flowing(gateway, recorders):
    """Echoed audio arrives and the gateway receives SRTP, after retirement."""
    frames = recorders["audio"].frames
    received = (await metrics(gateway))["moat_rtp_packets_received_total"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        now = (await metrics(gateway))["moat_rtp_packets_received_total"]
        if recorders["audio"].frames >= frames + 50 and now >= received + 50:
            return True
        await asyncio.sleep(0.1)
    return False


def test_audio_only_session_retires_and_delete_sends_close_notify(gateway):
    async def scenario():
        pc, resource, recorders = await audio_session(gateway)
        try:
            retired = await wait_metric(gateway, "moat_dtls_retired_total", 1, RETIRE_WITHIN_S)
            flowing = retired and await media_keeps_flowing(gateway, recorders)
            status = await whip_delete(resource)
            # The gateway's close_notify ends aiortc's DTLS (ZeroReturnError:
            # "closed"); without it, aiortc would notice only by ICE consent.
            dtls = dtls_of(pc)
            deadline = time.monotonic() + 5
            while dtls.state != "closed" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return retired, flowing, status, dtls.state
        finally:
            await pc.close()

    retired, flowing, status, dtls_state = asyncio.run(scenario())
    assert retired, "the audio-only session's DTLS did not retire"
    assert flowing, "media stopped after the DTLS retired"
    assert status == 200
    assert dtls_state == "closed"
    m = gateway.metrics()
    assert m["moat_sessions"] == 0
    assert m["moat_srtp_auth_failures_total"] == 0


def test_peer_close_notify_ends_a_retired_session(gateway):
    async def scenario():
        pc, _, _ = await audio_session(gateway)
        retired = await wait_metric(gateway, "moat_dtls_retired_total", 1, RETIRE_WITHIN_S)
        await pc.close()  # aiortc sends close_notify before closing ICE
        closed_at = time.monotonic()
        ended = await wait_metric(gateway, "moat_sessions", 0, 10)
        return retired, ended, time.monotonic() - closed_at

    retired, ended, after_s = asyncio.run(scenario())
    assert retired
    assert ended, "the session outlived the peer's close_notify"
    # Consent expiry would take the consent timeout (tens of seconds).
    assert after_s < 3, f"the session ended {after_s:.1f} s after close_notify"
    assert gateway.metric("moat_consent_expired_total") == 0


def test_session_with_a_data_channel_keeps_its_dtls(gateway):
    async def scenario():
        # The audio-only session is the clock: once it has retired, the one
        # with a data channel has met every other condition too.
        with_data, with_data_resource, _ = await audio_session(gateway, data_channel=True)
        plain, plain_resource, _ = await audio_session(gateway)
        try:
            retired = await wait_metric(gateway, "moat_dtls_retired_total", 1, RETIRE_WITHIN_S)
            # Two more trim ticks for the data channel session to (wrongly) retire.
            stays = not await wait_metric(gateway, "moat_dtls_retired_total", 2, 2.5)
            m = await metrics(gateway)
            await whip_delete(with_data_resource)
            await whip_delete(plain_resource)
            return retired, stays, m
        finally:
            await with_data.close()
            await plain.close()

    retired, stays, m = asyncio.run(scenario())
    assert retired
    assert stays, "a session with a data channel retired its DTLS"
    assert m["moat_rtp_packets_received_total"] > 0
