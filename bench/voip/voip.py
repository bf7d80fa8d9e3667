"""bench/voip: relay capacity for plain RTP calls per core, Moat against
Debian's rtpengine (user-space forwarding, --table=-1) in the same run,
driven by the same load generator over ng.

Each relay runs alone on CPU 1 with one worker thread (Moat: --workers 1;
rtpengine: --num-threads=1); build/bench/voip_load runs on CPU 0. Both get
their own scheduler autogroup at nice -20 so that other work on the machine
(compilers, tests) does not decide the figure. A step sets N calls up over ng
(offer and answer, RTP/AVP PCMU), sends 172-byte G.711 RTP every 20 ms in
both directions of every call (the 2N streams spread evenly over the 20 ms,
as phones are), counts each direction's loss over a window after a warm-up
(a packet over 150 ms late is lost), and deletes the calls. N doubles (or
jumps to what the relay's CPU use predicts) until a step fails, then the
interval is bisected. A step passes when every call set up and every
direction of every call lost under 1%; the figure is the largest N that
passed. A step during which the generator, below 90% of its core, fell over
50 ms behind its schedule (the machine stalled it) is run again, twice at
most. A failed step restarts the relay (an overloaded relay leaves a backlog
behind). When the lowest failure came with the generator over 90% of its
core and behind its schedule, the failure may be its own: the figure is then
a lower bound, said so on the line before the last.

Last line: voip calls_per_core=<moat> rtpengine=<rtpengine> ratio=<moat/rtpengine>

No figure is judged, but the bench exits 1 (saying why) when a relay it was
asked to run measured nothing: Moat or rtpengine (installed by make deps;
--no-moat, --no-rtpengine leave one out) could not run, or none of its steps
set every call up and carried media in every direction of every call."""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

from conftest import free_port  # noqa: E402
from ng_client import NgClient, NgTimeout  # noqa: E402
from netns_bench import stop  # noqa: E402

RELAY_CPU, LOAD_CPU = "1", "0"
# The relays' call ports stay below the kernel's ephemeral range (32768 and
# up), where other programs' sockets come and go: a stray datagram from one of
# them reaching a fresh call port first would latch that leg to it. 11700
# ports: 2925 calls at four ports (two legs, RTP and RTCP) each.
PORT_MIN, PORT_MAX = 21000, 32699
MAX_LOSS = 0.01
GENERATOR_LIMIT = 0.9  # of a core: beyond it the generator is the bottleneck
# A generator that fell this far behind its schedule was stalled by the
# machine (other load, the hypervisor): its step says nothing about the
# relay and is run again.
STALL_MS, STALL_RETRIES = 50.0, 2


def free_udp_port():
    return free_port(socket.SOCK_DGRAM)


def free_tcp_port():
    return free_port()


def own_autogroup():
    """Runs in the child between fork and exec: a new session (so its own
    autogroup) at nice -20. Best effort: without root the run is noisier."""
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("-20")
    except OSError:
        pass


class Relay:
    """One relay process on RELAY_CPU, restartable, reachable over ng."""

    def __init__(self, name, command, ng_port, log_path):
        self.name, self.command, self.ng_port, self.log_path = name, command, ng_port, log_path
        self.process = None

    def start(self):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(["taskset", "-c", RELAY_CPU, *self.command],
                                        stdout=log, stderr=log, start_new_session=True,
                                        preexec_fn=own_autogroup)
        log.close()
        deadline = time.monotonic() + 20
        with NgClient(self.ng_port, timeout=0.2, tries=1) as ng:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited at start (see {self.log_path})")
                try:
                    if ng.ping():
                        return
                except (NgTimeout, OSError):
                    time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer an ng ping (see {self.log_path})")

    def stop(self):
        if self.process:
            stop(self.process)
            self.process = None

    def restart(self):
        self.stop()
        time.sleep(0.5)
        self.start()


def rtpengine_relay(folder):
    ng_port = free_udp_port()
    command = ["rtpengine", "--foreground", "--table=-1", "--interface=127.0.0.1",
               f"--listen-ng=127.0.0.1:{ng_port}", f"--port-min={PORT_MIN}",
               f"--port-max={PORT_MAX}", "--num-threads=1", "--media-num-threads=1",
               "--log-stderr", "--log-level=3", "--no-redis-required", "--delete-delay=0",
               f"--pidfile={folder / 'rtpengine.pid'}"]
    return Relay("rtpengine", command, ng_port, folder / "rtpengine.log")


def moat_options(moat):
    """[section] key -> --cli-name, from `moat --help`."""
    out = subprocess.run([str(moat), "--help"], capture_output=True, text=True, timeout=10).stdout
    pattern = r"^\s+--([\w-]+)=\S+\s.*\[(\w+)\] (\w+) \(default"
    return {(m[2], m[3]): m[1] for m in re.finditer(pattern, out, re.M)}


