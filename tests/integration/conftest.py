"""Fixtures shared by the end-to-end tests: a real Moat daemon on loopback,
started from the build tree with its own ports, and helpers to read its
/metrics.

MOAT_GATEWAY_BINARY names the gateway binary every test starts (default
build/gateway/moat). `make hostile` runs the tests marked `hostile` (see
HOSTILE_FILES and @pytest.mark.hostile) against build-asan's ASan/UBSan
gateway: any sanitizer report in a gateway's output fails the test during
which it appeared."""
import collections
import fcntl
import os
import random
import re
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOAT = Path(os.environ.get("MOAT_GATEWAY_BINARY") or ROOT / "build" / "gateway" / "moat")
MOAT_ASAN = ROOT / "build-asan" / "gateway" / "moat"  # make build-asan (make test builds it)
# GLib's constructor block GStreamer pulls in is suppressed as in the unit
# tests (tests/unit/transcode/lsan.supp; it needs full stacks).
ASAN_ENV = {"ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0",
            "LSAN_OPTIONS": "print_suppressions=0:suppressions="
                            + str(ROOT / "tests" / "unit" / "transcode" / "lsan.supp"),
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
ARTIFACTS = ROOT / "tests" / "artifacts"

# Test files that attack the gateway; any file whose name contains "hostile"
# is one too, and so is any test marked @pytest.mark.hostile.
HOSTILE_FILES = {"test_hostile_input.py", "test_http_hardening.py", "test_http_slowloris.py",
                 "test_datachannel_hostile.py", "test_nack_amplification.py"}
# Test files that must not share the machine with the parallel stage
# (marker `serial`; `make integration` runs them after the parallel tests).
# Each passes only while the gateway and its peers get the CPU they need in
# time. Those in SERIAL_ALONE_FILES (marker `alone` too) run one at a time:
# they saturate the machine in bursts or judge what it does under their own
# load; the others run two at a time after them (E2E_SERIAL_JOBS).
SERIAL_ALONE_FILES = {
    # floods at 20-50k packets/s from moat-flood or raw sockets, whose
    # verdicts (detector switches, kernel counters, media kept) assume the
    # flood and the gateway have the cores
    "test_flood_defence_backlog.py", "test_flood_defence_fair.py",
    "test_flood_defence_legacy.py", "test_flood_defence_srtpplus.py",
    "test_kernel_filter.py", "test_flood_fanout.py",
    # three cluster nodes, five aiortc peers decoding video, and a spoofed
    # 3000 pps flood at a cascade port while every subscriber must keep media
    "test_cluster_cascade.py",
    # aiortc's SCTP over a 400 ms round trip, three sessions whose last
    # echoes must drain within the gateway's 5 s bound after DELETE (beside
    # another test, one echo of 4,500 missed it in a fresh clone)
    "test_datachannel_windows.py",
    # headless Chromium encoding and decoding video, judged on the bitrate
    # its estimator reaches (REMB caps, transport-wide feedback)
    "test_chromium_room_remb.py", "test_chromium_transport_cc.py",
    # a Chromium three-layer L1T3 publisher measured per temporal layer and
    # an aiortc viewer that must keep decoding TL0 with no sequence gap
    "test_room_temporal_layers.py",
    # two headless Chromiums (three-layer simulcast encode, a decode) and the
    # TUN link emulator as a 3 Mbit/s bottleneck, with 2 s / 10 s deadlines
    # on layer adaptation and a bound on the viewer's freezes
    "test_room_bwe_chromium.py",
}
# These may run beside one other of their kind: measured one at a time they
# use 0.1-0.6 of a core on average (waiting on emulated round trips, probe
# timers and pacing), but they fail when the parallel stage's three workers
# take the cores.
SERIAL_PAIRED_FILES = {
    # aiortc's SCTP in Python (one core) through the repo's TUN link
    # emulator (Python too), with the gateway's 5 s drain bound or a
    # deadline on throughput
    "test_datachannel_reliable.py",
    "test_datachannel_plpmtud.py", "test_datachannel_lossy.py",
    "test_datachannel_close.py", "test_datachannel_backpressure.py",
    "test_room_data_backpressure.py",
    # aiortc media through the TUN link emulator: NACK round trips to the
    # publisher must come back in time for the loss figure to hold
    "test_room_nack_publishers.py",
    # moat-flood at 2,000 packets/s: every packet sent must be counted and
    # the asked rate reached
    "test_flood_tool.py",
    # one or two headless Chromiums for a few seconds that must connect,
    # echo and decode (no bitrate or deadline judged): beside one other
    # test, not beside the parallel stage's three workers
    "test_chromium_demo.py", "test_chromium_room.py",
    # aiortc calling headless Chromium through two WebRTC call legs, a tone
    # each way judged by frequency
    "test_voip_webrtc_to_webrtc.py", "test_voip_webrtc_ice_restart.py",
    # a Chromium three-layer publisher on one cluster node, two aiortc
    # viewers on another through a cascade link (decoding judged)
    "test_cluster_cascade_simulcast.py",
    "test_datachannel_chromium.py", "test_datachannel_plpmtud_chromium.py",
    # Firefox and Chromium publishing and watching each other, judged on
    # decoding only (its simulcast test, with 0.5 s deadlines, is marked
    # `alone` in the file)
    "test_firefox_room.py",
}
SERIAL_FILES = SERIAL_ALONE_FILES | SERIAL_PAIRED_FILES
# What ASan, LeakSanitizer, UBSan and TSan print when they find something.
SANITIZER_REPORT = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                              r"WARNING: ThreadSanitizer|SUMMARY: \w+Sanitizer")
# For a sanitizer build (ignored by the release one): a report ends the
# process, and the log keeps it (tests already run as the gateway's user).
SANITIZER_ENV = {**ASAN_ENV,
                 "ASAN_OPTIONS": ASAN_ENV["ASAN_OPTIONS"] + ":abort_on_error=0"}


