"""A nominating ICE check captured from a peer and re-sent later from
another address: its integrity does not cover the source address, and the
gateway remembers only the last 32 transaction ids (a re-send of a recent
one from another tuple is refused already). Once the session's transport
is up, a nomination that would move the media to another remote address
waits for media from there: SRTP, SRTCP or DTLS application data that
authenticated (each replay-protected), which a re-sent check cannot bring.
The viewer keeps its media; a real move (tests/integration/
test_ice_multihomed.py) moves at its first packet from the new address."""
import asyncio
import re
import socket
import time

from aioice import stun

from test_room import close, publish, subscribe


def nomination(username, pwd):
    """A nominating check as a captured one would be (its transaction id
    new to the gateway, as one past the 32 it remembers is)."""
    check = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST)
    check.attributes["USERNAME"] = username
    check.attributes["PRIORITY"] = 0x7EFFFFFF  # above the peer's own: it would win
    check.attributes["ICE-CONTROLLING"] = 7
    check.attributes["USE-CANDIDATE"] = None
    check.add_message_integrity(pwd.encode())
    check.add_fingerprint()
    return bytes(check)


def test_a_replayed_nomination_from_another_address_does_not_take_the_media(gateway):
    async def run():
        pub = await publish(gateway.base, "replayed")
        await asyncio.sleep(1.0)
        viewer = await subscribe(gateway.base, "replayed")
        await asyncio.sleep(2.0)
        answer = viewer["pc"].remoteDescription.sdp
        gateway_ufrag = re.search(r"a=ice-ufrag:(\S+)", answer).group(1)
        gateway_pwd = re.search(r"a=ice-pwd:(\S+)", answer).group(1)
        viewer_ufrag = re.search(r"a=ice-ufrag:(\S+)", viewer["pc"].localDescription.sdp).group(1)
        port = int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+)", answer).group(1))
        audio = viewer["recorders"]["audio"]
        attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        attacker.bind(("127.0.0.1", 0))
        attacker.setblocking(False)
        try:
            attacker.sendto(nomination(f"{gateway_ufrag}:{viewer_ufrag}", gateway_pwd),
                            ("127.0.0.1", port))
            answered, media = 0, 0
            frames_before = audio.frames
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline:
                try:
                    data = attacker.recv(2048)
                except BlockingIOError:
                    await asyncio.sleep(0.02)
                    continue
                if data[0] < 2:
                    answered += 1  # the check's answer
                else:
                    media += 1
            assert answered == 1, "the check was not answered"
            assert media == 0, f"{media} media packets went to the re-sent check's address"
            # 3 s of 50 pps audio kept reaching the viewer.
            assert audio.frames - frames_before > 100, (frames_before, audio.frames)
            assert gateway.metric("moat_ice_moves_pending_total") >= 1
            assert gateway.metric("moat_ice_moves_confirmed_total") == 0
        finally:
            attacker.close()
        for peer in (viewer, pub):
            await close(peer)

    asyncio.run(run())
