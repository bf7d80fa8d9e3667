"""IP over data channels (issue 26): two namespaces each running
moat-tunnel, the gateway's tunnel plugin in a third. Ping and a byte-exact
TCP transfer inside the tunnel in every mode (SCTP ordered, unordered,
unreliable through the gateway; the TLS/TCP and DTLS/UDP baselines directly
between the peers), a third peer refused with 409, one end's exit ending the
other's session, and a forged flood at the gateway's port leaving the tunnel
alone. The SCTP modes run with moat-tunnel's default of several lanes
(associations; LANES) and the transfer is FLOWS parallel TCP connections
spread over them; ping also runs with one lane (the path before lanes)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ARTIFACTS, Gateway
from tunnel_net import MOAT_TUNNEL, TUNNEL_ADDRESSES, TunnelNet, TunnelPeer

HERE = Path(__file__).resolve().parent
TOKEN = "tunnel-test-token"
SCTP_MODES = ("ordered", "unordered", "unreliable")
ALL_MODES = SCTP_MODES + ("tcp", "udp")
# The transfer inside the tunnel: 50 MB as the issue asks, unless the
# environment bounds it (MOAT_TUNNEL_TRANSFER_MB) on a slow machine.
TRANSFER_BYTES = int(float(os.environ.get("MOAT_TUNNEL_TRANSFER_MB", "50")) * 1_000_000)
LANES = 8  # moat-tunnel's default (TUNNEL_DEFAULT_LANES)
FLOWS = 8  # parallel connections of the transfer: on two lanes or more but once in ~16000

pytestmark = pytest.mark.skipif(not MOAT_TUNNEL.exists(), reason="moat-tunnel is not built")


def identity(name):
    """A PEM certificate and key for a baseline peer, and its fingerprint."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cert, key = ARTIFACTS / f"{name}.crt", ARTIFACTS / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=moat-tunnel"],
                   check=True, capture_output=True)
    out = subprocess.run(["openssl", "x509", "-in", str(cert), "-noout", "-fingerprint",
                          "-sha256"], check=True, capture_output=True, text=True).stdout
    return str(cert), str(key), out.strip().split("=", 1)[1]


class Tunnel:
    """A gateway (for the SCTP modes) and two connected moat-tunnel peers."""

    def __init__(self, mode, n_peers=2, gateway_args=(), peer_args=(), lanes=None):
        self.net = TunnelNet(n_peers)
        self.peer_args = list(peer_args) + (["--lanes", str(lanes)] if lanes else [])
        self.lanes = lanes or LANES
        self.gateway = None
        self.peers = []
        try:
            self._start(mode, gateway_args)
        except BaseException:
            self.close()
            raise

    def url(self, name="t1"):
        return f"http://{TunnelNet.GATEWAY}:{self.gateway.http_port}/whip/tunnel/{name}"

    def _start(self, mode, gateway_args):
        if mode in SCTP_MODES:
            self.gateway = Gateway(netns=self.net.gateway, address=TunnelNet.GATEWAY,
                                   extra_args=["--token", TOKEN, *gateway_args])
            for i in range(2):
                self.peers.append(TunnelPeer(self.net, i, ARTIFACTS, "--whip", self.url(),
                                             "--token", TOKEN, "--mode", mode,
                                             *self.peer_args))
        else:
            ids = [identity(f"tunnel-{self.net.tag}-{i}") for i in range(2)]
            port = 4433
            self.peers.append(TunnelPeer(
                self.net, 0, ARTIFACTS, "--transport", mode, "--listen",
                f"{TunnelNet.PEERS[0]}:{port}", "--cert", ids[0][0], "--key", ids[0][1],
                "--peer-fingerprint", ids[1][2], *self.peer_args))
            self.peers.append(TunnelPeer(
                self.net, 1, ARTIFACTS, "--transport", mode, "--connect",
                f"{TunnelNet.PEERS[0]}:{port}", "--cert", ids[1][0], "--key", ids[1][1],
                "--peer-fingerprint", ids[0][2], *self.peer_args))
        for p in self.peers:
            p.wait_connected()

    def ping(self, count=5, peer=0):
        other = TUNNEL_ADDRESSES[1 - peer]
        r = self.net.run(peer, sys.executable, str(HERE / "tunnel_traffic.py"), "ping", other,
                         str(count), timeout=count * 3 + 10)
        return int(r.stdout.split()[-1]) if r.stdout.strip() else 0

    def transfer(self, n, timeout=300):
        """Sends n bytes from peer 0 to peer 1 over TCP inside the tunnel;
        returns (sent line, received line)."""
        sink = self.net.popen(1, sys.executable, str(HERE / "tunnel_traffic.py"), "sink", "5001",
                              str(n), stdout=subprocess.PIPE, text=True)
        assert sink.stdout.readline().strip() == "listening"
        source = self.net.run(0, sys.executable, str(HERE / "tunnel_traffic.py"), "source",
                              TUNNEL_ADDRESSES[1], "5001", str(n), timeout=timeout)
        received = sink.stdout.readline().strip()
        sink.wait(timeout=30)
        return source.stdout.strip(), received

    def transfer_flows(self, flows, n, timeout=300):
        """Sends n bytes on each of `flows` TCP connections at once from
        peer 0 to peer 1 inside the tunnel; returns ({flow: sent line},
        {flow: received line})."""
        sink = self.net.popen(1, sys.executable, str(HERE / "tunnel_traffic.py"), "sinks", "5001",
                              str(flows), str(n), stdout=subprocess.PIPE, text=True)
        assert sink.stdout.readline().strip() == "listening"
        source = self.net.run(0, sys.executable, str(HERE / "tunnel_traffic.py"), "sources",
                              TUNNEL_ADDRESSES[1], "5001", str(flows), str(n), timeout=timeout)
        out, _ = sink.communicate(timeout=60)

        def by_flow(text, word):
            return {line.split()[1]: line.split(None, 2)[2] for line in text.splitlines()
                    if line.startswith(word + " ")}
        return by_flow(source.stdout, "sent"), by_flow(out, "received")

    def close(self):
        for p in self.peers:
            if p.process.poll() is None:
                p.stop()
        if self.gateway:
            self.gateway.stop()
        self.net.close()


