"""Two network namespaces joined by a veth pair: test hosts of our own, for
peers (like libnice) that will not pair a loopback candidate with their own
addresses. Both ends live only inside namespaces this test creates. And
lan_host: one namespace standing for a (multi-homed) host."""
import contextlib
import subprocess
import time
import uuid


def sh(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


class NetnsPair:
    SERVER = "198.18.7.1"
    CLIENT = "198.18.7.2"

    def __init__(self):
        tag = uuid.uuid4().hex[:6]
        self.server = f"moat-s-{tag}"
        self.client = f"moat-c-{tag}"
        sh("ip", "netns", "add", self.server)
        sh("ip", "netns", "add", self.client)
        sh("ip", "link", "add", f"ms{tag}", "netns", self.server, "type", "veth", "peer",
           "name", f"mc{tag}", "netns", self.client)
        for ns, dev, addr in ((self.server, f"ms{tag}", self.SERVER), (self.client, f"mc{tag}", self.CLIENT)):
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{addr}/30", "dev", dev)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", dev, "up")
        # A tentative IPv6 link-local address (duplicate address detection
        # still running) stalls libnice's candidate gathering: wait it out.
        deadline = time.time() + 5
        while time.time() < deadline:
            pending = [subprocess.run(["ip", "netns", "exec", ns, "ip", "-6", "addr", "show", "tentative"],
                                      capture_output=True, text=True).stdout.strip()
                       for ns in (self.server, self.client)]
            if not any(pending):
                break
            time.sleep(0.1)
        self.client_dev = f"mc{tag}"
        self.server_dev = f"ms{tag}"

    def close(self):
        for ns in (self.server, self.client):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@contextlib.contextmanager
def lan_host(prefix, addresses=(), v6=None):
    """A namespace standing for a host: lo up, and when `addresses` (IPv4)
    or `v6` are given, a LAN interface lan0 (one end of a veth pair whose
    other end is up in the same namespace) holding them. Yields its name;
    deleted on exit."""
    ns = f"{prefix}-{uuid.uuid4().hex[:6]}"
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        if addresses or v6:
            sh("ip", "-n", ns, "link", "add", "lan0", "type", "veth", "peer", "name", "lan1")
            sh("ip", "-n", ns, "link", "set", "lan1", "up")
            for address in addresses:
                sh("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "lan0")
            if v6:
                sh("ip", "-n", ns, "addr", "add", f"{v6}/64", "dev", "lan0", "nodad")
            sh("ip", "-n", ns, "link", "set", "lan0", "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
