"""Kamailio spreading SIP calls over two Moat nodes (one rtpengine set of two
sockets, weighted so that node A is always tried first): with A at its
[ng] max_calls, Moat answers "load limit" (Kamailio's offers say they support
it) and Kamailio moves the call to node B; SIPp's calls all complete."""
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ARTIFACTS, free_port
from ng_client import NgClient
from test_cluster_ng import relay
from voip_peers import VOIP, kill, start_kamailio, stop

PCAP = Path("/usr/share/sip-tester/g711a.pcap")
CALLS = 3

pytestmark = pytest.mark.skipif(
    not (shutil.which("kamailio") and shutil.which("sipp") and PCAP.exists()),
    reason="needs kamailio and sip-tester (scripts/install-deps.sh)")


def test_kamailio_moves_calls_off_a_node_at_its_limit(tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    a = relay(["--ng-max-calls", "1", "--ng-delete-delay", "0"])
    b = relay(["--ng-delete-delay", "0"])
    sip_port, uas_port, uac_port = (free_port(socket.SOCK_DGRAM) for _ in range(3))
    rtp_port = free_port(socket.SOCK_DGRAM, 2)
    uac_media = free_port(socket.SOCK_DGRAM, 4)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", rtp_port))
    runtime = tempfile.mkdtemp(prefix="kamailio-", dir=tmp_path)
    # A weighs 1000 to B's 1: every call is offered to A first.
    sockets = f"udp:127.0.0.1:{a.ng_port}=1000 udp:127.0.0.1:{b.ng_port}=1"
    kamailio, kamailio_log = start_kamailio(sip_port, 0, runtime,
                                            log_name=f"kamailio-cluster-{sip_port}.log",
                                            ng_sock=sockets)
    ng_a, ng_b = NgClient(a.ng_port), NgClient(b.ng_port)
    uas = uac = None
    try:
        uas = subprocess.Popen(
            ["sipp", "-sf", str(VOIP / "uas_count.xml"), "-i", "127.0.0.1", "-p", str(uas_port),
             "-m", str(CALLS), "-key", "rtp_port", str(rtp_port), "-timeout", "60", "-nostdin",
             "-trace_err", "-error_file", str(tmp_path / "uas_errors.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
        time.sleep(0.5)
        uac = subprocess.Popen(
            ["sipp", "-sf", str(VOIP / "uac_pcap.xml"), f"127.0.0.1:{uas_port}",
             "-rsa", f"127.0.0.1:{sip_port}", "-i", "127.0.0.1", "-p", str(uac_port),
             "-mp", str(uac_media), "-s", "moat", "-m", str(CALLS), "-l", str(CALLS),
             "-d", "6000", "-timeout", "60", "-nostdin", "-trace_err", "-error_file",
             str(tmp_path / "uac_errors.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
        # While the calls are up: one on A (its limit), the rest on B.
        deadline = time.time() + 20
        on_a = on_b = []
        while time.time() < deadline:
            on_a = ng_a.command("list").get("calls", [])
            on_b = ng_b.command("list").get("calls", [])
            if len(on_a) + len(on_b) >= CALLS:
                break
            time.sleep(0.2)
        assert (len(on_a), len(on_b)) == (1, CALLS - 1), (on_a, on_b)
        assert a.metric("moat_calls_refused_load_limit_total") >= CALLS - 1
        assert uac.wait(timeout=60) == 0, uac.stderr.read().decode()
        assert uas.wait(timeout=30) == 0, uas.stderr.read().decode()
        assert "load limit" in (ARTIFACTS / f"kamailio-cluster-{sip_port}.log").read_text()
    finally:
        kill(uac, uas)
        ng_a.close()
        ng_b.close()
        sink.close()
        stop(kamailio)
        kamailio_log.close()
        codes = (a.stop(), b.stop())
    assert codes == (0, 0), f"moat exited with {codes}"
