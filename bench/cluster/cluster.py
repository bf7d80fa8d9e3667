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
(moat-flood decrypts and counts what each receives) while media flows:
from one progress interval after the later flood's media began to the
earlier flood's last progress line, the nodes' CPU (their threads' run
time, sampled every 50 ms) against the packets the subscribers received
a second. WHIP/WHEP, ICE and DTLS set-up and the hang-up cost the same per
subscriber in both configurations and are not per-packet costs; the whole
run's figure, set-up included, is printed beside it. cascade_cost_ratio is
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
Each alternation's own ratio is printed too: their spread is the run's
noise. Machine noise (other work on the same cores) moves every figure; compare
only within one run."""
import argparse
import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from process_cpu import cpu_s  # noqa: E402
QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
INTERVAL_S = 0.5
# moat-flood's progress line: "... | N subscribers receive X pps | ..."
PROGRESS = re.compile(r"subscribers receive ([0-9.]+) pps")


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100.0 * len(ordered)))]


def read_progress(process, lines):
    """moat-flood's progress lines on stderr (one per --interval, newline
    ended off a terminal): (arrival time, packets its subscribers received
    in that interval); the rest of stderr is kept for errors."""
    rest = []
    for line in process.stderr:
        match = PROGRESS.search(line)
        if match:
            lines.append((time.monotonic(), float(match.group(1))))
        else:
            rest.append(line)
    process.stderr_rest = "".join(rest)


def sample_cpu(gws, samples, stop):
    while not stop.is_set():
        samples.append((time.monotonic(), [cpu_s(gw.process.pid) for gw in gws]))
        stop.wait(0.05)


def cpu_at(samples, t):
    """Each node's CPU seconds at time t, linear between the samples."""
    before = max((s for s in samples if s[0] <= t), default=samples[0])
    after = min((s for s in samples if s[0] >= t), default=samples[-1])
    if after[0] <= before[0]:
        return before[1]
    share = (t - before[0]) / (after[0] - before[0])
    return [b + (a - b) * share for b, a in zip(before[1], after[1])]