def rss_kib(pid):
    """The resident set of process `pid` in KiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: runs after the parallel tests, at most two "
                            "at once (SERIAL_FILES says why)")
    config.addinivalue_line("markers", "alone: a serial test that runs with no other test "
                            "beside it (SERIAL_ALONE_FILES)")
    config.addinivalue_line("markers", "hostile: attacks the gateway; `make hostile` also runs "
                            "it against the ASan/UBSan build (MOAT_GATEWAY_BINARY)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.path.name
        if name in HOSTILE_FILES or "hostile" in name:
            item.add_marker(pytest.mark.hostile)
        if name in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
        if name in SERIAL_ALONE_FILES:
            item.add_marker(pytest.mark.alone)



# Ports for gateways and peers come from PORT_RANGE: below bench/voip's
# call ports (21000-32699; it runs beside the hostile tests and the soak),
# the gateway's default call-leg range (30000-39999) and the kernel's
# ephemeral ports (32768-60999), so no socket bound to port 0 can take one between
# free_port() and the bind that uses it (CI once lost a test to that: the ng
# socket's port went to another test's socket). 20000-20099 are the compose
# stack's (test_compose_turn.py). Ports are handed out in blocks of
# PORT_BLOCK, each held by an flock on a file in PORT_LOCKS for as long as
# this process keeps it, so that test processes running at once (xdist
# workers, paired stages, soak) never hand out the same block.
PORT_RANGE = (10000, 20999)
PORT_EXCLUDED = range(20000, 20100)
PORT_BLOCK = 64
PORT_LOCKS = Path("/tmp/moat-test-ports")
# The blocks this process holds, oldest first; past PORT_HELD the oldest is
# let go (its ports are bound by then, or free again: the bind check sees).
# Twelve is four gateways set up back to back; the range's 170 blocks are
# shared by every test process of a phase (three hostile workers, the soak,
# the benchmarks' two lanes...): with 32 each, the hostile phase's last tests
# found no four free blocks in a row for a 202-port call relay.
PORT_HELD = 12
_held_blocks = collections.deque()


def _lock_block(first, blocks):
    """Holds the flocks of `blocks` blocks from `first`; False if another
    process holds one."""
    PORT_LOCKS.mkdir(exist_ok=True)
    taken = []
    for b in range(blocks):
        fd = os.open(PORT_LOCKS / str(first + b * PORT_BLOCK), os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            for t in taken:
                os.close(t)
            return False
        taken.append(fd)
    _held_blocks.extend(taken)
    while len(_held_blocks) > PORT_HELD:
        os.close(_held_blocks.popleft())
    return True


def _bindable(port, kind):
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::")):
        with socket.socket(family, kind) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def free_port(kind=socket.SOCK_STREAM, count=1):
    """A port p such that p..p+count-1 are free on loopback for `kind` and
    reserved for this process (see PORT_RANGE)."""
    blocks = (count + PORT_BLOCK - 1) // PORT_BLOCK
    low, high = PORT_RANGE
    starts = [p for p in range(low, high + 1 - blocks * PORT_BLOCK, PORT_BLOCK)
              if not set(range(p, p + blocks * PORT_BLOCK)) & set(PORT_EXCLUDED)]
    for first in random.sample(starts, len(starts)):
        if any(not _bindable(p, kind) for p in range(first, first + count)):
            continue
        if _lock_block(first, blocks):
            return first
    raise RuntimeError("no free port")


class Gateway:
    # Every gateway started in this process, so that each test's teardown
    # reads the sanitizer reports written since (sanitizer_reports below).
    started = []

    def __init__(self, extra_args=(), workers=2, env=None, netns=None, address="127.0.0.1",
                 candidate_addresses="", binary=None):
        """candidate_addresses: "" announces `address` only; None keeps the
        gateway's default (every interface address). binary: MOAT_ASAN for
        the ASan/UBSan gateway (ASAN_ENV applies), else the release one."""
        self.netns = netns
        self.http_port = free_port()
        self.media_port = free_port(socket.SOCK_DGRAM, workers)
        self.ng_port = free_port(socket.SOCK_DGRAM)  # the ng control socket, on `address`
        self.workers = workers
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / f"moat-{self.http_port}.log"
        # A gateway whose API binds beyond loopback without a token generates
        # one and writes it here (each gateway its own file); `token` is the
        # API token in force, generated or given with --token.
        self.token_file = ARTIFACTS / f"moat-{self.http_port}.token"
        self.token_file.unlink(missing_ok=True)
        self.token = None
        given = list(extra_args)
        if "--token" in given and given.index("--token") + 1 < len(given):
            self.token = given[given.index("--token") + 1]
        # --http-tls-cert: the gateway speaks HTTPS; `ssl` trusts its
        # (self-signed) certificate.
        self.tls_cert = None
        if "--http-tls-cert" in given and given.index("--http-tls-cert") + 1 < len(given):
            self.tls_cert = given[given.index("--http-tls-cert") + 1]
        self.ssl = ssl.create_default_context(cafile=self.tls_cert) if self.tls_cert else None
        binary = binary or MOAT
        assert binary.exists(), f"{binary} is not built (make build build-asan)"
        sanitized = binary == MOAT_ASAN or "asan" in str(binary)
        if sanitized:
            env = {**ASAN_ENV, **(env or {})}
        args = [str(binary), "--http-bind", address, "--http-port", str(self.http_port),
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
        full_env["MOAT_HTTP_TOKEN_FILE"] = str(self.token_file)
        for key, value in SANITIZER_ENV.items():
            full_env.setdefault(key, value)
        full_env.update(env or {})
        if full_env.get("MOAT_HTTP_TOKEN") and not self.token:
            self.token = full_env["MOAT_HTTP_TOKEN"]
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=full_env)
        host = f"[{address}]" if ":" in address else address
        self.base = f"{'https' if self.tls_cert else 'http'}://{host}:{self.http_port}"
        deadline = time.time() + (40 if sanitized else 15)
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("moat exited: " + self.log_path.read_text())
            try:
                up = bool(self.get("/healthz"))
            except urllib.error.HTTPError as e:
                up = e.code == 503  # up, and saying what is broken (test_healthz.py)
            except OSError:
                up = False
            if up:
                if self.token is None and self.token_file.exists():
                    self.token = self.token_file.read_text().strip()
                return
            time.sleep(0.1)
        raise RuntimeError("moat did not come up: " + self.log_path.read_text())

    def auth(self):
        """The Authorization header of the API token in force ({} when none)."""
        return {"Authorization": "Bearer " + self.token} if self.token else {}

    def get(self, path):
        """GET from the gateway (with the API token when there is one), from
        inside its network namespace if it has one."""
        if self.netns:
            auth = [f"-H", f"Authorization: Bearer {self.token}"] if self.token else []
            ca = ["--cacert", self.tls_cert] if self.tls_cert else []
            result = subprocess.run(["ip", "netns", "exec", self.netns, "curl", "-sf", *auth, *ca,
                                     self.base + path], capture_output=True, text=True, timeout=10)
            if result.returncode != 0:
                raise OSError(f"curl failed: {result.returncode}")
            return result.stdout
        request = urllib.request.Request(self.base + path, headers=self.auth())
        with urllib.request.urlopen(request, timeout=5, context=self.ssl) as r:
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
