"""bench/memory: bytes of gateway memory (RSS) per connected session.

One gateway (release build, 1 worker, loopback) per profile: its RSS is
read after one warm-up session came and went, then with N sessions on
/whip/echo that have sent media for a few seconds (retransmission caches
are sized to the measured rate after a second) and, without a data
channel, retired their DTLS (moat_dtls_retired_total). Both readings are
taken in the steady state, after the worker's next heap trim
(moat_heap_trims_total: it follows handshakes, retirements and session
ends by 0.5-5 s); per session = (RSS with them - RSS before) / N, the
largest of a few samples taken while they are all connected. Profiles:
  - audio: aiortc peers sending Opus (a tone, 50 packets/s);
  - audio_video: the same plus VP8 320x240 at 30 fps (aiortc's encoder);
  - audio_video_data: the same plus one data channel (sending a message a
    second, echoed);
  - flood_video: moat-flood --media video (VP8-shaped, 30 fps, ~110
    packets/s, keyframe bursts): the load of issue 22's 781 KB figure.
    moat-flood reports its reception (LSR/DLSR) each second as a browser
    does, so the gateway learns each session's RTT; RSS is read once every
    session knows it and its DTLS retired, after the next heap trim. The
    line also gives how many sessions knew their RTT and the gateway's own
    count of retransmission arena bytes per session (/api/stats).
The echo plugin sends everything back, so each session both receives and
sends every stream. Other work on the machine does not change RSS much,
but the load average is printed.

MOAT_BENCH_QUICK=1: 2 sessions per profile, a short hold; figures mean
nothing.
--profiles audio,audio_video runs only those (comma-separated); the last
line then names only them.

Last line: memory bytes_per_session audio=<B> audio_video=<B>
audio_video_data=<B> flood_video=<B>

No figure is judged, but the bench exits 1 (saying why) when a profile
measured nothing: no RSS sample was taken, not every session was still
connected when RSS was read, or a session got no media echoed back (with a
data channel, also when no message came back at all): the figure would not
be that of sessions carrying media."""
import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from aiortc import RTCPeerConnection  # noqa: E402

from aiortc_peer import PatternTrack, ToneTrack, whip_delete, whip_publish  # noqa: E402
from conftest import free_port  # noqa: E402
from datachannel_peer import rfc8841_offer  # noqa: E402

QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
SETTLE_S = 1.0 if QUICK else 8.0  # the longest wait for a heap trim (settled)
RTT_WAIT_S = 4.0 if QUICK else 15.0  # the longest wait for flood_video's RTTs


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Gateway:
    def __init__(self, build):
        self.http_port = free_port()
        self.media_port = free_port(socket.SOCK_DGRAM)
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [str(build / "gateway" / "moat"), "--http-bind", "127.0.0.1", "--http-port",
             str(self.http_port), "--media-port", str(self.media_port), "--workers", "1",
             "--ng-port", str(free_port(socket.SOCK_DGRAM)),
             "--candidate-addresses", "127.0.0.1", "--log-level", "warn", "--whip-rate-per-ip",
             "0", "--max-pending-sessions", "0", "--max-pending-per-source", "0",
             "--max-sessions", "0"], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.http_port}"
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=2):
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the gateway did not come up")
                time.sleep(0.2)

    def rss(self):
        return rss_bytes(self.process.pid)

    def metric(self, name):
        with urllib.request.urlopen(self.base + "/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                if line.split(" ")[0] == name:
                    return float(line.split()[-1])
        return 0.0

    def sessions(self):
        with urllib.request.urlopen(self.base + "/healthz", timeout=5) as r:
            return json.loads(r.read())["sessions"]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def open_peer(base, audio, video, data):
    pc = RTCPeerConnection()
    tracks = []
    if audio:
        tracks.append(ToneTrack())
    if video:
        tracks.append(PatternTrack())
    for track in tracks:
        pc.addTrack(track)
    channel = pc.createDataChannel("memory", negotiated=False, id=2) if data else None
    peer = {"pc": pc, "channel": channel, "frames": 0, "messages": 0}
    if channel is not None:
        @channel.on("message")
        def on_message(message):
            peer["messages"] += 1

    @pc.on("track")
    def on_track(track):
        async def sink():  # consume what comes back, as a browser would
            try:
                while True:
                    await track.recv()
                    peer["frames"] += 1
            except Exception:
                pass
        asyncio.ensure_future(sink())

    peer["resource"], _ = await whip_publish(pc, base + "/whip/echo",
                                             mangle_offer=rfc8841_offer if data else None)
    return peer


async def settled(gateway):
    """Waits for the worker's next heap trim (engine/heap_trim.c: 0.5 s after
    the latest handshake, DTLS retirement or session end, at most one per
    5 s), at most SETTLE_S: RSS is then read in the steady state, not while
    what those events freed still sits in the heap."""
    start = gateway.metric("moat_heap_trims_total")
    deadline = time.monotonic() + SETTLE_S
    while gateway.metric("moat_heap_trims_total") <= start and time.monotonic() < deadline:
        await asyncio.sleep(0.2)


async def aiortc_profile(gateway, n, hold, audio, video, data):
    """RSS delta per session with n aiortc peers (one warm-up first), the
    sessions connected when it was read, and why the figure is no
    measurement (None when it is one)."""
    warm = await open_peer(gateway.base, audio, video, data)
    await asyncio.sleep(2.0)
    await whip_delete(warm["resource"])
    await warm["pc"].close()
    await asyncio.sleep(0.5)
    await settled(gateway)
    before = gateway.rss()
    peers = [await open_peer(gateway.base, audio, video, data) for _ in range(n)]
    deadline = time.monotonic() + 20
    while any(p["pc"].connectionState != "connected" for p in peers):
        assert time.monotonic() < deadline, "peers did not connect"
        await asyncio.sleep(0.2)
    if not data:
        # Steady state: a media-only session frees OpenSSL's DTLS state a
        # second or two after its first media (moat_dtls_retired_total, the
        # warm-up's included); the samples start after that transient.
        deadline = time.monotonic() + 15
        while (gateway.metric("moat_dtls_retired_total") < n + 1
               and time.monotonic() < deadline):
            await asyncio.sleep(0.2)
    await settled(gateway)
    samples = []
    end = time.monotonic() + hold
    while time.monotonic() < end:
        for p in peers:
            if p["channel"] is not None and p["channel"].readyState == "open":
                p["channel"].send("x" * 200)
        await asyncio.sleep(1.0)
        samples.append(gateway.rss())
    connected = gateway.sessions()
    silent = sum(1 for p in peers if p["frames"] == 0)
    for p in peers:
        await whip_delete(p["resource"])
        await p["pc"].close()
    invalid = None
    if not samples:
        invalid = "no RSS sample was taken"
    elif connected < n:
        invalid = f"{connected} of {n} sessions connected when RSS was read"
    elif silent:
        invalid = f"{silent} of {n} sessions got no media echoed back"
    elif data and not any(p["messages"] for p in peers):
        invalid = "no data channel message came back"
    return ((max(samples) - before) / n if samples else 0.0), connected, invalid


def transports(gateway):
    """The sessions' entries in /api/stats (rtt_ms, retransmit_cache_bytes)."""
    with urllib.request.urlopen(gateway.base + "/api/stats", timeout=5) as r:
        return json.loads(r.read())["transports"]


def wait_for_rtt(gateway, n):
    """Until the gateway knows every session's round-trip time (moat-flood's
    reception reports, LSR/DLSR: one of the gateway's SRs and one of ours,
    1-2 s) and has retired their DTLS, at most RTT_WAIT_S: the caches are
    then sized by the RTT (0.2 s + 4 RTT, at least 0.3 s, docs/MEMORY.md)
    and shrink within a few packets. Returns how many know their RTT."""
    deadline = time.monotonic() + RTT_WAIT_S
    while True:
        known = sum(1 for t in transports(gateway) if t.get("rtt_ms") is not None)
        retired = gateway.metric("moat_dtls_retired_total")
        if (known >= n and retired >= n + 1) or time.monotonic() > deadline:
            return known
        time.sleep(0.2)


def flood_profile(build, gateway, n, hold):
    """RSS delta per session with moat-flood --media video sessions, in the
    steady state as the aiortc profiles read it: every session connected,
    its RTT learned, its DTLS retired, then after the worker's next heap
    trim. Returns (bytes per session, sessions connected, sessions with an
    RTT, retransmission arena bytes per session, why the figure is no
    measurement or None)."""
    flood = str(build / "tools" / "moat-flood")
    url = gateway.base + "/whip/echo"
    subprocess.run([flood, "--whip", url, "--sessions", "1", "--media", "video", "--duration",
                    "1", "--quiet"], capture_output=True, timeout=60)
    time.sleep(0.5)
    asyncio.run(settled(gateway))
    before = gateway.rss()
    # Ended by SIGINT once measured (it then DELETEs every session).
    process = subprocess.Popen([flood, "--whip", url, "--sessions", str(n), "--media", "video",
                                "--duration", "600", "--quiet", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples, connected, known, cache, out = [], 0, 0, 0, ""
    try:
        deadline = time.monotonic() + 60
        while gateway.sessions() < n and process.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if process.poll() is None and gateway.sessions() >= n:
            known = wait_for_rtt(gateway, n)
            asyncio.run(settled(gateway))
            end = time.monotonic() + hold
            while time.monotonic() < end:
                time.sleep(1.0)
                samples.append(gateway.rss())
            connected = gateway.sessions()
            cache = sum(t.get("retransmit_cache_bytes", 0) for t in transports(gateway)) / n
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            out, _ = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
    if not samples:
        return 0.0, connected, known, cache, f"not all {n} sessions connected (none measured)"
    return (max(samples) - before) / n, connected, known, cache, flood_invalid(out, n, connected)


def flood_invalid(out, n, connected):
    """Why a measured flood_video profile is no measurement (None when it
    is one): a session gone before RSS was read, or one that got nothing
    echoed back (moat-flood's report, printed as it ends)."""
    if connected < n:
        return f"{connected} of {n} sessions connected when RSS was read"
    try:
        sessions = json.loads(out)["sessions"]
    except (ValueError, KeyError, TypeError):
        return "moat-flood printed no report"
    silent = sum(1 for s in sessions if s.get("received", 0) == 0)
    if len(sessions) < n or silent:
        return f"{silent + max(n - len(sessions), 0)} of {n} sessions got nothing echoed back"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--sessions", type=int, default=2 if QUICK else 10)
    parser.add_argument("--flood-sessions", type=int, default=2 if QUICK else 100)
    parser.add_argument("--hold", type=float, default=2.0 if QUICK else 5.0)
    parser.add_argument("--profiles", default="audio,audio_video,audio_video_data,flood_video",
                        help="comma-separated subset of the profiles to run")
    args = parser.parse_args()
    wanted = set(args.profiles.split(","))
    build = Path(args.build)
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    results, invalid = {}, []
    profiles = [("audio", True, False, False), ("audio_video", True, True, False),
                ("audio_video_data", True, True, True)]
    for name, audio, video, data in profiles:
        if name not in wanted:
            continue
        gateway = Gateway(build)
        try:
            per, connected, why = asyncio.run(
                aiortc_profile(gateway, args.sessions, args.hold, audio, video, data))
        finally:
            gateway.stop()
        results[name] = per
        if why:
            invalid.append(f"{name}: {why}")
        print(f"memory profile={name} sessions={args.sessions} connected={connected} "
              f"bytes_per_session={per:.0f} ({per / 1024:.0f} KiB)", flush=True)
    if "flood_video" in wanted:
        gateway = Gateway(build)
        try:
            per, connected, known, cache, why = flood_profile(build, gateway,
                                                              args.flood_sessions, args.hold)
        finally:
            gateway.stop()
        results["flood_video"] = per
        if why:
            invalid.append(f"flood_video: {why}")
        print(f"memory profile=flood_video sessions={args.flood_sessions} connected={connected} "
              f"rtt_known={known} retransmit_cache_per_session={cache:.0f} "
              f"bytes_per_session={per:.0f} ({per / 1024:.0f} KiB)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print("memory bytes_per_session " + " ".join(f"{k}={v:.0f}" for k, v in results.items()))
    for why in invalid:
        print(f"memory: no valid measurement: {why}")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
