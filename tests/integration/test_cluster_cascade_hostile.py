"""A cascade link's address pair belongs to the link.

Cascade legs own no 5-tuple: the two nodes' worker sockets carry every
room's link between them, routed by SSRC. Any WHEP client can make an
ordinary session and learn its ICE credentials from the answer; one
authenticated, nominating STUN check spoofed from the other node's worker
address made that session take the link's pair, by-tuple dispatch gave it
every link packet (dropped: it has no keys), the legs lost consent and the
edge ended every subscriber the link fed (within 4-6 s), and every new link
between the two nodes died the same way.

Here the spoof is tried at the edge (from the owner's address) and at the
owner (from the edge's): the check is refused, the victim subscriber at the
edge keeps getting media for longer than the link's consent, and no link is
lost."""
import asyncio
import re
import shutil
import time
import urllib.request

import pytest
from aiortc import RTCPeerConnection

from aiortc_peer import ToneTrack
from cluster_helpers import (all_listed, close, media_arrives, nodes_factory, post_offer,  # noqa: F401
                             publish, redis, room_name, subscribe, wait_for)
from spoof import udp_datagram
from stun_check import binding_request

pytestmark = [pytest.mark.hostile,
              pytest.mark.skipif(shutil.which("redis-server") is None,
                                 reason="redis-server is not installed (scripts/install-deps.sh)")]

LOST = 'moat_cluster_cascade_links_total{outcome="lost"}'


def raw_send(sport, dport, payload):
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as raw:
        raw.sendto(udp_datagram("127.0.0.1", sport, "127.0.0.1", dport, payload),
                   ("127.0.0.1", 0))


def attribute(sdp, name):
    return re.search(rf"a={name}:(\S+)", sdp).group(1)


async def spoofed_check(pc, url, spoofed_port, target_port):
    """`pc` offers to `url`, an ordinary session that never connects
    itself, and one authenticated nominating check for it is sent spoofed
    from 127.0.0.1:spoofed_port to 127.0.0.1:target_port; returns `pc`."""
    await pc.setLocalDescription(await pc.createOffer())
    status, answer, _, _ = await post_offer(url, pc.localDescription.sdp)
    assert status == 201, answer
    check = binding_request(attribute(answer, "ice-ufrag"),
                            attribute(pc.localDescription.sdp, "ice-ufrag"),
                            attribute(answer, "ice-pwd"), nominate=True)
    for _ in range(3):
        raw_send(spoofed_port, target_port, check)
        await asyncio.sleep(0.05)
    return pc


async def steal_attempt(url, spoofed_port, target_port):
    """A WHEP session's check, spoofed (spoofed_check)."""
    pc = RTCPeerConnection()
    pc.addTransceiver("audio", direction="recvonly")
    pc.addTransceiver("video", direction="recvonly")
    return await spoofed_check(pc, url, spoofed_port, target_port)


async def early_steal(url, spoofed_port, target_port):
    """A WHIP session's check (echo: no room, no link), spoofed
    (spoofed_check)."""
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack(440.0))
    return await spoofed_check(pc, url, spoofed_port, target_port)


async def keeps_flowing(sub, seconds):
    video, audio = sub["recorders"]["video"], sub["recorders"]["audio"]
    before = video.frames, audio.frames
    await asyncio.sleep(seconds)
    return video.frames - before[0], audio.frames - before[1]


def test_a_spoofed_check_cannot_take_a_cascade_links_pair(redis, nodes_factory):
    owner, edge = [nodes_factory(redis, f"n{i}") for i in range(2)]
    wait_for("both listed", lambda: all_listed([owner, edge]))
    urllib.request.urlopen(urllib.request.Request(edge.base + "/api/cluster/drain",
                                                  method="POST"), timeout=5).close()
    room = room_name()

    async def scenario():
        pub = await publish(f"{owner.base}/whip/room/{room}")
        victim = await subscribe(f"{edge.base}/whep/room/{room}?edge=")
        attackers = []
        try:
            await media_arrives(victim)
            # At the edge, from the owner's worker address; then at the
            # owner, from the edge's.
            attackers.append(await steal_attempt(f"{edge.base}/whep/room/{room}?edge=",
                                                 owner.media_port, edge.media_port))
            attackers.append(await steal_attempt(f"{owner.base}/whep/room/{room}",
                                                 edge.media_port, owner.media_port))
            # Longer than a link's consent (3 s) and the edge's quiet bound.
            flowing = await keeps_flowing(victim, 7)
            return flowing
        finally:
            for pc in attackers:
                await pc.close()
            await close(victim, pub)

    started = time.monotonic()
    video, audio = asyncio.run(scenario())
    print(f"after the spoofed checks: video +{video}, audio +{audio} frames "
          f"({time.monotonic() - started:.1f} s)")
    assert video >= 50 and audio >= 200, (video, audio)
    for node in (owner, edge):
        assert node.metric(LOST) == 0, node.log_path


