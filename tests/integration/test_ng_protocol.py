"""The ng control socket of the real daemon, over UDP as Kamailio's
rtpengine module talks to it: ping/pong, the cookie echoed byte for byte, a
retransmitted datagram answered with identical bytes, and hostile datagrams
answered with errors while the daemon keeps answering."""
import socket

import pytest

from conftest import MOAT, Gateway, free_port
import subprocess


def bencode(value):
    if isinstance(value, int):
        return b"i%de" % value
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return b"%d:%s" % (len(value), value)
    if isinstance(value, list):
        return b"l" + b"".join(bencode(v) for v in value) + b"e"
    if isinstance(value, dict):  # insertion order, as Kamailio sends it
        return b"d" + b"".join(bencode(k) + bencode(v) for k, v in value.items()) + b"e"
    raise TypeError(value)


def bdecode(data, at=0):
    """(value, next offset); strings come back as bytes."""
    kind = data[at:at + 1]
    if kind == b"i":
        end = data.index(b"e", at)
        return int(data[at + 1:end]), end + 1
    if kind in (b"l", b"d"):
        items, at = [], at + 1
        while data[at:at + 1] != b"e":
            item, at = bdecode(data, at)
            items.append(item)
        if kind == b"l":
            return items, at + 1
        return {items[i].decode(): items[i + 1] for i in range(0, len(items), 2)}, at + 1
    colon = data.index(b":", at)
    length = int(data[at:colon])
    return data[colon + 1:colon + 1 + length], colon + 1 + length


