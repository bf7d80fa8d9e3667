"""Who may be first at a baseline's listener (issue 26's TLS/TCP and
DTLS/UDP baselines, spoken directly between two moat-tunnel peers): a
stranger in a third namespace reaches the listening peer before its real
peer does. Junk, silent connections, a TLS or DTLS client with a
certificate other than --peer-fingerprint, datagrams that are no
ClientHello and a ClientHello that is junk are each refused (counted in
the summary's `refused`, said on stderr); a well-formed ClientHello, as
from a forged source, gets one HelloVerifyRequest smaller than itself and
holds nothing (the DTLS listener is stateless until a cookie returns); the
listener then takes its real
peer, the tunnel carries ping both ways, and the listener exits cleanly.
moat-tunnel runs from the ASan/UBSan build when there is one."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ARTIFACTS
from test_tunnel import identity
from tunnel_net import MOAT_TUNNEL, TUNNEL_ADDRESSES, TunnelNet, TunnelPeer

pytestmark = [pytest.mark.hostile,
              pytest.mark.skipif(not MOAT_TUNNEL.exists(), reason="moat-tunnel is not built")]

ROOT = Path(__file__).resolve().parents[2]
ASAN_TUNNEL = ROOT / "build-asan" / "tools" / "moat-tunnel"
BINARY = (MOAT_TUNNEL if os.environ.get("MOAT_TUNNEL_BINARY") or not ASAN_TUNNEL.exists()
          else ASAN_TUNNEL)
PORT = 4433
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")

STRANGER_TCP = r'''
import socket, ssl, sys, time
host, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def connect():
    deadline = time.time() + 10
    while True:
        try:
            return socket.create_connection((host, port), timeout=10)
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
# Junk instead of a ClientHello: the listener's handshake fails at once.
s = connect()
s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)) * 8)
s.settimeout(10)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
s.close()
print("junk refused", flush=True)
# A TLS client with a certificate of its own (not the listener's peer's).
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
context.load_cert_chain(cert, key)
s = connect()
try:
    t = context.wrap_socket(s)
    t.settimeout(10)
    # The listener checks the fingerprint after the handshake and closes.
    data = t.recv(1)
    print("stranger certificate refused" if data == b"" else "stranger certificate: data",
          flush=True)
except (ssl.SSLError, OSError) as e:
    print("stranger certificate refused", type(e).__name__, flush=True)
s.close()
# Twelve connections, silent: more than the listener runs from one address
# (8), so the oldest are displaced; none holds up the real peer.
silent = [connect() for _ in range(12)]
print("silent connected", flush=True)
time.sleep(8)
for s in silent:
    s.close()
'''


def assert_clean(peer):
    text = peer.text()
    assert not any(mark in text for mark in SANITIZER_MARKS), text[-3000:]


def listening_peer(net, transport, ids):
    listener = TunnelPeer(net, 0, ARTIFACTS, "--transport", transport, "--listen",
                          f"{TunnelNet.PEERS[0]}:{PORT}", "--cert", ids[0][0], "--key",
                          ids[0][1], "--peer-fingerprint", ids[1][2], binary=BINARY)
    return listener


def connector(net, transport, ids, index=1, own=None, address=None):
    own = own or ids[1]
    return TunnelPeer(net, index, ARTIFACTS, "--transport", transport, "--connect",
                      f"{TunnelNet.PEERS[0]}:{PORT}", "--cert", own[0], "--key", own[1],
                      "--peer-fingerprint", ids[0][2], address=address, binary=BINARY)


def ping(net, count=3):
    r = net.run(0, sys.executable, str(Path(__file__).parent / "tunnel_traffic.py"), "ping",
                TUNNEL_ADDRESSES[1], str(count), timeout=count * 3 + 10)
    return int(r.stdout.split()[-1]) if r.stdout.strip() else 0


def wait_for_text(peer, text, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if text in peer.text():
            return
        assert peer.process.poll() is None, peer.text()
        time.sleep(0.05)
    raise AssertionError(f"no {text!r}: " + peer.text())


class Setup:
    """Three peer namespaces (listener, real peer, stranger), an identity
    for each, and the moat-tunnel peers started (stopped at the end)."""

    def __init__(self):
        self.net = TunnelNet(3)
        self.ids = [identity(f"tunnel-h-{self.net.tag}-{i}") for i in range(3)]
        self.peers = []

    def close(self):
        for p in self.peers:
            if p.process.poll() is None:
                p.stop(timeout=20)
        self.net.close()


@pytest.fixture
def setup():
    s = Setup()
    yield s
    s.close()


@pytest.mark.serial
def test_strangers_first_at_the_tls_listener(setup):
    net, ids, peers = setup.net, setup.ids, setup.peers
    listener = listening_peer(net, "tcp", ids)
    peers.append(listener)
    stranger = net.popen(2, sys.executable, "-c", STRANGER_TCP, TunnelNet.PEERS[0], str(PORT),
                         ids[2][0], ids[2][1], stdout=subprocess.PIPE, text=True)
    assert stranger.stdout.readline().startswith("junk refused")
    line = stranger.stdout.readline()
    assert line.startswith("stranger certificate refused"), line
    assert stranger.stdout.readline().startswith("silent connected")
    # The real peer comes while the silent ones wait: its handshake runs
    # beside theirs (before, one at a time, 5 s each: four silent
    # connections made it miss its 15 s setup timeout).
    real = connector(net, "tcp", ids)
    peers.append(real)
    for p in peers:
        p.wait_connected(timeout=30)
    assert ping(net) == 3
    text = listener.text()
    # Junk, the stranger's certificate, four silent ones displaced.
    assert text.count("moat-tunnel: refused a connection") == 6, text
    assert text.count("displaced by a newer connection") == 4 and "is not" in text, text
    for p in peers:
        assert p.stop() == 0, p.text()
    assert listener.summary()["refused"] == "6"
    stranger.wait(timeout=20)
    for p in peers:
        assert_clean(p)


def udp_send(net, payloads):
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "for hexed in sys.argv[3:]:\n"
            "    s.sendto(bytes.fromhex(hexed), (sys.argv[1], int(sys.argv[2])))\n")
    r = net.run(2, sys.executable, "-c", code, TunnelNet.PEERS[0], str(PORT),
                *[p.hex() for p in payloads], timeout=20)
    assert r.returncode == 0, r.stderr


def client_hello():
    """A minimal DTLS 1.2 ClientHello (RFC 6347 §4.2.2): no cookie, one
    AEAD suite, no extensions."""
    body = (bytes([0xfe, 0xfd]) + bytes(range(32)) + bytes([0, 0])  # random, no session, no cookie
            + bytes([0, 2, 0xc0, 0x2b]) + bytes([1, 0]))  # one suite, null compression
    handshake = (bytes([1]) + len(body).to_bytes(3, "big") + bytes([0, 0]) + bytes(3)
                 + len(body).to_bytes(3, "big") + body)
    return bytes([22, 0xfe, 0xff]) + bytes(8) + len(handshake).to_bytes(2, "big") + handshake


def udp_exchange(net, payload, wait_s=1.5):
    """Sends one datagram to the listener from the stranger's namespace and
    returns every datagram that came back within wait_s."""
    code = ("import socket, sys, time\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s.sendto(bytes.fromhex(sys.argv[3]), (sys.argv[1], int(sys.argv[2])))\n"
            "end = time.time() + float(sys.argv[4])\n"
            "while time.time() < end:\n"
            "    s.settimeout(max(end - time.time(), 0.01))\n"
            "    try:\n"
            "        print(s.recv(65535).hex(), flush=True)\n"
            "    except socket.timeout:\n"
            "        break\n")
    r = net.run(2, sys.executable, "-c", code, TunnelNet.PEERS[0], str(PORT), payload.hex(),
                str(wait_s), timeout=20)
    assert r.returncode == 0, r.stderr
    return [bytes.fromhex(line) for line in r.stdout.split()]


@pytest.mark.serial
def test_strangers_first_at_the_dtls_listener(setup):
    net, ids, peers = setup.net, setup.ids, setup.peers
    listener = listening_peer(net, "udp", ids)
    peers.append(listener)
    time.sleep(0.5)
    # Datagrams that are no ClientHello: ignored, nothing latched.
    udp_send(net, [b"", b"\x00", b"junk" * 300, bytes([23, 0xfe, 0xfd]) + bytes(40)])
    # A record that says ClientHello and is junk after: no answer, refused.
    junk = bytes([22, 0xfe, 0xff]) + bytes(8) + bytes([0, 40]) + bytes([1]) + bytes(39)
    assert udp_exchange(net, junk) == []
    # A well-formed ClientHello, as from a forged source: one
    # HelloVerifyRequest smaller than itself (no certificate flight to a
    # victim), and nothing latched.
    replies = udp_exchange(net, client_hello())
    assert len(replies) == 1, replies
    assert replies[0][0] == 22 and replies[0][13] == 3, replies[0].hex()
    assert len(replies[0]) < len(client_hello()), len(replies[0])
    # A DTLS client with a certificate other than the peer's.
    stranger = connector(net, "udp", ids, index=2, own=ids[2], address="10.77.0.3")
    peers.append(stranger)
    # Its handshake completes on its side (the listener checks the
    # certificate after it) and the listener closes it at once.
    stranger.process.wait(timeout=30)
    assert stranger.summary()["connected_s"] == "0.0", stranger.text()
    assert stranger.summary()["packets_in"] == "0"
    wait_for_text(listener, "refused a sender", timeout=10)
    real = connector(net, "udp", ids)
    peers.append(real)
    listener.wait_connected(timeout=30)
    real.wait_connected(timeout=30)
    assert ping(net) == 3
    text = listener.text()
    assert text.count("moat-tunnel: refused a sender") == 1, text
    assert listener.stop() == 0 and real.stop() == 0
    summary = listener.summary()
    # Three ignored datagrams, the junk ClientHello, the stranger's
    # certificate and what the stranger sends after it was let go (its
    # answer to the listener's close_notify); cookies for the forged
    # ClientHello, the stranger and the real peer.
    assert int(summary["refused"]) in (5, 6), summary
    assert int(summary["hello_verify_requests"]) == 3, summary
    for p in peers:
        assert_clean(p)
