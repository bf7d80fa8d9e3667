"""bench/paced: the cost of a forged packet as a real flood arrives, Moat
against Janus in the same run.

Each gateway runs alone in a network namespace joined to the host by a veth
pair (Janus gathers no loopback candidates; Moat sits behind the same link
so that both see the identical path), pinned to CPU 0. An aiortc peer on the
host publishes a 440 Hz tone to it (Moat: WHIP /whip/echo; Janus 1.1.2:
echotest over its HTTP API) and receives it back. bench/paced/paced_spoof,
pinned to CPU 1, spoofs that peer's nominated 5-tuple from a raw socket with
forged SRTP on its live SSRC, sequence numbers just ahead of the live ones,
paced evenly at each rate. Per rate it reports the gateway's CPU per forged
packet (utime + stime of the whole process from /proc/PID/stat, the idle
rate of the same call subtracted) and the echoed audio lost. Moat runs with
prefilter mode off and auto; SRTP+ peers (prn, chain) are moat-flood
sessions flooding their own 5-tuple (forged-own), same rates, CPU measured
against an identical run without the flood.

Last line: paced cost_ns moat=<ns> janus=<ns> ratio=<janus/moat> legit_loss_max=<%>
(moat and janus: the mean over the rates up to 100 kpps of the aiortc peer
without SRTP+, Moat in its default mode auto; legit_loss_max: the worst loss
of any Moat run up to 100 kpps, with and without SRTP+).

No figure is judged, but the bench exits 1 (saying why) when a run measured
nothing: Janus missing without --no-janus, a flood step whose generator sent
no forged packet, or a gateway, mode and peer none of whose flood steps
echoed any audio back (100 % lost, or the call carried nothing)."""
import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

import aiohttp  # noqa: E402
from aiortc import RTCPeerConnection, RTCSessionDescription  # noqa: E402

from aiortc_peer import Recorder, ToneTrack  # noqa: E402
from spoof import live_sequence  # noqa: E402

import netns_bench  # noqa: E402
from netns_bench import janus_missing, sh, stop, write_janus_config  # noqa: E402

HOST_IP, NS_IP = "10.77.0.1", "10.77.0.2"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_ns(pid):
    """utime + stime of every thread of the process, in nanoseconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // CLK_TCK


class Namespace(netns_bench.Namespace):
    def __init__(self):
        super().__init__("paced", HOST_IP, NS_IP)

    def run(self, *args, **kwargs):
        return super().run("0", *args, **kwargs)


def child_pid(wrapper):
    """`ip netns exec taskset X` execs X in the same process."""
    return wrapper.pid


async def wait_http(url, seconds=15):
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.get(url) as r:
                    if r.status < 500:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


async def audio_counts(pc):
    for stats in (await pc.getStats()).values():
        if stats.type == "inbound-rtp" and stats.kind == "audio":
            return stats.packetsReceived, max(stats.packetsLost, 0)
    return 0, 0


def nominated_pair(pc):
    pair = pc.getSenders()[0].transport.transport._connection._nominated[1]
    return (pair.local_candidate.host, pair.local_candidate.port, pair.remote_candidate.host,
            pair.remote_candidate.port)


async def connect(pc):
    for _ in range(200):
        if pc.connectionState == "connected":
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the call did not connect")


async def moat_offer(pc, base):
    await pc.setLocalDescription(await pc.createOffer())
    async with aiohttp.ClientSession() as http:
        async with http.post(base + "/whip/echo", data=pc.localDescription.sdp,
                             headers={"Content-Type": "application/sdp"}) as r:
            body = await r.text()
            assert r.status == 201, body
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))


async def janus_offer(pc, base):
    """Janus HTTP API: create a session, attach echotest, send the offer,
    long-poll for the answer."""
    await pc.setLocalDescription(await pc.createOffer())
    async with aiohttp.ClientSession() as http:
        async def post(path, body):
            body["transaction"] = uuid.uuid4().hex
            async with http.post(base + path, json=body) as r:
                return await r.json()

        session = (await post("/janus", {"janus": "create"}))["data"]["id"]
        handle = (await post(f"/janus/{session}", {"janus": "attach",
                                                   "plugin": "janus.plugin.echotest"}))["data"]["id"]
        await post(f"/janus/{session}/{handle}", {
            "janus": "message", "body": {"audio": True, "video": False},
            "jsep": {"type": "offer", "sdp": pc.localDescription.sdp}})
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            async with http.get(f"{base}/janus/{session}?maxev=1") as r:
                event = await r.json()
            if isinstance(event, list):
                event = event[0] if event else {}
            if "jsep" in event:
                await pc.setRemoteDescription(RTCSessionDescription(**event["jsep"]))
                return session
        raise RuntimeError("Janus sent no answer")


async def keepalive(base, session):
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/janus/{session}",
                             json={"janus": "keepalive", "transaction": uuid.uuid4().hex}):
            pass


# The gateway binds a namespace address (not loopback), so its API wants a
# token: the bench gives it one rather than have it generate a token file.
BENCH_TOKEN = "moat-bench-token"


async def receive_counts(base):
    """Moat's wake-ups and datagrams read so far (/api/stats, at most 0.5 s old)."""
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer " + BENCH_TOKEN}) as http:
        async with http.get(base + "/api/stats") as r:
            stats = await r.json()
    wakes = sum(w.get("receive", {}).get("wakes", 0) for w in stats["workers"])
    datagrams = sum(w.get("receive", {}).get("datagrams", 0) for w in stats["workers"])
    return wakes, datagrams


