"""Path MTU discovery against headless Chromium (its SCTP is dcSCTP), with
[datachannel] max_packet = 16384: the gateway's HEARTBEAT + PAD probes are
answered, the packet size grows past the 1200 bytes browsers use and past
1500 (Chromium takes large DTLS records; on loopback the worker's datagram
buffers bound it), and the demo page's chat keeps echoing byte-exact at the
size found (lines larger than one packet included)."""
import asyncio
import errno
import json

import pytest

from chromium import Chromium, chromium_path
from conftest import Gateway
from test_datachannel_chromium import CHAT, type_and_submit
from test_datachannel_plpmtud import BASE, PmtuSampler

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

LINES = ["before the search ends", "y" * 3000, "after: h\u00e9llo \u2713 \U0001F600", "z" * 9000]


def test_chromium_answers_probes_and_chat_echoes():
    gateway = Gateway(extra_args=["--datachannel-max-packet", "16384"])
    try:
        run(gateway)
    finally:
        gateway.stop()


def run(gateway):
    sampler = PmtuSampler(gateway)

    async def say(browser, text):
        assert await browser.evaluate(type_and_submit(text)) is True
        echoed = await browser.wait_for(
            "window.moatDemo.chat.some(m => m.who === 'echo' && m.text === "
            f"{json.dumps(text)})", 10, interval=0.1)
        assert echoed, f"no echo of {text[:40]!r}; chat: {await browser.evaluate(CHAT)}"

    async def scenario():
        browser = Chromium(gateway.base + "/?autostart=1")
        try:
            await browser.attach()
            opened = await browser.wait_for(
                f"{CHAT}.includes('data channel open') && {CHAT}", 15)
            assert opened, f"no data channel; chat: {await browser.evaluate(CHAT)}"
            await say(browser, LINES[0])
            await say(browser, LINES[1])
            loop = asyncio.get_running_loop()
            complete = await loop.run_in_executor(None, sampler.wait_complete, 40)
            for text in LINES[2:]:
                await say(browser, text)
            chat = json.loads(await browser.evaluate(CHAT))
            await browser.evaluate("document.getElementById('stop').click()")
            return complete, chat
        finally:
            try:
                await browser.close_async()
            except OSError as error:
                if error.errno != errno.ENOTEMPTY:
                    raise

    try:
        complete, chat = asyncio.run(scenario())
    finally:
        sampler.stop()
    summary = f"pmtu {sampler.last}, largest {sampler.largest}"
    print(summary)
    conversation = [(m["who"], m["text"]) for m in chat if m["who"] in ("me", "echo")]
    assert conversation == [pair for text in LINES for pair in (("me", text), ("echo", text))]
    assert complete, summary
    (pmtu,) = sampler.last.values()
    assert pmtu["state"] == "search_complete", summary
    assert pmtu["packet_size"] > 1500, summary
    assert pmtu["black_holes"] == 0, summary
    m = gateway.metrics()
    assert m["moat_datachannel_bytes_received_total"] == sum(len(t.encode()) for t in LINES)
