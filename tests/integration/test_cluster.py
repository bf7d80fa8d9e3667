"""Moat clusters ([cluster], gateway/cluster/): a redis-server started here
(password, its own port, no persistence) and two or three Moat nodes on
loopback, one worker each, each on its own ports. The registry lists every
node; WHIP/WHEP offers for a room another node owns are redirected (307) or
proxied to the owner, and aiortc subscribers on the other node hear the tone
and decode video either way; two nodes claiming one room at once leave
exactly one owner; a SIGKILLed owner's lease lapses and the room is placed
again on a live node; Redis stopped for 10 s stops no media and the nodes
reconnect and re-register; a wrong password is reported clearly."""
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import aiohttp
import pytest
from aiortc import RTCPeerConnection

from conftest import ARTIFACTS, Gateway

from cluster_helpers import (LEASE_MS, PASSWORD, Redis, all_listed, base_of, close, cluster,  # noqa: F401
                             media_arrives, nodes_factory, owner_of, post_offer, publish, redis,
                             room_name, subscribe, wait_for)

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (scripts/install-deps.sh)")

# ---- the registry ---------------------------------------------------------------------

def test_every_node_is_listed_with_its_state(redis, nodes_factory):
    gws = [nodes_factory(redis, f"n{i}") for i in range(3)]
    wait_for("three nodes in every registry", lambda: all_listed(gws))
    for gw in gws:
        view = cluster(gw)
        assert view["redis"]["up"] is True and view["redis"]["state"] == "up"
        mine = [n for n in view["nodes"] if n["self"]]
        assert len(mine) == 1 and mine[0]["http"] == gw.base
        assert mine[0]["state"] == "serving" and mine[0]["workers"] == 1
        assert gw.metric("moat_cluster_redis_up") == 1
        assert gw.metric("moat_cluster_nodes") == 3
    # One key per node, expiring (a dead node's key lapses by itself).
    ttl = int(redis.command("PTTL", "moat:node:n0")[1:].split(b"\r\n")[0])
    assert 0 < ttl <= LEASE_MS
    # Draining: out of placement, visible to the others; back again.
    req = urllib.request.Request(gws[0].base + "/api/cluster/drain", method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        assert json.loads(r.read())["draining"] is True
    wait_for("n0 draining everywhere", lambda: all(
        [n["state"] for n in cluster(gw)["nodes"] if n["id"] == "n0"] == ["draining"]
        for gw in gws))
    assert gws[0].metric("moat_cluster_draining") == 1


# ---- signalling -------------------------------------------------------------------------

def run_cross_node_subscriber(redis, nodes_factory, mode):
    a = nodes_factory(redis, "n0", mode)
    b = nodes_factory(redis, "n1", mode)
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{a.base}/whip/room/{room}")
        owners = owner_of(gws, room)
        assert len(owners) == 1, "one owner"
        owner = owners[0]
        other = b if owner is a else a
        # The publisher's Location: the owner's, or (proxied by a) a's own.
        via = mode == "proxy" and owner is not a
        assert base_of(pub["location"]) == (a.base if via else owner.base), pub
        assert ("/whip/resource/via/" in pub["location"]) == via, pub
        url = f"{other.base}/whep/room/{room}"
        if mode == "redirect":
            # Without following: a 307 naming the owner's advertised URL.
            pc = RTCPeerConnection()
            pc.addTransceiver("audio", direction="recvonly")
            await pc.setLocalDescription(await pc.createOffer())
            status, _, location, _ = await post_offer(url, pc.localDescription.sdp, False)
            await pc.close()
            assert status == 307 and location == f"{owner.base}/whep/room/{room}"
        sub = await subscribe(url)
        if mode == "redirect":
            assert [s for s, _ in sub["history"]] == [307]
        else:
            assert sub["history"] == []
        # Redirected, the owner's 201 names the owner, absolutely; proxied,
        # the Location is the proxying node's own, naming the owner
        # (PATCH and DELETE forwarded: test_cluster_proxy.py).
        if mode == "redirect":
            assert base_of(sub["location"]) == owner.base
        else:
            # Relative: it resolves against the URL the client used.
            assert sub["raw_location"].startswith("/whip/resource/via/"), sub
            assert sub["location"].startswith(f"{other.base}/whip/resource/via/"), sub
        await media_arrives(sub)
        routed = other.metric(f'moat_cluster_offers_total{{route="{mode}"}}')
        assert routed >= 1
        await close(sub, pub)

    asyncio.run(run())


def test_redirect_sends_the_subscriber_to_the_owner(redis, nodes_factory):
    run_cross_node_subscriber(redis, nodes_factory, "redirect")


def test_proxy_keeps_the_subscriber_on_its_node(redis, nodes_factory):
    run_cross_node_subscriber(redis, nodes_factory, "proxy")


def test_two_nodes_claiming_one_room_leave_one_owner(redis, nodes_factory):
    a = nodes_factory(redis, "n0")
    b = nodes_factory(redis, "n1")
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))

    async def run():
        pcs = []

        async def offer(gw, room):
            pc = RTCPeerConnection()
            pc.addTransceiver("audio", direction="sendonly")
            pcs.append(pc)
            await pc.setLocalDescription(await pc.createOffer())
            return await post_offer(f"{gw.base}/whip/room/{room}", pc.localDescription.sdp,
                                    follow=False)

        rooms = [room_name() for _ in range(6)]
        results = await asyncio.gather(*[offer(gw, r) for r in rooms for gw in gws])
        for i, room in enumerate(rooms):
            pair = results[2 * i:2 * i + 2]
            owner = redis.command("GET", f"moat:room:room:{room}").split(b"\r\n")[1].decode()
            owner_gw = gws[int(owner[1:])]
            for status, body, location, _ in pair:
                assert status in (201, 307), body
                # A 201 only from the owner, a 307 only to it.
                assert base_of(location) == owner_gw.base, (room, owner, location)
            assert len(owner_of(gws, room)) == 1
        for pc in pcs:
            await pc.close()

    asyncio.run(run())


