"""baresip to baresip through Kamailio and Moat, SDES-SRTP on one leg and
plain RTP on the other: the caller speaks plain RTP/AVP (PCMU, a 440 Hz
sine), the callee only accepts SDES-SRTP (mediaenc=srtp-mand, baresip's own
SRTP, not libsrtp). Kamailio's rtpengine_manage() offers with "RTP/SAVP",
so Moat offers the callee its keys and answers the caller in RTP/AVP.
Without Moat the two phones cannot talk (488); through it, Moat
authenticates every SRTP packet of the callee (none fails) and relays the
caller's audio to it encrypted."""
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import ARTIFACTS, free_port
from ng_client import NgClient
from voip_peers import relay_gateway, start_kamailio, stop, wait_for_call

pytestmark = pytest.mark.skipif(
    not (shutil.which("kamailio") and shutil.which("baresip")),
    reason="needs kamailio and baresip (scripts/install-deps.sh)")


def baresip_dir(tmp_path, name, sip_port, rtp_low, account):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config").write_text(
        f"sip_listen\t\t127.0.0.1:{sip_port}\n"
        "net_interface\t\t127.0.0.1\n"  # its SDP names the address it sends from
        "audio_source\t\tausine,440\nausrc_srate\t\t48000\nausrc_channels\t\t2\n"
        "module_path\t\t/usr/lib/baresip/modules\n"
        "module\t\t\tg711.so\nmodule\t\t\tausine.so\nmodule\t\t\tsrtp.so\n"
        "module_app\t\taccount.so\nmodule_app\t\tmenu.so\n"
        f"rtp_ports\t\t{rtp_low}-{rtp_low + 19}\n")
    (folder / "accounts").write_text(account + "\n")
    return folder


def distinct_ports(count):
    """Ports p with p and p + 1 free for UDP and TCP (baresip listens on UDP
    and TCP at p and TLS at p + 1), none next to another."""
    ports = []
    while len(ports) < count:
        port = free_port(count=2)
        if any(abs(port - other) < 2 for other in ports):
            continue
        try:
            for p in (port, port + 1):
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                    probe.bind(("127.0.0.1", p))
        except OSError:
            continue
        ports.append(port)
    return ports


def test_baresip_plain_to_baresip_sdes_through_kamailio(tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    gw, _ = relay_gateway(extra_args=["--ng-delete-delay", "0"])
    sip_port, callee_port, caller_port = distinct_ports(3)
    callee_dir = baresip_dir(tmp_path, "callee", callee_port, free_port(socket.SOCK_DGRAM, 20),
                             f"<sip:b@127.0.0.1:{callee_port}>;regint=0;answermode=auto;"
                             "mediaenc=srtp-mand;audio_codecs=PCMU")
    caller_dir = baresip_dir(tmp_path, "caller", caller_port, free_port(socket.SOCK_DGRAM, 20),
                             f"<sip:a@127.0.0.1:{caller_port}>;regint=0;audio_codecs=PCMU;"
                             f"outbound=\"sip:127.0.0.1:{sip_port}\"")
    runtime = tempfile.mkdtemp(prefix="kamailio-", dir=tmp_path)
    kamailio, kamailio_log = start_kamailio(sip_port, gw.ng_port, runtime,
                                            "RTP/SAVP replace-origin replace-session-connection",
                                            log_name=f"kamailio-sdes-{sip_port}.log")
    client = NgClient(gw.ng_port)
    callee_log = open(tmp_path / "callee.log", "w")
    caller_log = open(tmp_path / "caller.log", "w")
    callee = caller = None
    try:
        callee = subprocess.Popen(["baresip", "-f", str(callee_dir), "-t", "20"],
                                  stdout=callee_log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        time.sleep(1)
        caller = subprocess.Popen(["baresip", "-f", str(caller_dir), "-t", "12", "-e",
                                   f"/dial sip:b@127.0.0.1:{callee_port}"],
                                  stdout=caller_log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        call_id = wait_for_call(client, 15)
        assert call_id, "the INVITE never reached Moat through Kamailio"
        # Audio for a few seconds, both ways.
        deadline = time.time() + 15
        while time.time() < deadline:
            query = client.command("query", call_id=call_id)
            assert query["result"] == "ok", query
            per_party = [t["medias"][0]["streams"][0]["stats"]["packets"]
                         for t in query.get("tags", {}).values()]
            if len(per_party) == 2 and min(per_party) >= 100:
                break
            time.sleep(0.5)
        metrics = gw.metrics()
        reasons = {k: v for k, v in metrics.items()
                   if k.startswith("moat_call_dropped_packets_total") and v}
        print(f"query totals {query['totals']}; drops {reasons}")
        # Both parties' RTP reached Moat: the callee's as SRTP it authenticated.
        assert len(per_party) == 2 and min(per_party) >= 100, (query, reasons)
        # Every SRTP packet of the callee authenticated; none was refused.
        for reason in ("srtp_auth", "srtp_protect", "srtp_index", "srtp_replay",
                       "srtp_unknown_ssrc", "srtp_budget"):
            assert metrics.get(f'moat_call_dropped_packets_total{{reason="{reason}"}}', 0) == 0
        relayed = metrics['moat_call_relayed_packets_total{kind="rtp"}']
        assert relayed >= 200
    finally:
        stop(caller)
        stop(callee)
        callee_log.close()
        caller_log.close()
        client.close()
        stop(kamailio)
        kamailio_log.close()
        code = gw.stop()
        for name in ("callee", "caller"):
            text = (tmp_path / f"{name}.log").read_text(errors="replace")
            (ARTIFACTS / f"baresip-sdes-{name}.log").write_text(text)
    callee_text = (tmp_path / "callee.log").read_text(errors="replace")
    assert "srtp" in callee_text.lower()
    assert "unprotect" not in callee_text.lower() and "auth" not in callee_text.lower(), \
        callee_text[-2000:]
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
