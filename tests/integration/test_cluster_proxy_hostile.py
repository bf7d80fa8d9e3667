"""A forwarded offer's answer from a hostile or broken owner
(gateway/cluster/cluster_proxy.c): the node that forwards it reads at most
256 KiB of the answer's body. A node record (anyone with the Redis password
can write one, and a dead node's stale address may answer anything) names
an HTTP server of this test's own as a room's owner; it answers a body of
hundreds of megabytes, declared or chunked, or trickles one. The forwarding
node used to read the whole body into memory before checking its size (a
3 GiB answer took it to 4 GiB, and past its forward timeout); now it
refuses a declared length over the limit as soon as the headers are in,
stops reading any other body one byte past the limit, answers
`502 owner_answer_too_large` at once, and its forward timeout covers the
body (`504 owner_timeout`). redis-server and the node are this test's own."""
import json
import shutil
import socket
import socketserver
import threading
import time

import pytest

from cluster_helpers import cluster, nodes_factory, redis, room_name, wait_for  # noqa: F401
from conftest import rss_kib

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (scripts/install-deps.sh)")

MAX_ANSWER = 256 * 1024  # MOAT_CLUSTER_PROXY_MAX_ANSWER
HUGE = 512 * 1024 * 1024
CHUNK = b"v" * (1 << 20)


class FakeOwner:
    """An HTTP server on loopback that answers every request with
    `answer(connection)` after reading the request's head and body."""

    def __init__(self, answer):
        self.sent = 0
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.settimeout(15)
                data = b""
                while b"\r\n\r\n" not in data:
                    more = self.request.recv(65536)
                    if not more:
                        return
                    data += more
                head, body = data.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(body) < length:
                    body += self.request.recv(65536)
                try:
                    answer(owner, self.request)
                except OSError:
                    pass  # the node hung up: what it should do

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def send(self, connection, data):
        connection.sendall(data)
        self.sent += len(data)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def declared_huge(owner, connection):
    """201 with Content-Length HUGE, and the body sent as fast as it goes."""
    owner.send(connection, b"HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\n"
               b"Content-Length: %d\r\n\r\n" % HUGE)
    for _ in range(HUGE // len(CHUNK)):
        owner.send(connection, CHUNK)


def chunked_huge(owner, connection):
    """201 with a chunked body of HUGE bytes (no length declared)."""
    owner.send(connection, b"HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")
    for _ in range(HUGE // len(CHUNK)):
        owner.send(connection, b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n")
    owner.send(connection, b"0\r\n\r\n")


def chunked_of(size):
    """201 with a chunked body of `size` bytes in 1000-byte chunks."""
    def answer(owner, connection):
        owner.send(connection, b"HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\n"
                   b"Location: /whip/resource/abc\r\nETag: \"e1\"\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n")
        left = size
        while left:
            n = min(left, 1000)
            owner.send(connection, b"%x\r\n" % n + b"v" * n + b"\r\n")
            left -= n
        owner.send(connection, b"0\r\n\r\n")
    return answer


def trickled(owner, connection):
    """201 declaring 1000 bytes, then one byte every 100 ms."""
    owner.send(connection, b"HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\n"
               b"Content-Length: 1000\r\n\r\n")
    for _ in range(1000):
        owner.send(connection, b"v")
        time.sleep(0.1)


@pytest.fixture
def fake_owner_of(redis, nodes_factory):
    """A proxy-mode node n0, and a function that starts a fake owner
    answering with `answer` and gives it a room: (n0, owner, the room's
    WHIP path)."""
    node = nodes_factory(redis, "n0", "proxy")
    wait_for("n0 listed", lambda: {n["id"] for n in cluster(node)["nodes"]} == {"n0"})
    owners = []

    def make(answer):
        owner = FakeOwner(answer)
        owner_id = f"evil{len(owners)}"
        owners.append(owner)
        record = json.dumps({"id": owner_id, "http": owner.url, "state": "serving"})
        redis.command("SET", f"moat:node:{owner_id}", record, "PX", "600000")
        room = room_name()
        redis.command("SET", f"moat:room:room:{room}", owner_id, "PX", "600000")
        return node, owner, f"/whip/room/{room}"
    yield make
    for owner in owners:
        owner.close()


def offer(node, path):
    """(status, body, seconds, peak RSS growth in KiB) of one offer posted
    to `node`, its resident set sampled every 10 ms meanwhile."""
    pid = node.process.pid
    before = rss_kib(pid)
    peak = [before]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(pid))
            time.sleep(0.01)
    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", node.http_port), timeout=30) as s:
            s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/sdp\r\n"
                      b"Content-Length: 5\r\nConnection: close\r\n\r\nv=0\r\n" % path.encode())
            reply = b""
            while True:
                more = s.recv(65536)
                if not more:
                    break
                reply += more
    finally:
        elapsed = time.monotonic() - start
        done.set()
        watcher.join()
    head, _, body = reply.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, head, body, elapsed, peak[0] - before


@pytest.mark.parametrize("answer", [declared_huge, chunked_huge], ids=["declared", "chunked"])
def test_a_huge_answer_is_refused_without_reading_it(fake_owner_of, answer):
    """A 512 MiB answer, its length declared or not: 502
    owner_answer_too_large within a second or two, and the node's resident
    set grows by a few MiB, not by the body (before: the whole body read
    into memory first, RSS up by more than the body)."""
    node, owner, path = fake_owner_of(answer)
    status, _, body, elapsed, growth = offer(node, path)
    seen = f"{status} after {elapsed:.1f} s, RSS +{growth >> 10} MiB, {owner.sent >> 20} MiB sent"
    print(seen)
    assert status == 502, seen
    assert json.loads(body)["error"] == "owner_answer_too_large"
    assert elapsed < 3, seen
    assert growth < 48 * 1024, seen
    # The node is fine and reports the failure.
    assert cluster(node)["redis"]["up"]
    assert node.process.poll() is None


def test_an_answer_at_the_limit_passes_one_byte_over_is_refused(fake_owner_of):
    """A chunked body of exactly 256 KiB is the owner's answer (status,
    Location, ETag, body); one byte more is 502 owner_answer_too_large."""
    node, _, path = fake_owner_of(chunked_of(MAX_ANSWER))
    status, head, body, _, _ = offer(node, path)
    assert status == 201, body[:200]
    assert len(body) == MAX_ANSWER and body == b"v" * MAX_ANSWER
    assert b"\r\netag: \"e1\"" in head.lower()

    _, _, over = fake_owner_of(chunked_of(MAX_ANSWER + 1))
    status, _, body, _, _ = offer(node, over)
    assert status == 502, body[:200]
    assert json.loads(body)["error"] == "owner_answer_too_large"


def test_the_forward_timeout_covers_the_answers_body(fake_owner_of):
    """Headers at once, then a byte every 100 ms: 504 owner_timeout at the
    forward timeout (5 x timeout_ms = 5 s), not when the body would end."""
    node, _, path = fake_owner_of(trickled)
    status, _, body, elapsed, _ = offer(node, path)
    assert status == 504, body
    assert json.loads(body)["error"] == "owner_timeout"
    assert 4.5 < elapsed < 7, elapsed
