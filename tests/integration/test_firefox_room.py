"""Firefox (Debian's firefox-esr, headless, fake camera) in rooms, on the
room demo page (web/room.html), which POSTs its getStats rows to a
collector the test runs (firefox.py: there is no WebDriver here).

- Firefox publishes, a Firefox viewer decodes its video;
- mixed: a Chromium publisher to a Firefox viewer, and the reverse;
- a Firefox three-layer simulcast publisher: a viewer with room for `h`
  is put on `h` automatically (Firefox pads its low layer with RTX
  retransmissions of old packets: counted as bitrate, they made `l` look
  like the top layer), and 20 pinned layer switches each resume decoding
  within 0.5 s without the viewer asking for a keyframe (the room API
  counts its PLIs and FIRs; a gap in VP8 picture ids made Firefox stop
  decoding for about 3 s and then ask for one)."""
import asyncio
import time

import pytest

from chromium import Chromium, chromium_path
from firefox import Firefox, StatsCollector, firefox_path, room_page
from test_room import api

pytestmark = pytest.mark.skipif(firefox_path() is None, reason="firefox-esr not installed")
needs_chromium = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

DECODED = "in video frames decoded"


def decoded(stats):
    return stats.get(DECODED, 0) or 0


async def wait_api(gateway, path, predicate, timeout, interval=0.05):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    body = None
    while loop.time() < deadline:
        status, body = api(gateway, "GET", path)
        if status == 200 and predicate(body):
            return body
        await asyncio.sleep(interval)
    return body


async def published(collector, name, browser, layers=()):
    """Waits for the Firefox publisher `name` to send video (each rid of
    `layers` too)."""
    stats = await collector.wait_for(
        name, lambda s: "error" in s or (s.get("out video packets", 0) > 20 and all(
            s.get(f"out video {rid} packets", 0) > 0 for rid in layers)), 60)
    assert "error" not in stats and stats.get("out video packets", 0) > 20, \
        f"the Firefox publisher sent no video: {stats} {browser.output()}"


async def firefox_decodes(collector, name, frames=30, timeout=60):
    stats = await collector.wait_for(
        name, lambda s: "error" in s or (decoded(s) > frames and s.get("in audio bytes", 0) > 0),
        timeout)
    assert decoded(stats) > frames, f"the Firefox viewer decoded {decoded(stats)} frames: {stats}"
    before = decoded(stats)
    stats = await collector.wait_for(name, lambda s: decoded(s) > before + 20, 10)
    assert decoded(stats) > before + 20, f"the Firefox viewer stopped decoding: {stats}"


def test_firefox_publishes_firefox_watches(gateway):
    async def scenario():
        collector = await StatsCollector().start()
        publisher = Firefox(room_page(gateway, collector, "pub", "ff", "publish"))
        viewer = None
        try:
            await published(collector, "pub", publisher)
            viewer = Firefox(room_page(gateway, collector, "view", "ff", "watch"))
            await firefox_decodes(collector, "view")
        finally:
            for browser in (viewer, publisher):
                if browser:
                    browser.close()
            await collector.stop()

    asyncio.run(scenario())


@needs_chromium
def test_chromium_publishes_firefox_watches(gateway):
    async def scenario():
        collector = await StatsCollector().start()
        publisher = Chromium(gateway.base + "/room.html?room=cf&publish=1")
        viewer = None
        try:
            await publisher.attach()
            sent = await publisher.wait_for(
                "window.moatRoom && window.moatRoom.stats &&"
                " window.moatRoom.stats['out video packets'] > 20", 20)
            assert sent, f"Chromium sent no video: {await publisher.evaluate('window.moatRoom.stats')}"
            viewer = Firefox(room_page(gateway, collector, "view", "cf", "watch"))
            await firefox_decodes(collector, "view")
        finally:
            if viewer:
                viewer.close()
            await publisher.close_async()
            await collector.stop()

    asyncio.run(scenario())


@needs_chromium
def test_firefox_publishes_chromium_watches(gateway):
    async def scenario():
        collector = await StatsCollector().start()
        publisher = Firefox(room_page(gateway, collector, "pub", "fc", "publish"))
        viewer = None
        try:
            await published(collector, "pub", publisher)
            viewer = Chromium(gateway.base + "/room.html?room=fc&watch=1")
            await viewer.attach()
            stats = "window.moatRoom.stats"
            got = await viewer.wait_for(
                f"window.moatRoom && {stats} && {stats}['{DECODED}'] > 60 && {stats}['in audio bytes'] > 0", 30)
            assert got, f"the Chromium viewer decoded nothing: {await viewer.evaluate(stats)}"
        finally:
            if viewer:
                await viewer.close_async()
            publisher.close()
            await collector.stop()

    asyncio.run(scenario())


def sending(room):
    pubs = room.get("publishers", [])
    layers = pubs[0].get("layers", []) if pubs else []
    return {x["rid"]: x for x in layers if x["bitrate_bps"] > 0}


# From h through every transition between the three layers, 20 switches.
SWITCHES = ["l", "m", "h", "m", "l", "h"] * 3 + ["l", "m"]


