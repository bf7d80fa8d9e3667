"""The host candidates of a gateway left at its defaults on a host with
more addresses than a session offers (16): docker-like bridges, the host's
own IPv4 and IPv6 address, loopback. The gateway and its client run in
namespaces of the test's own; the client reaches the gateway over IPv6 only.

Before: getifaddrs lists every IPv4 address before the IPv6 ones and the
first 16 were taken in that order, so the host's IPv6 address was dropped
without a word (an IPv6-only client got 201 and no media); a bridge up
without carrier (an idle docker0) took a place; and 127.0.0.1 was offered
at the highest priority."""
import json
import re
import subprocess
import uuid

import pytest

from conftest import ROOT, Gateway

PYTHON = ROOT / ".venv" / "bin" / "python"
SERVER_V4 = "198.18.7.1"
SERVER_V6 = "fd00:77::1"
CLIENT_V6 = "fd00:77::2"
BRIDGES = 20


def sh(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


@pytest.fixture
def crowded_host():
    """(server namespace, client namespace): the server has lo, a veth to
    the client holding SERVER_V4 and SERVER_V6, an idle bridge (up, no
    carrier) and, after them, BRIDGES interfaces with carrier and an IPv4
    address each;
    the client has SERVER_V6's network only."""
    tag = uuid.uuid4().hex[:6]
    server, client = f"moat-ca-s-{tag}", f"moat-ca-c-{tag}"
    try:
        sh("ip", "netns", "add", server)
        sh("ip", "netns", "add", client)
        for ns in (server, client):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", f"cas{tag}", "netns", server, "type", "veth", "peer", "name",
           f"cac{tag}", "netns", client)
        sh("ip", "-n", server, "addr", "add", f"{SERVER_V4}/24", "dev", f"cas{tag}")
        sh("ip", "-n", server, "addr", "add", f"{SERVER_V6}/64", "dev", f"cas{tag}", "nodad")
        sh("ip", "-n", client, "addr", "add", f"{CLIENT_V6}/64", "dev", f"cac{tag}", "nodad")
        sh("ip", "-n", server, "link", "set", f"cas{tag}", "up")
        sh("ip", "-n", client, "link", "set", f"cac{tag}", "up")
        # docker0 without a running container: a bridge whose one port's
        # other end is down has no carrier (a bridge with no port at all
        # has, on some kernels).
        sh("ip", "-n", server, "link", "add", "docker0", "type", "bridge")
        sh("ip", "-n", server, "link", "add", "veth-d", "type", "veth", "peer", "name", "ct-d")
        sh("ip", "-n", server, "link", "set", "veth-d", "master", "docker0")
        sh("ip", "-n", server, "link", "set", "veth-d", "up")
        sh("ip", "-n", server, "addr", "add", "172.17.0.1/16", "dev", "docker0")
        sh("ip", "-n", server, "addr", "add", "fd00:d0c::1/64", "dev", "docker0", "nodad")
        sh("ip", "-n", server, "link", "set", "docker0", "up")
        for i in range(BRIDGES):
            # With carrier, as a compose network's bridge with a container:
            # one end of a veth pair whose other end is up too.
            sh("ip", "-n", server, "link", "add", f"br-{i}", "type", "veth", "peer", "name",
               f"ct-{i}")
            sh("ip", "-n", server, "addr", "add", f"172.{18 + i}.0.1/16", "dev", f"br-{i}")
            sh("ip", "-n", server, "link", "set", f"ct-{i}", "up")
            sh("ip", "-n", server, "link", "set", f"br-{i}", "up")
        yield server, client
    finally:
        for ns in (server, client):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


CALL = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[2])
from aiortc_peer import echo_call
r = asyncio.run(echo_call(sys.argv[1], seconds=3, video=False))
a = r["recorders"].get("audio")
print(json.dumps({"sent": r["sent_audio"], "received": a.frames if a else 0,
                  "answer": r["answer"]}))
