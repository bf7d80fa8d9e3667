"""bench/tunnel: IP over a data channel through the gateway's tunnel plugin
(SCTP ordered and unordered) against TCP and UDP encapsulation spoken
directly between the peers (tools/moat-tunnel --transport tcp|udp), as the
study of SCTP as a VPN transport measured it (its Table 2 and Figure 2).

Two namespaces joined by the repository's TUN link emulator
(bench/tunnel/tunnel_link.c over bench/datachannel/netns_link.h) at RTT 7,
71 and 196 ms, 1 Gbit/s each way, and 1 % random loss at 71 ms. Peer A in
the sender's namespace; the gateway and peer B in the receiver's, so the
data channel's path (A -> gateway) and the baselines' (A -> B) cross the
same link. Ten parallel TCP flows inside the tunnel for 20 s, throughput at
the receiving end; the modes alternate, three runs each. Prints the table,
each mode relative to UDP, and the last line
`tunnel rtt71_sctp_vs_tcp=.. rtt71_unordered_vs_ordered=.. rtt7_sctp_vs_udp=..
loss1_sctp_vs_tcp=..`.

Beside each run's throughput: the CPU of each process on the path while
the flows ran (% of a core: the gateway, for the SCTP modes, both peers,
the link emulator and the inner flows' two processes) and their sum per
inner packet (received payload / 1120 bytes, a full 1172-byte packet's), and
after the table the median of those per condition and mode: on a host whose
cores are all busy it says what each encapsulation costs.

The table has a fifth column beside the study's four: "unreliable", SCTP
with max-retransmits 0 (each packet sent once, lost ones abandoned), the
data channel's closest analogue of UDP encapsulation on a lossy path.
--lanes K (or a list, 1,4) is moat-tunnel's --lanes for the SCTP modes:
K associations per peer, each inner flow on one (default 8, the tool's);
with a list each SCTP mode runs once per count, alternating with the rest,
its column named mode/lK, and the last line takes the last count's figures
(and says which: lanes=K), after a line per condition comparing each count
with the first.
--tcp-lanes K gives the TCP baseline K TLS connections (moat-tunnel
--transport tcp --lanes K), the flows spread over them as over the SCTP
lanes: with K equal to the SCTP lane count the comparison is window for
window (the study's is one connection against one association).
--conditions, --modes, --runs, --seconds and --flows narrow a run. MOAT_BENCH_QUICK=1:
one condition (7 ms), two flows for 2 s, one run per mode, the TCP baseline
on two connections (so that path runs too); the figures mean nothing."""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))
from process_cpu import cpu_s  # noqa: E402
from conftest import ARTIFACTS, Gateway  # noqa: E402

QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
MODES = ("ordered", "unordered", "unreliable", "tcp", "udp")
SCTP_MODES = ("ordered", "unordered", "unreliable")
DEFAULT_LANES = "8"  # moat-tunnel's TUNNEL_DEFAULT_LANES
CONDITIONS = [("rtt7", 7, 0.0), ("rtt71", 71, 0.0), ("rtt196", 196, 0.0), ("loss1", 71, 0.01)]
RATE_BPS = 1_000_000_000
TOKEN = "bench-tunnel-token"
FLOWS_PY = Path(__file__).resolve().parent / "flows.py"
ADDRESSES = ("10.78.0.1", "10.78.0.2")


def identity(name):
    cert, key = ARTIFACTS / f"{name}.crt", ARTIFACTS / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=moat-tunnel"],
                   check=True, capture_output=True)
    out = subprocess.run(["openssl", "x509", "-in", str(cert), "-noout", "-fingerprint",
                          "-sha256"], check=True, capture_output=True, text=True).stdout
    return str(cert), str(key), out.strip().split("=", 1)[1]


