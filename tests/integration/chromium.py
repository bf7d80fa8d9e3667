"""Headless Chromium (Debian's) driven over the DevTools protocol: start it on
a page, evaluate JavaScript there, take screenshots. No browser download, no
driver: the protocol is spoken directly over its WebSocket."""
import asyncio
import base64
import itertools
import json
import re
import shutil
import subprocess
import tempfile

import aiohttp

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
         "--disable-quic", "--remote-debugging-port=0", "--window-size=1280,900"]


def chromium_path():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    def __init__(self, url, extra_flags=()):
        self.profile = tempfile.TemporaryDirectory(prefix="moat-chromium-", ignore_cleanup_errors=True)
        self.process = subprocess.Popen(
            [chromium_path(), *FLAGS, *extra_flags, f"--user-data-dir={self.profile.name}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.devtools = None
        for _ in range(400):
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            m = re.search(r"DevTools listening on ws://([^/]+)/", line)
            if m:
                self.devtools = m.group(1)
                break
        if not self.devtools:
            self.close()
            raise RuntimeError("chromium did not start")
        self.http = None
        self.ws = None
        self.ids = itertools.count(1)

    async def attach(self):
        self.http = aiohttp.ClientSession()
        for _ in range(50):
            async with self.http.get(f"http://{self.devtools}/json/list") as r:
                targets = await r.json(content_type=None)
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                self.ws = await self.http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
                return
            await asyncio.sleep(0.1)
        raise RuntimeError("no page target")

    async def call(self, method, **params):
        request_id = next(self.ids)
        await self.ws.send_str(json.dumps({"id": request_id, "method": method, "params": params}))
        while True:
            message = await self.ws.receive(timeout=30)
            if message.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"devtools connection closed: {message.type}")
            data = json.loads(message.data)
            if data.get("id") == request_id:
                if "error" in data:
                    raise RuntimeError(data["error"])
                return data["result"]

    async def evaluate(self, expression):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                                 awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    async def wait_for(self, expression, timeout, interval=0.25):
        """Evaluates until truthy; returns the value, or the last one on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        value = None
        while loop.time() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(interval)
        return value

    async def screenshot(self, path):
        result = await self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(result["data"]))

    async def close_async(self):
        if self.ws:
            await self.ws.close()
        if self.http:
            await self.http.close()
        self.close()

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.profile.cleanup()