# ---- failures ------------------------------------------------------------------------

def test_a_killed_owner_lapses_and_the_room_moves(redis, nodes_factory):
    gws = [nodes_factory(redis, f"n{i}") for i in range(3)]
    wait_for("three nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def first():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        await pub["pc"].close()
        return pub

    pub = asyncio.run(first())
    owner = next(gw for gw in gws if gw.base == base_of(pub["location"]))
    owner.process.send_signal(signal.SIGKILL)
    owner.process.wait(timeout=5)
    live = [gw for gw in gws if gw is not owner]
    dead_id = f"n{gws.index(owner)}"
    wait_for("the dead node's record to lapse", lambda: all(
        dead_id not in {n["id"] for n in cluster(gw)["nodes"]} for gw in live),
        timeout=LEASE_MS / 1000 * 3 + 5)

    async def again():
        pub = await publish(f"{live[0].base}/whip/room/{room}")
        assert base_of(pub["location"]) in {gw.base for gw in live}
        sub = await subscribe(f"{live[1].base}/whep/room/{room}")
        await media_arrives(sub)
        await close(sub, pub)

    asyncio.run(again())


def test_redis_outage_keeps_media_and_nodes_come_back(redis, nodes_factory):
    a = nodes_factory(redis, "n0")
    b = nodes_factory(redis, "n1")
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{a.base}/whip/room/{room}")
        sub = await subscribe(f"{b.base}/whep/room/{room}")
        await media_arrives(sub)
        redis.stop()
        wait_for("both nodes to see Redis down",
                 lambda: all(not cluster(gw)["redis"]["up"] for gw in gws))
        assert all(gw.metric("moat_cluster_redis_up") == 0 for gw in gws)
        before = sub["recorders"]["audio"].frames
        # A new room while Redis is away is served where it is asked.
        other = room_name()
        lone = await publish(f"{b.base}/whip/room/{other}")
        assert base_of(lone["location"]) == b.base
        await asyncio.sleep(10)  # the outage itself
        during = sub["recorders"]["audio"].frames - before
        assert during >= 250, f"only {during} audio frames in 10 s without Redis"
        redis.start()
        wait_for("both nodes reconnected and re-registered", lambda: all_listed(gws) and all(
            cluster(gw)["redis"]["up"] and cluster(gw)["redis"]["reconnects"] >= 1
            for gw in gws), timeout=20)
        assert all(gw.metric("moat_cluster_redis_reconnects_total") >= 1 for gw in gws)
        # The owner re-claims its rooms after the restart emptied Redis.
        owner = next(gw for gw in gws if gw.base == base_of(pub["location"]))
        wait_for("the room's key again", lambda: redis.command(
            "GET", f"moat:room:room:{room}").split(b"\r\n")[1].decode() ==
            f"n{gws.index(owner)}")
        # The room placed locally while Redis was away is claimed on its return.
        wait_for("the outage's room claimed", lambda: redis.command(
            "GET", f"moat:room:room:{other}").split(b"\r\n")[1].decode() == "n1")
        after = sub["recorders"]["audio"].frames
        await asyncio.sleep(1)
        assert sub["recorders"]["audio"].frames > after
        await close(sub, pub, lone)

    asyncio.run(run())


def test_wrong_password_is_reported(redis, nodes_factory):
    gw = nodes_factory(redis, "n0", password="not-the-password")
    view = wait_for("auth_failed", lambda: (lambda v: v if v["redis"]["state"] ==
                                            "auth_failed" else None)(cluster(gw)))
    assert "authentication failed" in view["redis"]["error"]
    assert gw.metric("moat_cluster_redis_up") == 0
    assert gw.metric("moat_cluster_redis_auth_failures_total") >= 1
    assert "authentication failed" in gw.log_text()
    assert "MOAT_CLUSTER_PASSWORD" in gw.log_text()
    # /healthz reports the link but stays 200: the node keeps serving.
    health = json.loads(gw.get("/healthz"))
    assert health["status"] == "ok", health
    assert health["cluster"] == {"configured": True, "node_id": "n0", "redis": "auth_failed",
                                 "draining": False}, health

    async def local():
        # Without Redis the node still serves rooms itself.
        pub = await publish(f"{gw.base}/whip/room/{room_name()}")
        assert base_of(pub["location"]) == gw.base
        await close(pub)

    asyncio.run(local())


def test_a_cluster_without_password_does_not_start(redis):
    from conftest import MOAT
    env = {k: v for k, v in os.environ.items() if k != "MOAT_CLUSTER_PASSWORD"}
    result = subprocess.run([str(MOAT), "--cluster-redis", f"127.0.0.1:{redis.port}",
                             "--check-config"], capture_output=True, text=True, timeout=20,
                            env=env)
    assert result.returncode == 2
    assert "[cluster] redis needs [cluster] password" in result.stderr


def test_sigterm_drains_the_node_then_it_exits(redis, nodes_factory):
    a = nodes_factory(redis, "n0")
    b = nodes_factory(redis, "n1")
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{a.base}/whip/room/{room}")
        owner = next(gw for gw in gws if gw.base == base_of(pub["location"]))
        other = b if owner is a else a
        owner_id = f"n{gws.index(owner)}"
        owner.process.send_signal(signal.SIGTERM)
        wait_for("the owner draining in the other's registry", lambda: [
            n["state"] for n in cluster(other)["nodes"] if n["id"] == owner_id] == ["draining"])
        assert owner.process.poll() is None, "a draining node waits for its sessions"
        # Its room goes on: a subscriber still joins it, through the other node.
        sub = await subscribe(f"{other.base}/whep/room/{room}")
        assert base_of(sub["location"]) == owner.base
        await media_arrives(sub)
        # A new room asked of the draining node is placed on the other one.
        fresh = await publish(f"{owner.base}/whip/room/{room_name()}")
        assert base_of(fresh["location"]) == other.base
        assert [s for s, _ in fresh["history"]] == [307]
        await close(sub, pub, fresh)
        owner.process.wait(timeout=10)
        assert owner.process.returncode == 0

    asyncio.run(run())


def test_a_sigterm_drain_is_not_undone_by_delete(redis, nodes_factory):
    """DELETE /api/cluster/drain during a SIGTERM drain would put back in
    placement a node that still quits at its drain deadline: it is 409
    stopping, the node stays draining and new rooms go elsewhere."""
    a = nodes_factory(redis, "n0", extra=("--cluster-drain-timeout", "30",
                                          "--pending-timeout", "60"))
    wait_for("n0 listed", lambda: {n["id"] for n in cluster(a)["nodes"]} == {"n0"})

    async def pending_session():
        # An offer never connected: its session stays pending, so the drain
        # does not finish at once.
        pc = RTCPeerConnection()
        pc.addTransceiver("audio", direction="sendonly")
        await pc.setLocalDescription(await pc.createOffer())
        status, body, _, _ = await post_offer(f"{a.base}/whip/room/{room_name()}",
                                              pc.localDescription.sdp, False)
        await pc.close()
        assert status == 201, (status, body)

    asyncio.run(pending_session())
    b = nodes_factory(redis, "n1")
    wait_for("both nodes listed", lambda: all_listed([a, b]))
    a.process.send_signal(signal.SIGTERM)
    wait_for("n0 draining", lambda: cluster(a)["draining"] is True)
    request = urllib.request.Request(a.base + "/api/cluster/drain", method="DELETE",
                                     headers=a.auth())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 409
    body = json.loads(refused.value.read())
    assert body["error"] == "stopping" and "SIGTERM" in body["detail"], body
    time.sleep(0.5)
    assert cluster(a)["draining"] is True
    wait_for("n0 still draining in n1's registry", lambda: [
        n["state"] for n in cluster(b)["nodes"] if n["id"] == "n0"] == ["draining"])
    assert a.metric("moat_cluster_draining") == 1

    async def new_room():
        pc = RTCPeerConnection()
        pc.addTransceiver("audio", direction="sendonly")
        await pc.setLocalDescription(await pc.createOffer())
        result = await post_offer(f"{a.base}/whip/room/{room_name()}",
                                  pc.localDescription.sdp, False)
        await pc.close()
        return result

    for _ in range(3):
        status, body, location, _ = asyncio.run(new_room())
        assert status == 307 and base_of(location) == b.base, (status, body, location)
    assert a.process.poll() is None, "the drain waits for the pending session"
    a.process.send_signal(signal.SIGTERM)  # a second SIGTERM quits at once
    assert a.process.wait(timeout=10) == 0


@pytest.mark.hostile
def test_forged_records_and_forward_headers_are_refused(redis, nodes_factory):
    """Node records in Redis come from other machines: a record with a header
    injection in its URL is refused (counted), never used for a Location; a
    client's own X-Moat-Forwarded does not skip placement."""
    a = nodes_factory(redis, "n0")
    b = nodes_factory(redis, "n1")
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))
    evil = json.dumps({"id": "evil", "http": "http://x\r\nSet-Cookie: a=b", "state": "serving"})
    redis.command("SET", "moat:node:evil", evil)
    redis.command("SADD", "moat:nodes", "evil")
    redis.command("SET", "moat:node:junk", "{not json")
    redis.command("SADD", "moat:nodes", "junk")
    wait_for("the forged records refused",
             lambda: a.metric("moat_cluster_records_rejected_total") >= 2)
    assert {n["id"] for n in cluster(a)["nodes"]} == {"n0", "n1"}
    room = room_name()
    redis.command("SET", f"moat:room:room:{room}", "evil")

    async def run():
        pc = RTCPeerConnection()
        pc.addTransceiver("audio", direction="sendonly")
        await pc.setLocalDescription(await pc.createOffer())
        status, body, location, _ = await post_offer(f"{a.base}/whip/room/{room}",
                                                     pc.localDescription.sdp, False)
        assert status == 502 and json.loads(body)["error"] == "owner_unusable", (status, body)
        assert location is None
        # A room owned by n1, asked of n0 with a made-up forward header: 307.
        other = room_name()
        redis.command("SET", f"moat:room:room:{other}", "n1", "PX", "60000")
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{a.base}/whip/room/{other}", data=pc.localDescription.sdp,
                                 headers={"Content-Type": "application/sdp",
                                          "X-Moat-Forwarded": "0" * 64},
                                 allow_redirects=False) as r:
                assert r.status == 307, await r.text()
                assert r.headers["Location"] == f"{b.base}/whip/room/{other}"
        await pc.close()

    asyncio.run(run())