class Link:
    def __init__(self, build, rtt_ms, loss):
        self.process = subprocess.Popen([str(build / "bench" / "tunnel_link"), str(rtt_ms),
                                         str(RATE_BPS), str(loss)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().split()
        if not line or line[0] != "link":
            raise RuntimeError("tunnel_link failed")
        self.sender, self.receiver, self.sender_address, self.receiver_address = line[1:5]
        self.method = " ".join(line[5:])

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


# TCP payload of one full inner packet: the TUN MTU (moat-tunnel's 1172)
# less 20 bytes of IPv4 and 32 of TCP with timestamps.
INNER_PAYLOAD = 1172 - 52
CPU_PARTS = ("gateway", "peer A", "peer B", "link", "flows")


def start_peer(build, netns, index, args, log):
    p = subprocess.Popen(["ip", "netns", "exec", netns, str(build / "tools" / "moat-tunnel"),
                          "--tun", f"mbt{index}", "--address", f"{ADDRESSES[index]}/24",
                          "--progress", "0", *args], stdout=log, stderr=subprocess.STDOUT)
    return p


def wait_connected(log_path, processes, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = Path(log_path).read_text()
        if text.count("moat-tunnel: connected") >= 2:
            return
        if any(p.poll() is not None for p in processes):
            raise RuntimeError("moat-tunnel exited: " + text)
        time.sleep(0.05)
    raise RuntimeError("moat-tunnel did not connect: " + Path(log_path).read_text())


def one_run(build, link, gateway, mode, ids, flows, seconds, n, cc, lanes=None, tcp_lanes=1):
    log_path = ARTIFACTS / f"bench-tunnel-{os.getpid()}-{n}.log"
    log = open(log_path, "w")
    if mode in SCTP_MODES:
        url = f"http://{link.receiver_address}:{gateway.http_port}/whip/tunnel/b{n}"
        common = ["--whip", url, "--token", TOKEN, "--mode", mode, "--lanes", str(lanes)]
        args = [common, common]
    else:
        where = f"{link.receiver_address}:{4500 + n % 1000}"
        extra = ["--tcp-congestion", cc, "--lanes", str(tcp_lanes)] if mode == "tcp" else []
        args = [[*extra, "--transport", mode, "--connect", where, "--cert", ids[0][0], "--key",
                 ids[0][1], "--peer-fingerprint", ids[1][2]],
                [*extra, "--transport", mode, "--listen", where, "--cert", ids[1][0], "--key",
                 ids[1][1], "--peer-fingerprint", ids[0][2]]]
    peers = [start_peer(build, link.receiver, 1, args[1], log)]
    peers.append(start_peer(build, link.sender, 0, args[0], log))
    try:
        wait_connected(log_path, peers)
        sink = subprocess.Popen(["ip", "netns", "exec", link.receiver, sys.executable,
                                 str(FLOWS_PY), "sink", "5201", str(flows), str(seconds), cc],
                                stdout=subprocess.PIPE, text=True)
        assert sink.stdout.readline().strip() == "ready"
        source = subprocess.Popen(["ip", "netns", "exec", link.sender, sys.executable,
                                   str(FLOWS_PY), "source", ADDRESSES[1], "5201", str(flows),
                                   str(seconds), cc])
        pids = {"gateway": [gateway.process.pid], "peer A": [peers[1].pid],
                "peer B": [peers[0].pid], "link": [link.process.pid],
                "flows": [sink.pid, source.pid]}
        before = {k: sum(cpu_s(p) for p in v) for k, v in pids.items()}
        started = time.monotonic()
        line = sink.stdout.readline().split()
        # Read before the flows exit (a finished process has no /proc entry).
        after = {k: sum(cpu_s(p) for p in v) for k, v in pids.items()}
        elapsed = time.monotonic() - started
        sink.wait(timeout=60)
        source.wait(timeout=60)
        bytes_per_s = float(line[1]) if line else 0.0
        cpu = {k: (after[k] - before[k]) / elapsed for k in pids}
        if mode not in SCTP_MODES:
            cpu["gateway"] = 0.0  # idle meanwhile: not on this path
        return bytes_per_s * 8 / 1e6, cpu, bytes_per_s / INNER_PAYLOAD
    finally:
        for p in peers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in peers:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()


def ratio(a, b):
    return a / b if b > 0 else 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--runs", type=int, default=1 if QUICK else 3)
    parser.add_argument("--seconds", type=float, default=2 if QUICK else 20)
    parser.add_argument("--flows", type=int, default=2 if QUICK else 10)
    parser.add_argument("--conditions", default="rtt7" if QUICK else ",".join(
        c[0] for c in CONDITIONS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--lanes", default=DEFAULT_LANES,
                        help="moat-tunnel --lanes for the SCTP modes: K, or a list (1,4) to "
                             "compare, alternating")
    parser.add_argument("--tcp-lanes", type=int, default=2 if QUICK else 1, choices=range(1, 9),
                        help="TLS/TCP connections of the TCP baseline, the flows spread over "
                             "them as over SCTP lanes (default 1, the study's; K against K "
                             "SCTP lanes compares window for window)")
    parser.add_argument("--tcp-cc", default="cubic",
                        help="TCP congestion control of the inner flows and of the TCP "
                             "baseline's connection, per socket (the study's Linux used cubic; "
                             "this host may default to bbr, which ignores random loss)")
    opts = parser.parse_args()
    modes = [m for m in MODES if m in opts.modes.split(",")]
    lane_counts = [int(k) for k in opts.lanes.split(",")]
    last_lanes = lane_counts[-1]
    # (column, mode, lanes): an SCTP mode once per lane count.
    cells = []
    for m in modes:
        for k in (lane_counts if m in SCTP_MODES else [None]):
            label = f"{m}/l{k}" if k is not None and len(lane_counts) > 1 else m
            cells.append((label, m, k))
    columns = [c[0] for c in cells]

    def column(mode, lanes=last_lanes):
        if mode in SCTP_MODES and len(lane_counts) > 1:
            return f"{mode}/l{lanes}"
        return mode
    print(f"SCTP lanes: {opts.lanes} (moat-tunnel --lanes); TCP baseline: {opts.tcp_lanes} "
          f"connection{'s' if opts.tcp_lanes > 1 else ''}", flush=True)
    build = Path(opts.build)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ids = [identity(f"bench-tunnel-{os.getpid()}-{i}") for i in range(2)]
    wanted = opts.conditions.split(",")
    results, us_per_packet = {}, {}
    n = 0
    for name, rtt, loss in CONDITIONS:
        if name not in wanted:
            continue
        link = Link(build, rtt, loss)
        gateway = None
        try:
            gateway = Gateway(netns=link.receiver, address=link.receiver_address, workers=2,
                              extra_args=["--token", TOKEN])
            figures = {c: [] for c in columns}
            costs = {c: [] for c in columns}
            for run in range(opts.runs):
                for label, mode, lanes in cells:  # alternating, as the study did
                    n += 1
                    mbps, cpu, pps = one_run(build, link, gateway, mode, ids, opts.flows,
                                             opts.seconds, n, opts.tcp_cc, lanes,
                                             opts.tcp_lanes)
                    figures[label].append(mbps)
                    per_packet = sum(cpu.values()) / pps * 1e6 if pps > 0 else 0.0
                    costs[label].append(per_packet)
                    print(f"  {name} run {run + 1} {label}"
                          f"{f' (lanes {lanes})' if lanes else ''}: {mbps:.1f} Mbit/s; cpu % of a "
                          "core: " + ", ".join(f"{k} {v * 100:.0f}" for k, v in cpu.items()) +
                          f"; {per_packet:.1f} us per inner packet", flush=True)
            results[name] = {m: statistics.median(v) for m, v in figures.items()}
            us_per_packet[name] = {m: statistics.median(v) for m, v in costs.items()}
        finally:
            if gateway:
                gateway.stop()
            link.close()
        print(f"link: {link.method}, TCP congestion control {opts.tcp_cc}", flush=True)
    print("\nthroughput at the receiver, Mbit/s (median of runs; ratio to UDP)")
    shown = [c for c in columns] + [m for m in MODES if m not in modes]
    print(f"{'condition':10} " + " ".join(f"{m:>20}" for m in shown))
    for name, row in results.items():
        texts = [f"{row.get(m, 0):9.1f} ({ratio(row.get(m, 0), row.get('udp', 0)):5.2f}x)"
                 for m in shown]
        print(f"{name:10} " + " ".join(f"{c:>20}" for c in texts))
    print("\nCPU of every process on the path (gateway, both peers, link emulator, inner "
          "flows) per inner packet, us (median of runs)")
    for name, row in us_per_packet.items():
        print(f"{name:10} " + " ".join(f"{row.get(m, 0):>20.1f}" for m in shown))
    if len(lane_counts) > 1:
        for name, row in results.items():
            pairs = [f"{m}/l{k}_vs_l{lane_counts[0]}="
                     f"{ratio(row.get(f'{m}/l{k}', 0), row.get(f'{m}/l{lane_counts[0]}', 0)):.2f}"
                     for m in modes if m in SCTP_MODES for k in lane_counts[1:]]
            print(f"lanes {name} " + " ".join(pairs))

    def get(name, mode):
        return results.get(name, {}).get(column(mode), 0.0)

    print(f"tunnel rtt71_sctp_vs_tcp={ratio(get('rtt71', 'ordered'), get('rtt71', 'tcp')):.2f} "
          f"rtt71_unordered_vs_ordered="
          f"{ratio(get('rtt71', 'unordered'), get('rtt71', 'ordered')):.2f} "
          f"rtt7_sctp_vs_udp={ratio(get('rtt7', 'ordered'), get('rtt7', 'udp')):.2f} "
          f"loss1_sctp_vs_tcp={ratio(get('loss1', 'ordered'), get('loss1', 'tcp')):.2f} "
          f"lanes={last_lanes} tcp_lanes={opts.tcp_lanes}")
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