"""


def candidates(answer):
    """{address: priority} of the answer's host candidates."""
    return {m.group(2): int(m.group(1)) for m in
            re.finditer(r"a=candidate:\S+ 1 udp (\d+) (\S+) \d+ typ host", answer)}


def test_ipv6_client_reaches_a_gateway_with_many_addresses(crowded_host):
    server, client = crowded_host
    gw = Gateway(netns=server, address=SERVER_V6, candidate_addresses=None, workers=1)
    try:
        result = subprocess.run(
            ["ip", "netns", "exec", client, str(PYTHON), "-c", CALL, gw.base,
             str(ROOT / "tests" / "integration")],
            capture_output=True, text=True, timeout=90)
        assert result.returncode == 0, result.stderr[-3000:]
        call = json.loads(result.stdout.strip().splitlines()[-1])
        offered = candidates(call["answer"])
        # The echo came back over IPv6 (the client has no other address).
        assert call["sent"] > 100, (call["sent"], offered)
        assert call["received"] >= 0.85 * call["sent"], (call["received"], offered)
        assert len(offered) == 16, offered
        # The host's own addresses, both families, are offered; the idle
        # bridge's are not.
        assert SERVER_V4 in offered and SERVER_V6 in offered, offered
        assert "172.17.0.1" not in offered and "fd00:d0c::1" not in offered, offered
        # Loopback last by priority (a remote client tries the others first).
        loopback = [offered[a] for a in ("127.0.0.1", "::1")]
        assert min(loopback) > 0, offered
        others = [p for a, p in offered.items() if a not in ("127.0.0.1", "::1")]
        assert max(loopback) < min(others), offered
    finally:
        assert gw.stop() == 0
    log = gw.log_text()
    # The ones left out are named once, with the option that chooses.
    warnings = [line for line in log.splitlines() if "left out of the" in line]
    assert len(warnings) == 1, log[-3000:]
    assert "level=warn" in warnings[0] and "candidate_addresses" in warnings[0], warnings
    assert "172.37.0.1" in warnings[0], warnings


def test_a_longer_candidate_list_is_warned():
    """[media] candidate_addresses beyond 16 was cut without a word."""
    listed = [f"127.0.0.{i}" for i in range(1, 21)]
    gw = Gateway(candidate_addresses=",".join(listed), workers=1)
    assert gw.stop() == 0
    log = gw.log_text()
    offered = re.findall(r'msg="candidate address (\S+)"', log)
    assert offered == listed[:16], offered
    warnings = [line for line in log.splitlines() if "candidate_addresses lists more" in line]
    assert len(warnings) == 1 and "level=warn" in warnings[0], log[-3000:]
    assert "4 left out (127.0.0.17, 127.0.0.18, 127.0.0.19, 127.0.0.20)" in warnings[0], warnings


def test_loopback_is_offered_last_by_priority():
    """127.0.0.1 listed first (or announced) was offered at the highest
    priority (2130706431), so remote clients tried it before the host's real
    addresses; now every loopback candidate ranks below every other one, and
    a client on this host still connects through it."""
    import asyncio
    from aiortc_peer import echo_call
    gw = Gateway(candidate_addresses="127.0.0.1,::1,192.0.2.7,2001:db8::7", workers=1)
    try:
        call = asyncio.run(echo_call(gw.base, seconds=2, video=False))
        audio = call["recorders"]["audio"]
        assert call["sent_audio"] > 50 and audio.frames >= 0.85 * call["sent_audio"]
        offered = candidates(call["answer"])
    finally:
        assert gw.stop() == 0
    assert set(offered) == {"127.0.0.1", "::1", "192.0.2.7", "2001:db8::7"}, offered
    assert offered["192.0.2.7"] > offered["2001:db8::7"] > offered["127.0.0.1"] > \
        offered["::1"], offered
    assert offered["192.0.2.7"] == 2130706431 - 2 * 256, offered