def moat_relay(build, folder):
    """Moat with one worker and its ng server, or a reason it cannot run."""
    moat = build / "gateway" / "moat"
    if not moat.exists():
        return None, f"{moat} is not built"
    options = moat_options(moat)
    wanted = [("ng", "bind"), ("ng", "port"), ("media", "port_min"), ("media", "port_max")]
    missing = [f"[{s}] {k}" for s, k in wanted if (s, k) not in options]
    if missing:
        return None, "this build has no ng call relay (no " + ", ".join(missing) + ")"
    ng_port = free_udp_port()
    values = {("ng", "bind"): "127.0.0.1", ("ng", "port"): str(ng_port),
              ("media", "port_min"): str(PORT_MIN), ("media", "port_max"): str(PORT_MAX)}
    command = [str(moat), "--http-bind", "127.0.0.1", "--http-port", str(free_tcp_port()),
               "--media-port", str(free_udp_port()), "--workers", "1",
               "--candidate-addresses", "127.0.0.1", "--log-level", "warn"]
    if ("call", "allow_loopback_destinations") in options:  # the phones are on loopback
        values[("call", "allow_loopback_destinations")] = "true"
    for key, value in values.items():
        command += [f"--{options[key]}", value]
    return Relay("moat", command, ng_port, folder / "moat.log"), None


def run_step(build, relay, calls, args):
    command = ["taskset", "-c", LOAD_CPU, str(build / "bench" / "voip_load"),
               "--ng", f"127.0.0.1:{relay.ng_port}", "--calls", str(calls), "--media-port", "0",
               "--warmup", str(args.warmup), "--seconds", str(args.seconds), "--drain", "0.5",
               "--relay-pid", str(relay.process.pid), "--phase-timeout", "10", "--quiet"]
    timeout = args.warmup + args.seconds + 40
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              start_new_session=True, preexec_fn=own_autogroup)
        return json.loads(done.stdout)
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as error:
        return {"calls": calls, "error": str(error).splitlines()[0][:120]}


def verdict(result):
    """(passed, why) for one step."""
    if "error" in result:
        return False, "generator: " + result["error"]
    setup, media = result["setup"], result["media"]
    if setup["failed"]:
        return False, f"setup: {setup['failed']} failed ({setup['first_error'][:60]})"
    if media["worst_loss"] >= MAX_LOSS:
        side = "caller" if media.get("worst_side", 0) == 0 else "callee"
        return False, (f"loss: {media['calls_over']} calls over 1%, worst "
                       f"{100 * media['worst_loss']:.1f}% (call {media.get('worst_call')}, "
                       f"{side}'s stream; {media.get('stray', 0)} stray)")
    return True, "ok"


def generator_bound(result):
    media = result.get("media", {})
    return media.get("generator_cpu", 0) >= GENERATOR_LIMIT


def next_count(calls, result, best, worst, maximum):
    """Doubles (or goes where the relay's CPU use points) until a failure,
    then bisects; None when the interval is narrow enough."""
    if worst is None:
        cpu = result.get("media", {}).get("relay_cpu", 0)
        guess = int(calls / cpu * 0.97) if cpu > 0.05 else 2 * calls
        step = max(min(2 * calls, guess), int(calls * 1.1))
        return min(step, maximum) if calls < maximum else None
    if worst - best <= max(25, best * 0.04):
        return None
    return (best + worst) // 2


def search(build, relay, args, rows):
    """The largest passing call count, and whether it is only a lower bound
    (the lowest failure was the generator's, or nothing failed in time)."""
    best, worst, calls, capped = 0, None, args.start, False
    deadline = time.monotonic() + args.budget
    relay.start()
    try:
        while calls and time.monotonic() < deadline:
            for attempt in range(1 + STALL_RETRIES):
                result = run_step(build, relay, calls, args)
                passed, why = verdict(result)
                behind = result.get("media", {}).get("max_lag_ms", 0) > STALL_MS
                # Behind and busy: the generator overloaded itself (no point
                # repeating); behind and idle: the machine stalled it.
                overloaded = behind and generator_bound(result)
                repeat = behind and not overloaded and attempt < STALL_RETRIES
                if repeat:
                    why += "; the generator stalled: step repeated"
                elif overloaded:
                    why += "; the generator was overloaded"
                rows.append((relay.name, calls, passed, why, result.get("media", {}),
                             result.get("setup", {})))
                print_row(rows[-1])
                if not repeat:
                    break
                relay.restart()
            if passed:
                best = max(best, calls)
            elif worst is None or calls < worst:
                worst, capped = calls, overloaded
            if not passed:
                relay.restart()
            else:
                time.sleep(0.5)
            calls = next_count(calls, result, best, worst, args.max_calls)
    finally:
        relay.stop()
    return best, capped or worst is None


