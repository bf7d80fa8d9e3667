"""bench/sfu: fan-out capacity per core, Moat's room plugin against Janus
1.1.2's videoroom in the same run, with the same load generator.

moat-flood (--subscribers) publishes one stream of about 1.5 Mbit/s (Opus
50 pps and VP8-shaped video 150 pps of ~1200 octets, paced evenly) and
holds N subscribers that decrypt what they receive and count sequence gaps
per SSRC. Moat: WHIP /whip/room/<room> and WHEP /whep/room/<room>. Janus:
its HTTP API, videoroom plugin (the publisher offers; Janus offers to each
subscriber, which answers with "start"). Each gateway runs alone in a
network namespace joined to the host by a veth pair (Janus gathers no
loopback candidates; Moat sits behind the same link so both see the same
path).

For each configuration the largest N whose every subscriber loses under
1 % (packets not arrived within 1 s of the end count as lost) is searched:
doubling from a start value until a run fails (twice in a row), then
bisection. The relay is pinned to CPU 0 (Moat --workers 1; the whole Janus
process), moat-flood to CPU 1, both at nice -20. Then Moat with 2 workers,
unpinned (the machine has 2 cores: its second worker shares CPU 1 with
moat-flood, so `scaling` understates what a second core gives a relay
alone). Other work on the same cores makes every figure noisy; the load
average is printed before and after.

Moat runs in its default configuration (flood defence on: prefilter auto,
kernel filter auto); --defence-off adds a search without it, to show what
the defence costs a large room.

Then cross-worker fan-out: Moat with 2 workers and one room whose
publisher is forced onto worker 0 and every subscriber onto worker 1
(POST /api/rooms publisher_worker/subscriber_worker), --cross-subscribers
of them (400; quick 4): the largest loss of any subscriber, twice (the
larger counts).

Last line: sfu subscribers_per_core=<moat> janus=<janus> ratio=<moat/janus>
scaling=<2 workers / 1 worker> cross_worker_loss=<max loss, subscribers
forced onto the publisher's other worker>

No figure is judged, but the bench exits 1 (saying why) when a run measured
nothing: Janus missing without --no-janus, a relay of which no run reached
every subscriber (every run failed or left a subscriber with nothing), or a
cross-worker room that left a subscriber with nothing."""
import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import netns_bench  # noqa: E402
from netns_bench import janus_missing, sh, stop  # noqa: E402

HOST_IP, NS_IP = "10.78.0.1", "10.78.0.2"
LOSS_LIMIT = 0.01
# MOAT_BENCH_QUICK=1 (`make bench-quick`): a few seconds on the full path;
# the figures of a quick run mean nothing and nothing judges them.
QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
# moat-flood's limit; a quick run tries one small room per relay.
MAX_SUBSCRIBERS = 4 if QUICK else 1000
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime + stime of a process so far, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except OSError:
        return 0.0


# The machine is shared: the relay and the load generator run at the
# highest nice priority so that other work on the same cores takes as
# little from them as the scheduler allows.
PRIORITY = ("nice", "-n", "-20")


def lift_descriptor_limit():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Namespace(netns_bench.Namespace):
    def __init__(self):
        super().__init__("sfu", HOST_IP, NS_IP)

    def run(self, cpus, *args, **kwargs):
        return super().run(cpus, *PRIORITY, *args, preexec_fn=lift_descriptor_limit, **kwargs)