def test_a_stalled_redis_times_out_and_offers_are_served_here(redis, nodes_factory):
    """Redis stopped (SIGSTOP: TCP still accepted, nothing answered): Moat's
    own timeouts fail the commands, new rooms are placed on the node asked,
    the stuck link is dropped and reconnects once Redis runs again."""
    a = nodes_factory(redis, "n0", extra=("--cluster-timeout-ms", "300"))
    b = nodes_factory(redis, "n1", extra=("--cluster-timeout-ms", "300"))
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))

    async def run():
        redis.process.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            pub = await publish(f"{a.base}/whip/room/{room_name()}")
            took = time.monotonic() - started
            assert base_of(pub["location"]) == a.base
            assert took < 3, f"the offer waited {took:.1f} s for a stalled Redis"
            wait_for("command timeouts counted",
                     lambda: a.metric("moat_cluster_redis_command_timeouts_total") >= 1)
            assert a.metric('moat_cluster_offers_total{route="fallback"}') >= 1
            wait_for("the link given up", lambda: not cluster(a)["redis"]["up"])
        finally:
            redis.process.send_signal(signal.SIGCONT)
        wait_for("both nodes back", lambda: all(cluster(gw)["redis"]["up"] for gw in gws) and
                 all_listed(gws), timeout=20)
        await close(pub)

    asyncio.run(run())


