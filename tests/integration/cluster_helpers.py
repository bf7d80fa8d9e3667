"""Shared by the cluster tests (test_cluster*.py): a redis-server of the
test's own (password, loopback port, no disk), Moat nodes joined to it, and
the aiortc publisher/subscriber helpers that check the 440 Hz tone and the
decoded video."""
import asyncio
import json
import socket
import subprocess
import time
import uuid
from urllib.parse import urljoin, urlsplit

import aiohttp
import pytest
from aiortc import RTCPeerConnection, RTCSessionDescription

from aiortc_peer import PatternTrack, Recorder, ToneTrack
from conftest import ARTIFACTS, Gateway, free_port

PASSWORD = "cluster-test-" + uuid.uuid4().hex[:12]
LEASE_MS = 2000


class Redis:
    """A redis-server of this test alone: password, loopback port, no disk."""

    def __init__(self, port=None):
        self.port = port or free_port()
        self.start()

    def start(self):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log = open(ARTIFACTS / f"redis-{self.port}.log", "a")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--requirepass", PASSWORD, "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(ARTIFACTS)],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if self.command("PING") == b"+PONG\r\n":
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not come up")

    def command(self, *words):
        """One command after AUTH; the raw reply."""
        def encode(args):
            out = f"*{len(args)}\r\n".encode()
            for a in args:
                a = a.encode() if isinstance(a, str) else a
                out += f"${len(a)}\r\n".encode() + a + b"\r\n"
            return out
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(encode(["AUTH", PASSWORD]) + encode(list(words)))
            data = b""
            while data.count(b"\r\n") < 2:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data.split(b"\r\n", 1)[1]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.log.close()


@pytest.fixture
def redis():
    r = Redis()
    yield r
    r.stop()


def start_node(redis, name, mode="redirect", password=PASSWORD, extra=()):
    return Gateway(workers=1, env={"MOAT_CLUSTER_PASSWORD": password}, extra_args=(
        "--cluster-redis", f"127.0.0.1:{redis.port}", "--cluster-node-id", name,
        "--cluster-signalling", mode, "--cluster-lease-ms", str(LEASE_MS),
        "--max-pending-per-source", "0", *extra))


@pytest.fixture
def nodes_factory():
    started = []

    def make(*args, **kwargs):
        gw = start_node(*args, **kwargs)
        started.append(gw)
        return gw
    yield make
    for gw in started:
        killed = gw.process.poll() is not None and gw.process.returncode < 0
        code = gw.stop()
        assert killed or code == 0, f"moat exited with {code}; log in {gw.log_path}"


def cluster(gw):
    return json.loads(gw.get("/api/cluster"))


def wait_for(what, predicate, timeout=15.0):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def all_listed(gws):
    ids = {f"n{i}" for i in range(len(gws))}
    return all({n["id"] for n in cluster(gw)["nodes"]} == ids for gw in gws)


def room_name():
    return "c" + uuid.uuid4().hex[:10]


def owner_of(gws, room):
    """The node holding the room's lease, per the nodes' own /api/cluster."""
    owners = [gw for gw in gws if gw.process.poll() is None and
              any(r["room"] == room and r["lease"] == "owned" for r in cluster(gw)["rooms"])]
    return owners


def owner_and_other(gws, room):
    """Of two nodes: the room's owner, and the node that does not own it."""
    owner = owner_of(gws, room)[0]
    return owner, gws[1] if owner is gws[0] else gws[0]


async def post_offer(url, sdp, follow=True):
    async with aiohttp.ClientSession() as http:
        async with http.post(url, data=sdp, headers={"Content-Type": "application/sdp"},
                             allow_redirects=follow) as r:
            history = [(h.status, h.headers.get("Location")) for h in r.history]
            location = r.headers.get("Location")
            # The URL answered, for a relative Location.
            answered[url] = str(r.url)
            return r.status, await r.text(), location, history


# post_offer's URL -> the URL that answered it (after redirects).
answered = {}


def absolute(url, location):
    """A Location (relative: a proxying node's own, or a node without a
    cluster) made absolute against the URL that answered the offer."""
    return urljoin(answered.get(url, url), location) if location else None


async def publish(url):
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack(440.0))
    pc.addTrack(PatternTrack())
    await pc.setLocalDescription(await pc.createOffer())
    status, body, location, history = await post_offer(url, pc.localDescription.sdp)
    assert status == 201, f"WHIP answered {status}: {body}"
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    return {"pc": pc, "location": absolute(url, location), "raw_location": location,
            "history": history}


async def subscribe(url, follow=True):
    pc = RTCPeerConnection()
    pc.addTransceiver("audio", direction="recvonly")
    pc.addTransceiver("video", direction="recvonly")
    recorders = {}

    @pc.on("track")
    def on_track(track):
        recorders[track.kind] = Recorder(track)

    await pc.setLocalDescription(await pc.createOffer())
    status, body, location, history = await post_offer(url, pc.localDescription.sdp, follow)
    assert status == 201, f"WHEP answered {status}: {body}"
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    return {"pc": pc, "recorders": recorders, "location": absolute(url, location),
            "raw_location": location, "history": history}


async def close(*peers):
    for peer in peers:
        async with aiohttp.ClientSession() as http:
            async with http.delete(peer["location"]) as r:
                assert r.status == 200, f"DELETE {peer['location']}: {r.status}"
        await peer["pc"].close()
        for r in peer.get("recorders", {}).values():
            r.task.cancel()


async def media_arrives(sub, min_audio=100, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        audio = sub["recorders"].get("audio")
        video = sub["recorders"].get("video")
        if audio and video and audio.frames >= min_audio and video.frames >= 20:
            break
        await asyncio.sleep(0.1)
    audio = sub["recorders"].get("audio")
    video = sub["recorders"].get("video")
    assert audio and video, f"tracks received: {list(sub['recorders'])}"
    assert audio.frames >= min_audio, f"only {audio.frames} audio frames"
    heard = audio.dominant_frequency()
    assert abs(heard - 440.0) <= 5.0, f"heard {heard:.1f} Hz"
    assert video.frames >= 20 and (320, 240) in video.sizes, f"{video.frames} video frames"


def base_of(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