async def flood_call(gateway_pid, offer, rates, seconds, spoof, base, janus=False):
    """One aiortc call; the idle CPU rate, then each rate's cost and loss."""
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack())
    recorders = []
    pc.on("track", lambda track: recorders.append(Recorder(track)))
    session = await offer(pc, base)
    await connect(pc)
    await asyncio.sleep(2.0)
    t0, c0 = time.monotonic(), cpu_ns(gateway_pid)
    await asyncio.sleep(2.0)
    idle_rate = (cpu_ns(gateway_pid) - c0) / (time.monotonic() - t0)
    local_host, local_port, remote_host, remote_port = nominated_pair(pc)
    sender = pc.getSenders()[0]
    results = []
    for rate in rates:
        if janus:
            await keepalive(base, session)
        seq = live_sequence(sender)
        received0, lost0 = await audio_counts(pc)
        wakes0, datagrams0 = (0, 0) if janus else await receive_counts(base)
        t0, c0 = time.monotonic(), cpu_ns(gateway_pid)
        process = await asyncio.create_subprocess_exec(
            str(spoof), "--src", local_host, "--sport", str(local_port), "--dst", remote_host,
            "--dport", str(remote_port), "--ssrc", str(sender._ssrc), "--seq-base", str(seq),
            "--rate", str(rate), "--seconds", str(seconds), "--cpu", "1",
            stdout=subprocess.PIPE)
        out, _ = await process.communicate()
        t1, c1 = time.monotonic(), cpu_ns(gateway_pid)
        sent = json.loads(out)["sent"]
        await asyncio.sleep(1.0)  # echoes still in flight; the queue drains
        received1, lost1 = await audio_counts(pc)
        received, lost = received1 - received0, lost1 - lost0
        if not janus:
            await asyncio.sleep(0.6)  # a stats snapshot taken after the step
            wakes1, datagrams1 = await receive_counts(base)
            per_wake = (datagrams1 - datagrams0) / max(wakes1 - wakes0, 1)
        else:
            per_wake = float("nan")
        cost = ((c1 - c0) - idle_rate * (t1 - t0)) / max(sent, 1)
        results.append({"rate": rate, "sent": sent, "cost_ns": cost,
                        "loss": lost / max(received + lost, 1), "echoed": received,
                        "per_wake": per_wake})
    await pc.close()
    return results


def moat_args(build, mode, port):
    return [str(build / "gateway" / "moat"), "--http-bind", NS_IP, "--http-port", "8088",
            "--media-port", str(port), "--workers", "1", "--candidate-addresses", NS_IP,
            "--prefilter-mode", mode, "--log-level", "warn", "--token", BENCH_TOKEN]


