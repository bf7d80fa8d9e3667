"""The client tools (moat-flood, moat-tunnel) against a hostile WHIP server
(hostile_whip.py, in a namespace of the test's own with the tool): every
answer is read to a bound and every request ends within its deadline, so
an endless body (201 or 400) is an error at once with the tool's memory
flat (it runs under a 2 GB address-space cap: before, it grew ~0.5 GB/s
until that cap aborted it), a body trickling one byte a second ends at the
deadline (libsoup's timeout bounds only a silence: before, never), a
server that holds a hang-up (DELETE) to its deadline is not asked for the
other sessions' (N sessions would wait N deadlines), and SIGINT during such
a request ends the tool at once with its summary (before, the signal
waited for the request). The resource a 201 names (Location) must be on
the WHIP URL's origin before a PATCH or DELETE carries the bearer token
there: a Location on another port is refused and nothing is sent to it
(before, the hang-up DELETE took the token there). What a server says
reaches the terminal and moat-tunnel's summary as printable ASCII, the
summary's end="..." with its quotes escaped (before, a 400 body's escape
sequences went raw to the terminal and its quotes forged summary fields).
A server that answers every POST 429 with Retry-After is retried only
within --setup-timeout: no POST, wait or retry runs past it, and moat-flood
opens no session after it (before, each POST was retried for 30 s of
waits, one session after another: 3 sessions with --setup-timeout 2 took
90 s). The tools' release builds run (ASan reserves more address space
than the cap)."""
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netns import lan_host
from tunnel_net import MOAT_TUNNEL

pytestmark = pytest.mark.hostile

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# MOAT_FLOOD_BINARY picks another build of moat-flood (MOAT_TUNNEL_BINARY: tunnel_net.py).
FLOOD = Path(os.environ.get("MOAT_FLOOD_BINARY") or ROOT / "build" / "tools" / "moat-flood")
TUNNEL = MOAT_TUNNEL
MEMORY_CAP = 2_000_000_000
TOOLS = ("flood", "tunnel")


class Server:
    """hostile_whip.py in namespace ns; .port, .requests()."""

    def __init__(self, ns, mode, *args):
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, str(HERE / "hostile_whip.py"), mode,
             *args], stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().split()
        assert line and line[0] == "listening", line
        self.port = int(line[1])
        self.lines = []

    def url(self, path="/whip/tunnel/t"):
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_for_request(self, timeout=10):
        deadline = time.time() + timeout
        os.set_blocking(self.process.stdout.fileno(), False)
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if line:
                self.lines.append(line.strip())
                return line.strip()
            time.sleep(0.05)
        raise AssertionError("no request reached the server")

    def requests(self):
        self.process.kill()
        out, _ = self.process.communicate(timeout=10)
        return self.lines + [line for line in out.splitlines() if line.startswith("request ")]


@pytest.fixture
def ns():
    with lan_host("mth") as name:
        servers = []
        yield name, servers
        for s in servers:
            if s.process.poll() is None:
                s.process.kill()
                s.process.wait()


def command(ns, tool, url, *extra):
    """The tool against url in ns, under the address-space cap."""
    if tool == "flood":
        args = [str(FLOOD), "--whip", url, "--duration", "1", "--quiet", *extra]
    else:
        args = [str(TUNNEL), "--whip", url, "--address", "10.88.0.1/24", "--lanes", "1",
                "--progress", "0", *extra]
    return ["ip", "netns", "exec", ns, "prlimit", f"--as={MEMORY_CAP}", *args]


def run_tool(ns, tool, url, *extra, timeout=60):
    started = time.monotonic()
    r = subprocess.run(command(ns, tool, url, *extra), capture_output=True, timeout=timeout)
    return r, time.monotonic() - started


def text(r):
    return (r.stdout + r.stderr).decode(errors="replace")


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("mode,expected", [("endless", "an answer over 65536 bytes"),
                                           ("endless-error", "HTTP 400 aaaa")])
def test_an_endless_answer_body_is_an_error(ns, tool, mode, expected):
    name, servers = ns
    server = Server(name, mode)
    servers.append(server)
    r, elapsed = run_tool(name, tool, server.url())
    assert r.returncode == 1, text(r)
    assert expected in text(r), text(r)
    assert elapsed < 10, text(r)


@pytest.mark.parametrize("tool", TOOLS)
def test_a_trickling_answer_ends_at_the_deadline(ns, tool):
    """moat-flood's requests have 10 s, moat-tunnel's 5 s (or its setup
    timeout when shorter)."""
    name, servers = ns
    server = Server(name, "trickle")
    servers.append(server)
    extra = ["--setup-timeout", "2"] if tool == "tunnel" else []
    r, elapsed = run_tool(name, tool, server.url(), *extra, timeout=40)
    assert r.returncode == 1, text(r)
    limit = 10 if tool == "flood" else 2
    # moat-tunnel's request ends at its lane's setup deadline, a moment
    # before its own 2 s would.
    expected = "no complete answer within 10 s" if tool == "flood" else "setup timeout"
    assert expected in text(r), text(r)
    assert elapsed < limit + 5, (elapsed, text(r))


