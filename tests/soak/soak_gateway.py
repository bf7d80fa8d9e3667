"""The soak's gateway process (soak.py): started with the soak's flags on
free loopback ports, its metrics and descriptors read from outside, stopped
with SIGTERM."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from conftest import free_port  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def describe_fds(pid, port):
    """{kind: count} of the process's descriptors, TCP ones on `port` by
    state, for the failure message."""
    states = {}
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    states[fields[9]] = (int(fields[1].rsplit(":", 1)[1], 16), fields[3])
        except OSError:
            pass
    for table in ("udp", "udp6", "unix", "netlink"):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    inode = fields[6] if table == "unix" else \
                        (fields[9] if table.startswith("udp") else fields[9])
                    states.setdefault(inode, (table, 0))
        except (OSError, IndexError):
            pass
    kinds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inode = target[8:-1]
            known = states.get(inode)
            if known is None:
                kind = "socket"
            elif isinstance(known[0], int):
                kind = "tcp:%d:%s" % known
            else:
                kind = known[0]
        else:
            kind = target.split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


class Gateway:
    def __init__(self, binary, artifacts):
        self.http_port = free_port()
        self.media_port = free_port(socket.SOCK_DGRAM, 2)
        # Its own ng port: the default (2223) may be another gateway's while
        # the quick benchmarks run beside the soak (make test).
        self.ng_port = free_port(socket.SOCK_DGRAM)
        self.log_path = artifacts / f"soak-moat-{self.http_port}.log"
        env = dict(os.environ)
        # A small quarantine keeps ASan's own memory from hiding a trend.
        # The slow unwinder gives full stacks, which the suppression of
        # GLib's constructor block (tests/unit/transcode/lsan.supp: GStreamer
        # starts with the first transcoding question) needs.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:quarantine_size_mb=16:malloc_context_size=8:"
                       "fast_unwind_on_malloc=0")
        env.setdefault("LSAN_OPTIONS", "print_suppressions=0:suppressions="
                       + str(ROOT / "tests" / "unit" / "transcode" / "lsan.supp"))
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [str(binary), "--http-bind", "127.0.0.1", "--http-port", str(self.http_port),
             "--media-port", str(self.media_port), "--workers", "2",
             "--ng-bind", "127.0.0.1", "--ng-port", str(self.ng_port),
             "--candidate-addresses", "127.0.0.1", "--log-level", "info",
             "--consent-timeout", "10",
             # The soak's phones are on this host (never Moat's own sockets).
             "--call-allow-loopback-destinations", "true",
             # Every client of the soak is this one host, many sessions at
             # once: the per-source cap on sessions waiting for ICE is lifted.
             "--max-pending-per-source", "0"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.base = f"http://127.0.0.1:{self.http_port}"
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("moat exited: " + self.log_path.read_text()[-4000:])
            try:
                self.get("/healthz")
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("moat did not come up")

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=5) as r:
            return r.read().decode()

    def metric(self, name):
        for line in self.get("/metrics").splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return 0.0

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode
