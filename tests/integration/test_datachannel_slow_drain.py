"""A hang-up toward a slow peer loses nothing it keeps acknowledging: over
an 800 kbit/s link (the TUN link emulator's bottleneck, gateway to peer),
an aiortc peer sends 1.6 MB to the echo and hangs up (DELETE) as soon as
the gateway has every message, so about a megabyte of echoes is still
queued in the gateway: ten seconds of that link. The gateway's drain waits
as long as the peer acknowledges more (SESSION_DRAIN_TIMEOUT_US without
progress, SESSION_DRAIN_MAX_US in all); before, it cut the association
after a fixed 5 s and the rest of what it had acknowledged to the sender
was lost."""
import json
import subprocess

from conftest import ROOT, Gateway
from netns import NetnsPair
from test_room_bwe_chromium import BottleneckLink

RATE_BPS = 800_000
COUNT = 400
SIZE = 4096
WINDOW = 1536 * 1024


def test_a_slow_peer_gets_every_echo_after_hanging_up():
    link = BottleneckLink(RATE_BPS)
    gateway = None
    try:
        gateway = Gateway(netns=link.server, address=NetnsPair.SERVER, workers=1)
        peer = subprocess.run(
            ["ip", "netns", "exec", link.client, str(ROOT / ".venv" / "bin" / "python"),
             str(ROOT / "tests" / "integration" / "datachannel_peer.py"), "bulk",
             "--url", gateway.base, "--count", str(COUNT), "--size", str(SIZE),
             "--window", str(WINDOW), "--hang-up-at", "0", "--timeout", "90"],
            capture_output=True, text=True, timeout=120)
        assert peer.returncode == 0, peer.stderr[-3000:]
        result = json.loads(peer.stdout.strip().splitlines()[-1])
        session = result["sessions"][0]
        summary = f"{result}; link queue drops {link.queue_dropped}"
        print(summary)
        assert result["delete_statuses"] == [200], summary
        # The hang-up really left more than the old fixed 5 s of draining.
        assert session["closed_after_hang_up_s"] > 6, summary
        assert session["received_when_closed"] == COUNT, summary
        assert session["exact"], summary
        assert gateway.metric("moat_sessions") == 0
    finally:
        if gateway:
            gateway.stop()
        link.close()
