"""Whose floods switch a worker's detector on. The worker detector is for
floods spread over many transports, none of which sees enough alone; every
failed HMAC of every transport fed it, so one peer sending forged SRTP on
its own session (600 a second, its own detector already enforcing against
it) switched its whole worker to enforcing, every other session on it
with. Now a transport's forgeries feed the worker only while its own
detector is off. So do its datagrams, as the worker's ingress rate: at 8000
a second the rate alone switched the worker on ("socket detector on
(ingress_rate)") after the failures no longer did."""
import json
import subprocess
import time

import pytest

from conftest import ROOT, Gateway

FLOOD = ROOT / "build" / "tools" / "moat-flood"


@pytest.mark.parametrize("rate", [600, 8000])
def test_one_peer_forging_on_its_own_session_does_not_switch_its_worker(tmp_path, rate):
    gw = Gateway(workers=1)
    try:
        victim = subprocess.Popen(
            [str(FLOOD), "--whip", gw.base + "/whip/echo", "--media", "g711", "--duration", "7",
             "--json", "--quiet"], stdout=subprocess.PIPE, text=True)
        time.sleep(1.5)
        attacker = subprocess.run(
            [str(FLOOD), "--whip", gw.base + "/whip/echo", "--media", "g711", "--batch", "64",
             "--attack", f"forged-own:{rate}", "--attack-after", "1", "--duration", "4", "--json",
             "--quiet"], capture_output=True, text=True, timeout=60)
        assert attacker.returncode == 0, attacker.stderr
        sent = json.loads(attacker.stdout)["sent"]["forged-own"]
        assert sent > 1000, sent
        assert gw.metric("moat_detector_switches_on_total") >= 1  # the attacker's own
        assert gw.metric("moat_detector_worker_switches_on_total") == 0
        assert gw.drops("auth") > 0.5 * sent or gw.drops("budget") > 0
        out, _ = victim.communicate(timeout=30)
        session = json.loads(out)["sessions"][0]
        assert session["received"] >= 0.95 * session["sent"] > 0, session
    finally:
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"
