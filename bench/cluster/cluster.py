"""bench/cluster: what a cascade hop costs. Three Moat nodes (one worker
each, loopback) on one redis-server (tests/integration/cluster_helpers.py);
n1 and n2 drain, so every room is placed on n0, and serve as edges.

CPU: one room, one publisher (moat-flood --subscribers: Opus 50 pps and
VP8-shaped video 150 pps, about 1.5 Mbit/s), N subscribers all on the owner
(local) against the same N on the two edges through cascades (WHEP
?edge=), same load generator, alternating, each REPEAT times. moat-flood
publishes once per process and plays one WHEP URL, so each configuration
runs two rooms at once (two moat-flood processes, N/2 subscribers each):
local, both rooms' subscribers on the owner; cascaded, each room's on one
edge. The
figure is the CPU of all three nodes per packet delivered to a subscriber
(moat-flood decrypts and counts what each receives); cascade_cost_ratio is
cascaded/local (the cascaded runs pay for the owner's two legs and the
edges' receive path on top of the same fan-out).

Latency and loss (audio): an aiortc publisher (440 Hz tone, video pattern) on the
owner, an aiortc subscriber on the owner and one on each edge, all in one
process; each packet's decrypted payload is timestamped on arrival (the
receiver's RTP handler, before its jitter buffer). The hop is an edge
subscriber's arrival minus the owner subscriber's nearest arrival of the
same payload; loss is the share of the owner subscriber's packets that an
edge subscriber did not get within a second (counted from a second after the
edge subscriber's first packet to a second before the end).

Last line: cluster nodes=3 subscribers=<total in the CPU runs>
cascade_cost_ratio=<> hop_ms_p50=<> hop_ms_p99=<> loss_max=<>
Machine noise (other work on the same cores) moves every figure; compare
only within one run."""
import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except OSError:
        return 0.0


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100.0 * len(ordered)))]


