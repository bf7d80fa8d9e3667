"""bench/sfu_quality: what a viewer sees through an SFU on a bad network,
Moat's room plugin against Debian's Janus 1.1.2 videoroom in the same run.

Harness (the one tests/integration/test_room_bwe_chromium.py uses, imported
from there): headless Chromium publishes its fake camera with three VP8
simulcast layers (rid h 1280x720, m 640x360, l 320x180) and audio, next to
the SFU in the server namespace of the repo's TUN link emulator; a Chromium
viewer watches from the client namespace, on the far side of the emulator.
Moat: web/room.html (WHIP /whip/room/q, WHEP /whep/room/q). Janus: its HTTP
API from bench/sfu_quality/janus.html (served from the server namespace by
python's http.server), the same layers and codec; the subscriber leaves
substream and temporal unset. That is as far as Janus 1.1.2's API goes: its
videoroom switches a subscriber's substream only on request (default the
highest) or when the publisher stops sending the chosen one (`fallback`),
never from the subscriber's bandwidth, so a Janus viewer keeps the highest
layer through the bandwidth step.

Conditions, each with a fresh link, SFU and browsers:
  clean   no loss, 40 ms RTT
  loss2   2 % random loss each way, 100 ms RTT
  loss5   5 % random loss each way, 100 ms RTT
  step    a 3 Mbit/s bottleneck toward the viewer (250 ms drop-tail queue,
          40 ms RTT) that drops to 400 kbit/s for 10 s and comes back
For each, from the viewer's getStats (inbound-rtp video) over the window
(after a warm-up; for the step from just before the drop to the end):
frames decoded per second, freezeCount, totalFreezesDuration, received
kbit/s, the median frameWidth and how often the decoded width changed
(sw, sampled every 0.5 s, 0.2 s in the step). Step: seconds from the
drop until the viewer decodes at most the width of the layer that fits 400 kbit/s (the
largest whose bitrate, measured at the publisher just before the drop, is
at most 80 % of it: the rest is audio and overhead; the smaller of its
sent rate and encoder target, see PUBLISHER_RIDS; Chromium's fake camera
encodes cheaply, so that can be m rather than l) and from the recovery
until it is back to the width held before the drop ("none": not within the
10 s low or the 15 s that follow; "-": no step down to recover from).

Last line:
  sfu_quality freeze_s_moat=<sum over conditions> freeze_s_janus=<same>
  ratio=<janus/moat> adapt_down_s=<moat> adapt_up_s=<moat>
ratio is inf when Moat froze 0 s and Janus more, 1.00 when both froze 0 s;
na where a side was not measured (--no-janus, not root, or a run that
failed: the table says which). Janus and Chromium come with make deps: as
root, either one missing (Janus without --no-janus) fails the bench, as a
failed run does. adapt_*: na when the step was not run (quick
mode or Moat did not step down), none when Moat did not adapt within the
bound.

MOAT_BENCH_QUICK=1 (`make bench-quick`): the clean condition only, a 5 s
window, Moat then Janus; the figures mean nothing. Progress goes to stderr.
Every process, namespace and TUN device is stopped or removed on exit
(SIGTERM included); every wait is bounded. The machine is shared: browsers,
SFU and emulator compete for its cores, so figures are noisy."""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from chromium import chromium_path  # noqa: E402
from conftest import Gateway  # noqa: E402
from netns import NetnsPair  # noqa: E402
from netns_bench import janus_missing, stop, write_janus_config  # noqa: E402
from test_datachannel_lossy import TunLink  # noqa: E402
from test_room_bwe_chromium import (HIGH_BPS, LOW_BPS, VIDEO_IN, BottleneckLink,  # noqa: E402
                                    PipeChromium)

QUICK = os.environ.get("MOAT_BENCH_QUICK", "0") not in ("", "0")
WARM_S = 1.0 if QUICK else 10.0
WINDOW_S = 5.0 if QUICK else 20.0
LOW_HOLD_S = 10.0
UP_WAIT_S = 15.0
L_WIDTH = 320
FIT_SHARE = 0.8  # of LOW_BPS a layer may take and "fit" (audio, overhead)
JANUS_API_PORT = 8088  # netns_bench's Janus configuration
PAGE_PORT = 8090

