"""Hostile input at the media port and the API while a real call runs: the
gateway stays up, the call keeps its media, and the drop counters say why
each bad packet went."""
import asyncio
import json
import os
import random
import socket
import struct
import urllib.error
import urllib.request

from aiortc_peer import echo_call

MAGIC = 0x2112A442


def stun(message_type=0x0001, attributes=b"", length=None):
    header = struct.pack("!HHI12s", message_type, len(attributes) if length is None else length,
                         MAGIC, os.urandom(12))
    return header + attributes


def attribute(kind, value):
    padded = value + b"\0" * (-len(value) % 4)
    return struct.pack("!HH", kind, len(value)) + padded


def hostile_datagrams(rng):
    packets = []
    for _ in range(300):  # random bytes with every first octet
        packets.append(bytes([rng.randrange(256)]) + os.urandom(rng.randrange(0, 300)))
    packets += [
        b"",
        stun(length=400),                                   # length past the end
        stun(attributes=b"\x00\x06\x00"),                   # truncated attribute
        stun(attributes=attribute(0x0006, b"nosuchufrag:x") + attribute(0x0008, os.urandom(20))),
        stun(attributes=attribute(0x0006, b"x" * 600)),     # oversized USERNAME
        stun(attributes=struct.pack("!HH", 0x0006, 0xFFFF)),
        stun(message_type=0x0111),                          # error response nobody asked for
    ]
    for _ in range(100):  # DTLS-looking records from a tuple with no ICE check
        packets.append(bytes([22, 0xFE, 0xFD]) + os.urandom(rng.randrange(0, 200)))
    for _ in range(100):  # RTP/RTCP-looking packets from an unknown tuple
        packets.append(bytes([0x80, rng.randrange(256)]) + os.urandom(rng.randrange(0, 300)))
    return packets


def http(method, url, body=None, content_type=None):
    request = urllib.request.Request(url, data=body, method=method)
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, r.read().decode(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers.get("Content-Type", "")


BAD_OFFERS = [
    b"",
    b"v=0\r\n",
    b"garbage\x00\xff\xfe",
    b"v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n",
    b"v=0\r\n" + b"a=" + b"x" * 70000 + b"\r\n",
    b"v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\n"
    b"a=fingerprint:md5 00:11\r\na=setup:actpass\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n"
    b"a=rtcp-mux\r\na=mid:0\r\n",
    b"v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n" + b"m=audio 9 UDP/TLS/RTP/SAVPF 0\r\n" * 40,
]


def check_api(base):
    for offer in BAD_OFFERS:
        status, body, ctype = http("POST", base + "/whip/echo", offer, "application/sdp")
        assert status in (400, 413), (status, offer[:60])
        assert "application/json" in ctype
        detail = json.loads(body)
        assert detail["error"] and detail["detail"], body
    status, body, _ = http("POST", base + "/whip/echo", b"v=0\r\n", "text/plain")
    assert status == 415 and json.loads(body)["error"] == "unsupported_media_type"
    status, body, _ = http("POST", base + "/whip/nosuchplugin", BAD_OFFERS[3], "application/sdp")
    assert status == 404 and json.loads(body)["error"] == "unknown_plugin"
    status, body, _ = http("PATCH", base + "/whip/resource/doesnotexist", b"a=ice-ufrag:x\r\n",
                           "application/trickle-ice-sdpfrag")
    assert status == 404 and json.loads(body)["error"] == "unknown_session"
    status, body, _ = http("DELETE", base + "/whip/resource/../../etc/passwd")
    assert status in (400, 404, 405)
    status, body, _ = http("GET", base + "/../../etc/passwd")
    assert status in (400, 404)
    status, body, _ = http("PUT", base + "/whip/echo", b"x", "application/sdp")
    assert status == 405 and json.loads(body)["error"] == "method_not_allowed"
    # Raw garbage on the HTTP socket.
    host, port = base.split("//")[1].split(":")
    for junk in (b"\x00\x01\x02\r\n\r\n", b"GET " + b"/" * 20000 + b" HTTP/1.1\r\n\r\n",
                 b"POST /whip/echo HTTP/1.1\r\nContent-Length: -5\r\n\r\n"):
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(junk)
            try:
                s.recv(4096)
            except OSError:
                pass


def test_hostile_input_does_not_disturb_a_call(gateway):
    before = gateway.metrics()
    rng = random.Random(7)

    async def attack(pc):
        await asyncio.sleep(1.0)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for port in range(gateway.media_port, gateway.media_port + gateway.workers):
            for packet in hostile_datagrams(rng):
                sock.sendto(packet, ("127.0.0.1", port))
            await asyncio.sleep(0)
        sock.close()
        await asyncio.get_running_loop().run_in_executor(None, check_api, gateway.base)

    result = asyncio.run(echo_call(gateway.base, seconds=6, on_running=attack))
    audio = result["recorders"]["audio"]
    assert audio.frames / result["sent_audio"] >= 0.90, "the call lost media during the attack"
    assert result["recorders"]["video"].frames >= 30

    after = gateway.metrics()
    grew = {r: after[f'moat_dropped_packets_total{{reason="{r}"}}'] -
            before[f'moat_dropped_packets_total{{reason="{r}"}}']
            for r in ("malformed", "unknown_tuple", "stun_auth")}
    assert grew["malformed"] > 0, grew
    assert grew["unknown_tuple"] >= 200 * gateway.workers, grew
    assert grew["stun_auth"] + grew["malformed"] >= 5, grew
    assert gateway.process.poll() is None
    status, body, _ = http("GET", gateway.base + "/healthz")
    assert status == 200