@pytest.fixture
def tunnel_factory():
    made = []

    def make(mode, **kwargs):
        t = Tunnel(mode, **kwargs)
        made.append(t)
        return t

    yield make
    for t in made:
        t.close()


@pytest.mark.parametrize("mode,lanes", [(m, None) for m in ALL_MODES] + [("ordered", 1)])
def test_ping_across_the_tunnel(tunnel_factory, mode, lanes):
    t = tunnel_factory(mode, lanes=lanes)
    assert t.ping(5) == 5
    assert t.ping(3, peer=1) == 3
    if t.gateway:
        m = t.gateway.metrics()
        assert m["moat_tunnel_peers"] == 2
        assert m["moat_tunnel_lanes"] == 2 * t.lanes
        assert m["moat_tunnel_messages_relayed_total"] >= 16  # 8 echoes and 8 replies
        assert m['moat_tunnel_dropped_messages_total{reason="relay_refused"}'] == 0


# 50 MB at full speed through user-space SCTP: it takes the CPU from tests
# running beside it (markers `serial` and `alone`: no test beside it,
# conftest.py).
@pytest.mark.serial
@pytest.mark.alone
@pytest.mark.parametrize("mode", ALL_MODES)
def test_tcp_transfer_arrives_byte_exact(tunnel_factory, mode):
    """TRANSFER_BYTES in FLOWS parallel connections, each byte-exact (each
    its own stream): in the SCTP modes they spread over the lanes."""
    t = tunnel_factory(mode)
    per_flow = TRANSFER_BYTES // FLOWS
    start = time.monotonic()
    sent, received = t.transfer_flows(FLOWS, per_flow)
    elapsed = time.monotonic() - start
    assert sorted(sent) == [str(i) for i in range(FLOWS)], sent
    for flow, line in sent.items():
        assert line.startswith(f"{per_flow} sha256 "), line
        assert received.get(flow) == line, (flow, line, received)
    assert len(set(sent.values())) == FLOWS  # distinct streams
    print(f"{mode}: {per_flow * FLOWS / 1e6:.0f} MB in {FLOWS} flows in {elapsed:.1f} s")
    for p in t.peers:
        p.stop()
        assert p.summary()["bytes_out"] != "0"
    if t.gateway:
        # The flows took several lanes; the per-lane counts sum to the total.
        summary = t.peers[0].summary()
        lanes = [int(v) for v in summary["lane_packets_out"].split(",")]
        assert summary["lanes"] == str(LANES) and len(lanes) == LANES
        share = int(summary["packets_out"]) // (2 * FLOWS)  # half a flow's packets
        assert sum(1 for v in lanes if v > share) >= 2, lanes
        assert sum(lanes) == int(summary["packets_out"])


