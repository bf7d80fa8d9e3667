"""Datagrams at every buffer's size limit against each kind of UDP socket
Moat exposes: the worker socket (from an unknown source, and from a
connected aiortc publisher's own 5-tuple, spoofed), a room's ingest
port with a WHEP subscriber, both legs of a plain call and of a plain-to-SDES
call, the phone-facing
port of a WebRTC-to-SIP call, and the ng control socket. The sizes are
the limits of the relay MTU (1500), the relay's copy (1564), the receive
capacity (1984) and one past each, up to the largest UDP payload; what can
be RTP is RTP of the negotiated payload type, so it goes as far into the
packet path as a real sender's would.

After every burst the daemon answers /healthz; the oversized packets are
counted where they stop (relay too_big, truncated on the worker socket and
on call legs); a publisher and subscriber in another room never notice.
On main at ffb4d6f the 1565-1984-byte datagrams into the ingest port (and
into the WebRTC call's phone port) overflowed relay_deliver's stack buffer
and killed the daemon."""
import asyncio
import base64
import os
import re
import socket
import struct
import subprocess

import pytest
from aiortc import RTCPeerConnection, RTCRtpSender
from pylibsrtp._binding import ffi

from conftest import MOAT
from ng_client import NgClient, plain_sdp, sdp_media_address
from spoof import udp_datagram
from test_flood_defence_legacy import nominated_pair
from test_room import api, check_media, close, publish, subscribe
from test_voip_sdes import crypto_lines, phone_sdp, session
from voip_peers import relay_gateway, udp_phone

SIZES = [0, 1, 12, 1499, 1500, 1501, 1564, 1565, 1983, 1984, 1985, 2048, 4096, 65507]
RECEIVE_CAPACITY = 1984  # MOAT_DATAGRAM_CAPACITY - 64
RELAY_MTU = 1500
RELAYABLE = [s for s in SIZES if RELAY_MTU < s <= RECEIVE_CAPACITY]
TOO_BIG = 'moat_relay_dropped_packets_total{reason="too_big"}'
CALL_TRUNCATED = 'moat_call_dropped_packets_total{reason="truncated"}'
CALL_TOO_BIG = 'moat_call_dropped_packets_total{reason="too_big"}'
CODECS = {"audio": {"codec": "opus", "pt": 111}, "video": {"codec": "vp8", "pt": 96}}


def loopback_flag():
    """--call-allow-loopback-destinations where this build has it: the
    phones here live on 127.0.0.1."""
    text = subprocess.run([str(MOAT), "--help"], capture_output=True, text=True).stdout
    return ["--call-allow-loopback-destinations"] if (
        "--call-allow-loopback-destinations" in text) else []


def datagram(size, pt, seq, ssrc=0x5EED5EED):
    """`size` bytes: an RTP packet of payload type `pt` when it has room for
    the header, else the start of one."""
    header = struct.pack("!BBHII", 0x80, pt, seq & 0xFFFF, seq * 960, ssrc)
    body = bytes((i * 31 + 7) & 0xFF for i in range(max(0, size - 12)))
    return (header + body)[:size]


def send_sizes(sock, address, pt, sizes=SIZES):
    for seq, size in enumerate(sizes):
        sock.sendto(datagram(size, pt, seq + 1), address)


async def settle(gw, name, expected):
    """Waits (5 s at most) until metric `name` reaches `expected`, i.e. the
    daemon has read every datagram sent; returns its value."""
    value = 0.0
    for _ in range(100):
        value = gw.metric(name)
        if value >= expected:
            return value
        await asyncio.sleep(0.05)
    return value


def worker_drops(gw):
    """Every datagram the worker sockets dropped, all reasons."""
    return sum(v for k, v in gw.metrics().items() if k.startswith("moat_dropped_packets_total{"))


def alive(gw):
    assert gw.process.poll() is None, f"moat died: {gw.log_path}"
    assert gw.get("/healthz"), "no /healthz"


async def webrtc_offer_sdp():
    """The WebRTC side's offer, PCMU only so that the call relays what the
    phone sends (no transcoder between); nothing needs to connect for the
    phone-facing port to relay into the WebRTC leg's session."""
    pc = RTCPeerConnection()
    transceiver = pc.addTransceiver("audio", direction="sendrecv")
    transceiver.setCodecPreferences([c for c in RTCRtpSender.getCapabilities("audio").codecs
                                     if c.mimeType == "audio/PCMU"])
    await pc.setLocalDescription(await pc.createOffer())
    sdp = pc.localDescription.sdp
    await pc.close()
    return sdp


