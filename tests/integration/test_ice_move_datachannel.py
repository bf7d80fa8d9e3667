"""A data-channel-only peer (no media) whose address changes mid-session.

An aiortc peer with one data channel talks to /whip/echo through a UDP
proxy standing for its NAT; the proxy moves its upstream socket from
127.0.0.1 to 127.0.0.2 (a handover, a NAT rebinding) and the old mapping
dies. The peer's consent checks (USE-CANDIDATE, as libwebrtc sends them to
an ICE-lite peer) now come from the new tuple: that pair waits for media
from it before media moves (a replayed check must not redirect it), and a
data-channel peer with nothing to say sends none. Consent is per pair
(RFC 7675): the new pair's checks keep the session alive (the gateway sends
nothing to the old address once its consent lapsed) and the peer's next
message moves the session and is answered. A peer that really vanishes
loses its session at consent expiry, counted once."""
import asyncio
import re
import time

import aiohttp
import aioice.ice as ice
from aiortc import RTCPeerConnection, RTCSessionDescription

from conftest import Gateway

CONSENT_TIMEOUT_S = 10


def _nominating_build_request(original):
    def build_request(self, pair, nominate):
        return original(self, pair, nominate or self.ice_controlling)
    return build_request


class NatProxy:
    """One peer's public address: what it sends leaves from `up`, moved to
    127.0.0.2 by move(); the old socket's datagrams are dropped from then
    (that network is gone). vanish() drops everything both ways."""

    def __init__(self, gateway_address):
        self.gateway = gateway_address
        self.client = None
        self.up = None
        self.dead = set()
        self.vanished = False

    async def start(self):
        loop = asyncio.get_running_loop()
        proxy = self

        class Down(asyncio.DatagramProtocol):
            def datagram_received(self, data, address):
                proxy.client = address
                if not proxy.vanished:
                    proxy.up.sendto(data, proxy.gateway)

        class Up(asyncio.DatagramProtocol):
            def connection_made(self, transport):
                self.transport = transport

            def datagram_received(self, data, address):
                if self.transport in proxy.dead or proxy.vanished or not proxy.client:
                    return
                proxy.down.sendto(data, proxy.client)

        self.up_protocol = Up
        self.down, _ = await loop.create_datagram_endpoint(Down, local_addr=("127.0.0.1", 0))
        self.up, _ = await loop.create_datagram_endpoint(Up, local_addr=("127.0.0.1", 0))
        return self.down.get_extra_info("sockname")[1]

    async def move(self):
        loop = asyncio.get_running_loop()
        self.dead.add(self.up)
        self.up, _ = await loop.create_datagram_endpoint(self.up_protocol,
                                                         local_addr=("127.0.0.2", 0))

    def vanish(self):
        self.vanished = True

    def close(self):
        self.down.close()
        self.up.close()
        for transport in self.dead:
            transport.close()


class Peer:
    def __init__(self, gw):
        self.gw = gw
        self.pc = RTCPeerConnection()
        self.channel = self.pc.createDataChannel("d")
        self.echoes = []
        self.channel.on("message", lambda m: self.echoes.append(m))
        self.proxy = NatProxy(("127.0.0.1", gw.media_port))

    async def connect(self):
        await self.pc.setLocalDescription(await self.pc.createOffer())
        async with aiohttp.ClientSession() as http:
            async with http.post(self.gw.base + "/whip/echo", data=self.pc.localDescription.sdp,
                                 headers={"Content-Type": "application/sdp",
                                          **self.gw.auth()}) as r:
                body = await r.text()
                assert r.status == 201, body
        port = await self.proxy.start()
        body = re.sub(r"(a=candidate:\S+ \d+ udp \d+ )127\.0\.0\.1 \d+",
                      rf"\g<1>127.0.0.1 {port}", body, flags=re.I)
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
        deadline = time.time() + 15
        while self.channel.readyState != "open" and time.time() < deadline:
            await asyncio.sleep(0.1)
        assert self.channel.readyState == "open"
        await self.answered("hello")

    async def answered(self, message, within=5):
        self.channel.send(message)
        deadline = time.time() + within
        while message not in self.echoes and time.time() < deadline:
            await asyncio.sleep(0.1)
        return message in self.echoes

    async def close(self):
        await self.pc.close()
        self.proxy.close()


def run(coroutine):
    original = ice.Connection.build_request
    ice.Connection.build_request = _nominating_build_request(original)
    try:
        return asyncio.run(coroutine)
    finally:
        ice.Connection.build_request = original


def test_a_moved_idle_datachannel_peer_keeps_its_session():
    """Before: the moved peer's checks only marked the new pair pending and
    refreshed no consent; with nothing to send it lost its session 10 s after
    the move ("consent expired") although it answered every check. Now both
    the moved peer and an unmoved one (control) are answered after idling
    past the consent timeout, and no consent expired."""
    gw = Gateway(extra_args=["--consent-timeout", str(CONSENT_TIMEOUT_S)], workers=1)

    async def scenario():
        moved, control = Peer(gw), Peer(gw)
        try:
            await moved.connect()
            await control.connect()
            await moved.proxy.move()
            # Past the old pair's consent (its last check came at most 6 s
            # before the move), inside the one timeout more that the
            # pending pair holds the session (at least 14 s after the move).
            await asyncio.sleep(CONSENT_TIMEOUT_S + 2)
            assert gw.metric("moat_consent_expired_total") == 0
            assert gw.metric("moat_ice_moves_confirmed_total") == 0  # nothing sent yet
            assert gw.metric("moat_ice_moves_pending_total") == 1  # one move, not per check
            assert await control.answered("control-probe")
            assert await moved.answered("moved-probe")
            assert gw.metric("moat_ice_moves_confirmed_total") == 1
            assert moved.pc.iceConnectionState in ("connected", "completed")
        finally:
            await moved.close()
            await control.close()

    try:
        run(scenario())
        assert "selected pair lost consent" in gw.log_text()
        assert gw.metric("moat_consent_expired_total") == 0
    finally:
        gw.stop()


def test_a_vanished_datachannel_peer_expires_once():
    """Before: the consent expiry started a graceful drain of the data
    channels towards the dead peer; the next tick expired consent again
    (counted twice) and cut the drain. Now a session whose transport is dead
    ends at once, counted once, and a peer that only moved (checks on its
    new pair) is not ended with it."""
    gw = Gateway(extra_args=["--consent-timeout", str(CONSENT_TIMEOUT_S)], workers=1)

    async def scenario():
        gone, moved = Peer(gw), Peer(gw)
        try:
            await gone.connect()
            await moved.connect()
            await moved.proxy.move()
            gone.proxy.vanish()
            deadline = time.time() + CONSENT_TIMEOUT_S + 8
            while time.time() < deadline and gw.metric("moat_consent_expired_total") == 0:
                await asyncio.sleep(0.5)
            await asyncio.sleep(3)
            assert gw.metric("moat_consent_expired_total") == 1
            assert await moved.answered("moved-probe")
        finally:
            await gone.close()
            await moved.close()

    try:
        run(scenario())
        ended = [l for l in gw.log_text().splitlines() if "ended (consent expired)" in l]
        assert len(ended) == 1, ended
    finally:
        gw.stop()
