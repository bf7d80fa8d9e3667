"""Three network namespaces of one test for moat-tunnel: the gateway's (G)
with a bridge, and two peers' (A, B) each joined to it by a veth pair. Each
peer runs build/tools/moat-tunnel, whose TUN device gets an address in the
tunnel's own subnet (10.77.0.1 and 10.77.0.2), so A reaches B's tunnel
address only through the tunnel. Names carry a per-instance suffix."""
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from netns import sh

ROOT = Path(__file__).resolve().parents[2]
# MOAT_TUNNEL_BINARY picks another build of the tool (e.g. build-asan).
MOAT_TUNNEL = Path(os.environ.get("MOAT_TUNNEL_BINARY") or ROOT / "build" / "tools" / "moat-tunnel")
TUNNEL_ADDRESSES = ("10.77.0.1", "10.77.0.2")


class TunnelNet:
    GATEWAY = "198.18.9.1"
    PEERS = ("198.18.9.2", "198.18.9.3", "198.18.9.4")

    def __init__(self, n_peers=2):
        tag = uuid.uuid4().hex[:6]
        self.tag = tag
        self.gateway = f"mtg-{tag}"
        self.peers = [f"mt{i}-{tag}" for i in range(n_peers)]
        sh("ip", "netns", "add", self.gateway)
        sh("ip", "netns", "exec", self.gateway, "ip", "link", "set", "lo", "up")
        sh("ip", "netns", "exec", self.gateway, "ip", "link", "add", "br0", "type", "bridge")
        sh("ip", "netns", "exec", self.gateway, "ip", "addr", "add", f"{self.GATEWAY}/24",
           "dev", "br0")
        sh("ip", "netns", "exec", self.gateway, "ip", "link", "set", "br0", "up")
        for i, ns in enumerate(self.peers):
            sh("ip", "netns", "add", ns)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            inner, outer = f"tp{i}{tag}", f"tg{i}{tag}"
            sh("ip", "link", "add", inner, "netns", ns, "type", "veth", "peer", "name", outer,
               "netns", self.gateway)
            sh("ip", "netns", "exec", self.gateway, "ip", "link", "set", outer, "master", "br0")
            sh("ip", "netns", "exec", self.gateway, "ip", "link", "set", outer, "up")
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{self.PEERS[i]}/24", "dev", inner)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up")
        self.processes = []

    def run(self, peer, *args, **kwargs):
        return subprocess.run(["ip", "netns", "exec", self.peers[peer], *args],
                              capture_output=True, text=True, **kwargs)

    def popen(self, peer, *args, **kwargs):
        p = subprocess.Popen(["ip", "netns", "exec", self.peers[peer], *args], **kwargs)
        self.processes.append(p)
        return p

    def close(self):
        for p in self.processes:
            if p.poll() is None:
                p.kill()
                p.wait()
        for ns in (*self.peers, self.gateway):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class TunnelPeer:
    """moat-tunnel in peer namespace `index` (its output in the log file)."""

    def __init__(self, net, index, log_dir, *args, address=None, binary=None):
        self.net = net
        self.index = index
        self.address = address or TUNNEL_ADDRESSES[index]
        self.log_path = Path(log_dir) / f"moat-tunnel-{net.tag}-{index}.log"
        self.log = open(self.log_path, "w")
        self.process = net.popen(index, str(binary or MOAT_TUNNEL), "--tun", f"mtun{index}",
                                 "--address", f"{self.address}/24", "--progress", "1", *args,
                                 stdout=self.log, stderr=subprocess.STDOUT)

    def text(self):
        return self.log_path.read_text()

    def wait_connected(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if "moat-tunnel: connected" in self.text():
                return
            if self.process.poll() is not None:
                raise AssertionError("moat-tunnel exited: " + self.text())
            time.sleep(0.05)
        raise AssertionError("moat-tunnel did not connect: " + self.text())

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.process.poll() is None:
            self.process.send_signal(sig)
        rc = self.process.wait(timeout=timeout)
        self.log.close()
        return rc

    def summary(self):
        """The summary's key=value pairs."""
        values = {}
        for line in self.text().splitlines():
            if line.startswith("summary "):
                for item in line.split()[1:]:
                    if "=" in item:
                        k, v = item.split("=", 1)
                        values[k] = v
        return values