@pytest.fixture
def relay():
    gw, _ = relay_gateway(reserve=40, span=37, extra_args=loopback_flag())
    client = NgClient(gw.ng_port)
    yield gw, client
    client.close()
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


async def frames(sub, at_least, seconds=15.0):
    """Waits until the subscriber's recorders hold `at_least` frames per
    kind; returns their counts (asserting they got there in time)."""
    counts = {}
    for _ in range(int(seconds / 0.1)):
        counts = {k: r.frames for k, r in sub["recorders"].items()}
        if all(counts.get(k, 0) >= n for k, n in at_least.items()):
            return counts
        await asyncio.sleep(0.1)
    raise AssertionError(f"frames {counts}, wanted {at_least}")


def hostile(gw, attack, victim=None):
    """Runs `attack` (a coroutine function) while a publisher and a
    subscriber in another room exchange media; that subscriber must still
    hear and see its publisher afterwards, and the daemon must be alive."""
    async def scenario():
        victim_pub = await publish(gw.base, "victim")
        victim_sub = await subscribe(gw.base, "victim")
        before = await frames(victim_sub, {"audio": 50, "video": 10})  # flowing
        if victim is not None:
            victim["publisher"] = victim_pub
        await attack()
        alive(gw)
        # Two more seconds of audio after the attack, and video.
        await frames(victim_sub, {"audio": before["audio"] + 100, "video": before["video"] + 20})
        check_media(victim_sub, min_audio=100)
        for peer in (victim_sub, victim_pub):
            await close(peer)

    asyncio.run(scenario())
    alive(gw)


def test_hostile_sizes_worker_socket(relay):
    """From a source no session knows: each datagram dropped and counted
    (by the kernel filter as unknown_tuple, or in user space as truncated,
    malformed, ...)."""
    gw, _ = relay
    attacker = udp_phone(0.2)

    async def attack():
        dropped = worker_drops(gw)
        for worker in range(gw.workers):
            send_sizes(attacker, ("127.0.0.1", gw.media_port + worker), 96)
        expected = dropped + len(SIZES) * gw.workers
        for _ in range(100):
            if worker_drops(gw) >= expected:
                break
            await asyncio.sleep(0.05)
        assert worker_drops(gw) >= expected, gw.get("/metrics")

    hostile(gw, attack)


def test_hostile_sizes_worker_socket_from_a_peer(relay):
    """From a connected publisher's own 5-tuple (spoofed on loopback with a
    raw socket): RTP-, DTLS- and STUN-looking datagrams of every size reach
    its session and are dropped and counted; its media keeps flowing."""
    gw, _ = relay
    victim = {}

    async def attack():
        local_host, local_port, remote_host, remote_port = nominated_pair(victim["publisher"]["pc"])
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
        dropped, strangers = worker_drops(gw), gw.drops("unknown_tuple")
        sent = 0
        try:
            for first in (0x80, 0x81, 23, 22, 0):  # RTP, RTCP, DTLS data, handshake, STUN
                for size in SIZES:
                    payload = bytes([first]) + datagram(size, 111, sent)[1:] if size else b""
                    raw.sendto(udp_datagram(local_host, local_port, remote_host, remote_port,
                                            payload), (remote_host, 0))
                    sent += 1
        finally:
            raw.close()
        for _ in range(100):
            if worker_drops(gw) >= dropped + sent:
                break
            await asyncio.sleep(0.05)
        assert worker_drops(gw) >= dropped + sent, gw.get("/metrics")
        # They reached the session: none was taken for a stranger's.
        assert gw.drops("unknown_tuple") == strangers

    hostile(gw, attack, victim)


