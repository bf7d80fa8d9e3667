"""HTTPS served by Moat itself ([http] tls_cert, tls_key): the API, WHIP
(aiortc publishing over https), the demo page in headless Chromium (a
secure origin: it gets the fake camera and publishes) and the event
WebSocket (wss) all run over TLS with a self-signed certificate made here;
bad certificate files stop the start with status 2 and one clear line."""
import asyncio
import json
import socket
import subprocess
import urllib.error
import urllib.request

import aiohttp
import pytest

from aiortc_peer import echo_call
from chromium import Chromium, chromium_path
from conftest import MOAT, Gateway, free_port
from tls_cert import make_self_signed


@pytest.fixture
def tls_files(tmp_path):
    return make_self_signed(tmp_path)


@pytest.fixture
def tls_gateway(tls_files):
    cert, key = tls_files
    gw = Gateway(extra_args=("--http-tls-cert", cert, "--http-tls-key", key, "--token", "tls-api"))
    yield gw
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def test_api_answers_over_https_only(tls_gateway):
    gw = tls_gateway
    assert gw.base.startswith("https://")
    health = json.loads(gw.get("/healthz"))
    assert health["status"] == "ok"
    assert "moat_sessions" in gw.get("/metrics")
    request = urllib.request.Request(gw.base + "/api/sessions",
                                     headers={"Authorization": "Bearer tls-api"})
    with urllib.request.urlopen(request, timeout=5, context=gw.ssl) as r:
        assert r.status == 200
    # A static page comes over TLS too.
    with urllib.request.urlopen(gw.base + "/", timeout=5, context=gw.ssl) as r:
        assert b"<html" in r.read().lower()
    # The port speaks TLS only: plain HTTP gets no HTTP answer.
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(f"http://127.0.0.1:{gw.http_port}/healthz", timeout=5).read()
    assert "up: https 127.0.0.1:" in gw.log_text()


def test_whip_echo_over_https(tls_gateway):
    result = asyncio.run(echo_call(tls_gateway.base, seconds=4, ssl=tls_gateway.ssl))
    audio = result["recorders"]["audio"]
    assert audio.frames / result["sent_audio"] >= 0.85
    assert abs(audio.dominant_frequency() - 440.0) <= 5.0
    assert result["delete_status"] == 200
    assert tls_gateway.metric("moat_dtls_handshakes_total") == 1


def test_event_websocket_over_wss(tls_gateway):
    gw = tls_gateway

    async def scenario():
        async with aiohttp.ClientSession() as http:
            url = gw.base.replace("https", "wss") + "/api/events?topic=rooms/tls"
            async with http.ws_connect(url, ssl=gw.ssl,
                                       headers={"Authorization": "Bearer tls-api"}) as ws:
                result = await echo_call(gw.base, seconds=1, audio=True, video=False, ssl=gw.ssl,
                                         path="/whip/room/tls")
                assert result["delete_status"] == 200
                message = await ws.receive(timeout=10)
                assert message.type == aiohttp.WSMsgType.TEXT, message
                return json.loads(message.data)

    event = asyncio.run(scenario())
    assert event["type"] == "joined" and event["room"] == "tls", event


@pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")
def test_chromium_demo_page_over_https(tls_gateway):
    """The demo page over https (a secure origin, as browsers need for the
    camera away from localhost) publishes its fake camera and gets it back."""
    gw = tls_gateway
    stats = "window.moatDemo && window.moatDemo.stats"
    decoded = "(window.moatDemo.stats['in video frames decoded'] || 0)"

    async def scenario():
        browser = Chromium(gw.base + "/?autostart=1", extra_flags=["--ignore-certificate-errors"])
        try:
            await browser.attach()
            protocol = await browser.wait_for("location.protocol === 'https:' && location.protocol", 10)
            assert protocol == "https:", protocol
            assert await browser.evaluate("window.isSecureContext") is True
            frames = await browser.wait_for(f"{stats} && {decoded} > 0 && {decoded}", 15)
            assert frames, f"no echoed video over https; page stats: {await browser.evaluate(stats)}"
        finally:
            await browser.close_async()

    asyncio.run(scenario())
    assert gw.metric("moat_dtls_handshakes_total") >= 1


def start(*args):
    return subprocess.run([str(MOAT), "--http-bind", "127.0.0.1", "--http-port", str(free_port()),
                           "--media-port", str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1",
                           "--ng-port", "0", *args], capture_output=True, text=True, timeout=20)


def test_bad_tls_files_stop_the_start_with_status_2(tmp_path, tls_files):
    cert, key = tls_files
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    other_cert, other_key = make_self_signed(tmp_path, name="other")
    cases = [
        (("--http-tls-cert", str(tmp_path / "missing.pem"), "--http-tls-key", key), "missing.pem"),
        (("--http-tls-cert", str(garbage), "--http-tls-key", key), "garbage.pem"),
        (("--http-tls-cert", cert, "--http-tls-key", cert), "private key"),
        (("--http-tls-cert", cert, "--http-tls-key", other_key), "is not the private key"),
        (("--http-tls-cert", cert), "tls_cert and tls_key must be given together"),
    ]
    for args, needle in cases:
        for extra in ((), ("--check-config",)):
            result = start(*args, *extra)
            lines = [l for l in result.stderr.splitlines() if l.startswith("moat:")]
            assert result.returncode == 2, (args, extra, result.returncode, result.stderr)
            assert len(lines) == 1 and needle in lines[0], (args, result.stderr)
    # The same through the environment, as a container passes it.
    result = subprocess.run([str(MOAT), "--check-config"], capture_output=True, text=True,
                            timeout=20, env={"MOAT_HTTP_TLS_CERT": str(tmp_path / "nope.pem"),
                                             "MOAT_HTTP_TLS_KEY": key})
    assert result.returncode == 2 and "nope.pem" in result.stderr, result.stderr
    result = subprocess.run([str(MOAT), "--check-config"], capture_output=True, text=True,
                            timeout=20, env={"MOAT_HTTP_TLS_CERT": cert, "MOAT_HTTP_TLS_KEY": key})
    assert result.returncode == 0, result.stderr