def test_redis_on_a_unix_socket(tmp_path):
    """[cluster] redis may be a unix socket path."""
    path = tmp_path / "redis.sock"
    # A fresh clone has no tests/artifacts until some test makes it.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS / f"redis-unix-{uuid.uuid4().hex[:8]}.log", "w")
    server = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", str(path),
                               "--unixsocketperm", "700", "--requirepass", PASSWORD,
                               "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                              stdout=log, stderr=subprocess.STDOUT)
    gw = None
    try:
        wait_for("the socket", path.exists)
        gw = Gateway(workers=1, env={"MOAT_CLUSTER_PASSWORD": PASSWORD}, extra_args=(
            "--cluster-redis", str(path), "--cluster-node-id", "unix0"))
        view = wait_for("registered", lambda: (lambda v: v if v["nodes"] else None)(cluster(gw)))
        assert view["redis"]["up"] and [n["id"] for n in view["nodes"]] == ["unix0"]
    finally:
        if gw:
            assert gw.stop() == 0
        server.terminate()
        server.wait(timeout=10)
        log.close()


@pytest.mark.parametrize("address, shown", [
    ("redis-typo.invalid:6379", "redis-typo.invalid:6379"),
    ("/nonexistent/redis.sock", "/nonexistent/redis.sock")])