def test_hostile_sizes_ingest_port(relay):
    """A room's ingest port with a subscriber on each worker (the relay's
    same-worker path and its rings), VP8 of the ingest's payload type from
    the latched sender, then from anyone else."""
    gw, _ = relay
    attacker = udp_phone(0.2)

    async def attack():
        status, ingest = api(gw, "POST", "/api/rooms/hostile/ingest", CODECS)
        assert status == 201, ingest
        subs = [await subscribe(gw.base, "hostile") for _ in range(gw.workers)]
        too_big = gw.metric(TOO_BIG)
        sender = udp_phone(0.2)  # the ingest latches to it
        send_sizes(sender, ("127.0.0.1", ingest["port"]), 96)
        assert await settle(gw, TOO_BIG, too_big + len(RELAYABLE)) >= too_big + len(RELAYABLE)
        alive(gw)
        send_sizes(attacker, ("127.0.0.1", ingest["port"]), 96)
        alive(gw)
        for peer in subs:
            await close(peer)
        assert api(gw, "DELETE", ingest["resource"])[0] == 204

    hostile(gw, attack)


def test_hostile_sizes_plain_call_legs(relay):
    """Both legs of a plain call, RTP and RTCP ports, from each phone's own
    address (what a leg accepts) and from a stranger: what is larger than
    the receive buffer is counted as truncated."""
    gw, client = relay
    attacker = udp_phone(0.2)

    async def attack():
        phone_a, phone_b = udp_phone(0.2), udp_phone(0.2)
        offer = client.command("offer", call_id="hostile-plain", from_tag="a",
                               sdp=plain_sdp("127.0.0.1", phone_a.getsockname()[1]))
        assert offer["result"] == "ok", offer
        answer = client.command("answer", call_id="hostile-plain", from_tag="a", to_tag="b",
                                sdp=plain_sdp("127.0.0.1", phone_b.getsockname()[1]))
        assert answer["result"] == "ok", answer
        to_b = sdp_media_address(offer["sdp"])  # where phone B sends
        to_a = sdp_media_address(answer["sdp"])  # where phone A sends
        truncated = gw.metric(CALL_TRUNCATED)
        send_sizes(phone_a, ("127.0.0.1", to_a[1]), 0)
        send_sizes(phone_b, ("127.0.0.1", to_b[1]), 0)
        send_sizes(attacker, ("127.0.0.1", to_a[1]), 0)
        send_sizes(phone_a, ("127.0.0.1", to_a[1] + 1), 200)  # its RTCP port
        expected = truncated + 4 * sum(1 for s in SIZES if s > RECEIVE_CAPACITY)
        assert await settle(gw, CALL_TRUNCATED, expected) >= expected
        alive(gw)
        assert client.command("delete", call_id="hostile-plain", delete_delay=0)["result"] == "ok"

    hostile(gw, attack)


def test_hostile_sizes_sdes_call_leg(relay):
    """A plain phone calls an SDES phone: authentic SRTP of every size from
    the SDES phone (protected with its own key), plain RTP of every size
    from the other; what fits the receive buffer crosses (protected, 10
    bytes longer, for the SDES phone), the rest is counted as truncated."""
    gw, client = relay
    attacker = udp_phone(0.2)

    async def attack():
        caller, callee = udp_phone(0.5), udp_phone(0.5)
        offer = client.command("offer", call_id="hostile-sdes", from_tag="plain",
                               sdp=phone_sdp(caller.getsockname()[1]),
                               transport_protocol="RTP/SAVP")
        assert offer["result"] == "ok", offer
        tag, suite, moat_key = crypto_lines(offer["sdp"])[0]
        my_key = os.urandom(30)
        line = f"{tag} {suite} inline:{base64.b64encode(my_key).decode()}"
        answer = client.command("answer", call_id="hostile-sdes", from_tag="plain",
                                to_tag="sdes", sdp=phone_sdp(callee.getsockname()[1], [line]))
        assert answer["result"] == "ok", answer
        to_callee = sdp_media_address(offer["sdp"])[1]  # where the SDES phone sends
        to_caller = sdp_media_address(answer["sdp"])[1]
        truncated = gw.metric(CALL_TRUNCATED)
        too_big = gw.metric(CALL_TOO_BIG)
        send_sizes(caller, ("127.0.0.1", to_caller), 8)
        crossed = []
        for _ in SIZES:
            try:
                crossed.append(len(callee.recv(70000)))
            except socket.timeout:
                break
        # What the relay carries (up to its MTU) crosses; larger packets
        # that fit the receive buffer are dropped as too_big.
        fits = [s for s in SIZES if 12 <= s <= RELAY_MTU]
        assert crossed == [s + 10 for s in fits], crossed
        sender = session(suite, my_key, True)
        # pylibsrtp works in a 1500-byte buffer; the SDES phone here sends
        # up to the receive capacity.
        sender._cdata = ffi.new("char[]", 4096)
        sender._buffer = ffi.buffer(sender._cdata)
        for seq, size in enumerate(SIZES):
            if 12 <= size <= RECEIVE_CAPACITY - 10:
                callee.sendto(sender.protect(datagram(size, 8, seq + 1)), ("127.0.0.1", to_callee))
            else:
                callee.sendto(datagram(size, 8, seq + 1), ("127.0.0.1", to_callee))
        authentic = [s for s in SIZES if 12 <= s <= RELAY_MTU]
        decrypted = []
        for _ in authentic:
            try:
                decrypted.append(len(caller.recv(70000)))
            except socket.timeout:
                break
        assert decrypted == authentic, decrypted
        send_sizes(attacker, ("127.0.0.1", to_callee), 8)
        expected = truncated + 3 * sum(1 for s in SIZES if s > RECEIVE_CAPACITY)
        assert await settle(gw, CALL_TRUNCATED, expected) >= expected
        oversize = sum(1 for s in SIZES if RELAY_MTU < s <= RECEIVE_CAPACITY - 10)
        assert await settle(gw, CALL_TOO_BIG, too_big + 2 * oversize) >= too_big + 2 * oversize
        alive(gw)
        assert client.command("delete", call_id="hostile-sdes", delete_delay=0)["result"] == "ok"

    hostile(gw, attack)


