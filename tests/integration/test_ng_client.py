"""tests/integration/ng_client.py against the reference: Debian's rtpengine
in user-space mode speaks ng; a plain-RTP call is offered, answered,
queried and deleted through it, and bencode round-trips."""
import shutil
import socket
import subprocess
import time

import pytest

from conftest import free_port
from ng_client import BencodeError, NgClient, bdecode, bencode, plain_sdp, sdp_media_address
from voip_peers import stop


def test_bencode_round_trip_and_rejects():
    value = {"sdp": "v=0\r\n", "flags": ["trust-address", "symmetric"], "n": -3, "raw": b"\xff"}
    encoded = bencode(value)
    assert bdecode(encoded) == (value, len(encoded))
    for bad in (b"d1:a", b"x", b"i12", b"d1:ae", b"5:ab", b"l-e", b"i1x"):
        with pytest.raises(BencodeError):
            bdecode(bad)


@pytest.fixture
def rtpengine(tmp_path):
    if not shutil.which("rtpengine"):
        pytest.skip("rtpengine-daemon is not installed")
    port = free_port(socket.SOCK_DGRAM)
    media = free_port(socket.SOCK_DGRAM, 40)
    process = subprocess.Popen(
        ["rtpengine", "--foreground", "--table=-1", "--interface=127.0.0.1",
         f"--listen-ng=127.0.0.1:{port}", f"--port-min={media}", f"--port-max={media + 39}",
         "--num-threads=1", "--log-stderr", "--log-level=4", "--no-redis-required",
         f"--pidfile={tmp_path / 'rtpengine.pid'}"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "rtpengine.log", "w"))
    ng = NgClient(port, timeout=0.3, tries=30)
    try:
        assert ng.ping()
        yield ng
    finally:
        ng.close()
        stop(process)


def test_plain_call_through_rtpengine(rtpengine):
    call = {"call-id": f"ngc-{time.monotonic_ns()}", "from-tag": "caller"}
    offer = rtpengine.command("offer", call, sdp=plain_sdp("127.0.0.1", 40000))
    assert offer["result"] == "ok", offer
    assert sdp_media_address(offer["sdp"])[0] == "127.0.0.1"
    answer = rtpengine.command("answer", call, to_tag="callee", sdp=plain_sdp("127.0.0.1", 40002))
    assert answer["result"] == "ok", answer
    assert sdp_media_address(answer["sdp"])[1] != sdp_media_address(offer["sdp"])[1]
    query = rtpengine.command("query", call)
    assert set(query["tags"]) == {"caller", "callee"}
    assert rtpengine.command("delete", call, delete_delay=0)["result"] == "ok"
    assert rtpengine.command("query", call)["result"] == "error"
    # A retransmitted datagram (same cookie) gets a reply with that cookie.
    datagram = b"c1 " + bencode({"command": "ping"})
    assert rtpengine.raw(datagram) == rtpengine.raw(datagram)