@pytest.mark.parametrize("tool", TOOLS)
def test_sigint_ends_a_request_at_once(ns, tool):
    name, servers = ns
    server = Server(name, "trickle")
    servers.append(server)
    process = subprocess.Popen(command(name, tool, server.url()), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        assert server.wait_for_request().startswith("request POST")
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, err = process.communicate(timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert time.monotonic() - started < 3
    output = (out + err).decode(errors="replace")
    assert "interrupted" in output, output
    if tool == "tunnel":
        assert 'summary end="WHIP: POST' in output, output


def test_a_held_hang_up_is_not_repeated_for_every_session(ns):
    """Three sessions POSTed; the first DELETE trickles to its deadline
    (10 s) and the other two are not sent."""
    name, servers = ns
    server = Server(name, "hangup-trickle")
    servers.append(server)
    r, elapsed = run_tool(name, "flood", server.url("/whip/x"), "--sessions", "3",
                          "--setup-timeout", "1", timeout=60)
    assert r.returncode == 1, text(r)
    assert elapsed < 20, (elapsed, text(r))
    methods = [line.split()[1] for line in server.requests()]
    assert methods == ["POST"] * 3 + ["DELETE"], methods


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("elsewhere", [True, False], ids=["another-origin", "same-origin"])
def test_the_token_stays_on_the_whip_origin(ns, tool, elsewhere):
    name, servers = ns
    thief = Server(name, "answer")
    servers.append(thief)
    location = [f"http://127.0.0.1:{thief.port}/stolen"] if elsewhere else []
    server = Server(name, "answer", *location)
    servers.append(server)
    extra = ["--setup-timeout", "1"] if tool == "tunnel" else []
    r, elapsed = run_tool(name, tool, server.url(), "--token", "SECRETTOKEN", *extra)
    assert r.returncode == 1, text(r)
    assert thief.requests() == [], text(r)
    requests = server.requests()
    assert requests[0].startswith("request POST ") and "Bearer_SECRETTOKEN" in requests[0]
    if elsewhere:
        assert "is not on the WHIP URL's origin" in text(r), text(r)
        assert len(requests) == 1, requests
    else:
        # The hang-up goes to the resource, with the token.
        assert requests[1].startswith("request DELETE /resource/1 "), requests
        assert "Bearer_SECRETTOKEN" in requests[1], requests


@pytest.mark.parametrize("tool", TOOLS)
def test_a_server_message_reaches_the_terminal_as_plain_text(ns, tool):
    name, servers = ns
    server = Server(name, "escapes")
    servers.append(server)
    r, _ = run_tool(name, tool, server.url())
    assert r.returncode == 1, text(r)
    output = r.stdout + r.stderr
    assert all(32 <= b < 127 or b == 10 for b in output), output
    assert b"HTTP 400 ?]0;PWNED??[2J?[31mred" in output, output
    if tool == "tunnel":
        end = [line for line in r.stdout.decode().splitlines()
               if line.startswith("summary end=")]
        assert len(end) == 1, r.stdout
        # One field: the server's quotes are escaped, its "packets_in=999"
        # and "end=" stay inside the value.
        fields = shlex.split(end[0])
        assert len(fields) == 2 and fields[1].startswith("end=WHIP: "), fields
        assert 'red" packets_in=999 end="fake' in fields[1], fields


def run_bounded(ns, tool, url, *extra, timeout=20):
    """run_tool, a run past timeout an assertion (the tool killed)."""
    try:
        return run_tool(ns, tool, url, *extra, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{tool} still running after {timeout} s") from None


@pytest.mark.parametrize("tool", TOOLS)
def test_retry_after_is_not_waited_past_the_setup_timeout(ns, tool):
    """Every POST refused 429 with Retry-After: 5, --setup-timeout 2: a
    wait that would end past the setup deadline is not begun, so the tool
    gives up at once (moat-flood: all three sessions) with "setup
    timeout"."""
    name, servers = ns
    server = Server(name, "busy")
    servers.append(server)
    sessions = ["--sessions", "3"] if tool == "flood" else []
    r, elapsed = run_bounded(name, tool, server.url(), *sessions, "--setup-timeout", "2")
    assert r.returncode == 1, text(r)
    assert "HTTP 429" in text(r) and "setup timeout" in text(r), text(r)
    assert elapsed < 5, (elapsed, text(r))
    posts = [line for line in server.requests() if line.startswith("request POST")]
    assert len(posts) == (3 if tool == "flood" else 1), posts


def test_no_session_is_opened_after_the_setup_timeout(ns):
    """Each 429 held 1.5 s, --setup-timeout 2, three sessions: the first
    POST fails (its Retry-After ends past the deadline), the second is cut
    at the deadline, the third is never sent and is reported not opened."""
    name, servers = ns
    server = Server(name, "busy-slow")
    servers.append(server)
    r, elapsed = run_bounded(name, "flood", server.url("/whip/x"), "--sessions", "3",
                             "--setup-timeout", "2")
    assert r.returncode == 1, text(r)
    assert "1 of 3 not opened: setup timeout" in text(r), text(r)
    assert elapsed < 5, (elapsed, text(r))
    methods = [line.split()[1] for line in server.requests()]
    assert methods == ["POST"] * 2, methods


def test_fan_out_posts_end_within_the_setup_timeout(ns):
    """Fan-out mode (--subscribers): every POST refused 429 with
    Retry-After: 5, --setup-timeout 2. The publisher's POST is not retried
    past its setup timeout, so the run ends at once with "setup timeout";
    before, it waited out Retry-After for up to 30 s."""
    name, servers = ns
    server = Server(name, "busy")
    servers.append(server)
    r, elapsed = run_bounded(name, "flood", server.url("/whip/x"), "--whep",
                             server.url("/whep/x"), "--subscribers", "3", "--setup-timeout", "2",
                             timeout=40)
    assert r.returncode == 1, text(r)
    assert "setup timeout" in text(r), text(r)
    assert elapsed < 5, (elapsed, text(r))
