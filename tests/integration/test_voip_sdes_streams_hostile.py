"""A party on a plain<->SDES call that changes SSRC on every packet.

libsrtp makes one stream per SSRC on a template context and never frees
one; the SDES leg's outbound context made a stream for each fresh SSRC the
plain party sent (no key needed), about 380 B each, and libsrtp's linear
stream list made every packet slower: at 80,000 streams a few hundred
packets a second saturated the worker and every other call on it. The SDES
party could do the same inbound with its own key.

Now each direction of an SRTP session keeps at most 64 streams and removes
the least recently used one for a new SSRC's (counted,
moat_call_srtp_streams_evicted_total): 10,000 fresh SSRCs from the plain
party and 100 authenticated ones from the SDES party leave the gateway's
memory where it was, and both parties' normal media still flows both ways
afterwards."""
import base64
import os
import socket
import time

import pytest

from conftest import ASAN_ENV, Gateway, free_port, rss_kib
from ng_client import NgClient
from test_voip_sdes import crypto_lines, phone_sdp, port_of, rtp, session, udp

pytestmark = pytest.mark.hostile

WARM_UP = 1000
FRESH = 10000
FRESH_INBOUND = 100
CAP = 64
EVICTED = "moat_call_srtp_streams_evicted_total"
RELAYED = 'moat_call_relayed_packets_total{kind="rtp"}'


def drain(sock):
    sock.setblocking(False)
    count = 0
    try:
        while True:
            sock.recv(4096)
            count += 1
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)
        sock.settimeout(2)
    return count


def wait_metric(gw, name, want, seconds=10.0):
    deadline = time.time() + seconds
    value = gw.metric(name)
    while value < want and time.time() < deadline:
        time.sleep(0.1)
        value = gw.metric(name)
    return value


def fresh_ssrcs(sock, port, first, count):
    """`count` packets, each from a new SSRC, paced at about 4,000 a second
    (the ASan gateway keeps up; no receive-queue drop)."""
    for i in range(count):
        sock.sendto(rtp(1, first + i), ("127.0.0.1", port))
        if i % 4 == 3:
            time.sleep(0.001)


@pytest.fixture
def voip():
    media_min = free_port(socket.SOCK_DGRAM, 40)
    media_min += media_min & 1
    # No ASan quarantine (only the ASan gateway reads it): a freed stream's
    # memory is reused at once, as in the release build, so RSS means the same.
    gw = Gateway(extra_args=["--call-allow-loopback-destinations", "--media-port-min",
                             str(media_min), "--media-port-max", str(media_min + 37)],
                 workers=1,
                 env={"ASAN_OPTIONS": ASAN_ENV["ASAN_OPTIONS"] + ":quarantine_size_mb=0"})
    client = NgClient(gw.ng_port)
    yield gw, client
    client.close()
    assert gw.stop() == 0, f"log in {gw.log_path}"


def test_fresh_ssrc_per_packet_keeps_the_leg_bounded(voip):
    gw, client = voip
    caller, callee = udp(), udp()
    offer = client.command("offer", call_id="churn", from_tag="plain",
                           sdp=phone_sdp(caller.getsockname()[1]),
                           transport_protocol="RTP/SAVP", flags=["trust-address"])
    assert offer["result"] == "ok", offer
    tag, suite, moat_key = crypto_lines(offer["sdp"])[0]
    my_key = os.urandom(30)
    answer = client.command("answer", call_id="churn", from_tag="plain", to_tag="sdes",
                            sdp=phone_sdp(callee.getsockname()[1], [
                                f"{tag} {suite} inline:{base64.b64encode(my_key).decode()}"]))
    assert answer["result"] == "ok", answer
    to_callee, to_caller = port_of(offer["sdp"]), port_of(answer["sdp"])
    receive_srtp, send_srtp = session(suite, moat_key, False), session(suite, my_key, True)

    # Both parties' normal media first.
    for seq in range(1, 6):
        caller.sendto(rtp(seq), ("127.0.0.1", to_caller))
        assert receive_srtp.unprotect(callee.recv(2048)) == rtp(seq)
        callee.sendto(send_srtp.protect(rtp(seq, 0x5D35)), ("127.0.0.1", to_callee))
        assert caller.recv(2048) == rtp(seq, 0x5D35)

    # Warm up: the outbound table fills and the allocator sees streams come
    # and go before the baseline.
    relayed = gw.metric(RELAYED)
    fresh_ssrcs(caller, to_caller, 0x100000, WARM_UP)
    relayed += WARM_UP
    assert wait_metric(gw, RELAYED, relayed) == relayed
    drain(callee)
    before = rss_kib(gw.process.pid)

    # The attack: a fresh SSRC on every packet, no key needed.
    first = 0x200000
    for chunk in range(0, FRESH, 500):
        fresh_ssrcs(caller, to_caller, first + chunk, 500)
        drain(callee)
    relayed += FRESH
    assert wait_metric(gw, RELAYED, relayed) == relayed  # every one protected
    drain(callee)
    grown = rss_kib(gw.process.pid) - before
    # Before the bound 10,000 streams held ~3.8 MB (release; ~6.8 MB with
    # ASan); now ~0.1 MB (release; ~0.8 MB of ASan's own bookkeeping).
    assert grown < 2048, f"RSS grew {grown} KiB over {FRESH} fresh SSRCs"
    outbound = 1 + WARM_UP + FRESH - CAP  # distinct SSRCs, less the 64 kept
    metrics = gw.metrics()
    assert metrics.get(EVICTED) == outbound
    assert metrics.get("moat_srtp_streams_evicted_total") == 0  # sessions': none here

    # The SDES party does the same inbound, each packet authenticated, at
    # a voice call's rate (faster, the leg's detector would switch on and
    # its stream guard admit 20 new SSRCs a second).
    for i in range(FRESH_INBOUND):
        callee.sendto(send_srtp.protect(rtp(1, 0x300000 + i)), ("127.0.0.1", to_callee))
        time.sleep(0.01)
    inbound = 1 + FRESH_INBOUND - CAP
    assert wait_metric(gw, EVICTED, outbound + inbound) == outbound + inbound
    drain(caller)

    # Both parties' normal streams go on (the caller's was evicted long ago:
    # both ends start it afresh; the callee's was evicted inbound).
    for seq in range(6, 16):
        caller.sendto(rtp(seq), ("127.0.0.1", to_caller))
        assert receive_srtp.unprotect(callee.recv(2048)) == rtp(seq)
        callee.sendto(send_srtp.protect(rtp(seq, 0x5D35)), ("127.0.0.1", to_callee))
        assert caller.recv(2048) == rtp(seq, 0x5D35)
    assert client.command("ping")["result"] == "pong"
