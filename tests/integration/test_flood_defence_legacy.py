"""Flood defence for peers without SRTP+ (aiortc, like a browser): a forged
flood on one session's own 5-tuple and SSRC switches its detector on fast,
the forged packets are dropped by the structural stages and the budget, and
the other session on the same worker keeps its media."""
import asyncio
import json
import threading
import time

import pytest

from aiortc import RTCPeerConnection

from aiortc_peer import PatternTrack, Recorder, ToneTrack, whip_delete, whip_publish
from chromium import Chromium, chromium_path
from conftest import ARTIFACTS, Gateway
from spoof import flood


def nominated_pair(pc):
    transport = pc.getSenders()[0].transport.transport
    pair = transport._connection._nominated[1]
    return (pair.local_candidate.host, pair.local_candidate.port,
            pair.remote_candidate.host, pair.remote_candidate.port)


async def audio_loss(pc):
    report = await pc.getStats()
    for stats in report.values():
        if stats.type == "inbound-rtp" and stats.kind == "audio":
            total = stats.packetsReceived + max(stats.packetsLost, 0)
            return (max(stats.packetsLost, 0) / total if total else 1.0), stats.packetsReceived
    return 1.0, 0


def stats_of(gateway):
    return json.loads(gateway.get("/api/stats"))


async def start_call(base, video=False):
    pc = RTCPeerConnection()
    tone = ToneTrack()
    pc.addTrack(tone)
    if video:
        pc.addTrack(PatternTrack())
    recorders = {}
    pc.on("track", lambda track: recorders.__setitem__(track.kind, Recorder(track)))
    resource, _ = await whip_publish(pc, base + "/whip/echo")
    for _ in range(100):
        if pc.connectionState == "connected":
            break
        await asyncio.sleep(0.05)
    return pc, tone, resource, recorders


@pytest.fixture
def one_worker():
    gw = Gateway(workers=1)
    yield gw
    assert gw.stop() == 0


def test_forged_flood_on_a_legacy_peer(one_worker):
    gateway = one_worker

    async def scenario():
        victim, victim_tone, victim_resource, _ = await start_call(gateway.base)
        bystander, _, bystander_resource, _ = await start_call(gateway.base)
        await asyncio.sleep(2.0)  # both learn their rates
        before = stats_of(gateway)
        assert len(before["transports"]) == 2
        assert not any(t["enforcing"] for t in before["transports"])
        _, loss_received_before = await audio_loss(bystander)

        local_host, local_port, remote_host, remote_port = nominated_pair(victim)
        ssrc = victim.getSenders()[0]._ssrc
        result = {}
        thread = threading.Thread(target=lambda: result.update(sent=flood(
            local_host, local_port, remote_host, remote_port, ssrc, rate=8000, seconds=3.0)))
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(0.1)
        during = stats_of(gateway)
        await asyncio.sleep(0.5)
        loss, received = await audio_loss(bystander)
        victim_loss, _ = await audio_loss(victim)
        await whip_delete(victim_resource)
        await whip_delete(bystander_resource)
        await victim.close()
        await bystander.close()
        return result["sent"], before, during, loss, received - loss_received_before, victim_loss

    sent, before, during, loss, received, victim_loss = asyncio.run(scenario())
    assert sent > 15000
    victim = max(during["transports"], key=lambda t: sum(t["drops"].values()))
    drops = victim["drops"]
    structural = drops["budget"] + drops["index"]
    assert victim["detector"]["switches_on"] >= 1
    assert victim["detector"]["detection_delay_ms"] < 100, victim["detector"]
    # Most forged packets never reach HMAC: dropped under index or budget.
    assert structural > 0.8 * sent, drops
    assert drops["auth"] < 0.2 * sent, drops
    # The other session of the worker keeps its media.
    assert received > 150
    assert loss < 0.01, f"bystander lost {loss:.2%}"
    assert gateway.metric("moat_detector_switches_on_total") >= 1


@pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")
def test_dashboard_shows_the_detector(one_worker):
    gateway = one_worker

    async def scenario():
        pc, _, resource, _ = await start_call(gateway.base)
        await asyncio.sleep(1.5)
        browser = Chromium(gateway.base + "/dashboard.html")
        try:
            await browser.attach()
            rows = await browser.wait_for(
                "document.querySelectorAll('#transports tbody tr').length", 10)
            assert rows == 1
            local_host, local_port, remote_host, remote_port = nominated_pair(pc)
            ssrc = pc.getSenders()[0]._ssrc
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: flood(local_host, local_port, remote_host, remote_port, ssrc, 4000, 2.5))
            text = await browser.wait_for(
                "document.querySelector('#transports tbody').innerText.includes('ENFORCING') && "
                "document.querySelector('#transports tbody').innerText", 5)
            assert text and "ENFORCING" in text
            updates = await browser.evaluate("window.moatDashboard.updates")
            assert updates >= 3
            await browser.screenshot(ARTIFACTS / "dashboard.png")
        finally:
            await browser.close_async()
            await whip_delete(resource)
            await pc.close()

    asyncio.run(scenario())
    assert (ARTIFACTS / "dashboard.png").stat().st_size > 10000
