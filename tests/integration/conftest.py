"""Fixtures shared by the end-to-end tests: a real Moat daemon on loopback,
started from the build tree with its own ports, and helpers to read its
/metrics.

MOAT_GATEWAY_BINARY names the gateway binary every test starts (default
build/gateway/moat). `make hostile` runs the tests marked `hostile` (see
HOSTILE_FILES and @pytest.mark.hostile) against build-asan's ASan/UBSan
gateway: any sanitizer report in a gateway's output fails the test during
which it appeared."""
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOAT = Path(os.environ.get("MOAT_GATEWAY_BINARY") or ROOT / "build" / "gateway" / "moat")
ARTIFACTS = ROOT / "tests" / "artifacts"

# Test files that attack the gateway; any file whose name contains "hostile"
# is one too, and so is any test marked @pytest.mark.hostile.
HOSTILE_FILES = {"test_hostile_input.py", "test_http_hardening.py", "test_http_slowloris.py",
                 "test_datachannel_hostile.py", "test_nack_amplification.py"}
# What ASan, LeakSanitizer, UBSan and TSan print when they find something.
SANITIZER_REPORT = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                              r"WARNING: ThreadSanitizer|SUMMARY: \w+Sanitizer")
# For a sanitizer build (ignored by the release one): a report ends the
# process, and the log keeps it (tests already run as the gateway's user).
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=0",
                 "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def pytest_configure(config):
    config.addinivalue_line("markers", "hostile: attacks the gateway; `make hostile` also runs "
                            "it against the ASan/UBSan build (MOAT_GATEWAY_BINARY)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.path.name
        if name in HOSTILE_FILES or "hostile" in name:
            item.add_marker(pytest.mark.hostile)


def free_port(kind=socket.SOCK_STREAM, count=1):
    """A port p such that p..p+count-1 are free on loopback for `kind`."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count > 65000:
            continue
        ok = True
        for p in range(base, base + count):
            with socket.socket(socket.AF_INET6, kind) as t:
                try:
                    t.bind(("::", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free port")


class Gateway:
    # Every gateway started in this process, so that each test's teardown
    # reads the sanitizer reports written since (sanitizer_reports below).
    started = []

    def __init__(self, extra_args=(), workers=2, env=None, netns=None, address="127.0.0.1",
                 candidate_addresses=""):
        """candidate_addresses: "" announces `address` only; None keeps the
        gateway's default (every interface address)."""
        self.netns = netns
        self.http_port = free_port()
        self.media_port = free_port(socket.SOCK_DGRAM, workers)
        self.ng_port = free_port(socket.SOCK_DGRAM)  # the ng control socket, on `address`
        self.workers = workers
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / f"moat-{self.http_port}.log"
        args = [str(MOAT), "--http-bind", address, "--http-port", str(self.http_port),
                "--media-port", str(self.media_port), "--workers", str(workers),
                "--ng-bind", address, "--ng-port", str(self.ng_port),
                "--log-level", "debug", *extra_args]
        if candidate_addresses is not None:
            args += ["--candidate-addresses", candidate_addresses or address]
        if netns:
            args = ["ip", "netns", "exec", netns, *args]
        self.log = open(self.log_path, "w")
        self.log_checked = 0  # how much of the log sanitizer_reports has read
        Gateway.started.append(self)
        full_env = dict(os.environ)
        for key, value in SANITIZER_ENV.items():
            full_env.setdefault(key, value)
        full_env.update(env or {})
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=full_env)
        self.base = f"http://{address}:{self.http_port}"
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("moat exited: " + self.log_path.read_text())
            try:
                if self.get("/healthz"):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("moat did not come up: " + self.log_path.read_text())

    def get(self, path):
        """GET from the gateway, from inside its network namespace if it has one."""
        if self.netns:
            result = subprocess.run(["ip", "netns", "exec", self.netns, "curl", "-sf",
                                     self.base + path], capture_output=True, text=True, timeout=10)
            if result.returncode != 0:
                raise OSError(f"curl failed: {result.returncode}")
            return result.stdout
        with urllib.request.urlopen(self.base + path, timeout=5) as r:
            return r.read().decode()

    def metrics(self):
        text = self.get("/metrics")
        values = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            m = re.match(r"^(\S+?)(\{[^}]*\})?\s+(\S+)$", line)
            if m:
                values[m.group(1) + (m.group(2) or "")] = float(m.group(3))
        return values

    def metric(self, name):
        return self.metrics().get(name, 0.0)

    def drops(self, reason):
        return self.metric(f'moat_dropped_packets_total{{reason="{reason}"}}')

    def stop(self):
        """SIGTERM, then the exit status must be 0 (a clean shutdown)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError("moat did not stop within 15 s of SIGTERM")
        self.log.close()
        return self.process.returncode

    def log_text(self):
        return self.log_path.read_text()


    def new_sanitizer_reports(self):
        """The log's lines since the previous call from the first sanitizer
        report on, or "" when there is none."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self.log_checked)
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        self.log_checked += len(text.encode(errors="replace"))
        m = SANITIZER_REPORT.search(text)
        return text[max(0, text.rfind("\n", 0, m.start()) + 1):][:20000] if m else ""


@pytest.fixture(autouse=True)
def sanitizer_reports():
    """Fails the test if a gateway printed a sanitizer report while it ran
    (its own gateways are stopped by then: autouse fixtures end last)."""
    yield
    reports = []
    for gw in Gateway.started:
        report = gw.new_sanitizer_reports()
        if report:
            reports.append(f"{gw.log_path}:\n{report}")
    Gateway.started = [gw for gw in Gateway.started if gw.process.poll() is None]
    assert not reports, "sanitizer report from the gateway:\n" + "\n".join(reports)


@pytest.fixture
def gateway():
    gw = Gateway()
    yield gw
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
