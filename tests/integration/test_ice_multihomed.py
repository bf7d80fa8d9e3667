"""ICE nomination and the 5-tuple table against real peers.

A namespace of the test's own stands for a multi-homed host (loopback, a LAN
address, an IPv6 address): the gateway runs there with its default candidate
set, moat-flood (regular nomination) and aiortc connect to it; moat-flood
moves its sessions to another address mid-call (address migration) and
media continues on the same DTLS session. On loopback, an authenticated peer
of one session forges a check from another session's 5-tuple and must not
take it over, and checks from a tuple that is not selected do not keep the
selected pair's consent alive."""
import asyncio
import json
import re
import subprocess
import sys
import time

import aioice.stun as stun
import pytest

from conftest import ROOT, Gateway
from netns import lan_host
from spoof import udp_datagram

FLOOD = ROOT / "build" / "tools" / "moat-flood"
PYTHON = ROOT / ".venv" / "bin" / "python"
LAN = "10.77.0.1"
LAN_SECOND = "10.77.0.2"
V6 = "fd77::1"


@pytest.fixture
def multihomed():
    """A namespace with lo, a LAN address (two, for migration) and IPv6."""
    with lan_host("moat-mh", (LAN, LAN_SECOND), V6) as ns:
        yield ns


def default_gateway(ns):
    return Gateway(netns=ns, candidate_addresses=None, workers=1)


def flood_in(ns, *args, timeout=60):
    return subprocess.run(["ip", "netns", "exec", ns, str(FLOOD), *args],
                          capture_output=True, text=True, timeout=timeout)


def test_moat_flood_connects_to_a_default_multihomed_gateway(multihomed):
    """Before: three pairs nominated, the gateway picked the last one, DTLS
    went to a pair the client did not use and never completed."""
    gw = default_gateway(multihomed)
    try:
        result = flood_in(multihomed, "--whip", gw.base + "/whip/echo", "--sessions", "3",
                          "--duration", "2", "--json", "--quiet")
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["sessions_connected"] == 3
        legit = summary["legitimate"]
        assert legit["sent"] > 0 and legit["received"] >= 0.9 * legit["sent"], legit
        assert gw.metric("moat_dtls_handshakes_total") == 3
    finally:
        assert gw.stop() == 0
    # The default candidate set really is multi-homed (the bug needs it).
    announced = set(re.findall(r'msg="candidate address (\S+)"', gw.log_text()))
    assert {"127.0.0.1", LAN, LAN_SECOND, V6} <= announced, announced


AIORTC_CALL = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[2])
from aiortc_peer import echo_call
r = asyncio.run(echo_call(sys.argv[1], seconds=3, video=False))
a = r["recorders"].get("audio")
print(json.dumps({"sent": r["sent_audio"], "received": a.frames if a else 0,
                  "state": r["connection_state"]}))
"""


def test_aiortc_connects_to_a_default_multihomed_gateway(multihomed):
    gw = default_gateway(multihomed)
    try:
        result = subprocess.run(
            ["ip", "netns", "exec", multihomed, str(PYTHON), "-c", AIORTC_CALL, gw.base,
             str(ROOT / "tests" / "integration")],
            capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr[-3000:]
        call = json.loads(result.stdout.strip().splitlines()[-1])
        assert call["sent"] > 100 and call["received"] >= 0.85 * call["sent"], call
        assert gw.metric("moat_dtls_handshakes_total") == 1
    finally:
        assert gw.stop() == 0


def test_address_migration_keeps_the_dtls_session(multihomed):
    """Every session moves its socket to another local address mid-call and
    re-nominates from there: media comes back on the new address, over the
    same DTLS session (one handshake per session)."""
    gw = default_gateway(multihomed)
    try:
        result = flood_in(multihomed, "--whip", gw.base + "/whip/echo",
                          "--sessions", "2", "--duration", "3", "--migrate-after", "1",
                          "--migrate-to", LAN_SECOND, "--json", "--quiet")
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["sessions_connected"] == 2
        for session in summary["sessions"]:
            assert session["state"] == "connected", session
            assert session["migrations"] == 1, session
            # ~2 s of 50 pps after the move.
            assert session["received_after_migration"] > 50, session
        assert gw.metric("moat_dtls_handshakes_total") == 2
        assert gw.metric("moat_dtls_handshake_failures_total") == 0
        moved = re.findall(r"selected pair \[::ffff:" + re.escape(LAN_SECOND) + r"\]", gw.log_text())
        assert len(moved) == 2, gw.log_text()[-3000:]
    finally:
        assert gw.stop() == 0


def test_address_migration_through_an_ice_restart(multihomed):
    """The same move with new credentials (WHIP PATCH): the first nomination
    with the new credentials takes the media, DTLS and SRTP carry on."""
    gw = default_gateway(multihomed)
    try:
        result = flood_in(multihomed, "--whip", gw.base + "/whip/echo",
                          "--sessions", "2", "--duration", "3", "--migrate-after", "1",
                          "--migrate-to", LAN_SECOND, "--migrate-restart", "--json", "--quiet")
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        for session in summary["sessions"]:
            assert session["state"] == "connected", session
            assert session["migrations"] == 1, session
            assert session["received_after_migration"] > 50, session
        assert gw.metric("moat_dtls_handshakes_total") == 2
        log = gw.log_text()
        assert log.count("ICE restart complete") == 2, log[-3000:]
    finally:
        assert gw.stop() == 0


def _answer_credentials(sdp):
    return (re.search(r"a=ice-ufrag:(\S+)", sdp).group(1),
            re.search(r"a=ice-pwd:(\S+)", sdp).group(1))


@pytest.fixture
def one_worker():
    """Both sessions on the same worker (so the same socket and tuple table)."""
    gw = Gateway(workers=1)
    yield gw
    assert gw.stop() == 0


def test_a_peer_cannot_take_over_another_sessions_tuple(one_worker):
    """Mallory holds a session of her own (so her checks authenticate) and
    forges one from Alice's 5-tuple, nominating it. Before: the tuple table
    entry was replaced and Alice's media went to Mallory's session."""
    gateway = one_worker
    import socket
    from aiortc import RTCPeerConnection
    from aiortc_peer import echo_call, whip_publish, whip_delete

    attack = {}

    async def take_over(pc):
        await asyncio.sleep(1.0)
        alice = re.search(r"selected pair \[::ffff:([\d.]+)\]:(\d+)", gateway.log_text())
        assert alice, "Alice's pair is not selected"
        mallory = RTCPeerConnection()
        mallory.createDataChannel("x")
        resource, answer = await whip_publish(mallory, gateway.base + "/whip/echo")
        local_ufrag = re.search(r"a=ice-ufrag:(\S+)", mallory.localDescription.sdp).group(1)
        remote_ufrag, remote_pwd = _answer_credentials(answer)
        port = int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+)", answer).group(1))
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
        try:
            for _ in range(5):
                check = stun.Message(message_method=stun.Method.BINDING,
                                     message_class=stun.Class.REQUEST)
                check.attributes["USERNAME"] = f"{remote_ufrag}:{local_ufrag}"
                check.attributes["PRIORITY"] = 0x7FFFFFFF
                check.attributes["ICE-CONTROLLING"] = 1
                check.attributes["USE-CANDIDATE"] = None
                check.add_message_integrity(remote_pwd.encode())
                check.add_fingerprint()
                raw.sendto(udp_datagram(alice.group(1), int(alice.group(2)), "127.0.0.1", port,
                                        bytes(check)), ("127.0.0.1", 0))
                await asyncio.sleep(0.05)
        finally:
            raw.close()
        attack["sent"] = True
        await whip_delete(resource)
        await mallory.close()

    before = gateway.drops("ice_pair")
    result = asyncio.run(echo_call(gateway.base, seconds=5, video=False, on_running=take_over))
    assert attack.get("sent")
    audio = result["recorders"]["audio"]
    ratio = audio.frames / result["sent_audio"]
    assert ratio >= 0.85, f"Alice got {ratio:.0%} of her audio back"
    assert gateway.drops("ice_pair") - before >= 1
    assert gateway.metric("moat_dtls_handshake_failures_total") == 0


def _check(username, pwd, nominate):
    check = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST)
    check.attributes["USERNAME"] = username
    check.attributes["PRIORITY"] = 0x6E7FFFFF
    check.attributes["ICE-CONTROLLING"] = 7
    if nominate:
        check.attributes["USE-CANDIDATE"] = None
    check.add_message_integrity(pwd.encode())
    check.add_fingerprint()
    return bytes(check)


def test_consent_is_refreshed_by_the_selected_pair_only():
    """RFC 7675 consent is per pair: a peer that checks only from another
    tuple (answered, but not selected) no longer keeps the selected pair's
    consent alive. Before: any check did, so the session never expired."""
    import socket
    from aiortc import RTCPeerConnection
    from aiortc_peer import whip_publish

    gw = Gateway(workers=1, extra_args=["--consent-timeout", "5"])
    try:
        async def offer():
            pc = RTCPeerConnection()
            pc.createDataChannel("x")
            await pc.setLocalDescription(await pc.createOffer())
            import aiohttp
            async with aiohttp.ClientSession() as http:
                async with http.post(gw.base + "/whip/echo", data=pc.localDescription.sdp,
                                     headers={"Content-Type": "application/sdp"}) as r:
                    assert r.status == 201
                    answer = await r.text()
            local = re.search(r"a=ice-ufrag:(\S+)", pc.localDescription.sdp).group(1)
            await pc.close()
            return local, answer

        local_ufrag, answer = asyncio.run(offer())
        remote_ufrag, remote_pwd = _answer_credentials(answer)
        port = int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+)", answer).group(1))
        username = f"{remote_ufrag}:{local_ufrag}"
        selected, other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for s in (selected, other):
                s.bind(("127.0.0.1", 0))
                s.settimeout(1.0)
            selected.sendto(_check(username, remote_pwd, True), ("127.0.0.1", port))
            selected.recv(1500)
            answered = 0
            deadline = time.time() + 9
            while time.time() < deadline and gw.metric("moat_consent_expired_total") == 0:
                other.sendto(_check(username, remote_pwd, False), ("127.0.0.1", port))
                try:
                    other.recv(1500)
                    answered += 1
                except socket.timeout:
                    pass
                time.sleep(0.5)
            assert answered > 0, "checks from the other tuple were not answered"
            assert gw.metric("moat_consent_expired_total") == 1
        finally:
            selected.close()
            other.close()
    finally:
        assert gw.stop() == 0


def test_a_session_that_will_move_keeps_to_its_family():
    """moat-flood --migrate-to an IPv4 address against a gateway whose best
    candidate is IPv6: before, a session took the IPv6 candidate, its move
    to the IPv4 address could not send there and the session stopped at the
    move (migrations 0, a quarter of its packets); now it takes a candidate
    of the move's family and moves."""
    gw = Gateway(candidate_addresses="::1,127.0.0.1", workers=1)
    try:
        result = subprocess.run(
            [str(FLOOD), "--whip", gw.base + "/whip/echo", "--sessions", "2", "--duration", "3",
             "--migrate-after", "1", "--migrate-to", "127.0.0.2", "--json", "--quiet"],
            capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["sessions_connected"] == 2, summary
        for session in summary["sessions"]:
            assert session["state"] == "connected", session
            assert session["migrations"] == 1, session
            assert session["received_after_migration"] > 50, session
    finally:
        assert gw.stop() == 0
