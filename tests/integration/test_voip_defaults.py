"""Calls as a user meets them with the default candidate set: a namespace
of the test's own stands for a host with loopback and a LAN address; Moat
runs there with no [media] announced_address and no --candidate-addresses,
and two phones on the LAN address set up a call over ng
(ng_call_probe.py). The rewritten SDPs must name the LAN address, and RTP
sent there must cross both ways. Before, call SDPs announced the first IPv4
candidate, which was 127.0.0.1 (loopback comes first): a phone on another
host sent its media to itself. A host with loopback alone gets a warning
at start-up naming [media] announced_address."""
import json
import re
import subprocess
import uuid

import pytest

from conftest import ROOT, Gateway

PYTHON = ROOT / ".venv" / "bin" / "python"
PROBE = ROOT / "tests" / "integration" / "ng_call_probe.py"
LAN = "10.78.0.1"


def sh(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


@pytest.fixture
def host():
    """A namespace with lo and a LAN address (and IPv6 beside it)."""
    ns = f"moat-vd-{uuid.uuid4().hex[:6]}"
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "add", "lan0", "type", "veth", "peer", "name", "lan1")
        sh("ip", "-n", ns, "link", "set", "lan1", "up")
        sh("ip", "-n", ns, "addr", "add", f"{LAN}/24", "dev", "lan0")
        sh("ip", "-n", ns, "addr", "add", "fd78::1/64", "dev", "lan0", "nodad")
        sh("ip", "-n", ns, "link", "set", "lan0", "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_call_sdps_announce_the_lan_address_by_default(host):
    gw = Gateway(netns=host, candidate_addresses=None, workers=1)
    try:
        result = subprocess.run(["ip", "netns", "exec", host, str(PYTHON), str(PROBE), LAN,
                                 str(gw.ng_port)], capture_output=True, text=True, timeout=30,
                                cwd=PROBE.parent)
        assert result.returncode == 0, result.stderr
        call = json.loads(result.stdout)
        assert "error" not in call, call
        assert call["offer_c"] == LAN and call["answer_c"] == LAN, call
        assert call["forward"] == 20 and call["back"] == 20, call
    finally:
        assert gw.stop() == 0
    log = gw.log_text()
    assert "candidate address 127.0.0.1" in log  # loopback is a candidate, and first
    assert re.search(rf'msg="call SDPs announce {re.escape(LAN)} ', log), log[-2000:]


def test_a_host_with_loopback_alone_is_warned_about():
    """No interface address but loopback: calls can only name 127.0.0.1,
    and the start-up log says so as a warning naming the setting."""
    ns = f"moat-vd-{uuid.uuid4().hex[:6]}"
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        gw = Gateway(netns=ns, candidate_addresses=None, workers=1)
        assert gw.stop() == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    log = gw.log_text()
    assert re.search(r'level=warn component=gateway msg="call SDPs announce 127\.0\.0\.1, a '
                     r'loopback address: .*set \[media\] announced_address"', log), log[-2000:]
