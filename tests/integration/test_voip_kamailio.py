"""Moat as the media relay of a real SIP proxy: Kamailio's rtpengine module
(rtpengine_manage() in tests/voip/kamailio.cfg) drives Moat over ng, a SIPp
UAC calls a SIPp UAS through Kamailio and plays G.711 A-law RTP from SIPp's
pcap. The UAS answers with an RTP port this test owns and counts what
arrives there: it must come from a Moat call-leg port, Moat's ng query must
count the same call, and the BYE must delete it (legs freed)."""
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import ARTIFACTS, free_port
from ng_client import NgClient
from voip_peers import VOIP, kill, relay_gateway, start_kamailio, stop, wait_for_call
PCAP = Path("/usr/share/sip-tester/g711a.pcap")

pytestmark = pytest.mark.skipif(
    not (shutil.which("kamailio") and shutil.which("sipp") and PCAP.exists()),
    reason="needs kamailio and sip-tester (scripts/install-deps.sh)")


class RtpCounter(threading.Thread):
    """Counts RTP datagrams on a UDP port and remembers their sources."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.packets = 0
        self.sources = set()
        self.running = True

    def run(self):
        while self.running:
            try:
                data, source = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            if len(data) >= 12 and data[0] >> 6 == 2:
                self.packets += 1
                self.sources.add(source)

    def stop(self):
        self.running = False
        self.join(2)
        self.sock.close()


def test_sipp_call_through_kamailio_and_moat(tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    gw, low = relay_gateway(extra_args=["--ng-delete-delay", "0"])
    ng_port = gw.ng_port
    sip_port, uas_port, uac_port = (free_port(socket.SOCK_DGRAM) for _ in range(3))
    rtp_port = free_port(socket.SOCK_DGRAM, 2)
    uac_media = free_port(socket.SOCK_DGRAM, 4)
    counter = RtpCounter(rtp_port)
    counter.start()
    runtime = tempfile.mkdtemp(prefix="kamailio-", dir=tmp_path)
    kamailio, kamailio_log = start_kamailio(sip_port, ng_port, runtime)
    client = NgClient(ng_port)
    uas = uac = None
    try:
        uas = subprocess.Popen(
            ["sipp", "-sf", str(VOIP / "uas_count.xml"), "-i", "127.0.0.1", "-p", str(uas_port),
             "-m", "1", "-key", "rtp_port", str(rtp_port), "-timeout", "60", "-nostdin",
             "-trace_err", "-error_file", str(tmp_path / "uas_errors.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
        time.sleep(0.5)
        uac = subprocess.Popen(
            ["sipp", "-sf", str(VOIP / "uac_pcap.xml"), f"127.0.0.1:{uas_port}",
             "-rsa", f"127.0.0.1:{sip_port}", "-i", "127.0.0.1", "-p", str(uac_port),
             "-mp", str(uac_media), "-s", "moat", "-m", "1", "-d", "8000",
             "-timeout", "60", "-nostdin", "-trace_err", "-error_file",
             str(tmp_path / "uac_errors.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
        # While the call is up: Moat lists it and counts what it relays.
        call_id = wait_for_call(client, 20)
        assert call_id, "the INVITE never reached Moat through Kamailio"
        deadline = time.time() + 20
        while time.time() < deadline and counter.packets < 100:
            time.sleep(0.2)
        query = client.command("query", call_id=call_id)
        assert query["result"] == "ok", query
        assert len(query["tags"]) == 2
        relayed_by_moat = query["totals"]["RTP"]["packets"]
        assert relayed_by_moat >= 100

        assert uac.wait(timeout=60) == 0, uac.stderr.read().decode()
        assert uas.wait(timeout=30) == 0, uas.stderr.read().decode()
        time.sleep(0.5)
        # Every packet the UAS got came from Moat's leg facing it.
        assert counter.packets >= 100
        assert len(counter.sources) == 1
        source = next(iter(counter.sources))
        assert source[0] == "127.0.0.1" and low <= source[1] <= low + 19
        metrics = gw.metrics()
        relayed = metrics['moat_call_relayed_packets_total{kind="rtp"}']
        print(f"UAS counted {counter.packets} RTP packets from {source}; Moat relayed {relayed}, query said {relayed_by_moat} mid-call")
        assert relayed == counter.packets, (relayed, counter.packets)
        # BYE -> rtpengine_manage() -> delete: the call and its legs are gone.
        assert metrics["moat_calls"] == 0
        assert metrics["moat_call_legs"] == 0
        assert client.command("list")["calls"] == []
    finally:
        kill(uac, uas)
        client.close()
        counter.stop()
        stop(kamailio)
        kamailio_log.close()
        code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
