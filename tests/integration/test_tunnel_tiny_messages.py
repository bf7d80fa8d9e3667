"""A tunnel peer sending tiny packets as fast as it can (16-byte UDP
datagrams into its TUN device: 44-byte data-channel messages relayed to
the other peer). usrsctp refuses sends at its chunk limit with most of the
send buffer free; the association used to report writable at once, the
relay's retry was refused again, and the gateway's worker looped inside
one association's delivery for ever: /healthz said the worker had not run,
every session on it died, and SIGTERM could not stop the gateway. Now the
worker keeps running through the blast and after it, the tunnel carries a
ping, and the gateway stops cleanly. Not a `hostile` file: the ASan build
is too slow to fill usrsctp's chunk limit, so only the release build shows
the loop (unit sctp_transfer /chunk-limit-refusal-does-not-spin shows it
under ASan)."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tunnel_net import TUNNEL_ADDRESSES
from test_tunnel import Tunnel

HERE = Path(__file__).resolve().parent
BLAST_S = 8


def healthz(gateway):
    try:
        return gateway.get("/healthz")
    except Exception as e:  # 503 from a stalled worker, or no answer
        return repr(e)


@pytest.mark.serial  # the blast takes the CPU from tests running beside it
@pytest.mark.alone
def test_tiny_messages_at_full_speed_do_not_wedge_the_worker():
    t = Tunnel("ordered", lanes=1, gateway_args=("--workers", "1"))
    try:
        blast = t.net.popen(0, sys.executable, str(HERE / "tunnel_traffic.py"), "blast",
                            TUNNEL_ADDRESSES[1], "9999", str(BLAST_S), "16",
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(BLAST_S / 2)
        during = healthz(t.gateway)
        out, err = blast.communicate(timeout=BLAST_S + 30)
        assert blast.returncode == 0, err
        assert int(out.strip()) > 100_000  # the blast was one
        time.sleep(3)
        after = healthz(t.gateway)
        assert '"ok"' in during or "ok" == during.strip(), during
        assert '"ok"' in after or "ok" == after.strip(), after
        assert t.ping(3) == 3
        assert t.gateway.stop() == 0
    finally:
        t.close()