def test_a_check_spoofed_before_the_first_link_does_not_stop_it(redis, nodes_factory):
    """The spoof before any link between the two nodes exists, where no
    link's pair is there to refuse it: an ordinary session on each node
    takes the other node's worker address with one nominating check. Each
    link leg's routes then failed to bind (the tuple was that session's),
    the leg started deaf and the edge counted the link lost ~3 s later,
    ending its viewers (every later link to that owner too). Now the leg
    takes the address over: the session's pair there is dropped (counted),
    and the viewer gets media past the link's consent with nothing lost."""
    owner, edge = [nodes_factory(redis, f"n{i}") for i in range(2)]
    wait_for("both listed", lambda: all_listed([owner, edge]))
    urllib.request.urlopen(urllib.request.Request(edge.base + "/api/cluster/drain",
                                                  method="POST"), timeout=5).close()
    room = room_name()

    async def scenario():
        attackers = [await early_steal(f"{edge.base}/whip/echo", owner.media_port,
                                       edge.media_port),
                     await early_steal(f"{owner.base}/whip/echo", edge.media_port,
                                       owner.media_port)]
        await asyncio.sleep(0.3)
        pub = await publish(f"{owner.base}/whip/room/{room}")
        victim = await subscribe(f"{edge.base}/whep/room/{room}?edge=")
        try:
            await media_arrives(victim)
            return await keeps_flowing(victim, 5)
        finally:
            for pc in attackers:
                await pc.close()
            await close(victim, pub)

    video, audio = asyncio.run(scenario())
    print(f"after the early spoofed checks: video +{video}, audio +{audio} frames")
    assert video >= 40 and audio >= 150, (video, audio)
    for node in (owner, edge):
        assert node.metric(LOST) == 0, node.log_path
        assert node.metric("moat_cascade_legs_unrouted_total") == 0, node.log_path
        # The spoof did take each address first: the leg took it back.
        assert node.metric("moat_ice_pairs_taken_by_cascade_total") == 1, node.log_path


def test_a_link_aimed_at_the_nodes_own_sockets_is_refused(redis, nodes_factory):
    """A link request (node credential) naming this node's own worker, HTTP
    or ng socket as the edge's address: the leg would feed itself and its
    own authenticated RTCP keep its consent for ever. Refused (400
    bad_link); another address opens the leg."""
    import base64
    import hashlib
    import json
    import urllib.error
    from cluster_helpers import PASSWORD
    gw = nodes_factory(redis, "n0", extra=("--ng-port", "0"))
    wait_for("listed", lambda: all_listed([gw]))
    token = hashlib.sha256(f"moat-cluster-forward:{PASSWORD}".encode()).hexdigest()
    key = base64.b64encode(bytes(range(28))).decode()
    room = room_name()

    def post(body):
        request = urllib.request.Request(
            gw.base + "/api/cluster/cascade", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-Moat-Forwarded": token})
        try:
            with urllib.request.urlopen(request, timeout=5) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    async def scenario():
        pub = await publish(f"{gw.base}/whip/room/{room}")
        try:
            wait_for("the room owned", lambda: gw.metric("moat_cluster_rooms_owned") >= 1)
            link = {"plugin": "room", "room": room, "edge": "n9", "media": "127.0.0.1",
                    "to_edge": key, "to_owner": key}
            for port in (gw.media_port, gw.http_port):
                status, body = post({**link, "port": port})
                assert status == 400 and body["error"] == "bad_link", (port, status, body)
            status, body = post({**link, "port": 9})
            assert status == 201, body
            assert gw.metric("moat_cluster_cascade_legs") == 1
        finally:
            await close(pub)

    asyncio.run(scenario())