def run_floods(build, pairs, n, duration, gws):
    """One moat-flood per (whip, whep) pair, at once, n subscribers each;
    the nodes' CPU seconds over the runs, the packets delivered to every
    subscriber, the worst subscriber's loss."""
    processes = []
    c0 = sum(cpu_s(gw.process.pid) for gw in gws)
    for whip, whep in pairs:
        processes.append(subprocess.Popen(
            [str(build / "tools" / "moat-flood"), "--whip", whip, "--whep", whep,
             "--subscribers", str(n), "--duration", str(duration), "--setup-timeout", "20",
             "--drain", "1", "--json", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    delivered, loss = 0, 0.0
    for process in processes:
        out, err = process.communicate(timeout=duration + 120)
        if process.returncode != 0:
            raise RuntimeError(f"moat-flood failed: {err.strip()[-400:]}")
        report = json.loads(out)
        delivered += sum(s["received"] for s in report["per_subscriber"])
        loss = max(loss, report["loss_max"])
    cpu = sum(cpu_s(gw.process.pid) for gw in gws) - c0
    return cpu, delivered, loss


async def hop_latency(owner, edges, room, seconds):
    from aiortc.rtcrtpreceiver import RTCRtpReceiver
    from cluster_helpers import publish, subscribe

    arrivals = {}  # receiver id -> {payload digest: monotonic time}
    original = RTCRtpReceiver._handle_rtp_packet

    async def timed(self, packet, arrival_time_ms):
        digest = hashlib.blake2b(packet.payload, digest_size=8).digest()
        arrivals.setdefault(id(self), {}).setdefault(digest, []).append(time.monotonic())
        return await original(self, packet, arrival_time_ms)

    RTCRtpReceiver._handle_rtp_packet = timed
    try:
        pub = await publish(f"{owner.base}/whip/room/{room}")
        local = await subscribe(f"{owner.base}/whep/room/{room}")
        remote = [await subscribe(f"{edge.base}/whep/room/{room}?edge=") for edge in edges]
        await asyncio.sleep(seconds)

        def seen(sub):
            merged = {}
            # Audio: the room forwards Opus payloads unchanged (VP8's
            # picture ids are rewritten per subscriber).
            for receiver in sub["pc"].getReceivers():
                if receiver.track.kind != "audio":
                    continue
                for digest, times in arrivals.get(id(receiver), {}).items():
                    merged.setdefault(digest, []).extend(times)
            return merged
        base = seen(local)
        cutoff = time.monotonic() - 1.0
        hops, losses = [], []
        for sub in remote:
            got = seen(sub)
            # Counted from a second after the edge subscriber's first packet
            # (it joined after the owner's) to a second before the end.
            start = min((t for times in got.values() for t in times), default=cutoff) + 1.0
            # A payload may repeat (a steady tone encodes to the same frames
            # every 100 ms): each arrival pairs with the nearest one of the
            # same payload at the owner's subscriber.
            for digest, times in got.items():
                for t in times:
                    if start <= t <= cutoff and digest in base:
                        t0 = min(base[digest], key=lambda o: abs(t - o))
                        hops.append((t - t0) * 1000.0)
            expected = [t for d, times in base.items() for t in times if start <= t <= cutoff]
            missing = sum(1 for d, times in base.items() for t in times
                          if start <= t <= cutoff and
                          not any(abs(g - t) < 1.0 for g in got.get(d, ())))
            losses.append(missing / len(expected) if expected else 1.0)
        for peer in [local, *remote, pub]:
            await peer["pc"].close()
            for r in peer.get("recorders", {}).values():
                r.task.cancel()
        return hops, losses
    finally:
        RTCRtpReceiver._handle_rtp_packet = original


def drain(gw):
    request = urllib.request.Request(gw.base + "/api/cluster/drain", method="POST")
    with urllib.request.urlopen(request, timeout=5):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--subscribers", type=int, default=4 if QUICK else 40,
                        help="subscribers per CPU run (split over the two edges when cascaded)")
    parser.add_argument("--duration", type=float, default=3 if QUICK else 10)
    parser.add_argument("--repeat", type=int, default=1 if QUICK else 3)
    parser.add_argument("--latency-seconds", type=float, default=5 if QUICK else 20)
    args = parser.parse_args()
    os.environ["MOAT_GATEWAY_BINARY"] = str(args.build / "gateway" / "moat")
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from cluster_helpers import Redis, all_listed, room_name, start_node, wait_for

    n = max(2, args.subscribers - args.subscribers % 2)
    redis = Redis()
    gws = []
    try:
        gws = [start_node(redis, f"n{i}", extra=("--whip-rate-per-ip", "0",
                                                   "--max-pending-sessions", "0"))
               for i in range(3)]
        wait_for("three nodes listed", lambda: all_listed(gws))
        owner, edges = gws[0], gws[1:]
        for edge in edges:
            drain(edge)
        wait_for("the edges draining on the owner", lambda: sum(
            1 for x in json.loads(owner.get("/api/cluster"))["nodes"]
            if x["state"] == "draining") == 2)
        # moat-flood publishes once per run and plays one WHEP URL: two
        # rooms at once, each with its publisher and n/2 subscribers, in
        # both configurations (local: both rooms' subscribers on the owner;
        # cascaded: each room's on one edge).
        local_cost, cascade_cost = [], []
        half = n // 2
        for i in range(args.repeat):
            rooms = [room_name(), room_name()]
            cpu, delivered, loss = run_floods(args.build, [
                (f"{owner.base}/whip/room/{r}", f"{owner.base}/whep/room/{r}") for r in rooms],
                half, args.duration, gws)
            local_cost.append(cpu / max(delivered, 1))
            print(f"  local    run {i}: {n} subscribers on the owner, nodes' cpu {cpu:.2f} s, "
                  f"delivered {delivered}, loss_max {loss:.4f}", flush=True)
            rooms = [room_name(), room_name()]
            cpu, delivered, loss = run_floods(args.build, [
                (f"{owner.base}/whip/room/{r}", f"{edge.base}/whep/room/{r}?edge=")
                for r, edge in zip(rooms, edges)], half, args.duration, gws)
            cascade_cost.append(cpu / max(delivered, 1))
            print(f"  cascaded run {i}: {half} subscribers on each edge, nodes' cpu {cpu:.2f} s, "
                  f"delivered {delivered}, loss_max {loss:.4f}", flush=True)
        ratio = (sum(cascade_cost) / len(cascade_cost)) / max(
            sum(local_cost) / len(local_cost), 1e-12)
        hops, losses = asyncio.run(hop_latency(owner, edges, room_name(), args.latency_seconds))
        p50, p99 = percentile(hops, 50), percentile(hops, 99)
        print(f"  hop: {len(hops)} packets matched, p50 {p50:.3f} ms, p99 {p99:.3f} ms; "
              f"edge loss {losses}")
        print(f"cluster nodes=3 subscribers={n} cascade_cost_ratio={ratio:.3f} "
              f"hop_ms_p50={p50:.3f} hop_ms_p99={p99:.3f} loss_max={max(losses):.4f}")
    finally:
        for gw in gws:
            gw.stop()
        redis.stop()


if __name__ == "__main__":
    main()
