"""baresip to baresip through Kamailio and Moat, SDES-SRTP on one leg: the
caller (alice) insists on SRTP (mediaenc=srtp-mand, RTP/SAVP with
a=crypto), the callee (bob) speaks plain RTP/AVP; tests/voip/kamailio.cfg
asks the relay for RTP/AVP towards bob, so Moat terminates SRTP on alice's
leg. Each side sends a 440 Hz tone from a file (PCMU); each side's decoded
audio (baresip's sndfile dump) must be that tone, and Moat must have
relayed it."""
import glob
import math
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import wave
from pathlib import Path

import pytest

from conftest import ARTIFACTS, free_port
from voip_peers import kill, relay_gateway, start_kamailio, stop

pytestmark = pytest.mark.skipif(not (shutil.which("kamailio") and shutil.which("baresip")),
                                reason="needs kamailio and baresip (scripts/install-deps.sh)")


def write_tone(path, seconds=20, rate=8000):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * i / rate)))
                               for i in range(rate * seconds)))


def baresip_dir(root, name, sip_port, rtp_low, tone, account):
    d = root / name
    d.mkdir()
    (d / "config").write_text(
        f"sip_listen 127.0.0.1:{sip_port}\n"
        # Its SDP names the address it sends from (else the host's first
        # interface address, and Moat's default learning drops its RTP).
        "net_interface 127.0.0.1\n"
        f"audio_player aufile,{d}/play.wav\n"
        f"audio_source aufile,{tone}\n"
        f"audio_alert aufile,{d}/alert.wav\n"
        f"rtp_ports {rtp_low}-{rtp_low + 9}\n"
        "module_path /usr/lib/baresip/modules\n"
        "module g711.so\nmodule aufile.so\nmodule sndfile.so\nmodule srtp.so\n"
        "module_app account.so\nmodule_app menu.so\n"
        f"snd_path {d}\n")
    (d / "accounts").write_text(account + "\n")
    return d


def dominant_tone(path):
    """(seconds of audio, zero crossings per second / 2 over the last 2 s)."""
    with wave.open(path) as w:
        rate, n = w.getframerate(), w.getnframes()
        samples = struct.unpack(f"<{n}h", w.readframes(n))
    tail = samples[-2 * rate:]
    crossings = sum(1 for i in range(1, len(tail)) if (tail[i - 1] < 0) != (tail[i] < 0))
    return n / rate, crossings / 2 / (len(tail) / rate), max(abs(x) for x in tail)


def test_baresip_sdes_to_plain_through_kamailio(tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    gw, low = relay_gateway(extra_args=["--ng-delete-delay", "0"])
    ng_port = gw.ng_port
    sip_port = free_port(socket.SOCK_DGRAM)
    alice_port, bob_port = free_port(socket.SOCK_DGRAM, 2), free_port(socket.SOCK_DGRAM, 2)
    tone = tmp_path / "tone.wav"
    write_tone(tone)
    alice = baresip_dir(tmp_path, "alice", alice_port, free_port(socket.SOCK_DGRAM, 10), tone,
                        f'<sip:alice@127.0.0.1>;regint=0;outbound="sip:127.0.0.1:{sip_port}";'
                        "mediaenc=srtp-mand;audio_codecs=PCMU")
    bob = baresip_dir(tmp_path, "bob", bob_port, free_port(socket.SOCK_DGRAM, 10), tone,
                      f"<sip:bob@127.0.0.1:{bob_port}>;regint=0;answermode=auto;"
                      "audio_codecs=PCMU")
    runtime = tempfile.mkdtemp(prefix="kamailio-", dir=tmp_path)
    kamailio, kamailio_log = start_kamailio(sip_port, ng_port, runtime)
    callee = caller = None
    try:
        callee = subprocess.Popen(["baresip", "-f", str(bob), "-t", "14"],
                                  stdout=open(bob / "out.log", "w"), stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        time.sleep(1)
        caller = subprocess.Popen(["baresip", "-f", str(alice), "-t", "9", "-e",
                                   f"/dial sip:bob@127.0.0.1:{bob_port}"],
                                  stdout=open(alice / "out.log", "w"), stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        caller.wait(timeout=30)
        callee.wait(timeout=30)
        alice_log, bob_log = (alice / "out.log").read_text(), (bob / "out.log").read_text()
        shutil.copy(alice / "out.log", ARTIFACTS / f"baresip-alice-{sip_port}.log")
        shutil.copy(bob / "out.log", ARTIFACTS / f"baresip-bob-{sip_port}.log")
        assert "Call established" in alice_log, alice_log
        assert "Using media encryption 'srtp-mand'" in alice_log
        for who in (alice, bob):
            dumps = glob.glob(str(who / "dump-*-dec.wav"))
            assert dumps, f"{who.name} decoded no audio"
            seconds, hz, peak = dominant_tone(dumps[0])
            print(f"{who.name} decoded {seconds:.1f} s, {hz:.0f} Hz, peak {peak}")
            assert seconds >= 3 and abs(hz - 440) < 10 and peak > 3000
        metrics = gw.metrics()
        assert metrics['moat_call_relayed_packets_total{kind="rtp"}'] >= 300
        assert metrics["moat_calls"] == 0  # BYE -> delete
    finally:
        kill(caller, callee)
        stop(kamailio)
        kamailio_log.close()
        code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