HEADER = (f"{'relay':9} {'calls':>6} {'pass':>4} {'worst%':>7} {'over':>5} {'late':>6} "
          f"{'relay_cpu':>9} {'gen_cpu':>7} {'lag_ms':>7} {'lat_us':>8} {'max_us':>9} "
          f"{'setup_s':>7}  why")


def print_row(row):
    name, calls, passed, why, media, setup = row
    print(f"{name:9} {calls:>6} {'yes' if passed else 'no':>4} "
          f"{100 * media.get('worst_loss', 1):>7.2f} {media.get('calls_over', 0):>5} "
          f"{media.get('late', 0):>6} {media.get('relay_cpu', 0):>9.2f} "
          f"{media.get('generator_cpu', 0):>7.2f} {media.get('max_lag_ms', 0):>7.1f} "
          f"{media.get('latency_mean_us', 0):>8.0f} {media.get('latency_max_us', 0):>9.0f} "
          f"{setup.get('seconds', 0):>7.2f}  {why}", flush=True)


# MOAT_BENCH_QUICK=1 (`make bench-quick`): a few seconds on the full path;
# the figures of a quick run mean nothing and nothing judges them.
QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")


def carried(row):
    """A step that set every call up and whose every call direction
    received media (worst_loss < 1: what it lost is a figure)."""
    _, _, _, _, media, setup = row
    return (setup.get("ok", 0) > 0 and setup.get("failed", 1) == 0
            and media.get("window_received", 0) > 0 and media.get("worst_loss", 1.0) < 1.0)


def report_unmeasured(wanted, rows):
    """0, or 1 with the reasons printed when a relay that was asked for
    measured nothing: it could not run (no row) or no step of it carried
    media in every direction of every call."""
    reasons = [f"{name}: no step set every call up and carried media both ways "
               "(see the rows and notes above)"
               for name in wanted if not any(carried(r) for r in rows if r[0] == name)]
    for reason in reasons:
        print(f"voip: no valid measurement: {reason}")
    return 1 if reasons else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--start", type=int, default=20 if QUICK else 400, help="calls in the first step")
    parser.add_argument("--max-calls", type=int, default=40 if QUICK else 2900)
    parser.add_argument("--warmup", type=float, default=0.3 if QUICK else 1.0)
    parser.add_argument("--seconds", type=float, default=0.5 if QUICK else 3.0, help="measured window per step")
    parser.add_argument("--budget", type=float, default=5.0 if QUICK else 80.0, help="seconds of search per relay")
    parser.add_argument("--no-rtpengine", action="store_true")
    parser.add_argument("--no-moat", action="store_true")
    args = parser.parse_args()
    build = Path(args.build)
    if not (build / "bench" / "voip_load").exists():
        print(f"voip: {build / 'bench' / 'voip_load'} is not built")
        return 1
    if os.geteuid() != 0:
        print("voip: not root: no scheduling priority for the relays and the generator, "
              "so other load on the machine weighs more on the figures")
    if (os.cpu_count() or 1) < 2:
        print("voip: needs two CPUs (relay on one, load generator on the other)")
    folder = Path(tempfile.mkdtemp(prefix="bench-voip-"))
    figures, notes = {}, []
    print("Relay capacity for plain RTP/AVP PCMU calls (20 ms, both directions), one core "
          f"each; a step passes when every call direction loses < {100 * MAX_LOSS:.0f}%.")
    print("Timings depend on the machine's other load: compare the two relays of one run.")
    print(HEADER)
    rows = []
    try:
        relays = []
        if not args.no_moat:
            moat, why = moat_relay(build, folder)
            if moat:
                relays.append(moat)
            else:
                notes.append(f"moat: unavailable: {why}")
        if not args.no_rtpengine:
            if shutil.which("rtpengine"):
                relays.append(rtpengine_relay(folder))
            else:
                notes.append("rtpengine: unavailable: rtpengine-daemon is not installed "
                             "(scripts/install-deps.sh installs it; --no-rtpengine skips it)")
        for relay in relays:
            try:
                best, capped = search(build, relay, args, rows)
                figures[relay.name] = (best, capped)
                if capped:
                    notes.append(f"{relay.name}: {best} is a lower bound: the load generator "
                                 "ran out of CPU first (or no step failed in time); the "
                                 "relay may carry more")
            except RuntimeError as error:
                notes.append(f"{relay.name}: unavailable: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for note in notes:
        print(note)

    def shown(name):
        return str(figures[name][0]) if name in figures else "unavailable"

    moat, engine = figures.get("moat", (0, False))[0], figures.get("rtpengine", (0, False))[0]
    ratio = f"{moat / engine:.2f}" if moat and engine else "n/a"
    print(f"voip calls_per_core={shown('moat')} rtpengine={shown('rtpengine')} ratio={ratio}")
    wanted = [name for name, off in (("moat", args.no_moat), ("rtpengine", args.no_rtpengine))
              if not off]
    return report_unmeasured(wanted, rows)


if __name__ == "__main__":
    sys.exit(main())
