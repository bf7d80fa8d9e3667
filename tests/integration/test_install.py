"""The installed layout (meson install --tags runtime, what `make install`
and the container image's runtime stage run): the binary, its plugins, the
pages and the default configuration land where a package puts them, and the
installed binary finds its plugins and pages relative to itself, without
--plugin-dir or --web-root and from any working folder; the flood tool is
not part of it."""
import json
import os
import subprocess
import urllib.request
from pathlib import Path

import pytest

from conftest import MOAT, ROOT, Gateway
from test_http_hardening import post_offer

BUILD = MOAT.parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    stage = tmp_path_factory.mktemp("stage")
    result = subprocess.run(["meson", "install", "-C", str(BUILD), "--no-rebuild", "--quiet",
                             "--tags", "runtime", "--destdir", str(stage)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    binaries = list(stage.rglob("bin/moat"))
    assert len(binaries) == 1, binaries
    return stage, binaries[0]


def test_layout(installed):
    stage, binary = installed
    prefix = binary.parent.parent
    plugins = sorted(p.name for p in prefix.rglob("moat/plugins/*.so"))
    assert plugins == ["moat-echo.so", "moat-room.so", "moat-tunnel.so"], plugins
    assert (prefix / "share" / "moat" / "web" / "index.html").is_file()
    configs = list(stage.rglob("moat/moat.conf"))
    assert len(configs) == 1, configs
    assert not list(stage.rglob("moat-flood")), "the flood tool is not part of the install"
    # Only the gateway's files: nothing from the tests, benches or sources.
    files = [p for p in stage.rglob("*") if p.is_file()]
    assert all("/test" not in str(p.relative_to(stage)) for p in files), files
    result = subprocess.run([str(binary), "--config", str(configs[0]), "--check-config"],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, result.stderr


def test_installed_binary_finds_its_plugins_and_pages(installed, tmp_path):
    stage, binary = installed
    prefix = binary.parent.parent
    cwd = os.getcwd()
    os.chdir(tmp_path)  # no relative path may lean on the checkout
    try:
        gw = Gateway(workers=1, binary=binary)
    finally:
        os.chdir(cwd)
    try:
        assert json.loads(gw.get("/healthz"))["status"] == "ok"
        status, _, _ = post_offer(gw)  # a plugin route (/whip/echo)
        assert status == 201
        with urllib.request.urlopen(gw.base + "/", timeout=5) as r:
            assert b"<html" in r.read().lower()
        maps = Path(f"/proc/{gw.process.pid}/maps").read_text()
        loaded = {line.split()[-1] for line in maps.splitlines() if line.endswith(".so")
                  and "/moat-" in line}
        assert loaded and all(p.startswith(str(prefix)) for p in loaded), loaded
        assert str(ROOT / "build") not in "".join(loaded)
    finally:
        assert gw.stop() == 0
