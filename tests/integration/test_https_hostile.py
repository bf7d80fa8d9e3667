"""Hostile input to the HTTPS port: plain HTTP, garbage and truncated
handshakes, clients that stall inside the handshake (before and after a
whole ClientHello), a handshake flood from one source, and failing
handshakes beside plain connects up to SIGTERM. None may crash
the gateway, hold up its shutdown or leave a connection behind, and it keeps
serving HTTPS afterwards."""
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPSConnection

import pytest
from OpenSSL import SSL

from conftest import ASAN_ENV, Gateway
from hostile_http import offer
from tls_cert import make_self_signed

pytestmark = pytest.mark.hostile

# Under ASan (make hostile) a TLS handshake makes thousands of allocations
# in GnuTLS; with full stack unwinding on each one a handshake takes
# seconds, longer than the clients here wait. Leak checking stays on, with
# ASan's fast unwinder.
TLS_ASAN = {"ASAN_OPTIONS": ASAN_ENV["ASAN_OPTIONS"].replace("fast_unwind_on_malloc=0",
                                                            "fast_unwind_on_malloc=1")}

# A TLS 1.2 ClientHello record header that promises more than it sends.
TRUNCATED_HELLO = bytes.fromhex("16030100c8010000c40303") + os.urandom(20)


@pytest.fixture
def tls_gateway(tmp_path):
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "2", "--max-connections-per-source", "16"),
                 workers=1, env=TLS_ASAN)
    yield gw
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def send_and_read(port, data, timeout=8):
    """Sends `data`, returns what comes back until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        reply = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
        except ConnectionResetError:
            pass
        return reply


def client_context():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def client_hello():
    """A client's TLS object over memory BIOs and its first flight (one
    whole, valid ClientHello): (tls, incoming, outgoing, hello)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = client_context().wrap_bio(incoming, outgoing, server_hostname="moat")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return tls, incoming, outgoing, outgoing.read()


def stalled_hello(port, source="127.0.0.1"):
    """Connects from `source`, sends one whole, valid ClientHello and then
    nothing: the server's handshake waits on it."""
    s = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    s.sendall(client_hello()[3])
    return s


def https_get(gw, path, source):
    """GET over HTTPS from the local address `source`; returns the status
    and the seconds it took, handshake included."""
    started = time.time()
    connection = HTTPSConnection("127.0.0.1", gw.http_port, timeout=60,
                                 source_address=(source, 0), context=client_context())
    try:
        connection.request("GET", path)
        status = connection.getresponse().status
    finally:
        connection.close()
    return status, time.time() - started


def open_connections(gw):
    return gw.metric("moat_http_connections")


def threads(gw):
    return len(os.listdir(f"/proc/{gw.process.pid}/task"))