class NgClient:
    def __init__(self, port, host="127.0.0.1"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(5)
        self.address = (host, port)

    def raw(self, datagram):
        self.sock.sendto(datagram, self.address)
        reply, _ = self.sock.recvfrom(65536)
        return reply

    def command(self, cookie, dictionary):
        reply = self.raw(cookie + b" " + bencode(dictionary))
        assert reply.startswith(cookie + b" "), reply
        value, end = bdecode(reply, len(cookie) + 1)
        assert end == len(reply)
        return value

    def ping(self, cookie=b"alive"):
        return self.command(cookie, {"command": "ping"})

    def close(self):
        self.sock.close()


@pytest.fixture
def ng(gateway):
    client = NgClient(gateway.ng_port)
    yield client
    client.close()


def test_ping_pong_and_cookie(ng, gateway):
    assert ng.ping(b"12345_1_0") == {"result": b"pong"}
    # Kamailio's cookie shape, and odd bytes: echoed exactly.
    for cookie in (b"4242_998877_17", b"\x01\xffcookie", b"x" * 200):
        reply = ng.raw(cookie + b" " + bencode({"command": "ping"}))
        assert reply == cookie + b" d6:result4:ponge"
    assert gateway.metric('moat_ng_requests_total{command="ping"}') == 4


def test_retransmission_gets_identical_bytes(ng, gateway):
    datagram = b"7_7_7 " + bencode({"command": "offer", "call-id": "c1@host", "from-tag": "ft",
                                   "sdp": "v=0\r\n", "flags": ["trust-address"]})
    first = ng.raw(datagram)
    for _ in range(3):
        assert ng.raw(datagram) == first
    assert gateway.metric("moat_ng_retransmissions_total") == 3
    # The command ran once (counted once); a new cookie runs it again.
    assert gateway.metric('moat_ng_requests_total{command="offer"}') == 1
    ng.raw(b"7_7_8 " + datagram[6:])
    assert gateway.metric('moat_ng_requests_total{command="offer"}') == 2


def test_call_commands_reach_the_call_layer(ng):
    """offer/answer/delete/query/list go to the call layer's handlers: a
    garbage SDP is named in the error, an unknown call is no crash, list
    answers ok."""
    for command in ("offer", "answer"):
        reply = ng.command(command.encode(), {"command": command, "call-id": "c", "from-tag": "f",
                                              "to-tag": "t", "sdp": "v=0"})
        assert reply["result"] == b"error", reply
        assert reply["error-reason"] != b"Unrecognized command", reply
    for command in ("delete", "query"):
        reply = ng.command(command.encode(), {"command": command, "call-id": "unknown"})
        assert reply["result"] in (b"ok", b"error"), reply
    assert ng.command(b"list", {"command": "list"})["result"] == b"ok"
    assert ng.ping() == {"result": b"pong"}


HOSTILE = [
    (b"h1 not bencode at all", b"invalid bencode"),
    (b"h2 d7:command4:pi", b"invalid bencode"),             # truncated
    (b"h3 d7:command4:ping", b"invalid bencode"),           # dictionary never closed
    (b"h4 l4:pinge", b"not a dictionary"),
    (b"h5 d4:call4:pinge", b"missing command"),
    (b"h6 d7:command12:frobnicate!!e", b"Unrecognized command"),
    (b"h7 d7:commandi5ee", b"invalid command"),
    (b"h8 i99999999999999999999999e", b"invalid bencode"),
    (b"h9 " + b"l" * 5000 + b"e" * 5000, b"invalid bencode"),  # too deep
    (b"h10 d7:command5:offer7:call-idi1ee", b"invalid value for call-id"),
    (b"h11 d7:command5:offer18:transport-protocol3:TCPe", b"unsupported transport"),
    (b"h12 d7:command6:delete12:delete-delay3:abce", b"invalid value for delete-delay"),
    (b"h13 \xff\xfe\x00\x01garbage\x00", b"invalid bencode"),
    (b"h14 " + b"9" * 30 + b":x", b"invalid bencode"),
]


def test_hostile_inputs_get_error_replies(ng, gateway):
    for datagram, reason in HOSTILE:
        cookie = datagram.split(b" ", 1)[0]
        reply = ng.raw(datagram)
        assert reply.startswith(cookie + b" "), (datagram[:40], reply)
        value, _ = bdecode(reply, len(cookie) + 1)
        assert value["result"] == b"error", (datagram[:40], value)
        assert reason in value["error-reason"], (datagram[:40], value)
        assert ng.ping(b"after-" + cookie) == {"result": b"pong"}
    # Required keys are named before any handler would run.
    reply = ng.command(b"m1", {"command": "delete", "from-tag": "f"})
    assert reply == {"result": b"error", "error-reason": b"missing call-id"}
    reply = ng.command(b"m2", {"command": "offer", "call-id": "c", "from-tag": "f"})
    assert reply == {"result": b"error", "error-reason": b"missing sdp"}
    # 60 KB of garbage after a cookie, and 60 KB of valid bencode padding.
    reply = ng.raw(b"big1 " + bytes(range(256)) * 240)
    assert reply.startswith(b"big1 ") and b"invalid bencode" in reply
    padded = bencode({"command": "ping", "pad": "x" * 60000})
    assert len(padded) > 60000
    assert ng.raw(b"big2 " + padded) == b"big2 d6:result4:ponge"
    # No cookie: nothing to answer; the daemon carries on.
    ng.sock.sendto(b"nocookie", ng.address)
    ng.sock.sendto(b"", ng.address)
    assert ng.ping(b"still") == {"result": b"pong"}
    metrics = gateway.metrics()
    assert metrics['moat_ng_errors_total{reason="not_bencode"}'] >= 6
    assert metrics['moat_ng_errors_total{reason="no_cookie"}'] == 2
    assert metrics['moat_ng_errors_total{reason="unknown_command"}'] == 1
    assert metrics['moat_ng_errors_total{reason="missing_key"}'] == 2


def test_ipv6_bind_and_port_zero():
    gw = Gateway(workers=1, extra_args=("--ng-bind", "::1"))
    try:
        client = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        client.settimeout(5)
        client.sendto(b"v6 d7:command4:pinge", ("::1", gw.ng_port))
        assert client.recvfrom(2048)[0] == b"v6 d6:result4:ponge"
        client.close()
    finally:
        assert gw.stop() == 0
    off = Gateway(workers=1, extra_args=("--ng-port", "0"))
    try:
        assert 'moat_ng_requests_total{command="ping"} 0' in off.get("/metrics")
    finally:
        assert off.stop() == 0


def test_ng_port_in_use_is_a_clear_startup_error():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        result = subprocess.run(
            [str(MOAT), "--http-bind", "127.0.0.1", "--http-port", str(free_port()),
             "--media-port", str(free_port(socket.SOCK_DGRAM)), "--workers", "1",
             "--ng-port", str(port)], capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    lines = [l for l in result.stderr.splitlines() if l.startswith("moat:")]
    assert len(lines) == 1 and "ng control socket" in lines[0] and str(port) in lines[0], \
        result.stderr
