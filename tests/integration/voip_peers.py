"""Shared pieces of the VoIP tests: Moat started as an ng media relay on a
loopback port range, Kamailio started on tests/voip/kamailio.cfg, UDP
sockets playing phones, and stopping peer processes. Each test owns what
these return and stops it in its own finally block."""
import re
import socket
import subprocess
import time
from contextlib import contextmanager

from conftest import ARTIFACTS, ROOT, Gateway, free_port
from ng_client import NgClient

VOIP = ROOT / "tests" / "voip"


def relay_gateway(reserve=20, span=19, extra_args=()):
    """(Gateway, lowest media port): Moat relaying calls on an even port
    range low..low+span inside `reserve` free ports, announcing 127.0.0.1;
    its ng socket is gw.ng_port."""
    low = free_port(socket.SOCK_DGRAM, reserve)
    low += low & 1
    gw = Gateway(extra_args=["--media-port-min", str(low), "--media-port-max", str(low + span),
                             "--announced-address", "127.0.0.1",
                             "--call-allow-loopback-destinations", *extra_args])
    return gw, low


@contextmanager
def ng_relay():
    """Moat on 38 media ports and an NgClient to it; on exit the client is
    closed and Moat must stop cleanly. Yields (gw, client, (low, high))."""
    gw, low = relay_gateway(reserve=40, span=37)
    client = NgClient(gw.ng_port)
    yield gw, client, (low, low + 37)
    client.close()
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def udp_phone(timeout):
    """A UDP socket on an ephemeral loopback port, with a receive timeout."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(timeout)
    return s


def sdp_port(sdp):
    """The port of the first m=audio line."""
    return int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1))


def start_kamailio(sip_port, ng_port, runtime, offer_flags=None, log_name=None, ng_sock=None):
    """Kamailio on udp:127.0.0.1:sip_port driving Moat's ng socket, after
    checking the config; offer_flags overrides the cfg's OFFER_FLAGS;
    ng_sock, when given, is the whole rtpengine_sock (several nodes).
    Returns (process, open log file); its log goes to ARTIFACTS."""
    cfg = VOIP / "kamailio.cfg"
    check = subprocess.run(["kamailio", "-c", "-f", str(cfg)], capture_output=True, text=True,
                           timeout=30)
    assert check.returncode == 0, check.stderr
    log_path = ARTIFACTS / (log_name or f"kamailio-{sip_port}.log")
    log = open(log_path, "w")
    defines = ["-A", f'NG_SOCK="{ng_sock or f"udp:127.0.0.1:{ng_port}"}"']
    if offer_flags is not None:
        defines += ["-A", f'OFFER_FLAGS="{offer_flags}"']
    process = subprocess.Popen(
        ["kamailio", "-DD", "-E", "-f", str(cfg), "-l", f"udp:127.0.0.1:{sip_port}", *defines,
         "-Y", runtime, "-P", f"{runtime}/kamailio.pid", "-w", runtime],
        stdout=log, stderr=subprocess.STDOUT)
    time.sleep(1.5)
    assert process.poll() is None, log_path.read_text()
    return process, log


def stop(process):
    """Terminates a still-running process, killing it after 10 s."""
    if process and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def kill(*processes):
    """Kills each still-running process (None is skipped) and reaps it."""
    for p in processes:
        if p and p.poll() is None:
            p.kill()
            p.wait()


def wait_for_call(client, seconds):
    """The id of the first call Moat lists within `seconds`, or None."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        calls = client.command("list").get("calls", [])
        if calls:
            return calls[0]
        time.sleep(0.2)
    return None