def test_hostile_sizes_webrtc_call_phone_port(relay):
    """The phone-facing port of a WebRTC-to-SIP call: the phone's packets
    are relayed into the WebRTC leg's core session; over the relay MTU they
    are dropped as too_big."""
    gw, client = relay
    attacker = udp_phone(0.2)

    async def attack():
        phone = udp_phone(0.2)
        offer = client.command("offer", call_id="hostile-webrtc", from_tag="webrtc",
                               sdp=await webrtc_offer_sdp(), transport_protocol="RTP/AVP",
                               ICE="remove", DTLS="off", replace=["origin"])
        assert offer["result"] == "ok", offer
        answer = client.command("answer", call_id="hostile-webrtc", from_tag="webrtc",
                                to_tag="phone",
                                sdp=plain_sdp("127.0.0.1", phone.getsockname()[1]),
                                ICE="force", DTLS="passive",
                                transport_protocol="UDP/TLS/RTP/SAVPF")
        assert answer["result"] == "ok", answer
        port = int(re.search(r"^m=audio (\d+) ", offer["sdp"], re.M).group(1))
        # Dropped by the call leg before the relay (moat_call_..., too_big).
        too_big = gw.metric(CALL_TOO_BIG)
        send_sizes(phone, ("127.0.0.1", port), 0)
        assert await settle(gw, CALL_TOO_BIG, too_big + len(RELAYABLE)) >= too_big + len(RELAYABLE), (
            {k: v for k, v in gw.metrics().items() if "call" in k or "relay" in k})
        alive(gw)
        send_sizes(attacker, ("127.0.0.1", port), 0)
        alive(gw)
        deleted = client.command("delete", call_id="hostile-webrtc", delete_delay=0)
        assert deleted["result"] == "ok", deleted

    hostile(gw, attack)


def test_hostile_sizes_ng_socket(relay):
    """Junk of every size on the ng control socket; it still answers."""
    gw, client = relay
    attacker = udp_phone(0.2)

    async def attack():
        for size in SIZES:
            attacker.sendto(b"d" + bytes(max(0, size - 1)), ("127.0.0.1", gw.ng_port))
            attacker.sendto(b"cookie d7:command4:pinge"[:size] + bytes(max(0, size - 24)),
                            ("127.0.0.1", gw.ng_port))
        # The junk (about 170 kB) can fill the socket's receive buffer before
        # the (ASan) gateway drains it, and the kernel then drops the ping:
        # retransmit as a SIP proxy does; the server must still answer.
        patient = NgClient(gw.ng_port, tries=5)
        assert patient.command("ping")["result"] == "pong"

    hostile(gw, attack)
