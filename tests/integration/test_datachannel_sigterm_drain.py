"""SIGTERM while a data channel drains toward a slow peer (the TUN link
emulator's 800 kbit/s bottleneck, as test_datachannel_slow_drain.py: about
a megabyte of echoes queued, ten seconds of that link). The gateway waits
6 s for drains; a session still draining then is cut with an SCTP ABORT,
so the peer learns at once that echoes the gateway accepted are lost, and
the session ends as any other (plugin hang-up, "ended" line). Before, it
was freed unannounced: the peer noticed only by its consent timeout, 35 to
40 s later. A second signal during that wait ends it at once; before, it
was ignored (the main loop, whose signal sources took the first, no longer
ran) and the gateway still took the whole 6 s."""
import json
import subprocess
import time

from conftest import ROOT, Gateway
from netns import NetnsPair
from test_datachannel_slow_drain import COUNT, RATE_BPS, SIZE, WINDOW
from test_room_bwe_chromium import BottleneckLink

PEER_WAIT_S = 20  # closure after SIGTERM; the consent timeout is longer


def sigterm_during_drain(second_after):
    """(peer result, gateway exit time after SIGTERM, exit status, log)."""
    link = BottleneckLink(RATE_BPS)
    gateway = None
    try:
        gateway = Gateway(netns=link.server, address=NetnsPair.SERVER, workers=1)
        # `ip netns exec` execs moat: the pid is the gateway's.
        peer = subprocess.Popen(
            ["ip", "netns", "exec", link.client, str(ROOT / ".venv" / "bin" / "python"),
             str(ROOT / "tests" / "integration" / "datachannel_sigterm_peer.py"),
             gateway.base, str(gateway.process.pid), str(COUNT), str(SIZE), str(WINDOW),
             str(second_after), str(PEER_WAIT_S)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=ROOT / "tests" / "integration")
        deadline = time.monotonic() + 150
        while gateway.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        exited_at = time.monotonic()
        out, err = peer.communicate(timeout=60)
        assert peer.returncode == 0, err[-3000:]
        result = json.loads(out.strip().splitlines()[-1])
        status = gateway.stop()
        return result, exited_at - result["sigterm_at"], status, gateway.log_text()
    finally:
        if gateway and gateway.process.poll() is None:
            gateway.process.kill()
        link.close()


def test_sigterm_cuts_a_long_drain_with_an_abort():
    result, exit_after, status, log = sigterm_during_drain(-1)
    summary = f"{result}; exit {status} after {exit_after:.2f} s"
    print(summary)
    # The drain really outlived the 6 s wait.
    assert result["received"] < COUNT, summary
    assert status == 0, summary
    assert 5.5 < exit_after < 9, summary
    # The ABORT reached the peer soon after the 6 s, not its consent timeout.
    assert result["closed"] and result["closed_after_s"] < 10, summary
    assert "ended (drain cut at shutdown)" in log, log[-3000:]
    assert "1 sessions still draining after 6 s are cut" in log, log[-3000:]


def test_a_second_signal_ends_the_drain_at_once():
    result, exit_after, status, log = sigterm_during_drain(1.0)
    summary = f"{result}; exit {status} after {exit_after:.2f} s"
    print(summary)
    assert status == 0, summary
    assert exit_after < 2.5, summary
    assert result["received"] < COUNT, summary
    assert result["closed"] and result["closed_after_s"] < 5, summary
    assert "second signal: 1 sessions still draining are cut" in log, log[-3000:]
    assert "ended (drain cut at shutdown)" in log, log[-3000:]