# What the viewer receives (either page: both expose window.moatRoom.pc):
# the bandwidth test's getStats reader.
VIEWER_STATS = VIDEO_IN

# Each simulcast layer the publisher sends: rid -> [frameWidth, bytes sent
# less retransmissions, t, the encoder's targetBitrate]. Chromium's bytesSent
# on its lowest layer includes its probing padding (1.6 Mbit/s of it on a
# layer whose target is 150 kbit/s), and the fake camera encodes far below
# target on the others: a layer's rate is taken as the smaller of the two.
PUBLISHER_RIDS = """(async () => {
  const pc = window.moatRoom && window.moatRoom.pc;
  if (!pc) return {};
  const report = await pc.getStats();
  const o = {};
  report.forEach((s) => {
    if (s.type === 'outbound-rtp' && s.kind === 'video' && s.rid)
      o[s.rid] = [s.frameWidth || 0, (s.bytesSent || 0) - (s.retransmittedBytesSent || 0),
                  performance.now() / 1000, s.targetBitrate || 0];
  });
  return o;
})()"""

# How many of the publisher's simulcast layers are being sent.
PUBLISHER_LAYERS = """(async () => {
  const pc = window.moatRoom && window.moatRoom.pc;
  if (!pc) return 0;
  const report = await pc.getStats();
  let n = 0;
  report.forEach((s) => {
    if (s.type === 'outbound-rtp' && s.kind === 'video' && (s.framesEncoded || 0) > 0) n++;
  });
  return n;
})()"""

JANUS_NOTE = ("janus: substream/temporal left to Janus (its default, the highest); "
              "Janus 1.1.2 does not switch on the subscriber's bandwidth")


