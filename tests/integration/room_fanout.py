"""Rooms made through POST /api/rooms and moat-flood's fan-out mode (one
paced publisher, N subscribers that count what they receive), for the
tests that load a room from outside."""
import json
import subprocess
import urllib.request

from conftest import ROOT

FLOOD = ROOT / "build" / "tools" / "moat-flood"


def create_room(gateway, name, **options):
    body = json.dumps({"name": name, "max_subscribers": 100, **options}).encode()
    request = urllib.request.Request(gateway.base + "/api/rooms", data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              **gateway.auth()})
    with urllib.request.urlopen(request, timeout=5) as reply:
        assert reply.status == 201


def fan_out(gateway, room, subscribers, duration, *extra):
    return subprocess.Popen(
        [str(FLOOD), "--whip", f"{gateway.base}/whip/room/{room}", "--whep",
         f"{gateway.base}/whep/room/{room}", "--subscribers", str(subscribers), "--duration",
         str(duration), "--drain", "1", "--json", "--quiet", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def report_of(process):
    out, err = process.communicate(timeout=40)
    assert process.returncode == 0, err
    return json.loads(out)