@pytest.mark.serial
def test_tcp_baseline_with_several_connections(tunnel_factory):
    """--lanes K for the TCP baseline (bench/tunnel --tcp-lanes): K TLS
    connections, the flows spread over them as over SCTP lanes (fewest
    first), each flow byte-exact."""
    t = tunnel_factory("tcp", lanes=4)
    assert "4 connections" in t.peers[0].text(), t.peers[0].text()
    assert t.ping(3) == 3
    per_flow = 2_000_000
    sent, received = t.transfer_flows(FLOWS, per_flow)
    assert sorted(sent) == [str(i) for i in range(FLOWS)], sent
    for flow, line in sent.items():
        assert line.startswith(f"{per_flow} sha256 "), line
        assert received.get(flow) == line, (flow, line, received)
    for p in t.peers:
        p.stop()
    summary = t.peers[0].summary()
    lanes = [int(v) for v in summary["lane_packets_out"].split(",")]
    # FLOWS (8) new flows over 4 connections: two each, so every one carried.
    assert summary["lanes"] == "4" and len(lanes) == 4 and min(lanes) > 0, lanes
    assert sum(lanes) == int(summary["packets_out"])


def test_third_peer_is_refused(tunnel_factory):
    t = tunnel_factory("ordered", n_peers=3)
    third = TunnelPeer(t.net, 2, ARTIFACTS, "--whip", t.url(), "--token", TOKEN,
                       address="10.77.0.3")
    assert third.process.wait(timeout=30) == 1
    assert "409" in third.text() and "conflict" in third.text(), third.text()
    assert t.gateway.metric('moat_tunnel_refused_total{reason="full"}') == 1
    # The two peers go on undisturbed.
    assert t.ping(3) == 3


def test_join_needs_the_token(tunnel_factory):
    t = tunnel_factory("ordered", n_peers=3)
    other = TunnelPeer(t.net, 2, ARTIFACTS, "--whip", t.url("t2"), "--token", "wrong",
                       address="10.77.0.3")
    assert other.process.wait(timeout=30) == 1
    assert "401" in other.text(), other.text()


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_one_end_leaving_ends_the_other(tunnel_factory, how):
    # A short consent timeout so that the gateway notices a killed peer soon.
    t = tunnel_factory("ordered", gateway_args=["--consent-timeout", "5"])
    assert t.ping(2) == 2
    a, b = t.peers
    if how == "sigterm":
        assert a.stop(signal.SIGTERM) == 0
        assert 'end="stopped by a signal"' in a.text()
    else:
        a.process.kill()
        a.process.wait()
    # The other end's session ends cleanly: exit status 0 and its summary.
    assert b.process.wait(timeout=30) == 0, b.text()
    assert "the other peer left" in b.text(), b.text()
    assert "summary packets_out=" in b.text()
    deadline = time.time() + 10
    while t.gateway.metric("moat_tunnel_tunnels") != 0 and time.time() < deadline:
        time.sleep(0.1)
    assert t.gateway.metric("moat_tunnel_tunnels") == 0


def wait_for_text(peer, text, timeout):
    deadline = time.time() + timeout
    while text not in peer.text():
        assert time.time() < deadline, f"no {text!r} in: {peer.text()}"
        assert peer.process.poll() is None, peer.text()
        time.sleep(0.05)


def test_ice_restart_after_a_network_change(tunnel_factory):
    """Peer 0's network goes away and comes back with another address: its
    keepalives go unanswered, it restarts ICE from a new socket (PATCH to
    its WHIP resource, retried until the network is back) and the tunnel
    carries packets again without a new session."""
    t = tunnel_factory("ordered", peer_args=["--keepalive", "0.5", "--dead", "2",
                                             "--reconnects", "10"])
    assert t.ping(2) == 2
    a = t.peers[0]
    dev = f"tp0{t.net.tag}"
    assert t.net.run(0, "ip", "link", "set", dev, "down").returncode == 0
    wait_for_text(a, "ICE restart (try 1", 15)
    for cmd in (("ip", "addr", "flush", "dev", dev),
                ("ip", "addr", "add", "198.18.9.12/24", "dev", dev),
                ("ip", "link", "set", dev, "up")):
        assert t.net.run(0, *cmd).returncode == 0
    # Each lane restarts on its own.
    deadline = time.time() + 20
    while a.text().count("path restored") < t.lanes:
        assert time.time() < deadline, a.text()
        assert a.process.poll() is None, a.text()
        time.sleep(0.05)
    assert t.ping(3) == 3
    assert t.gateway.metric("moat_tunnel_joins_total") == 2 * t.lanes  # the same sessions
    assert a.stop() == 0
    assert a.summary()["reconnects"] == str(t.lanes)