def moat_flood_run(ns, build, mode, scheme, rate, seconds):
    """A moat-flood SRTP+ session, with a forged-own flood at `rate` (0: none).
    Returns the gateway's CPU over the run, forged packets sent and loss."""
    gateway = ns.run(*moat_args(build, mode, 20000), stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    try:
        asyncio.run(wait_http(f"http://{NS_IP}:8088/healthz"))
        c0 = cpu_ns(gateway.pid)
        args = [str(build / "tools" / "moat-flood"), "--whip", f"http://{NS_IP}:8088/whip/echo",
                "--sessions", "1", "--media", "g711", "--srtpplus", scheme,
                "--duration", str(seconds + 2), "--json", "--quiet"]
        if rate:
            args += ["--attack", "forged-own", "--rate", str(rate), "--batch", "4",
                     "--forge-ahead", "1:24", "--attack-after", "1", "--attack-for", str(seconds)]
        result = subprocess.run(["taskset", "-c", "1", *args], capture_output=True, text=True,
                                timeout=seconds + 40)
        c1 = cpu_ns(gateway.pid)
        report = json.loads(result.stdout)
        session = report["sessions"][0]
        return c1 - c0, report.get("sent", {}).get("forged-own", 0), session["loss"], session
    finally:
        stop(gateway)


# MOAT_BENCH_QUICK=1 (`make bench-quick`): a few seconds on the full path;
# the figures of a quick run mean nothing and nothing judges them.
QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
# The defence modes and SRTP+ schemes measured; a quick run takes one of each.
MODES = ("auto",) if QUICK else ("off", "auto")
SCHEMES = ("prn",) if QUICK else ("prn", "chain")


def report_unmeasured(steps):
    """0, or 1 with the reasons printed when the run measured nothing: a
    flood step that sent no forged packet (no cost to measure), or a
    gateway, mode and peer none of whose steps got audio echoed back (its
    loss is then no figure: the call carried nothing). Loss below 100 % is
    a figure, never judged."""
    reasons = [f"{gw} {mode} {peer} {rate} pkt/s: the generator sent no forged packet"
               for gw, mode, peer, rate, sent, _ in steps if sent <= 0]
    for group in dict.fromkeys(step[:3] for step in steps):
        if not any(step[5] > 0 for step in steps if step[:3] == group):
            reasons.append(f"{' '.join(group)}: no audio echoed back during any flood step")
    for reason in reasons:
        print(f"paced: no valid measurement: {reason}")
    return 1 if reasons else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rates", default="20000" if QUICK else "20000,50000,100000,200000")
    parser.add_argument("--seconds", type=float, default=0.5 if QUICK else 3.0)
    parser.add_argument("--no-janus", action="store_true")
    parser.add_argument("--no-srtpplus", action="store_true")
    args = parser.parse_args()
    build = Path(args.build)
    rates = [int(r) for r in args.rates.split(",")]
    spoof = build / "bench" / "paced_spoof"
    if os.geteuid() != 0:
        print("paced: needs root (network namespace, raw socket)")
        return 0
    janus_absent = None if args.no_janus else janus_missing()
    if janus_absent:
        print(f"paced: {janus_absent}")
        return 1
    base = f"http://{NS_IP}:8088"
    table = []  # (gateway, mode, peer, rate, cost_ns, loss, per_wake)
    steps = []  # (gateway, mode, peer, rate, forged packets sent, echoed packets)
    ns = Namespace()
    try:
        for mode in MODES:
            gateway = ns.run(*moat_args(build, mode, 20000), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            try:
                asyncio.run(wait_http(base + "/healthz"))
                for r in asyncio.run(flood_call(gateway.pid, moat_offer, rates, args.seconds,
                                                spoof, base)):
                    table.append(("moat", mode, "aiortc", r["rate"], r["cost_ns"], r["loss"],
                                  r["per_wake"]))
                    steps.append(("moat", mode, "aiortc", r["rate"], r["sent"], r["echoed"]))
            finally:
                stop(gateway)
        if not args.no_srtpplus:
            for mode in MODES:
                for scheme in SCHEMES:
                    idle_cpu, _, _, _ = moat_flood_run(ns, build, mode, scheme, 0, args.seconds)
                    for rate in rates:
                        cpu, forged, loss, session = moat_flood_run(ns, build, mode, scheme,
                                                                    rate, args.seconds)
                        cost = (cpu - idle_cpu) / max(forged, 1)
                        table.append(("moat", mode, scheme, rate, cost, loss, float("nan")))
                        steps.append(("moat", mode, scheme, rate, forged,
                                      session.get("received", 0)))
        if not args.no_janus:
            folder = Path(tempfile.mkdtemp(prefix="paced-janus-"))
            write_janus_config(folder, "echotest", "30000-30200",
                               admin_extra='    admin_base_path = "/admin"\n')
            janus = ns.run("janus", "-C", str(folder / "janus.jcfg"), "-F", str(folder),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                asyncio.run(wait_http(base + "/janus/info"))
                for r in asyncio.run(flood_call(janus.pid, janus_offer, rates, args.seconds,
                                                spoof, base, janus=True)):
                    table.append(("janus", "-", "aiortc", r["rate"], r["cost_ns"], r["loss"],
                                  float("nan")))
                    steps.append(("janus", "-", "aiortc", r["rate"], r["sent"], r["echoed"]))
            finally:
                stop(janus)
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        ns.close()

    print("cost_ns: gateway CPU per forged packet (idle rate subtracted); loss_%: echoed audio "
          "lost; per_wake: datagrams per wake-up of the worker")
    print(f"{'gateway':8} {'mode':5} {'peer':7} {'rate':>7} {'cost_ns':>9} {'loss_%':>7} "
          f"{'per_wake':>8}")
    for gw, mode, peer, rate, cost, loss, per_wake in table:
        print(f"{gw:8} {mode:5} {peer:7} {rate:>7} {cost:>9.0f} {100 * loss:>7.2f} "
              f"{per_wake:>8.1f}")

    def mean_cost(gw, mode):
        costs = [c for g, m, p, r, c, _, _ in table if g == gw and m == mode and p == "aiortc"
                 and r <= 100000]
        return sum(costs) / len(costs) if costs else float("nan")

    moat = mean_cost("moat", "auto")
    janus = mean_cost("janus", "-")
    loss_max = max((l for g, m, p, r, c, l, _ in table if g == "moat" and r <= 100000),
                   default=0)
    ratio = janus / moat if moat > 0 else float("nan")
    print(f"paced cost_ns moat={moat:.0f} janus={janus:.0f} ratio={ratio:.2f} "
          f"legit_loss_max={100 * loss_max:.2f}")
    return report_unmeasured(steps)


if __name__ == "__main__":
    sys.exit(main())
