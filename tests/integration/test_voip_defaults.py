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

import pytest

from conftest import ROOT, Gateway
from netns import lan_host

PYTHON = ROOT / ".venv" / "bin" / "python"
PROBE = ROOT / "tests" / "integration" / "ng_call_probe.py"
LAN = "10.78.0.1"


@pytest.fixture
def host():
    """A namespace with lo and a LAN address (and IPv6 beside it)."""
    with lan_host("moat-vd", (LAN,), "fd78::1") as ns:
        yield ns


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
    with lan_host("moat-vd") as ns:
        gw = Gateway(netns=ns, candidate_addresses=None, workers=1)
        assert gw.stop() == 0
    log = gw.log_text()
    assert re.search(r'level=warn component=gateway msg="call SDPs announce 127\.0\.0\.1, a '
                     r'loopback address: .*set \[media\] announced_address"', log), log[-2000:]