def wait_until(predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_bad_tls_input_does_not_hurt_the_gateway(tls_gateway):
    gw = tls_gateway
    port = gw.http_port
    # Plain HTTP to the TLS port: refused by the handshake, never answered
    # as HTTP.
    reply = send_and_read(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b"HTTP/1.1 200" not in reply and b"status" not in reply
    assert gw.metric('moat_http_refused_total{reason="not_tls"}') >= 1
    # Random bytes, a record header with a huge length, a truncated hello,
    # and a hello followed by garbage.
    for data in (os.urandom(4096), b"\x16\x03\x01\xff\xff" + os.urandom(64), TRUNCATED_HELLO,
                 b"\x16\x03\x03\x00\x05\x01\x00\x00\x01\x00" + b"\x00" * 2000):
        send_and_read(port, data)
    # A client that starts a handshake and stalls is closed at the request
    # deadline (2 s), not held for good.
    stalled = socket.create_connection(("127.0.0.1", port), timeout=10)
    stalled.sendall(TRUNCATED_HELLO)
    started = time.time()
    try:
        assert stalled.recv(100) == b""
    except ConnectionResetError:
        pass
    stalled.close()
    assert 1.5 < time.time() - started < 30
    # A burst of connections that never speak: each is closed at its deadline.
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(10)]
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"
        for s in idle:
            s.settimeout(30)
            try:
                assert s.recv(100) == b""
            except ConnectionResetError:
                pass
    finally:
        for s in idle:
            s.close()
    # Still serving HTTPS, nothing left open but our own request.
    assert json.loads(gw.get("/healthz"))["status"] == "ok"
    assert wait_until(lambda: open_connections(gw) <= 1, 10), open_connections(gw)
    assert gw.metric('moat_http_refused_total{reason="request_timeout"}') >= 11
    assert gw.process.poll() is None


def test_handshake_with_wrong_protocol_versions(tls_gateway):
    gw = tls_gateway
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    # Clients that abort the handshake midway (closing after the hello).
    for _ in range(20):
        raw = socket.create_connection(("127.0.0.1", gw.http_port), timeout=5)
        tls = context.wrap_socket(raw, do_handshake_on_connect=False)
        tls.setblocking(False)
        try:
            tls.do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLError, OSError):
            pass
        tls.close()
    # Their handshakes fail as their clients are gone, two at a time from
    # one source (max_tls_handshakes_per_source), slowly under ASan: wait
    # until they no longer fill the source's 16 places (a 17th connection is
    # refused at accept): then a real client is served.
    deadline = time.time() + 20
    while True:
        try:
            with urllib.request.urlopen(gw.base + "/healthz", timeout=60, context=gw.ssl) as r:
                assert json.loads(r.read())["status"] == "ok"
            break
        except (urllib.error.URLError, ConnectionError):
            assert time.time() < deadline, "no real client served 20 s after the aborts"
            time.sleep(0.2)
    assert wait_until(lambda: open_connections(gw) <= 1, 10), open_connections(gw)


def test_silent_and_slow_handshakes_do_not_starve_real_clients(tmp_path):
    """A TLS handshake waits on its client in a thread of GLib's pool;
    clients that connect and say nothing, or send part of a ClientHello,
    must not hold those threads (before the gateway waited for a whole first
    record, 50 of them delayed every real handshake by seconds, until their
    request deadline passed)."""
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "30", "--max-connections-per-source", "200"),
                 workers=1, env=TLS_ASAN)
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"  # the TLS backend is warm
        threads_before = threads(gw)
        silent = [socket.create_connection(("127.0.0.1", gw.http_port)) for _ in range(40)]
        partial = [socket.create_connection(("127.0.0.1", gw.http_port)) for _ in range(30)]
        for s in partial:
            s.sendall(TRUNCATED_HELLO[:11])
        assert wait_until(lambda: open_connections(gw) >= 70, 10), open_connections(gw)
        started = time.time()
        assert json.loads(gw.get("/healthz"))["status"] == "ok"
        elapsed = time.time() - started
        # None of them holds a thread (a handshake waiting on its client
        # would: GLib's pool grows one thread per waiting handshake).
        assert threads(gw) <= threads_before + 4, (threads_before, threads(gw))
        assert elapsed < 10, f"a real handshake waited {elapsed:.1f} s behind idle clients"
        # Clients that give up mid-hello are let go at once, not at the deadline.
        for s in silent + partial:
            s.close()
        assert wait_until(lambda: open_connections(gw) <= 1, 10), open_connections(gw)
        assert gw.metric('moat_http_refused_total{reason="request_timeout"}') == 0
    finally:
        assert gw.stop() == 0


