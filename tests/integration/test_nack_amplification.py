"""NACK amplification against a real peer: during an aiortc video echo call
the peer sends, every 10 ms, an authenticated SRTCP compound of eight NACKs
naming the last 256 packets the gateway sent it. The gateway's
retransmissions stay within a small multiple of the stream's own media rate
(they used to reach a hundred times it), and what it refuses is counted as
nack_limit drops. Prints the measured amplification (figures are noisy on a
shared host; the test only compares packet counts)."""
import asyncio

from aiortc.rtp import RTCP_RTPFB_NACK, RtcpRtpfbPacket

from aiortc_peer import echo_call

ATTACK_SECONDS = 2.0
STEP_S = 0.01


def test_nack_flood_is_bounded_by_the_media_rate(gateway):
    seen = {}
    figures = {}

    async def attack(pc):
        receiver = next(r for r in pc.getReceivers() if r.track and r.track.kind == "video")
        handle = receiver._handle_rtp_packet

        sequences = set()
        counts = {"media": 0}

        async def recording(packet, arrival_time_ms):
            seen["ssrc"] = packet.ssrc
            seen["seq"] = packet.sequence_number
            # Media the peer received (new sequence numbers only).
            if seen.get("measuring") and packet.sequence_number not in sequences:
                counts["media"] += 12 + len(packet.payload)
            sequences.add(packet.sequence_number)
            await handle(packet, arrival_time_ms)

        receiver._handle_rtp_packet = recording
        # Media first, so the stream has a rate and a full cache.
        for _ in range(100):
            if "seq" in seen:
                break
            await asyncio.sleep(0.1)
        assert "seq" in seen, "no video came back"
        await asyncio.sleep(2.0)
        dtls = receiver.transport
        before = gateway.metrics()
        seen["measuring"] = True
        loop = asyncio.get_running_loop()
        end = loop.time() + ATTACK_SECONDS
        nack_bytes = 0
        while loop.time() < end:
            last = seen["seq"]
            # aiortc packs PID/BLP without the sequence wrap: stop at 0.
            lost = list(range(max(0, last - 255), last + 1))
            packet = bytes(RtcpRtpfbPacket(fmt=RTCP_RTPFB_NACK, ssrc=1234,
                                           media_ssrc=seen["ssrc"], lost=lost))
            compound = packet * 8
            await dtls._send_rtp(compound)
            nack_bytes += len(compound)
            await asyncio.sleep(STEP_S)
        await asyncio.sleep(0.3)
        seen["measuring"] = False
        after = gateway.metrics()
        figures.update(before=before, after=after, nack_bytes=nack_bytes, **counts)

    result = asyncio.run(echo_call(gateway.base, 6.0, audio=False, video=True,
                                   on_running=attack))
    assert result["delete_status"] == 200
    before, after = figures["before"], figures["after"]

    def delta(name):
        return after.get(name, 0) - before.get(name, 0)

    resent = delta("moat_nack_retransmissions_total")
    rtp_sent = delta("moat_rtp_packets_sent_total")
    media = rtp_sent - resent
    refused = delta('moat_dropped_packets_total{reason="nack_limit"}')
    # Retransmissions of packets the peer already has are replays to its
    # SRTP and never reach it: their bytes are what the gateway sent beyond
    # the media the peer received (each with its 10-byte SRTP tag).
    media_bytes = figures["media"]
    resent_bytes = delta("moat_bytes_sent_total") - media_bytes - 10 * media
    print(f"\n# NACK flood: {figures['nack_bytes']} NACK bytes in {ATTACK_SECONDS:.0f} s; "
          f"{media_bytes} media bytes ({media:.0f} packets), {resent_bytes:.0f} retransmitted "
          f"bytes ({resent:.0f} packets): {resent_bytes / figures['nack_bytes']:.2f}x the NACK "
          f"bytes, {resent_bytes / max(media_bytes, 1):.2f}x the media; {refused:.0f} "
          f"retransmissions refused")
    assert media > 0 and media_bytes > 0
    assert refused > 0
    # The stream's allowance: its own byte rate (at least 16 kB/s) plus half
    # a second of it as a burst; twice that leaves room for the rate estimate.
    allowance = max(media_bytes, 16000 * ATTACK_SECONDS)
    assert resent_bytes <= 2 * allowance + 16000, (resent_bytes, media_bytes)
