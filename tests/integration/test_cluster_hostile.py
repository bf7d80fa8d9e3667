"""A hostile or broken cluster Redis (gateway/cluster/): what one bad key or
a silent network does to every node. A node's key that is not a string, or
an index of nodes that is not a set, is thrown out of the registry (counted)
instead of failing the register script on every node, every tick; a
record of megabytes is measured in Redis and dropped, never read (by the
register script, and by the claim script of a room whose key names it); a
record naming another node's id than its key's is ignored. A node's
pub/sub reply without a final status (1xx) is dropped, not relayed as an
HTTP status. A silent partition (no FIN, no RST) between a node and Redis
is found on the pub/sub connection too, which then reconnects. A Redis host
name whose DNS server never answers holds up nothing (resolved off the
control thread, within the connect timeout).
redis-server and the nodes are this test's own (loopback, free ports)."""
import json
import os
import random
import select
import shutil
import socket
import threading
import time
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cluster_helpers import (PASSWORD, cluster, nodes_factory, redis,  # noqa: F401
                             room_name, wait_for)
from conftest import ARTIFACTS, MOAT, Gateway

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed")


def listed(gw):
    return {n["id"] for n in cluster(gw)["nodes"]}


def in_index(redis, node_id):
    return redis.command("SISMEMBER", "moat:nodes", node_id) == b":1\r\n"


def test_a_wrong_typed_node_key_leaves_the_registry(redis, nodes_factory):
    """`HSET moat:node:bad; SADD moat:nodes bad` made the register script's
    GET fail (WRONGTYPE) on every node, every tick: nodes started after were
    never listed. Now the id leaves the index, counted; a wrong-typed index
    is replaced."""
    a = nodes_factory(redis, "n0")
    wait_for("n0 listed", lambda: listed(a) == {"n0"})
    redis.command("HSET", "moat:node:bad", "x", "y")
    redis.command("SADD", "moat:nodes", "bad")
    b = nodes_factory(redis, "n1")
    wait_for("n1 listed by both", lambda: listed(a) == listed(b) == {"n0", "n1"})
    wait_for("the bad id out of the index", lambda: not in_index(redis, "bad"))
    assert a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total") >= 1
    assert cluster(a)["redis"]["command_errors"] == 0

    # The index itself of the wrong type: replaced, every node back in it.
    rejected = a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total")
    redis.command("EVAL", "redis.call('DEL', KEYS[1]) return redis.call('HSET', KEYS[1], 'x', 'y')",
                  "1", "moat:nodes")
    c = nodes_factory(redis, "n2")
    wait_for("n2 listed by all", lambda: listed(a) == listed(b) == listed(c) ==
             {"n0", "n1", "n2"})
    assert redis.command("TYPE", "moat:nodes") == b"+set\r\n"
    assert a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total") + \
        c.metric("moat_cluster_records_rejected_total") > rejected


def test_a_huge_node_record_is_not_read(redis, nodes_factory):
    """A record of megabytes under a listed id was returned whole by the
    register script to every node, every tick, to be refused by the parser
    (> 4 KiB) only after hiredis had read it all; at 200 MB that took the
    link past its timeout, over and over. Now the script measures it
    (STRLEN) and takes the id out of the index without reading it."""
    a = nodes_factory(redis, "n0")
    wait_for("n0 listed", lambda: listed(a) == {"n0"})
    redis.command("SETRANGE", "moat:node:big", str(4 * 1024 * 1024 - 1), "x")
    redis.command("SADD", "moat:nodes", "big")
    b = nodes_factory(redis, "n1")
    wait_for("the huge record's id out of the index", lambda: not in_index(redis, "big"))
    wait_for("n1 listed by both", lambda: listed(a) == listed(b) == {"n0", "n1"})
    # Refused once, by the script, not read and refused every tick.
    rejected = a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total")
    assert rejected == 1
    for gw in (a, b):
        link = cluster(gw)["redis"]
        assert link["up"] and link["reconnects"] == 0 and link["command_timeouts"] == 0, link