def test_stalled_handshakes_do_not_starve_real_clients(tmp_path):
    """Clients that send a whole ClientHello and then nothing. Each held a
    thread of GLib's pool in its handshake until the request deadline, and
    the pool grows slowly: 60 of them delayed every real client's handshake
    by seconds, up to the whole deadline. Now a handshake has 3 s from its
    hello, at most 2 run per source and 8 in all; the rest wait holding no
    thread, and a freed slot goes to the source running the fewest, to its
    newest connection."""
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "30", "--max-connections-per-source", "200"),
                 workers=1, env=TLS_ASAN)
    stalled = []
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"  # the TLS backend is warm
        threads_before = threads(gw)
        # 60 stalled hellos from three sources: they fill 6 of the 8 slots.
        stalled = [stalled_hello(gw.http_port, f"127.0.0.{10 + i % 3}") for i in range(60)]
        time.sleep(1.0)
        # A real client from another source is served at once.
        status, elapsed = https_get(gw, "/healthz", "127.0.0.2")
        assert status == 200
        assert elapsed < 3, f"a real client waited {elapsed:.1f} s behind stalled handshakes"
        # One from a stalling source waits for one of its source's two slots
        # (3 s at most), not behind its 19 other stalled hellos.
        status, elapsed = https_get(gw, "/healthz", "127.0.0.10")
        assert status == 200
        assert elapsed < 5, f"a real client waited {elapsed:.1f} s behind its source's stallers"
        # A browser opens about 6 connections at once: 2 handshake at a
        # time, the others wait their turn, all are served.
        started = time.time()
        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda _: https_get(gw, "/healthz", "127.0.0.3"), range(6)))
        assert [status for status, _ in results] == [200] * 6
        assert time.time() - started < 5, results
        # The stalled handshakes hold at most their slots' threads.
        assert threads(gw) <= threads_before + 10, (threads_before, threads(gw))
        assert open_connections(gw) >= 30  # most stallers are still there
        # And each is cut 3 s after its hello, long before the 30 s deadline.
        assert wait_until(
            lambda: gw.metric('moat_http_refused_total{reason="tls_handshake_timeout"}') >= 6, 8)
        assert gw.metric('moat_http_refused_total{reason="request_timeout"}') == 0
    finally:
        for s in stalled:
            s.close()
        assert gw.stop() == 0


def test_sigterm_is_not_held_up_by_a_stalled_handshake(tmp_path):
    """Clients that send a whole ClientHello and then nothing. On SIGTERM the
    gateway closed libsoup's TLS streams, and closing one waits for its
    handshake, which waited on its client: the gateway ran on (34 s and
    more) for as long as such a client stayed."""
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "60"), workers=1, env=TLS_ASAN)
    stalled = []
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"
        # From a source of their own (the metrics come from 127.0.0.1):
        # two handshake, the third waits for a slot.
        stalled = [stalled_hello(gw.http_port, "127.0.0.10") for _ in range(3)]
        assert wait_until(lambda: open_connections(gw) >= 3, 10), open_connections(gw)
        time.sleep(0.5)  # their handshakes run and wait on them
        started = time.time()
        gw.process.send_signal(signal.SIGTERM)
        try:
            code = gw.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("moat still running 10 s after SIGTERM, held by stalled handshakes")
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
        assert time.time() - started < 10
    finally:
        for s in stalled:
            s.close()
        gw.stop()


def test_the_handshake_counts_against_the_first_request_deadline(tmp_path):
    """--request-timeout 4: a client trickles its ClientHello for 2.5 s,
    completes the handshake, then sends no request. The deadline runs from
    the accept, handshake included; before, handing the connection to
    libsoup started it again, and the client was closed 6.5 s after its
    accept."""
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "4"), workers=1, env=TLS_ASAN)
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"  # the TLS backend is warm
        tls, incoming, outgoing, hello = client_hello()
        with socket.create_connection(("127.0.0.1", gw.http_port), timeout=15) as s:
            accepted = time.time()
            s.sendall(hello[:-1])
            time.sleep(2.5)
            s.sendall(hello[-1:])
            while True:
                try:
                    tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    if outgoing.pending:
                        s.sendall(outgoing.read())
                    data = s.recv(65536)
                    assert data, "closed inside the handshake"
                    incoming.write(data)
            s.sendall(outgoing.read())  # the client's Finished; then no request
            try:
                while s.recv(65536):  # session tickets, then the close
                    pass
            except ConnectionResetError:
                pass
            closed = time.time() - accepted
        assert 3.5 < closed < 5.5, f"closed {closed:.1f} s after accept (deadline 4 s)"
        assert gw.metric('moat_http_refused_total{reason="request_timeout"}') == 1
    finally:
        assert gw.stop() == 0


def failing_handshakes(port, source, stop, failed):
    """From `source`, handshakes the client itself aborts (it does not trust
    the self-signed certificate: it sends an alert and closes), until
    `stop`; each one appends to `failed`."""
    context = ssl.create_default_context()
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5,
                                          source_address=(source, 0)) as s:
                try:
                    context.wrap_socket(s, server_hostname="moat")
                except ssl.SSLCertVerificationError:
                    failed.append(1)
                except (ssl.SSLError, OSError):
                    pass
        except OSError:
            time.sleep(0.01)


