"""Headless Firefox (Debian's firefox-esr) on a page of the gateway. There
is no WebDriver package, so the browser is only started, on a fresh
profile whose user.js gives it a fake camera and microphone and grants
them (without the grant Firefox offers no loopback candidates), and the
page reports back: web/room.js POSTs its getStats rows to
`report=<url>`, a small HTTP collector (StatsCollector) the test runs."""
import asyncio
import json
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from aiohttp import web

PREFS = {
    # fake devices, granted without a prompt
    "media.navigator.streams.fake": True,
    "media.navigator.permission.disabled": True,
    "permissions.default.camera": 1,
    "permissions.default.microphone": 1,
    "media.autoplay.default": 0,
    # loopback candidates, not mDNS names
    "media.peerconnection.ice.loopback": True,
    "media.peerconnection.ice.obfuscate_host_addresses": False,
    # no first-run pages, telemetry, updates or other background traffic
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "startup.homepage_welcome_url": "about:blank",
    "startup.homepage_welcome_url.additional": "",
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "app.update.auto": False,
    "extensions.update.enabled": False,
    "app.normandy.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.newtabpage.enabled": False,
    "browser.tabs.warnOnClose": False,
    "browser.sessionstore.resume_from_crash": False,
}


def firefox_path():
    return shutil.which("firefox-esr") or shutil.which("firefox")


class StatsCollector:
    """An HTTP server on loopback: POST /<name> stores the JSON body as the
    latest stats of page <name>, with the time they were read (the page's
    clock, the machine's: time.time()), or else the time they came."""

    def __init__(self):
        self.latest = {}
        self.history = {}
        self.runner = None
        self.port = None

    async def start(self):
        app = web.Application()
        app.router.add_post("/{name}", self.receive)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def receive(self, request):
        name = request.match_info["name"]
        try:
            stats = json.loads(await request.text())
        except ValueError:
            return web.Response(status=400)
        when = stats.get("time") if isinstance(stats, dict) else None
        entry = (when / 1000 if isinstance(when, (int, float)) else time.time(), stats)
        self.latest[name] = entry
        self.history.setdefault(name, []).append(entry)
        return web.Response(status=204)

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def stats(self, name):
        return self.latest.get(name, (0, {}))[1]

    async def wait_for(self, name, predicate, timeout):
        """Waits for stats of `name` for which predicate is truthy; returns
        them, or the last ones (maybe {}) on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            stats = self.stats(name)
            if stats and predicate(stats):
                return stats
            await asyncio.sleep(0.05)
        return self.stats(name)

    async def report_after(self, name, when, timeout):
        """(time, stats) of the first report of `name` read at or after
        `when` (time.time()), waiting up to `timeout`; None if none came."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for entry in self.history.get(name, []):
                if entry[0] >= when:
                    return entry
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.02)

    async def stop(self):
        if self.runner:
            await self.runner.cleanup()


class Firefox:
    """firefox-esr --headless on `url` with its own profile (PREFS, and
    `prefs` over them)."""

    def __init__(self, url, prefs=None):
        self.profile = tempfile.TemporaryDirectory(prefix="moat-firefox-",
                                                   ignore_cleanup_errors=True)
        with open(Path(self.profile.name) / "user.js", "w") as f:
            for key, value in {**PREFS, **(prefs or {})}.items():
                f.write(f"user_pref({json.dumps(key)}, {json.dumps(value)});\n")
        self.log = open(Path(self.profile.name) / "firefox.log", "w+")
        self.process = subprocess.Popen(
            [firefox_path(), "--headless", "--profile", self.profile.name, "--no-remote", url],
            stdout=self.log, stderr=subprocess.STDOUT,
            env={"MOZ_HEADLESS": "1", "PATH": "/usr/bin:/bin", "HOME": self.profile.name})

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        self.profile.cleanup()


def room_page(gateway, collector, name, room, role, **params):
    """The room demo page as `role` ("publish" or "watch") reporting to
    collector under `name`."""
    query = {"room": room, role: "1", "report": collector.url(name), "interval": "100",
             **params}
    return gateway.base + "/room.html?" + urllib.parse.urlencode(query)
