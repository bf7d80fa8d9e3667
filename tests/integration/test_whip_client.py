"""simple-whip-client (Debian; GStreamer's webrtcbin, an independent stack)
publishes a test stream to /whip/echo; /metrics must show its packets
received and decrypted."""
import os
import shutil
import subprocess
import time

from conftest import ROOT, Gateway
from netns import NetnsPair

import pytest

AUDIO = ("audiotestsrc is-live=true wave=sine freq=440 ! audioconvert ! audioresample ! "
         "queue ! opusenc ! rtpopuspay pt=111 ssrc=1 ! queue ! "
         "application/x-rtp,media=audio,encoding-name=OPUS,payload=111")
VIDEO = ("videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,framerate=15/1 ! "
         "videoconvert ! queue ! vp8enc deadline=1 ! rtpvp8pay pt=96 ssrc=2 ! queue ! "
         "application/x-rtp,media=video,encoding-name=VP8,payload=96")


def whip_client_env():
    """Debian's libnice pulls in libsoup-3 through gupnp-igd, which aborts a
    libsoup-2.4 program like whip-client; scripts/build-libnice-noupnp.sh
    builds Debian's libnice source without UPnP for this process."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(ROOT / ".deps" / "libnice-noupnp" / "lib")
    return env


@pytest.mark.skipif(shutil.which("whip-client") is None, reason="simple-whip-client not installed")
def test_simple_whip_client_publishes():
    # libnice pairs no loopback candidates with its own addresses, so the
    # client and the gateway are two test hosts in namespaces of our own.
    hosts = NetnsPair()
    gateway = None
    try:
        gateway = Gateway(netns=hosts.server, address=NetnsPair.SERVER)
        run_whip_client(gateway, hosts)
        assert gateway.stop() == 0
    finally:
        if gateway:
            gateway.stop()
        hosts.close()


def run_whip_client(gateway, hosts):
    before = gateway.metrics()
    client = subprocess.Popen(
        ["ip", "netns", "exec", hosts.client, "whip-client", "-u", gateway.base + "/whip/echo", "-A", AUDIO, "-V", VIDEO, "-n", "-l", "4", "-o"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=whip_client_env())
    received = 0
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            time.sleep(1)
            received = gateway.metric("moat_rtp_packets_received_total")
            if received - before["moat_rtp_packets_received_total"] > 150:
                break
            assert client.poll() is None, "whip-client exited early:\n" + client.stdout.read()
    finally:
        client.terminate()
        try:
            output = client.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            client.kill()
            output = client.communicate()[0]
    m = gateway.metrics()
    got = m["moat_rtp_packets_received_total"] - before["moat_rtp_packets_received_total"]
    assert got > 150, f"only {got} RTP packets decrypted from whip-client; its output:\n{output[-3000:]}"
    assert m["moat_srtp_auth_failures_total"] == 0
    assert m["moat_dtls_handshakes_total"] >= 1