def wait_http(url, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


# The gateway binds a namespace address (not loopback), so its API wants a
# token: the bench gives it one rather than have it generate a token file.
BENCH_TOKEN = "moat-bench-token"


def create_room(base, name, placement=None):
    room = {"name": name, "max_subscribers": 1024}
    room.update(placement or {})
    body = json.dumps(room).encode()
    request = urllib.request.Request(base + "/api/rooms", data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer " + BENCH_TOKEN})
    with urllib.request.urlopen(request, timeout=5):
        pass


def write_janus_config(folder):
    """This bench's Janus: videoroom, sessions never time out (also used by
    tests/integration/test_flood_fanout.py)."""
    netns_bench.write_janus_config(folder, "videoroom", "20000-40000",
                                   general_extra="    session_timeout = 0\n")


class Trial:
    """Runs moat-flood once against a gateway; returns its JSON summary."""

    def __init__(self, build, duration, log):
        self.flood = build / "tools" / "moat-flood"
        self.duration = duration
        self.log = log

    def run(self, target_args, n):
        args = ["taskset", "-c", "1", *PRIORITY, str(self.flood), *target_args,
                "--subscribers", str(n), "--duration", str(self.duration), "--setup-timeout",
                "20", "--drain", "1", "--json", "--quiet"]
        t0 = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        try:
            out, err = process.communicate(timeout=self.duration + 120)
        finally:
            stop(process)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if process.returncode != 0:
            print(f"  moat-flood failed ({process.returncode}): {err.strip()[-300:]}",
                  file=self.log)
            return None
        report = json.loads(out)
        report["wall_s"] = time.monotonic() - t0
        # The load generator's share of its core over the whole run: near
        # 100 % it, not the relay, may be what loses packets.
        report["flood_cpu"] = ((after.ru_utime + after.ru_stime - before.ru_utime
                                - before.ru_stime) / report["wall_s"])
        return report


def search(label, attempt, start, log):
    """Largest N in [1, MAX_SUBSCRIBERS] whose run keeps every subscriber
    under LOSS_LIMIT: doubling, then bisection to within ~10 %. On a shared
    machine a run can fail because other work took the relay's core for a
    moment: a failed N is run once more and fails only if both runs do."""
    good, bad, n = 0, None, start
    rows = []

    def one(n):
        return once(n) or once(n)

    def once(n):
        report = attempt(n)
        ok = (report is not None and report["connected"] == n
              and report["loss_max"] < LOSS_LIMIT)
        row = (label, n, report["connected"] if report else 0,
               report["loss_max"] if report else 1.0, report["loss_mean"] if report else 1.0,
               report["setup_s"] if report else 0.0, report.get("relay_cpu", 0) if report else 0,
               report.get("flood_cpu", 0) if report else 0, ok)
        rows.append(row)
        print(f"  {label:15} n={n:5} connected={row[2]:5} loss_max={100 * row[3]:7.3f}% "
              f"mean={100 * row[4]:7.3f}% setup={row[5]:5.1f}s relay_cpu={row[6]:4.0%} "
              f"flood_cpu={row[7]:4.0%} {'ok' if ok else 'FAIL'}", file=log, flush=True)
        return ok

    while bad is None:
        if one(n):
            good = n
            if n >= MAX_SUBSCRIBERS:
                break
            n = min(n * 2, MAX_SUBSCRIBERS)
        else:
            bad = n
    while bad is not None and bad - good > max(good // 10, 5):
        n = (good + bad) // 2
        if one(n):
            good = n
        else:
            bad = n
    return good, rows


def moat_attempt(ns, build, trial, workers, cpus, extra=(), placement=None):
    base = f"http://{NS_IP}:8088"
    counter = [0]

    def attempt(n):
        gateway = ns.run(cpus, str(build / "gateway" / "moat"), "--http-bind", NS_IP,
                         "--http-port", "8088", "--media-port", "20000", "--workers",
                         str(workers), "--candidate-addresses", NS_IP, "--log-level", "warn",
                         "--whip-rate-per-ip", "0", "--max-pending-sessions", "0",
                         "--max-pending-per-source", "0", "--token", BENCH_TOKEN,
                         "--max-sessions", "0", *extra, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        try:
            wait_http(base + "/healthz")
            counter[0] += 1
            room = f"bench{counter[0]}"
            create_room(base, room, placement)
            c0, t0 = cpu_s(gateway.pid), time.monotonic()
            report = trial.run(["--whip", f"{base}/whip/room/{room}",
                                "--whep", f"{base}/whep/room/{room}"], n)
            if report is not None:
                report["relay_cpu"] = (cpu_s(gateway.pid) - c0) / (time.monotonic() - t0)
            return report
        finally:
            stop(gateway)
    return attempt


def janus_attempt(ns, trial):
    base = f"http://{NS_IP}:8088"

    def attempt(n):
        folder = Path(tempfile.mkdtemp(prefix="sfu-janus-"))
        write_janus_config(folder)
        janus = ns.run("0", "janus", "-C", str(folder / "janus.jcfg"), "-F", str(folder),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_http(base + "/janus/info")
            time.sleep(0.5)  # its plugins finish loading after the API answers
            c0, t0 = cpu_s(janus.pid), time.monotonic()
            report = trial.run(["--janus", f"{base}/janus"], n)
            if report is not None:
                report["relay_cpu"] = (cpu_s(janus.pid) - c0) / (time.monotonic() - t0)
            return report
        finally:
            stop(janus)
            shutil.rmtree(folder, ignore_errors=True)
    return attempt


def cross_worker_loss(ns, build, trial, n, log):
    """The largest loss of any of n subscribers forced onto worker 1 while
    their publisher is on worker 0 (every packet crosses the relay), the
    worse of two runs (1.0 when a run failed)."""
    attempt = moat_attempt(ns, build, trial, 2, "0,1",
                           placement={"publisher_worker": 0, "subscriber_worker": 1})
    worst = 0.0
    for _ in range(2):
        report = attempt(n)
        loss = report["loss_max"] if report and report["connected"] == n else 1.0
        print(f"  moat 2w cross  n={n:5} connected={report['connected'] if report else 0:5} "
              f"loss_max={100 * loss:7.3f}%", file=log, flush=True)
        worst = max(worst, loss)
    return worst


def reached_everyone(row):
    """A search row whose run connected its subscribers and left none of
    them with nothing at all (loss_max < 1: what it lost is a figure)."""
    return row[2] > 0 and row[3] < 1.0


def report_unmeasured(rows, cross_loss):
    """0, or 1 with the reasons printed when the run measured nothing: a
    relay none of whose runs reached every subscriber, or a cross-worker
    room that left a subscriber with nothing. Loss below 100 % is a figure,
    never judged."""
    reasons = [f"{label.strip()}: no run reached every subscriber (all failed or lost 100 %)"
               for label in dict.fromkeys(r[0] for r in rows)
               if not any(reached_everyone(r) for r in rows if r[0] == label)]
    if cross_loss >= 1.0:
        reasons.append("moat 2w cross: a run failed or a subscriber received nothing")
    for reason in reasons:
        print(f"sfu: no valid measurement: {reason}")
    return 1 if reasons else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--duration", type=float, default=0.5 if QUICK else 2.5)
    parser.add_argument("--start", type=int, default=4 if QUICK else 100)
    parser.add_argument("--no-janus", action="store_true")
    parser.add_argument("--cross-subscribers", type=int, default=4 if QUICK else 400,
                        help="subscribers of the cross-worker room (all on worker 1)")
    parser.add_argument("--defence-off", action="store_true",
                        help="also search Moat with its flood defence off (about 2 min more)")
    args = parser.parse_args()
    build = Path(args.build)
    if os.geteuid() != 0:
        print("sfu: needs root (network namespace)")
        return 0
    janus_absent = None if args.no_janus else janus_missing()
    if janus_absent:
        print(f"sfu: {janus_absent}")
        return 1
    # SIGTERM unwinds like Ctrl-C, so the gateways stop and the namespace goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    log = sys.stdout
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores, shared with other work: "
          "figures are noisy)", file=log)
    trial = Trial(build, args.duration, log)
    ns = Namespace()
    results, rows = {}, []
    t_start = time.monotonic()
    try:
        found, r = search("moat 1w pinned", moat_attempt(ns, build, trial, 1, "0"), args.start,
                          log)
        results["moat1"], rows = found, rows + r
        if args.defence_off:
            # The same relay without its flood defence (prefilter and kernel
            # filter off): what the defence costs a large room, if anything.
            found, r = search("moat 1w no-def", moat_attempt(
                ns, build, trial, 1, "0", ("--prefilter-mode", "off", "--prefilter-kernel",
                                           "off")), max(results["moat1"], args.start), log)
            results["moat1_nodefence"], rows = found, rows + r
        if not args.no_janus:
            found, r = search("janus pinned", janus_attempt(ns, trial), args.start, log)
            results["janus"], rows = found, rows + r
        found, r = search("moat 2w", moat_attempt(ns, build, trial, 2, "0,1"),
                          max(results["moat1"], args.start), log)
        results["moat2"], rows = found, rows + r
        results["cross_loss"] = cross_worker_loss(ns, build, trial, args.cross_subscribers, log)
    finally:
        ns.close()
    moat, janus = results.get("moat1", 0), results.get("janus", 0)
    ratio = moat / janus if janus else float("nan")
    scaling = results["moat2"] / moat if moat else float("nan")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"capacity (largest N with every subscriber under {100 * LOSS_LIMIT:.0f} % loss; "
          f"moat-flood pinned to CPU 1, at most {MAX_SUBSCRIBERS} subscribers; "
          f"bench took {time.monotonic() - t_start:.0f} s):")
    print(f"  moat, 1 worker pinned to CPU 0: {moat}")
    if "moat1_nodefence" in results:
        print(f"  moat, 1 worker pinned to CPU 0, flood defence off: "
              f"{results['moat1_nodefence']}")
    print(f"  janus videoroom pinned to CPU 0: {janus}")
    print(f"  moat, 2 workers on CPUs 0-1 (the second shared with moat-flood): "
          f"{results['moat2']}")
    print(f"  mediasoup reports about 500 consumers per worker; Moat here: {moat} per worker "
          f"({moat / 500:.2f}x)")
    print(f"  moat, 2 workers, {args.cross_subscribers} subscribers on worker 1, publisher on "
          f"worker 0: max loss {100 * results['cross_loss']:.3f} %")
    print(f"sfu subscribers_per_core={moat} janus={janus} ratio={ratio:.2f} "
          f"scaling={scaling:.2f} cross_worker_loss={results['cross_loss']:.4f}")
    return report_unmeasured(rows, results["cross_loss"])


if __name__ == "__main__":
    sys.exit(main())