@pytest.mark.serial  # a flood takes the CPU from tests running beside it
@pytest.mark.alone
def test_forged_flood_does_not_disturb_the_tunnel(tunnel_factory):
    t = tunnel_factory("ordered", n_peers=3)
    media = t.gateway.media_port
    # Forged from peer 0's address (random ports) and from the flooder's own.
    floods = [t.net.popen(2, sys.executable, str(HERE / "tunnel_traffic.py"), "flood", src,
                          TunnelNet.GATEWAY, str(media), "3000", "8", stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
              for src in (TunnelNet.PEERS[0], TunnelNet.PEERS[2])]
    assert t.ping(5) == 5
    sent, received = t.transfer(2_000_000)
    assert received == sent.replace("sent", "received", 1)
    for flood in floods:
        assert flood.wait(timeout=60) == 0, flood.stderr.read()
        assert int(flood.stdout.read().strip()) > 1000
    m = t.gateway.metrics()
    assert m["moat_tunnel_peers"] == 2
    assert sum(v for k, v in m.items() if k.startswith("moat_dropped_packets_total")) > 1000


def test_without_cap_net_admin_says_so(tmp_path):
    """No TUN device without CAP_NET_ADMIN: a clear error, exit status 1."""
    r = subprocess.run(["setpriv", "--inh-caps=-all", "--bounding-set=-all", str(MOAT_TUNNEL),
                        "--address", "10.77.0.9/24", "--whip", "http://127.0.0.1:1/whip/tunnel/x"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert "CAP_NET_ADMIN" in r.stderr, r.stderr


def test_help_and_bad_usage():
    r = subprocess.run([str(MOAT_TUNNEL), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--transport sctp|tcp|udp" in r.stdout
    r = subprocess.run([str(MOAT_TUNNEL), "--address", "10.0.0.1/24", "--mode", "sideways",
                        "--whip", "http://x/"], capture_output=True, text=True)
    assert r.returncode == 2 and "--mode" in r.stderr


@pytest.mark.serial  # the Python TUN link emulator paces packets in real time
def test_long_path_connects_and_carries(tmp_path):
    """Through the TUN link emulator at 150 ms round trip (bench/tunnel's
    link): ICE nominates although each nominating check is answered after
    the next ones left, and packets cross (the first version matched only
    the last nominating check and never connected beyond 50 ms)."""
    helper = Path(MOAT_TUNNEL).parents[1] / "bench" / "tunnel_link"
    if not helper.exists():
        pytest.skip("build/bench/tunnel_link is not built")
    link = subprocess.Popen([str(helper), "150", "0", "0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    gateway = None
    peers = []
    try:
        fields = link.stdout.readline().split()
        assert fields and fields[0] == "link", "tunnel_link failed"
        sender, receiver, _, receiver_address = fields[1:5]
        gateway = Gateway(netns=receiver, address=receiver_address, extra_args=["--token", TOKEN])
        url = f"http://{receiver_address}:{gateway.http_port}/whip/tunnel/far"
        for i, ns in enumerate((sender, receiver)):
            log = open(tmp_path / f"peer{i}.log", "w")
            peers.append((subprocess.Popen(
                ["ip", "netns", "exec", ns, str(MOAT_TUNNEL), "--tun", f"mtun{i}", "--address",
                 f"{TUNNEL_ADDRESSES[i]}/24", "--whip", url, "--token", TOKEN],
                stdout=log, stderr=subprocess.STDOUT), tmp_path / f"peer{i}.log"))
        deadline = time.time() + 20
        while not all("connected" in p[1].read_text() for p in peers):
            assert time.time() < deadline, [p[1].read_text() for p in peers]
            assert all(p[0].poll() is None for p in peers), [p[1].read_text() for p in peers]
            time.sleep(0.05)
        r = subprocess.run(["ip", "netns", "exec", sender, sys.executable,
                            str(HERE / "tunnel_traffic.py"), "ping", TUNNEL_ADDRESSES[1], "3"],
                           capture_output=True, text=True, timeout=60)
        assert r.stdout.split()[-1] == "3", r.stdout + r.stderr
    finally:
        for p, _ in peers:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=15)
        if gateway:
            gateway.stop()
        link.stdin.close()
        link.wait(timeout=30)