# 20 switches, each with a 0.5 s deadline to resume decoding: no test beside
# it (the file's other tests, which judge decoding only, run two at a time).
@pytest.mark.alone
def test_firefox_simulcast_auto_and_pinned_switches(gateway):
    async def scenario():
        collector = await StatsCollector().start()
        publisher = Firefox(room_page(gateway, collector, "pub", "fsim", "publish",
                                      simulcast="1"))
        viewer = None
        try:
            await published(collector, "pub", publisher, layers="hml")
            room = await wait_api(gateway, "/api/rooms/fsim",
                                  lambda b: set(sending(b)) == {"h", "m", "l"}, 30, 0.5)
            assert set(sending(room)) == {"h", "m", "l"}, room
            # The viewer sends no REMB: its receive-side estimator reads a
            # loaded test machine's scheduling delay as congestion (REMBs of
            # 60 kbit/s were seen), and a REMB caps the room's estimate. Its
            # estimate is then the room's own, from its receiver reports.
            viewer = Firefox(room_page(gateway, collector, "view", "fsim", "watch"),
                             prefs={"media.navigator.video.use_remb": False})
            await firefox_decodes(collector, "view")

            # Room for h (loopback): the automatic choice ends on h, and
            # the layers' bitrates are media, not padding (h > m > l).
            room = await wait_api(gateway, "/api/rooms/fsim",
                                  lambda b: b["subscribers"] and
                                  b["subscribers"][0]["layer"]["current"] == "h", 30, 0.5)
            sub = room["subscribers"][0]
            assert sub["layer"] == {**sub["layer"], "current": "h", "mode": "auto"}, \
                (sub, room["publishers"][0])
            rates = {rid: x["bitrate_bps"] for rid, x in sending(room).items()}
            assert rates["h"] > rates["m"] > rates["l"], rates

            base = f"/api/rooms/fsim/subscribers/{sub['id']}/layer"
            requests_before = sub["keyframe_requests"]
            plis_before = collector.stats("view").get("in video pli", 0)
            firs_before = collector.stats("view").get("in video fir", 0)
            late, times = [], []
            for i, rid in enumerate(SWITCHES):
                status, body = api(gateway, "POST", base, {"rid": rid})
                assert status == 200 and body["mode"] == "pinned", body
                room = await wait_api(gateway, "/api/rooms/fsim",
                                      lambda b: b["subscribers"][0]["layer"]["current"] == rid, 10)
                assert room["subscribers"][0]["layer"]["current"] == rid, (i, rid, room)
                switched = time.time()
                # Decoding goes on within 0.5 s: the viewer's first report
                # read from 0.1 s after the switch on (they are read every
                # 100 ms, so frames of the old layer are in it) is followed
                # by one with more frames by 0.6 s after the switch. On a
                # loaded machine whose viewer decodes less than 4 frames a
                # second (as its reports of the last second say), by two of
                # its frame intervals.
                before = [e for e in collector.history.get("view", [])
                          if switched - 1.1 <= e[0] <= switched]
                rate = ((decoded(before[-1][1]) - decoded(before[0][1])) /
                        (before[-1][0] - before[0][0])) if len(before) > 1 and \
                    before[-1][0] > before[0][0] else 0
                bound = max(0.6, 2 / rate) if rate > 0 else 0.6
                first = await collector.report_after("view", switched + 0.1, 3)
                assert first, "the viewer stopped reporting"
                at = decoded(first[1])
                resumed = None
                while True:
                    entry = await collector.report_after("view", first[0] + 0.001, 3)
                    if not entry or entry[0] > switched + bound:
                        break
                    if decoded(entry[1]) > at:
                        resumed = entry[0] - switched
                        break
                    first = entry
                times.append((round(resumed, 2) if resumed is not None else None,
                              round(bound, 2)))
                if resumed is None:
                    late.append((i, rid, round(bound, 2), collector.stats("view")))
                stats = await collector.wait_for("view", lambda s: decoded(s) >= at + 3, 3)
                assert decoded(stats) >= at + 3, ("stopped decoding", i, rid, stats)
                # The new layer's size (Firefox scales a layer down under CPU
                # load: as its keyframes say now) reaches the viewer.
                layers = {x["rid"]: x for x in room["publishers"][0]["layers"]}
                width = layers[rid].get("width")
                if width:
                    # The layer's width when the switch was seen, or as its
                    # keyframes say now (Firefox may scale it meanwhile).
                    def layer_widths():
                        status, now = api(gateway, "GET", "/api/rooms/fsim")
                        if status != 200 or not now.get("publishers"):
                            return {width}
                        current = {x["rid"]: x for x in now["publishers"][0]["layers"]}
                        return {width, current.get(rid, {}).get("width")}
                    stats = await collector.wait_for(
                        "view", lambda s: s.get("in video width") in layer_widths(), 3)
                    assert stats.get("in video width") in layer_widths(), (i, rid, layers, stats)
            print(f"resumed after each switch (s, bound s): {times}")
            assert not late, f"switches that did not resume decoding within 0.5 s: {late}"
            room = await wait_api(gateway, "/api/rooms/fsim", lambda b: True, 1)
            requests = room["subscribers"][0]["keyframe_requests"] - requests_before
            stats = collector.stats("view")
            assert requests == 0, f"the viewer asked for {requests} keyframes: {room} {stats}"
            assert stats.get("in video pli", 0) == plis_before, stats
            assert stats.get("in video fir", 0) == firs_before, stats
        finally:
            for browser in (viewer, publisher):
                if browser:
                    browser.close()
            await collector.stop()

    asyncio.run(scenario())
