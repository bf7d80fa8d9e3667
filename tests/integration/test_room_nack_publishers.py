"""NACKs to publishers: an aiortc publisher sends its video to a room
through a lossy link (5% of packets lost at random each way, 20 ms each
way: the TUN link emulator of test_datachannel_lossy.py), a subscriber on a
clean path (inside the gateway's namespace) records which video packets
reach it. With [room] nack_publishers on (the default), the gateway NACKs
the publisher for what it missed, aiortc retransmits, and the subscriber
misses under 0.5% of the media packets; switched off, it misses about the
link's 5%. The room API counts the NACKs and the repairs."""
import json
import subprocess

import pytest

from conftest import ROOT, Gateway
from netns import NetnsPair
from test_datachannel_lossy import TunLink, read_json_line

DELAY_S = 0.020
LOSS = 0.05
PEER = ROOT / "tests" / "integration" / "room_lossy_peer.py"
PYTHON = ROOT / ".venv" / "bin" / "python"


def peer(netns, mode, url, *extra):
    return subprocess.Popen(["ip", "netns", "exec", netns, str(PYTHON), str(PEER), mode,
                             "--url", url, "--room", "lossy", *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def leave(process):
    process.stdin.write("\n")
    process.stdin.flush()
    return read_json_line(process, 15)["delete_status"]


@pytest.mark.parametrize("nack", [True, False], ids=["nack_on", "nack_off"])
def test_publisher_losses_are_repaired_by_nacks(nack):
    link = TunLink(DELAY_S, LOSS, seed=24)
    gateway = publisher = subscriber = None
    try:
        args = [] if nack else ["--room-nack-publishers", "false"]
        gateway = Gateway(extra_args=args, netns=link.server, address=NetnsPair.SERVER)
        publisher = peer(link.client, "publish", gateway.base)
        assert "published" in read_json_line(publisher, 40)
        subscriber = peer(link.server, "subscribe", gateway.base, "--settle", "3",
                          "--seconds", "10")
        result = read_json_line(subscriber, 60)
        room = json.loads(gateway.get("/api/rooms/lossy"))
        recovery = room["publishers"][0]["recovery"]
        expected, received = result["expected"], result["received"]
        loss = 1 - received / expected
        summary = (f"nack={nack}: subscriber got {received} of {expected} video packets "
                   f"({100 * loss:.2f}% lost); recovery {recovery}; link drops {link.dropped}")
        print(summary)
        assert expected >= 200, summary
        if nack:
            assert loss < 0.005, summary
            assert recovery["nack_packets"] > 0 and recovery["repaired"] > 0, summary
        else:
            assert loss > 0.02, summary
            assert recovery["nack_packets"] == 0 and recovery["nacked"] == 0, summary
        assert leave(subscriber) == 200
        assert leave(publisher) == 200
        assert gateway.stop() == 0
    finally:
        for process in (subscriber, publisher):
            if process and process.poll() is None:
                process.kill()
                process.wait()
        if gateway:
            gateway.stop()
        link.close()
