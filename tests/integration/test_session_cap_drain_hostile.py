"""A session hung up with DELETE still counts against --max-sessions while it
drains its data channels, and a SIGTERM waits for that drain.

A WHIP DELETE ends the session on its worker, where an open data channel
makes it drain (up to 5 s with a peer that ignores SCTP SHUTDOWN, up to a
minute with one that keeps acknowledging slowly). Its record used to leave
the control thread's table at once, and the cap counts that table: a client
that opened and deleted sessions in a loop held any number of live
sessions past the cap (8 with --max-sessions 2, none refused). And a SIGTERM
with only such draining sessions skipped the shutdown drain and cut them.

Here aiortc peers whose SCTP ignores SHUTDOWN open a data channel on the
echo plugin, one after another, each DELETEd once its channel is open:
the third offer is refused (503 max_sessions) while two drain; once they
ended, offers are taken again."""
import asyncio
import time

import aiohttp
import pytest
from aiortc import RTCPeerConnection, RTCSessionDescription

from aiortc_peer import ignore_sctp_shutdown
from conftest import Gateway

pytestmark = pytest.mark.hostile


async def post(http, url, sdp):
    async with http.post(url, data=sdp, headers={"Content-Type": "application/sdp"}) as r:
        return r.status, await r.text(), r.headers.get("Location")


async def open_and_delete(http, base, peers):
    """A session with an open data channel, DELETEd: its status, or the
    refusal's status and body."""
    pc = RTCPeerConnection()
    peers.append(pc)  # kept alive: consent continues, SHUTDOWN ignored
    channel = pc.createDataChannel("x")
    opened = asyncio.Event()
    channel.on("open", opened.set)
    await pc.setLocalDescription(await pc.createOffer())
    status, body, location = await post(http, base + "/whip/echo", pc.localDescription.sdp)
    if status != 201:
        return status, body
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    await asyncio.wait_for(opened.wait(), 15)
    async with http.delete(base + location) as r:
        assert r.status == 200, r.status
    return status, body


def test_deleted_sessions_still_draining_count_against_the_cap(monkeypatch):
    ignore_sctp_shutdown(monkeypatch)
    gateway = Gateway(extra_args=["--max-sessions", "2", "--whip-rate-per-ip", "0"])

    async def scenario():
        peers = []
        async with aiohttp.ClientSession() as http:
            try:
                first = [await open_and_delete(http, gateway.base, peers) for _ in range(2)]
                assert [s for s, _ in first] == [201, 201], first
                # Both are draining on their worker: the cap is reached.
                third = await open_and_delete(http, gateway.base, peers)
                assert third[0] == 503 and "max_sessions" in third[1], third
                assert gateway.metric("moat_sessions_ending") == 2
                assert gateway.metric("moat_sessions") == 0
                # The drains end on their bound (5 s without progress).
                deadline = time.monotonic() + 20
                while (gateway.metric("moat_sessions_ending") > 0 and
                       time.monotonic() < deadline):
                    await asyncio.sleep(0.2)
                assert gateway.metric("moat_sessions_ending") == 0
                again = await open_and_delete(http, gateway.base, peers)
                assert again[0] == 201, again
            finally:
                for pc in peers:
                    await pc.close()

    try:
        asyncio.run(scenario())
    finally:
        assert gateway.stop() == 0


def test_sigterm_waits_for_a_drain_begun_by_delete(monkeypatch):
    ignore_sctp_shutdown(monkeypatch)
    gateway = Gateway()

    async def scenario():
        peers = []
        try:
            async with aiohttp.ClientSession() as http:
                status, body = await open_and_delete(http, gateway.base, peers)
            assert status == 201, body
            # SIGTERM while the only session drains; the peer stays up.
            stopped = time.monotonic()
            code = await asyncio.get_running_loop().run_in_executor(None, gateway.stop)
            return code, time.monotonic() - stopped
        finally:
            for pc in peers:
                await pc.close()

    code, took = asyncio.run(scenario())
    assert code == 0
    # The shutdown waited for the drain (its 5 s bound without progress,
    # within the shutdown's 6 s) instead of cutting it at once.
    assert took >= 2.0, took