def run_floods(build, pairs, n, duration, gws):
    """One moat-flood per (whip, whep) pair, at once, n subscribers each.
    Returns the whole run's (nodes' CPU seconds, packets delivered to every
    subscriber), the steady window's (each node's CPU seconds a second, packets
    delivered a second: from one progress interval after the last flood's
    media began to the first flood's last progress line, so no WHIP/WHEP,
    ICE or DTLS set-up and no hang-up counts), and the worst subscriber's
    loss."""
    processes, progress, readers = [], [], []
    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_cpu, args=(gws, samples, stop), daemon=True)
    sampler.start()
    c0 = sum(cpu_s(gw.process.pid) for gw in gws)
    for whip, whep in pairs:
        process = subprocess.Popen(
            [str(build / "tools" / "moat-flood"), "--whip", whip, "--whep", whep,
             "--subscribers", str(n), "--duration", str(duration), "--setup-timeout", "20",
             "--drain", "1", "--json", "--interval", str(INTERVAL_S)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        reader = threading.Thread(target=read_progress, args=(process, lines), daemon=True)
        reader.start()
        processes.append(process)
        progress.append(lines)
        readers.append(reader)
    delivered, loss = 0, 0.0
    for process, reader in zip(processes, readers):
        out = process.stdout.read()
        process.wait(timeout=duration + 120)
        reader.join(timeout=10)
        if process.returncode != 0:
            raise RuntimeError("moat-flood failed: "
                               f"{getattr(process, 'stderr_rest', '').strip()[-400:]}")
        report = json.loads(out)
        delivered += sum(s["received"] for s in report["per_subscriber"])
        loss = max(loss, report["loss_max"])
    cpu = sum(cpu_s(gw.process.pid) for gw in gws) - c0
    stop.set()
    sampler.join()
    if any(len(lines) < 4 for lines in progress):
        raise RuntimeError("moat-flood printed fewer than 4 progress lines: --duration too short")
    t0 = max(lines[1][0] for lines in progress)
    t1 = min(lines[-1][0] for lines in progress)
    rate = 0.0
    for lines in progress:
        inside = [count for at, count in lines if t0 < at <= t1]
        rate += sum(inside) / max(len(inside), 1)  # pps over the window
    node_rates = [(b - a) / max(t1 - t0, 1e-9)
                  for a, b in zip(cpu_at(samples, t0), cpu_at(samples, t1))]
    return cpu, delivered, node_rates, rate, loss


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


def cost_ratio(args, owner, edges, gws, n):
    """moat-flood publishes once per run and plays one WHEP URL: two rooms at
    once, each with its publisher and n/2 subscribers, in both configurations
    (local: both rooms' subscribers on the owner; cascaded: each room's on
    one edge), alternating, args.repeat times. Returns the cascaded/local
    ratio of CPU per delivered packet (steady window, whole run) and the
    worst subscriber's loss."""
    from cluster_helpers import room_name
    local_cost, cascade_cost = [], []  # steady window: CPU s / packet
    local_whole, cascade_whole = [], []  # whole run, set-up included
    half, worst = n // 2, 0.0
    for i in range(args.repeat):
        for label, whep in (("local   ", lambda r, e: f"{owner.base}/whep/room/{r}"),
                            ("cascaded", lambda r, e: f"{e.base}/whep/room/{r}?edge=")):
            rooms = [room_name(), room_name()]
            cpu, delivered, node_rates, rate, loss = run_floods(args.build, [
                (f"{owner.base}/whip/room/{r}", whep(r, e)) for r, e in zip(rooms, edges)],
                half, args.duration, gws)
            local = label.startswith("local")
            steady, whole = (local_cost, local_whole) if local else (cascade_cost, cascade_whole)
            cpu_rate = sum(node_rates)
            steady.append(cpu_rate / max(rate, 1e-9))
            whole.append(cpu / max(delivered, 1))
            worst = max(worst, loss)
            where = f"{n} subscribers on the owner" if local else f"{half} on each edge"
            nodes = ", ".join(f"{x * 100:.1f}" for x in node_rates)
            print(f"  {label} run {i}: {where}; steady: nodes' cpu {cpu_rate * 100:.1f} % of a "
                  f"core (owner, edges: {nodes}), {rate:.0f} pps delivered, "
                  f"{steady[-1] * 1e6:.2f} us/packet; whole run: cpu {cpu:.2f} s, delivered "
                  f"{delivered}, {whole[-1] * 1e6:.2f} us/packet; loss_max {loss:.4f}",
                  flush=True)

    def mean(values):
        return sum(values) / len(values)
    # Each alternation's own ratio: their spread is the run's noise.
    pairs = [c / max(lo, 1e-12) for c, lo in zip(cascade_cost, local_cost)]
    print(f"  {n} subscribers: each alternation's steady ratio "
          f"{', '.join(f'{r:.3f}' for r in pairs)} (spread {max(pairs) - min(pairs):.3f})",
          flush=True)
    return (mean(cascade_cost) / max(mean(local_cost), 1e-12),
            mean(cascade_whole) / max(mean(local_whole), 1e-12), worst)


def drain(gw):
    request = urllib.request.Request(gw.base + "/api/cluster/drain", method="POST")
    with urllib.request.urlopen(request, timeout=5):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--subscribers", default="4" if QUICK else "40,200",
                        help="subscribers per CPU run, a comma-separated list of counts (split "
                        "over the two edges when cascaded); the last line is the last count's")
    parser.add_argument("--duration", type=float, default=3 if QUICK else 10)
    parser.add_argument("--repeat", type=int, default=1 if QUICK else 3)
    parser.add_argument("--latency-seconds", type=float, default=5 if QUICK else 20)
    args = parser.parse_args()
    if args.latency_seconds < 3:
        # A second is left out at each end of the window (hop_latency): at 2 s
        # nothing was matched and the run printed hop 0 ms and loss 1.0.
        parser.error("--latency-seconds must be at least 3")
    os.environ["MOAT_GATEWAY_BINARY"] = str(args.build / "gateway" / "moat")
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from cluster_helpers import Redis, all_listed, room_name, start_node, wait_for

    counts = []
    for text in args.subscribers.split(","):
        if not text.strip().isdigit() or int(text) < 2:
            parser.error(f"bad --subscribers {args.subscribers!r}: counts of at least 2")
        counts.append(int(text) - int(text) % 2)
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
        ratios = []  # (n, steady ratio, whole-run ratio, worst flood loss)
        for n in counts:
            ratios.append((n, *cost_ratio(args, owner, edges, gws, n)))
        for n, ratio, ratio_whole, loss in ratios:
            print(f"  {n} subscribers: cascaded/local CPU per delivered packet: steady "
                  f"{ratio:.3f}, whole run (set-up and hang-up included) {ratio_whole:.3f}; "
                  f"loss_max {loss:.4f}")
        n, ratio, _, flood_loss = ratios[-1]
        hops, losses = asyncio.run(hop_latency(owner, edges, room_name(), args.latency_seconds))
        p50, p99 = percentile(hops, 50), percentile(hops, 99)
        print(f"  hop: {len(hops)} packets matched, p50 {p50:.3f} ms, p99 {p99:.3f} ms; "
              f"edge loss {losses}")
        print(f"cluster nodes=3 subscribers={n} cascade_cost_ratio={ratio:.3f} "
              f"hop_ms_p50={p50:.3f} hop_ms_p99={p99:.3f} loss_max={max(max(losses), flood_loss):.4f}")
    finally:
        for gw in gws:
            gw.stop()
        redis.stop()


if __name__ == "__main__":
    main()
