"""Samples, every second until SIGTERM, the host's idle cores and each
thread's CPU of one process; then prints the average over the three busiest
seconds of that process (the steady state of a flood, not its setup):
  host_idle_cores=.. threads: name:cores ..
and, given the gateway's /metrics URL, its relay's ring_full drops per
second (do they come while subscribers set up, or in the steady state?).
Usage: python3 sample.py PID [METRICS_URL]"""
import os
import urllib.request
import signal
import sys
import time

pid = int(sys.argv[1])
metrics_url = sys.argv[2] if len(sys.argv) > 2 else None
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
tick = os.sysconf("SC_CLK_TCK")


def snapshot():
    with open("/proc/stat") as f:
        cpu = f.readline().split()
    idle = int(cpu[4]) + int(cpu[5])
    threads = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2:].split()
                threads[f"{name}/{tid}"] = int(fields[11]) + int(fields[12])
            except OSError:
                pass
    except OSError:
        pass
    return time.monotonic(), idle, threads


def ring_full():
    if not metrics_url:
        return 0
    try:
        with urllib.request.urlopen(metrics_url, timeout=0.5) as r:
            for line in r.read().decode().splitlines():
                if line.startswith('moat_relay_dropped_packets_total{reason="ring_full"}'):
                    return int(float(line.split()[-1]))
    except (OSError, ValueError):
        pass
    return 0


windows = []
drops = [ring_full()]
last = snapshot()
while not stop:
    time.sleep(1)
    drops.append(ring_full())
    now = snapshot()
    dt = now[0] - last[0]
    per = {k: (v - last[2].get(k, v)) / tick / dt for k, v in now[2].items()}
    windows.append(((now[1] - last[1]) / tick / dt, per))
    last = now
if metrics_url:
    print("  ring_full per second: " + " ".join(str(b - a) for a, b in zip(drops, drops[1:])),
          flush=True)
busiest = sorted(windows, key=lambda w: -sum(w[1].values()))[:3]
if not busiest:
    sys.exit(0)
idle = sum(w[0] for w in busiest) / len(busiest)
names = {}
for _, per in busiest:
    for k, v in per.items():
        names[k] = names.get(k, 0) + v / len(busiest)
top = sorted(names.items(), key=lambda kv: -kv[1])[:8]
print(f"  busiest 3 s: host_idle_cores={idle:.2f} gw_cores={sum(names.values()):.2f} threads: "
      + " ".join(f"{k.split('/')[0]}:{v:.2f}" for k, v in top), flush=True)