def test_a_redis_address_that_fails_at_once_is_logged(address, shown):
    """A connect that fails before any socket exists (a host that does not
    resolve, a unix socket that is not there) was retried with no log line at
    all: now a warning naming the address and the reason, and the link says
    down."""
    gw = Gateway(workers=1, env={"MOAT_CLUSTER_PASSWORD": PASSWORD}, extra_args=(
        "--cluster-redis", address, "--cluster-node-id", "typo0"))
    try:
        line = wait_for("a warning", lambda: next(
            (l for l in gw.log_text().splitlines()
             if "level=warn" in l and f"cannot connect to {shown}: " in l), None))
        assert line.split(f"cannot connect to {shown}: ")[1].strip('"'), line
        view = cluster(gw)
        assert not view["redis"]["up"] and shown in view["redis"]["error"], view
        assert gw.metric("moat_cluster_redis_up") == 0
    finally:
        assert gw.stop() == 0


def test_without_cluster_no_cluster_code_runs(gateway):
    """No [cluster]: no /api/cluster, no cluster metrics, relative Locations."""
    with pytest.raises(urllib.error.HTTPError) as error:
        gateway.get("/api/cluster")
    assert error.value.code == 404
    assert "moat_cluster_" not in gateway.get("/metrics")
    assert json.loads(gateway.get("/healthz"))["cluster"] == {"configured": False}

    async def run():
        pub = await publish(f"{gateway.base}/whip/room/{room_name()}")
        assert pub["raw_location"].startswith("/whip/resource/")
        assert pub["location"] == gateway.base + pub["raw_location"]
        await close(pub)

    asyncio.run(run())