def progress(text):
    print(f"[sfu_quality {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def ns_curl_ok(netns, url):
    result = subprocess.run(["ip", "netns", "exec", netns, "curl", "-sf", "-o", "/dev/null",
                             "--max-time", "2", url], capture_output=True)
    return result.returncode == 0


def wait_ns_http(netns, url, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ns_curl_ok(netns, url):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up in {netns}")


class MoatSfu:
    name = "moat"

    def __init__(self, build):
        self.binary = build / "gateway" / "moat"
        self.gateway = None

    def start(self, link):
        self.gateway = Gateway(extra_args=["--log-level", "warn"], netns=link.server,
                               address=NetnsPair.SERVER, binary=self.binary)
        base = self.gateway.base + "/room.html?room=q"
        return base + "&publish=1&simulcast=1", base + "&watch=1"

    def stop(self):
        if self.gateway:
            try:
                m = self.gateway.metrics()
                progress(f"  moat: {m.get('moat_nack_retransmissions_total', 0):.0f} "
                         f"retransmissions, {m.get('moat_nack_retransmission_copies_total', 0):.0f}"
                         f" second copies, {m.get('moat_feedback_repairs_total', 0):.0f} repairs of "
                         "losses transport-cc feedback reported before a NACK, "
                         f"{m.get('moat_playout_delays_asked_total', 0):.0f} playout delays "
                         "asked (a viewer's NACKs showed a lossy path)")
            except OSError:
                pass
            self.gateway.stop()
            self.gateway = None


class JanusSfu:
    name = "janus"

    def __init__(self):
        self.folder = self.janus = self.pages = None

    def start(self, link):
        self.folder = Path(tempfile.mkdtemp(prefix="sfuq-janus-"))
        write_janus_config(self.folder, "videoroom", "20000-40000",
                           general_extra="    session_timeout = 0\n")
        self.log = open(self.folder / "janus.log", "w")
        self.janus = subprocess.Popen(
            ["ip", "netns", "exec", link.server, "janus", "-C", str(self.folder / "janus.jcfg"),
             "-F", str(self.folder)], stdout=self.log, stderr=subprocess.STDOUT)
        self.pages = subprocess.Popen(
            ["ip", "netns", "exec", link.server, sys.executable, "-m", "http.server",
             str(PAGE_PORT), "--bind", NetnsPair.SERVER, "--directory", str(HERE)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        api = f"http://{NetnsPair.SERVER}:{JANUS_API_PORT}/janus"
        wait_ns_http(link.server, api + "/info")
        wait_ns_http(link.server, f"http://{NetnsPair.SERVER}:{PAGE_PORT}/janus.html")
        time.sleep(0.5)  # its plugins finish loading after the API answers
        page = f"http://{NetnsPair.SERVER}:{PAGE_PORT}/janus.html?janus={api}"
        return page + "&publish=1", page + "&watch=1"

    def stop(self):
        for process in (self.pages, self.janus):
            if process:
                stop(process)
        self.pages = self.janus = None
        if self.folder:
            self.log.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def make_link(condition):
    if condition == "clean":
        return TunLink(0.020, 0.0)
    if condition == "loss2":
        return TunLink(0.050, 0.02)
    if condition == "loss5":
        return TunLink(0.050, 0.05)
    return BottleneckLink(HIGH_BPS)


def page_error(browser):
    return browser.evaluate("window.moatRoom && window.moatRoom.error")


def bring_up(sfu, link):
    """Starts the SFU, the publisher (until it sends its layers) and the
    viewer (until it decodes): the two browsers."""
    publish_url, watch_url = sfu.start(link)
    publisher = PipeChromium(link.server, publish_url)
    viewer = None
    try:
        publisher.attach()
        want = 1 if QUICK else 3
        layers = publisher.wait_for(f"{PUBLISHER_LAYERS}.then((n) => n >= {want} ? n : 0)", 40)
        if not layers:
            raise RuntimeError(f"publisher sends {publisher.evaluate(PUBLISHER_LAYERS)} layers "
                               f"after 40 s (page error: {page_error(publisher)})")
        progress(f"  publisher sends {layers} layers")
        viewer = PipeChromium(link.client, watch_url)
        viewer.attach()
        need = 0 if QUICK else 30
        if not viewer.wait_for(f"{VIEWER_STATS}.then((v) => v && v.frames > {need})", 30):
            raise RuntimeError(f"viewer decodes nothing after 30 s: "
                               f"{viewer.evaluate(VIEWER_STATS)} "
                               f"(page error: {page_error(viewer)})")
        return publisher, viewer
    except Exception:
        for browser in (viewer, publisher):
            if browser:
                browser.close()
        raise


def delta(a, b, widths):
    dt = max(b["t"] - a["t"], 1e-3)
    return {"fps": (b["frames"] - a["frames"]) / dt, "freezes": b["freezes"] - a["freezes"],
            "freeze_s": b["freeze_s"] - a["freeze_s"],
            "kbps": (b["bytes"] - a["bytes"]) * 8 / dt / 1000,
            "width": statistics.median(widths) if widths else 0, "window_s": dt,
            "switches": sum(1 for x, y in zip(widths, widths[1:]) if x != y)}


def sample_for(viewer, seconds, widths, until=None, interval=0.2):
    """Samples the viewer's width for `seconds`; with `until(width)`, the
    seconds from the start to the first width that satisfies it (None)."""
    start = time.monotonic()
    hit = None
    while time.monotonic() - start < seconds:
        v = viewer.evaluate(VIEWER_STATS)
        if v:
            widths.append(v["width"])
            if until and hit is None and until(v["width"]):
                hit = time.monotonic() - start
        time.sleep(interval)
    return hit


def set_window(seconds):
    global WINDOW_S
    WINDOW_S = seconds


def measure_steady(viewer):
    time.sleep(WARM_S)
    widths = []
    a = viewer.evaluate(VIEWER_STATS)
    sample_for(viewer, WINDOW_S, widths, interval=0.5)
    return delta(a, viewer.evaluate(VIEWER_STATS), widths)


def fitting_width(publisher):
    """The width of the largest layer that fits the low rate: its rate at
    the publisher (over 2 s; PUBLISHER_RIDS) at most FIT_SHARE of LOW_BPS, the rest left
    for audio and packet overhead; the smallest layer when none does. Also
    the layers, rid -> (width, kbit/s), for the table."""
    a = publisher.evaluate(PUBLISHER_RIDS)
    time.sleep(2.0)
    b = publisher.evaluate(PUBLISHER_RIDS)
    layers = {}
    for rid, (width, sent, t, target) in b.items():
        if rid in a and t > a[rid][2] and width > 0:
            sent_bps = (sent - a[rid][1]) * 8 / (t - a[rid][2])
            layers[rid] = (width, min(sent_bps, target or sent_bps) / 1000)
    fits = [w for w, kbps in layers.values() if kbps * 1000 <= FIT_SHARE * LOW_BPS]
    smallest = min((w for w, _ in layers.values()), default=L_WIDTH)
    return (max(fits) if fits else smallest), layers


def measure_step(publisher, viewer, link):
    # Settled at 3 Mbit/s: the decoded width unchanged for 3 s (at most 25 s).
    settled, deadline = 0, time.monotonic() + 25
    while time.monotonic() < deadline:
        widths = []
        sample_for(viewer, 3.0, widths, interval=0.25)
        if widths and min(widths) == max(widths) and widths[0] > 0:
            settled = widths[0]
            break
    settled = settled or viewer.evaluate(VIEWER_STATS)["width"]
    fit, layers = fitting_width(publisher)
    progress(f"  settled at width {settled}; publisher layers (width, kbit/s) {layers}; "
             f"width {fit} fits {LOW_BPS // 1000} kbit/s; bottleneck to {LOW_BPS // 1000} kbit/s")
    widths = []
    a = viewer.evaluate(VIEWER_STATS)
    link.rate_bps = LOW_BPS
    down_s = sample_for(viewer, LOW_HOLD_S, widths, until=lambda w: 0 < w <= fit)
    link.rate_bps = HIGH_BPS
    progress(f"  down after {down_s} s; bottleneck back to {HIGH_BPS // 1000} kbit/s")
    # Back up: only meaningful after a step down (else "-" in the table).
    up_s = sample_for(viewer, UP_WAIT_S, widths,
                      until=(lambda w: w >= settled) if down_s is not None else None)
    progress(f"  up after {up_s} s")
    result = delta(a, viewer.evaluate(VIEWER_STATS), widths)
    result.update(settled=settled, fit=fit, layers=layers, down_s=down_s, up_s=up_s)
    return result


def run_one(sfu, condition):
    link = make_link(condition)
    browsers = ()
    try:
        browsers = bring_up(sfu, link)
        publisher, viewer = browsers
        if condition == "step":
            return measure_step(publisher, viewer, link)
        return measure_steady(viewer)
    finally:
        for browser in reversed(browsers):
            browser.close()
        sfu.stop()
        link.close()


def fmt(value, spec=".2f"):
    if value is None:
        return "none"
    return format(value, spec)


def up_text(result, spec, no_down="-"):
    """The step's up_s; no_down when there was no step down to recover from."""
    return no_down if result["down_s"] is None else fmt(result["up_s"], spec)


def ratio_text(janus, moat):
    if janus is None or moat is None:
        return "na"
    if moat == 0:
        return "1.00" if janus == 0 else "inf"
    return f"{janus / moat:.2f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--conditions", default="clean" if QUICK else "clean,loss2,loss5,step")
    parser.add_argument("--no-janus", action="store_true")
    parser.add_argument("--window", type=float, default=WINDOW_S,
                        help="seconds of each steady condition's window (default %(default)s): "
                        "a freeze or two in 20 s does not separate two SFUs at 2 %% loss")
    args = parser.parse_args()
    set_window(args.window)
    build = Path(args.build)
    conditions = args.conditions.split(",")
    if os.geteuid() != 0:
        print("sfu_quality: needs root (network namespaces, TUN); not run")
        print("sfu_quality freeze_s_moat=na freeze_s_janus=na ratio=na adapt_down_s=na "
              "adapt_up_s=na")
        return 0
    missing = None
    if chromium_path() is None:
        missing = "chromium is not installed (scripts/install-deps.sh installs it)"
    elif not args.no_janus:
        missing = janus_missing()
    if missing:
        print(f"sfu_quality: {missing}")
        return 1
    # SIGTERM unwinds like Ctrl-C: every finally below runs (browsers, SFU, link).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sfus = [MoatSfu(build)]
    if not args.no_janus:
        sfus.append(JanusSfu())
    started = time.monotonic()
    progress(f"load average {os.getloadavg()[0]:.1f} (shared machine: figures are noisy); "
             f"conditions {','.join(conditions)}")
    results, failed = {}, False
    for condition in conditions:
        for sfu in sfus:
            progress(f"{condition} / {sfu.name}")
            t0 = time.monotonic()
            try:
                results[(sfu.name, condition)] = run_one(sfu, condition)
            except Exception as error:  # reported in the table; the run goes on
                failed = True
                results[(sfu.name, condition)] = {"error": str(error)[:200]}
            progress(f"  {results[(sfu.name, condition)]} ({time.monotonic() - t0:.0f} s)")
    print(f"sfu_quality: viewer getStats (inbound-rtp video), {WINDOW_S:.0f} s windows "
          f"after {WARM_S:.0f} s warm-up; bench took {time.monotonic() - started:.0f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'condition':9} {'sfu':6} {'fps':>6} {'freezes':>7} {'freeze_s':>8} {'kbit/s':>7} "
          f"{'width':>6} {'sw':>3} {'from':>5} {'fit':>5} {'down_s':>6} {'up_s':>6}")
    sums, notes = {}, []
    for condition in conditions:
        for sfu in sfus:
            r = results[(sfu.name, condition)]
            if "error" in r:
                print(f"{condition:9} {sfu.name:6} FAILED: {r['error']}")
                sums[sfu.name] = None
                continue
            if sums.get(sfu.name, 0) is not None:
                sums[sfu.name] = sums.get(sfu.name, 0) + r["freeze_s"]
            step = condition == "step"
            if step:
                layers = ", ".join(f"{rid} {w}w {kbps:.0f} kbit/s"
                                   for rid, (w, kbps) in sorted(r["layers"].items()))
                notes.append(f"step/{sfu.name}: publisher layers {layers}")
            print(f"{condition:9} {sfu.name:6} {r['fps']:6.1f} {r['freezes']:7d} "
                  f"{r['freeze_s']:8.2f} {r['kbps']:7.0f} {r['width']:6.0f} {r['switches']:3d} "
                  f"{r['settled'] if step else '-':>5} {r['fit'] if step else '-':>5} "
                  f"{fmt(r['down_s'], '.1f') if step else '-':>6} "
                  f"{up_text(r, '.1f') if step else '-':>6}")
    for note in notes:
        print(note)
    if any(c == "step" for c in conditions):
        print(f"step: from = width before the drop, fit = width of the largest layer whose "
              f"bitrate at the publisher is at most {FIT_SHARE:.0%} of {LOW_BPS // 1000} "
              f"kbit/s; down_s until the viewer decodes at most `fit`, up_s until back to "
              f"`from` (- without a step down)")
    if len(sfus) > 1:
        print(JANUS_NOTE)
    else:
        print("janus: not run (--no-janus)")
    moat, janus = sums.get("moat"), sums.get("janus")
    step = results.get(("moat", "step"))
    if step is None or "error" in step:
        down = up = "na"
    else:
        down, up = fmt(step["down_s"]), up_text(step, ".2f", "na")
    print(f"sfu_quality freeze_s_moat={fmt(moat) if moat is not None else 'na'} "
          f"freeze_s_janus={fmt(janus) if janus is not None else 'na'} "
          f"ratio={ratio_text(janus, moat)} adapt_down_s={down} adapt_up_s={up}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
