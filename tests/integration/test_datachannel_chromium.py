"""Headless Chromium on the demo page: the chat goes over the page's data
channel to the echo plugin and back. Lines are typed into the chat form and
submitted as a user would; window.moatDemo.chat must show each echo."""
import asyncio
import errno
import json

import pytest

from chromium import Chromium, chromium_path

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

CHAT = "JSON.stringify(window.moatDemo ? window.moatDemo.chat : [])"
LINES = ["hello moat", "unicode: h\u00e9llo \u2713 \U0001F600", "x" * 5000, "last line"]


def type_and_submit(text):
    return f"""
(() => {{
  const input = document.getElementById('chatinput');
  input.value = {json.dumps(text)};
  document.getElementById('chatform').requestSubmit();
  return input.value === '';
}})()
"""


def test_demo_page_chat_echoes_over_the_data_channel(gateway):
    async def scenario():
        browser = Chromium(gateway.base + "/?autostart=1")
        try:
            await browser.attach()
            opened = await browser.wait_for(
                f"{CHAT}.includes('data channel open') && {CHAT}", 15)
            assert opened, f"the chat's data channel did not open; chat: {await browser.evaluate(CHAT)}"
            for text in LINES:
                # The form clears the input once the message went out.
                assert await browser.evaluate(type_and_submit(text)) is True
                echoed = await browser.wait_for(
                    "window.moatDemo.chat.some(m => m.who === 'echo' && m.text === "
                    f"{json.dumps(text)})", 10, interval=0.1)
                assert echoed, f"no echo of {text[:40]!r}; chat: {await browser.evaluate(CHAT)}"
            chat = json.loads(await browser.evaluate(CHAT))
            # Hang up as the page does (WHIP DELETE), so the gateway closes
            # the channel gracefully while the browser is still there.
            await browser.evaluate("document.getElementById('stop').click()")
            for _ in range(80):
                if "ended (hang-up)" in gateway.log_text():
                    break
                await asyncio.sleep(0.1)
            return chat
        finally:
            try:
                await browser.close_async()
            except OSError as error:
                # Chromium's helper processes can still be writing to the
                # temporary profile while chromium.py deletes it.
                if error.errno != errno.ENOTEMPTY:
                    raise

    chat = asyncio.run(scenario())
    conversation = [(m["who"], m["text"]) for m in chat if m["who"] in ("me", "echo")]
    expected = [pair for text in LINES for pair in (("me", text), ("echo", text))]
    assert conversation == expected
    m = gateway.metrics()
    sent_bytes = sum(len(text.encode()) for text in LINES)
    assert m["moat_datachannel_messages_received_total"] == len(LINES)
    assert m["moat_datachannel_messages_sent_total"] == len(LINES)
    assert m["moat_datachannel_bytes_received_total"] == sent_bytes
    assert m["moat_datachannel_bytes_sent_total"] == sent_bytes
    assert m["moat_sessions"] == 0
    assert "ended (hang-up)" in gateway.log_text()