def plain_connects(port, source, stop):
    """From `source`, connections closed at once, until `stop`."""
    while not stop.is_set():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5,
                                     source_address=(source, 0)).close()
        except OSError:
            time.sleep(0.01)


class Storm:
    """Failing handshakes from four sources (8 at a time: every handshake
    slot) beside plain connects from a fifth, until stopped."""

    def __init__(self, gw):
        self.stop_event = threading.Event()
        self.failed = []
        self.threads = [threading.Thread(target=failing_handshakes,
                                         args=(gw.http_port, f"127.0.0.{10 + i % 4}",
                                               self.stop_event, self.failed))
                        for i in range(8)]
        self.threads += [threading.Thread(target=plain_connects,
                                          args=(gw.http_port, "127.0.0.20", self.stop_event))
                         for _ in range(2)]
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_event.set()
        for t in self.threads:
            t.join()


def test_failed_handshakes_give_their_places_back_on_the_control_thread(tmp_path):
    """A failed handshake's socket is often finalized on the GLib pool
    thread that ran the handshake (it drops the TLS stream last), and the
    socket's weak reference ran there: it released the connection's place
    and removed it from the listener's tables while the control thread
    admitted new connections into both (a data race: 20 of 180 failed
    handshakes under ThreadSanitizer), and at SIGTERM the stop could walk
    the table while a pool thread was inside it. Now the release is handed
    to the control thread; the ASan build asserts that the tables are edited
    nowhere else (before the fix it aborted during this test)."""
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "10", "--max-connections-per-source", "200"),
                 workers=1, env=TLS_ASAN)
    storm = None
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"  # the TLS backend is warm
        storm = Storm(gw)
        time.sleep(6)
        storm.stop()
        assert gw.process.poll() is None, \
            f"moat exited with {gw.process.returncode} during the storm; log in {gw.log_path}"
        assert len(storm.failed) >= 50, f"only {len(storm.failed)} handshakes failed"
        # Every place is given back (the hand-offs ran): only our own
        # /metrics request is open.
        assert wait_until(lambda: open_connections(gw) <= 1, 10), open_connections(gw)
        # SIGTERM while handshakes fail and their sockets go on pool threads.
        storm = Storm(gw)
        time.sleep(2)
        gw.process.send_signal(signal.SIGTERM)
        try:
            code = gw.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("moat still running 15 s after SIGTERM")
        storm.stop()
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
    finally:
        if storm:
            storm.stop()
        gw.stop()