def test_a_record_under_another_nodes_key_is_ignored(redis, nodes_factory):
    """The registry was indexed by the id inside each record, not by the
    moat:node:<id> key it was read from: a record under key x saying
    "id":"n1" replaced n1's entry (its URL, its state) on every node. Now a
    record whose id is not its key's is ignored, counted."""
    a = nodes_factory(redis, "n0")
    b = nodes_factory(redis, "n1")
    wait_for("both listed", lambda: listed(a) == listed(b) == {"n0", "n1"})
    reply = redis.command("GET", "moat:node:n1")
    real = json.loads(reply.split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
    assert real["id"] == "n1" and real["http"] == b.base
    impostor = dict(real, http="http://127.0.0.1:9", state="draining")
    # Several keys, so that one is read after n1's own whatever the order.
    for i in range(8):
        redis.command("SET", f"moat:node:x{i}", json.dumps(impostor))
        redis.command("SADD", "moat:nodes", f"x{i}")
    wait_for("the misfiled records counted on both", lambda: all(
        gw.metric("moat_cluster_records_misfiled_total") >= 8 for gw in (a, b)))
    for _ in range(10):
        for gw in (a, b):
            nodes = {n["id"]: n for n in cluster(gw)["nodes"]}
            assert set(nodes) == {"n0", "n1"}
            assert nodes["n1"]["http"] == b.base and nodes["n1"]["state"] == "serving", nodes
        time.sleep(0.2)
    assert a.metric("moat_cluster_records_rejected_total") >= 8
    assert "its id is not its key's" in a.log_text()


def resp(*words):
    out = f"*{len(words)}\r\n".encode()
    for w in words:
        w = w.encode() if isinstance(w, str) else w
        out += f"${len(w)}\r\n".encode() + w + b"\r\n"
    return out


class FakeNode:
    """A node "f1" of this test's own: a record in the registry, subscribed
    to its channel, answering every request with the status it is given."""

    def __init__(self, redis, status):
        self.redis = redis
        self.status = status
        self.answered = 0
        record = {"id": "f1", "http": "http://127.0.0.1:1", "state": "serving"}
        redis.command("SET", "moat:node:f1", json.dumps(record), "PX", "60000")
        redis.command("SADD", "moat:nodes", "f1")
        self.sub = socket.create_connection(("127.0.0.1", redis.port))
        self.sub.sendall(resp("AUTH", PASSWORD) + resp("SUBSCRIBE", "moat:rpc:f1"))
        self.sub.settimeout(0.2)
        self.stopping = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        data = b""
        while not self.stopping:
            try:
                chunk = self.sub.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                return
            data += chunk
            while (start := data.find(b'{"v"')) >= 0 and (end := data.find(b"\r\n", start)) >= 0:
                request = json.loads(data[start:end])
                data = data[end:]
                reply = {"v": 1, "kind": "reply", "from": "f1", "id": request["id"],
                         "status": self.status, "body": "{}"}
                self.redis.command("PUBLISH", request["reply_to"], json.dumps(reply))
                self.answered += 1

    def stop(self):
        self.stopping = True
        self.thread.join(timeout=5)
        self.sub.close()


def http_exchange(gw, path, seconds):
    """What the node sends for a GET within `seconds` (Connection: close)."""
    s = socket.create_connection(("127.0.0.1", gw.http_port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
              f"Authorization: Bearer {gw.token}\r\n\r\n".encode())
    s.settimeout(0.2)
    data = b""
    deadline = time.time() + seconds
    while time.time() < deadline and len(data) < 1_000_000:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def test_a_reply_without_a_final_status_is_dropped(redis, nodes_factory):
    """A node's reply with status 100 (the parser took 100..599) was relayed
    as the final status of the room API answer: libsoup wrote "100 Continue"
    heads in a loop for as long as the client read. Now a reply's status is
    200..599; anything else is dropped as malformed (counted) and the
    request ends as one the owner did not answer."""
    a = nodes_factory(redis, "n0", extra=("--token", "tok"))
    fake = FakeNode(redis, 100)
    try:
        wait_for("f1 listed", lambda: listed(a) == {"n0", "f1"})
        room = room_name()
        redis.command("SET", f"moat:room:room:{room}", "f1", "PX", "60000")
        malformed = a.metric('moat_cluster_messages_dropped_total{reason="malformed"}')
        data = http_exchange(a, f"/api/rooms/{room}", 4)
        head = data.split(b"\r\n", 1)[0]
        assert head == b"HTTP/1.1 504 Gateway Timeout", (len(data), data[:300])
        assert b" 100 " not in data and len(data) < 4096, (len(data), data[:300])
        assert fake.answered == 1  # the request was not run again and again
        assert b"node_timeout" in data
        assert a.metric('moat_cluster_messages_dropped_total{reason="malformed"}') == \
            malformed + 1
    finally:
        fake.stop()


class SilencingProxy:
    """A TCP proxy between a node and Redis. silence(): every connection
    open now, and every one made while silent, goes quiet both ways without
    being closed (a partition: no FIN, no RST); resume(): connections made
    from then on are relayed again (the quiet ones stay quiet)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.silent = False
        self.relayed = {}  # socket -> its peer, for connections not silenced
        self.held = []  # silenced sockets, kept open
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def silence(self):
        with self.lock:
            self.silent = True
            self.held += list(self.relayed)
            self.relayed.clear()

    def resume(self):
        with self.lock:
            self.silent = False

    def accept(self):
        client, _ = self.listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        with self.lock:
            if self.silent:
                self.held += [client, upstream]
            else:
                self.relayed[client] = upstream
                self.relayed[upstream] = client

    def run(self):
        while self.running:
            with self.lock:
                watched = list(self.relayed)
            ready, _, _ = select.select([self.listener, *watched], [], [], 0.05)
            for sock in ready:
                if sock is self.listener:
                    self.accept()
                    continue
                with self.lock:
                    peer = self.relayed.get(sock)
                if peer is None:
                    continue  # silenced meanwhile
                try:
                    data = sock.recv(65536)
                    if data:
                        peer.sendall(data)
                        continue
                except OSError:
                    pass
                with self.lock:
                    self.relayed.pop(sock, None)
                    self.relayed.pop(peer, None)
                sock.close()
                peer.close()

    def close(self):
        self.running = False
        self.thread.join(timeout=5)
        with self.lock:
            for sock in [*self.relayed, *self.held, self.listener]:
                sock.close()


def test_a_silent_partition_is_found_on_the_pubsub_connection(redis, nodes_factory):
    """The subscribing connection sent nothing after SUBSCRIBE and had no
    timeout or keepalive: after a silent partition it stayed "up" forever,
    receiving nothing (requests to the node timed out, room events were
    lost). Now it is probed every second: found silent within timeout_ms
    of a probe, it reconnects and subscribes again once Redis answers."""
    proxy = SilencingProxy(redis.port)
    try:
        a = nodes_factory(redis, "n0")
        b = nodes_factory(types.SimpleNamespace(port=proxy.port), "n1")
        wait_for("both nodes listed", lambda: listed(a) == listed(b) == {"n0", "n1"})
        assert b.metric("moat_cluster_subscriber_up") == 1
        proxy.silence()
        silenced = time.time()
        wait_for("n1's pub/sub link found down",
                 lambda: b.metric("moat_cluster_subscriber_up") == 0, timeout=6)
        assert time.time() - silenced < 5
        proxy.resume()
        wait_for("n1's pub/sub link back",
                 lambda: b.metric("moat_cluster_subscriber_up") == 1 and
                 cluster(b)["redis"]["up"], timeout=15)
        assert b.metric("moat_cluster_subscriber_reconnects_total") >= 1
        # A request from n0 to n1 over pub/sub is answered again.
        wait_for("n1 answers n0's room listing",
                 lambda: json.loads(a.get("/api/rooms"))["nodes"].get("n1") == "ok", timeout=10)
    finally:
        proxy.close()


def test_a_wrong_typed_room_key_is_replaced_by_a_claim(redis, nodes_factory):
    """`HSET moat:room:room:<r>` (no expiry) made the claim script's GET
    fail (WRONGTYPE) for that room on every node, for good: each node then
    took the room as its own without a lease, so two publishers posted to
    two nodes got two rooms. Now the claim replaces the key, and both
    publishers end on the room's one owner."""
    import asyncio
    from cluster_helpers import close, publish

    a = nodes_factory(redis, "n0")
    b = nodes_factory(redis, "n1")
    wait_for("both listed", lambda: listed(a) == listed(b) == {"n0", "n1"})
    room = room_name()
    key = f"moat:room:room:{room}"
    redis.command("HSET", key, "x", "y")

    async def run():
        first = await publish(f"{a.base}/whip/room/{room}")
        second = await publish(f"{b.base}/whip/room/{room}")
        try:
            assert redis.command("TYPE", key) == b"+string\r\n"
            owner = {b"$2\r\nn0\r\n": a, b"$2\r\nn1\r\n": b}[redis.command("GET", key)]
            # Both publishers are in the owner's one room.
            for peer in (first, second):
                assert peer["location"].startswith(owner.base), (peer["location"], owner.base)
        finally:
            await close(first, second)

    asyncio.run(run())


def redis_output_bytes(redis):
    """Redis's total_net_output_bytes (INFO stats, read whole)."""
    with socket.create_connection(("127.0.0.1", redis.port), timeout=5) as s:
        s.sendall(resp("AUTH", PASSWORD) + resp("INFO", "stats"))
        data = b""
        while True:
            data += s.recv(65536)
            head, _, rest = data.partition(b"\r\n")  # +OK
            size, _, text = rest.partition(b"\r\n")
            if size.startswith(b"$") and len(text) >= int(size[1:]):
                break
    for line in text.decode().splitlines():
        if line.startswith("total_net_output_bytes:"):
            return int(line.split(":")[1])
    raise AssertionError("no total_net_output_bytes in INFO stats")


def post_sdp(gw, path):
    """(status, JSON body, seconds) of a WHIP POST that is no real offer."""
    s = socket.create_connection(("127.0.0.1", gw.http_port), timeout=30)
    start = time.monotonic()
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
              "Content-Type: application/sdp\r\nContent-Length: 5\r\n\r\nv=0\r\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body, time.monotonic() - start


def test_a_huge_record_named_by_a_room_key_is_not_read(redis, nodes_factory):
    """The claim script GETs the record of the room's owner with no size
    check: a room key naming a record of megabytes made every offer to
    that room pull the whole record down the node's one Redis link (200
    MiB took the link past its timeout, and every room with it). Now the
    script measures the record (STRLEN) and returns none, so the offer is
    refused as having no usable owner record (502 owner_unusable, counted)
    at once; Redis sends nothing of the record, the link stays up and
    another room is placed and served."""
    import asyncio
    from cluster_helpers import close, publish

    a = nodes_factory(redis, "n0")
    wait_for("n0 listed", lambda: listed(a) == {"n0"})
    redis.command("SETRANGE", "moat:node:hog", str(24 * 1024 * 1024 - 1), "x")
    hog = room_name()
    redis.command("SET", f"moat:room:room:{hog}", "hog", "PX", "600000")
    rejected = a.metric("moat_cluster_records_rejected_total")
    sent = redis_output_bytes(redis)
    results = []
    threads = [threading.Thread(target=lambda: results.append(post_sdp(a, f"/whip/room/{hog}")))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Four claims read nothing of the 24 MiB record.
    sent = redis_output_bytes(redis) - sent
    assert sent < 1024 * 1024, (sent, [r[0] for r in results], [round(r[2], 1) for r in results],
                                cluster(a)["redis"])
    for status, body, seconds in results:
        assert status == 502, body
        assert json.loads(body)["error"] == "owner_unusable"
        assert seconds < 2, seconds
    assert a.metric("moat_cluster_records_rejected_total") >= rejected + 4
    link = cluster(a)["redis"]
    assert link["up"] and link["reconnects"] == 0 and link["command_timeouts"] == 0, link

    other = room_name()

    async def run():
        peer = await publish(f"{a.base}/whip/room/{other}")
        try:
            assert any(r["room"] == other and r["lease"] == "owned" for r in cluster(a)["rooms"])
            assert redis.command("GET", f"moat:room:room:{other}") == b"$2\r\nn0\r\n"
        finally:
            await close(peer)
    asyncio.run(run())


def silent_dns():
    """A UDP socket on port 53 of a loopback address of its own that never
    answers, and a resolv.conf naming only it."""
    while True:
        address = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(1, 254)}"
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            server.bind((address, 53))
            break
        except OSError:
            server.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    resolv = ARTIFACTS / f"resolv-{address}.conf"
    resolv.write_text(f"nameserver {address}\noptions timeout:5 attempts:2\n")
    return server, resolv


def in_mount_namespace_with(resolv):
    """A wrapper that starts the gateway binary (MOAT) in a mount namespace
    of its own where /etc/resolv.conf is `resolv`. Its name keeps MOAT's
    build directory (build-asan: the ASan options apply)."""
    wrapper = ARTIFACTS / f"moat-in-ns-{MOAT.parent.parent.name}-{resolv.stem}.sh"
    wrapper.write_text(
        "#!/bin/sh\n"
        "exec unshare -m --propagation private sh -c "
        "'mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"' "
        f"'{resolv}' '{MOAT}' \"$@\"\n")
    wrapper.chmod(0o755)
    return Path(wrapper)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="needs root and unshare (a mount namespace for resolv.conf)")
def test_a_redis_host_name_whose_dns_never_answers_blocks_nothing():
    """[cluster] redis = a host name: hiredis resolved it with a blocking
    getaddrinfo on the control thread at every (re)connect of both links;
    with a DNS server that does not answer, /healthz (and all signalling)
    waited 20 s at each attempt. Now the name is resolved off the control
    thread, within ten command timeouts (3 s here): the node starts at once,
    /healthz answers within a second throughout, the link says why it is
    down, and the node stops cleanly with lookups still in flight."""
    server, resolv = silent_dns()
    try:
        start = time.monotonic()
        gw = Gateway(workers=1, env={"MOAT_CLUSTER_PASSWORD": PASSWORD},
                     binary=in_mount_namespace_with(resolv),
                     extra_args=("--cluster-redis", "redis.test:6379", "--cluster-node-id", "d0",
                                 "--cluster-timeout-ms", "300"))
        try:
            assert time.monotonic() - start < 15
            # Two attempts' lookups (3 s each, then a 0.1 s backoff), each
            # stuck for 10 s in its thread.
            worst = 0.0
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                began = time.monotonic()
                try:
                    urllib.request.urlopen(gw.base + "/healthz", timeout=2).read()
                except urllib.error.HTTPError as e:
                    assert e.code == 503  # up, and saying Redis is not
                worst = max(worst, time.monotonic() - began)
                time.sleep(0.1)
            assert worst < 1, f"/healthz took {worst:.1f} s"
            link = cluster(gw)["redis"]
            assert not link["up"], link
            assert link["error"] == "cannot connect to redis.test:6379: name lookup timed out", link
            assert "name lookup timed out" in gw.log_text()
        finally:
            began = time.monotonic()
            assert gw.stop() == 0
            assert time.monotonic() - began < 10
    finally:
        server.close()
