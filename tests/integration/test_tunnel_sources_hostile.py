"""What the tunnel's other peer may put into this host's IP stack: a peer
(anyone with the token who joins a tunnel first) writes UDP datagrams with
forged sources (an address of another network behind this host, a public
one, this host's own tunnel address) and a message that is no IP packet into
its own TUN device; its moat-tunnel carries them through the gateway as it
carries any packet. The receiving moat-tunnel writes to its TUN device only
IP packets from the tunnel's subnet (tunnel_source.h): the forged ones are
dropped and counted (foreign_source, not_ip in its summary), a listener on
its host gets only the datagram from the peer's tunnel address, and ping
still crosses both ways. Before, every message went to the TUN device and
the forged datagrams reached the listener. With --allow-any-source (a
site-to-site tunnel) they arrive as before; the non-IP message does not.
moat-tunnel runs from the ASan/UBSan build when there is one."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ARTIFACTS, Gateway
from tunnel_net import MOAT_TUNNEL, TUNNEL_ADDRESSES, TunnelNet, TunnelPeer

pytestmark = [pytest.mark.hostile,
              pytest.mark.skipif(not MOAT_TUNNEL.exists(), reason="moat-tunnel is not built")]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ASAN_TUNNEL = ROOT / "build-asan" / "tools" / "moat-tunnel"
BINARY = (MOAT_TUNNEL if os.environ.get("MOAT_TUNNEL_BINARY") or not ASAN_TUNNEL.exists()
          else ASAN_TUNNEL)
TOKEN = "tunnel-sources-token"
PORT = 9999
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
# (source, payload) written into peer 1's TUN device towards peer 0.
FORGED = (("192.168.77.50", "forged-lan"), ("203.0.113.5", "forged-public"),
          (TUNNEL_ADDRESSES[0], "forged-own"))
HONEST = (TUNNEL_ADDRESSES[1], "from-the-peer")


def traffic(net, peer, *args, timeout=30):
    return net.run(peer, sys.executable, str(HERE / "tunnel_traffic.py"), *args, timeout=timeout)


@pytest.fixture
def tunnel(request):
    net = TunnelNet(2)
    made = {"net": net, "gateway": None, "peers": []}
    yield made
    for p in made["peers"]:
        if p.process.poll() is None:
            p.stop()
    if made["gateway"]:
        made["gateway"].stop()
    net.close()


@pytest.mark.parametrize("allow_any", [False, True], ids=["default", "allow-any-source"])
def test_forged_sources_from_the_peer_are_not_delivered(tunnel, allow_any):
    net = tunnel["net"]
    tunnel["gateway"] = gateway = Gateway(netns=net.gateway, address=TunnelNet.GATEWAY,
                                          extra_args=["--token", TOKEN])
    url = f"http://{TunnelNet.GATEWAY}:{gateway.http_port}/whip/tunnel/sources"
    extra = ["--allow-any-source"] if allow_any else []
    peers = tunnel["peers"]
    for i in range(2):
        peers.append(TunnelPeer(net, i, ARTIFACTS, "--whip", url, "--token", TOKEN, "--lanes",
                                "1", *extra, binary=BINARY))
    for p in peers:
        p.wait_connected()
    ping = traffic(net, 0, "ping", TUNNEL_ADDRESSES[1], "3")
    assert ping.stdout.split()[-1] == "3", ping.stdout + ping.stderr
    listener = net.popen(0, sys.executable, str(HERE / "tunnel_traffic.py"), "receive", str(PORT),
                         "4", stdout=subprocess.PIPE, text=True)
    assert listener.stdout.readline().strip() == "listening"
    for source, text in (*FORGED, HONEST, ("0.0.0.0", "junk")):
        r = traffic(net, 1, "inject", "mtun1", source, TUNNEL_ADDRESSES[0], str(PORT), text)
        assert r.returncode == 0, r.stderr
    out, _ = listener.communicate(timeout=30)
    got = {tuple(line.split()[1:3]) for line in out.splitlines() if line.startswith("got ")}
    forged_delivered = {(s, t) for s, t in FORGED if (s, t) in got}
    assert HONEST in got, out
    if allow_any:
        # This host's own address as a source never reaches a socket (the
        # kernel drops it as a martian); the other two do.
        assert forged_delivered == set(FORGED[:2]), out
    else:
        assert forged_delivered == set(), out
    ping = traffic(net, 1, "ping", TUNNEL_ADDRESSES[0], "3")
    assert ping.stdout.split()[-1] == "3", ping.stdout + ping.stderr
    assert peers[0].stop() == 0
    summary = peers[0].summary()
    assert summary["not_ip"] == "1", peers[0].text()
    assert summary["foreign_source"] == ("0" if allow_any else str(len(FORGED))), peers[0].text()
    for p in peers:
        assert not any(mark in p.text() for mark in SANITIZER_MARKS), p.text()[-3000:]