EVENTS_UPGRADE = ("GET /api/events?topic=rooms/x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def stalled_renegotiation(port, source, upgrade):
    """A TLS 1.2 client (pyOpenSSL; Python's ssl cannot renegotiate) that
    completes its handshake, opens an event socket when `upgrade`, then
    starts a renegotiation (its new ClientHello sent) and stalls in it.
    Returns the raw socket."""
    context = SSL.Context(SSL.TLS_METHOD)
    context.set_max_proto_version(SSL.TLS1_2_VERSION)
    s = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    tls = SSL.Connection(context, s)
    tls.set_connect_state()
    tls.do_handshake()
    assert tls.get_protocol_version_name() == "TLSv1.2"
    if upgrade:
        tls.sendall(EVENTS_UPGRADE.format(port=port).encode())
        assert tls.recv(4096).startswith(b"HTTP/1.1 101")
    s.setblocking(False)
    tls.renegotiate()
    try:
        tls.do_handshake()
    except SSL.WantReadError:
        pass  # waits on the server's reply
    except SSL.Error:
        pass  # the server has closed already (closed_by_server sees it)
    return s


def closed_by_server(s, timeout):
    """Reads the raw socket (never answering the server's TLS) until the
    server closes it; False if it is still open after `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if s.recv(65536) == b"":
                return True
        except BlockingIOError:
            time.sleep(0.05)
        except ConnectionResetError:
            return True
    return False


def test_tls_renegotiation_is_refused(tls_gateway):
    """TLS 1.2 lets a client renegotiate after the handshake. glib-networking
    answered it, and a renegotiation the client stalled held a thread of
    GLib's pool for as long as the connection stayed (an event socket: for
    ever), outside the handshake slots and the 3 s deadline: 64 of them took
    the gateway from 5 to 69 threads. Now a handshake record after the
    handshake ends the connection (`tls_renegotiation`); TLS 1.2 itself
    still works."""
    gw = tls_gateway
    context = client_context()
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    reply = urllib.request.urlopen(f"https://127.0.0.1:{gw.http_port}/healthz", timeout=10,
                                   context=context)
    assert json.loads(reply.read())["status"] == "ok"
    threads_before = threads(gw)
    # Eight event sockets (two per source) and a connection that has not
    # sent its request yet.
    stalled = [stalled_renegotiation(gw.http_port, f"127.0.0.{10 + i // 2}", True)
               for i in range(8)]
    stalled.append(stalled_renegotiation(gw.http_port, "127.0.0.20", False))
    try:
        open_after = [i for i, s in enumerate(stalled) if not closed_by_server(s, 5)]
        assert not open_after, (f"connections {open_after} still open in their renegotiation; "
                                f"threads {threads_before} -> {threads(gw)}")
        # None of them holds a thread (their closes may briefly take some
        # of GLib's pool, which lets idle ones go).
        assert wait_until(lambda: threads(gw) <= threads_before + 2, 10), \
            (threads_before, threads(gw))
        refused = 'moat_http_refused_total{reason="tls_renegotiation"}'
        assert wait_until(lambda: gw.metric(refused) == 9, 5), gw.metric(refused)
        assert gw.metric('moat_http_refused_total{reason="tls_handshake_timeout"}') == 0
        reply = urllib.request.urlopen(f"https://127.0.0.1:{gw.http_port}/healthz", timeout=10,
                                       context=context)
        assert reply.status == 200
    finally:
        for s in stalled:
            s.close()


def test_a_request_cut_at_the_deadline_never_runs(tmp_path):
    """As over plain HTTP (test_http_slowloris): the request deadline shuts
    the socket down, the TLS stream reads a plain end of file (close_notify
    is not required of clients) and libsoup takes it for the end of a
    half-sent header block, then hands the request on (over TLS not every
    time: four connections try). A DELETE whose blank line never came must
    not run. (4 s: the handshakes, slow under ASan, count against the
    deadline.)"""
    cert, key = make_self_signed(tmp_path)
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key,
                             "--request-timeout", "4"), workers=1, env=TLS_ASAN)
    try:
        cut_at_the_deadline(gw, 4)
    finally:
        assert gw.stop() == 0, f"moat exited uncleanly; log in {gw.log_path}"


def half_delete(gw, resource):
    """A TLS connection that sends a DELETE of `resource` without the blank
    line that ends its headers, then waits: True once the server closed it."""
    raw = socket.create_connection(("127.0.0.1", gw.http_port), timeout=10)
    with client_context().wrap_socket(raw, server_hostname="moat") as s:
        s.sendall(f"DELETE {resource} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if s.recv(65536) == b"":
                    return True
            except (ssl.SSLError, ConnectionResetError):
                return True
            except socket.timeout:
                pass
    return False


def cut_at_the_deadline(gw, n):
    resources = []
    for _ in range(n):  # max_pending_per_source is 5
        offer_request = urllib.request.Request(gw.base + "/whip/echo", data=offer(),
                                               method="POST",
                                               headers={"Content-Type": "application/sdp"})
        with urllib.request.urlopen(offer_request, timeout=30, context=gw.ssl) as reply:
            assert reply.status == 201
            resources.append(reply.headers["Location"])
    with ThreadPoolExecutor(n) as pool:
        closed = list(pool.map(lambda resource: half_delete(gw, resource), resources))
    assert all(closed), "a half request outlived the deadline"
    time.sleep(0.3)  # what libsoup still makes of them has run by now
    sessions = json.loads(gw.get("/api/sessions"))["sessions"]
    assert len(sessions) == n, sessions
    assert gw.metric('moat_http_refused_total{reason="request_timeout"}') == n
