"""A peer whose SCTP never answers SHUTDOWN (a broken or hostile stack that
keeps ICE consent alive) cannot hold a session its plugin closed.

Two aiortc peers join a tunnel with SCTP patched to ignore SHUTDOWN. Peer
A hangs up: its session drains (5 s without progress ends it), then the
tunnel plugin closes B's session. B's session drains too and must end
after the same bound. Before the fix a session closed by its plugin never
checked that bound (its end reason was set before the drain began), so it
stayed until usrsctp gave up on its SHUTDOWN (15 s here; as long as the
peer acknowledges data, longer)."""
import asyncio
import time

import pytest

from aiortc_peer import ignore_sctp_shutdown, whip_delete
from conftest import Gateway
from test_tunnel_lanes_hostile import TOKEN, Lane, until

pytestmark = pytest.mark.hostile

DRAIN_WITHOUT_PROGRESS_S = 5


def test_a_session_closed_by_its_plugin_ends_when_its_peer_ignores_shutdown(monkeypatch):
    ignore_sctp_shutdown(monkeypatch)
    gateway = Gateway(extra_args=["--token", TOKEN])
    base = gateway.base + "/whip/tunnel/"

    async def scenario():
        a = await Lane(f"{base}deaf").connect()
        b = await Lane(f"{base}deaf").connect()
        assert await until(lambda: gateway.metric("moat_sessions") == 2)
        hung_up = time.monotonic()
        await whip_delete(a.resource)
        # A's own drain ends on its bound, then the plugin closes B, whose
        # drain ends on the same bound.
        ended = await until(lambda: gateway.metric("moat_sessions") == 0, 30)
        took = time.monotonic() - hung_up
        for lane in (a, b):
            await lane.pc.close()
        return ended, took

    try:
        ended, took = asyncio.run(scenario())
    finally:
        assert gateway.stop() == 0
    assert ended, "the session closed by the plugin never ended"
    print(f"both sessions ended {took:.1f} s after A's hang-up")
    # Two drains' bounds, with room for a loaded machine; the old code took
    # 20 s (B's drain ran three times its bound).
    assert took < 2 * DRAIN_WITHOUT_PROGRESS_S + 4, took
    assert "ended (closed by plugin)" in gateway.log_text()
