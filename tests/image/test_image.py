"""make test-image: the container image (make image) run as it ships. It
starts as the non-root user moat, /healthz and /metrics answer, an aiortc
WHIP echo goes through it, a recording lands in the mounted folder, SIGTERM
ends it within seconds, and the image is under 400 MB (it prints
`image size: <N> MB`). Runs with podman (runc, explicit ulimits) or
docker; not part of `make test` (it needs the image, minutes to build)."""
import asyncio
import json
import os
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from aiortc_peer import echo_call  # noqa: E402
from conftest import free_port  # noqa: E402

IMAGE = os.environ.get("MOAT_IMAGE", "moat:latest")
ENGINE = "docker" if shutil.which("docker") and subprocess.run(
    ["docker", "info"], capture_output=True).returncode == 0 else "podman"
# podman: runc (crun fails here), a process limit runc may set, and no
# health-check timer (it needs systemd; the test checks /healthz itself).
RUN_ARGS = ["--runtime", "runc", "--ulimit", "nproc=4096:4096", "--no-healthcheck"] \
    if ENGINE == "podman" else []
MAX_MB = 400
# runc cannot raise limits above this process's own.
NOFILE = resource.getrlimit(resource.RLIMIT_NOFILE)[1]


def engine(*args, check=True, timeout=120):
    result = subprocess.run([ENGINE, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"{ENGINE} {' '.join(args)}: {result.stderr}")
    return result.stdout.strip()


def image_mb():
    size = int(engine("image", "inspect", IMAGE, "--format", "{{.Size}}"))
    return size / 1e6


@pytest.fixture
def container(tmp_path):
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    os.chown(recordings, 999, 999)
    http_port = free_port()
    media_port = free_port(socket.SOCK_DGRAM, 1)
    token = secrets.token_hex(16)
    name = f"moat-test-{os.getpid()}-{http_port}"
    env = {"MOAT_HTTP_BIND": "127.0.0.1", "MOAT_HTTP_PORT": str(http_port),
           "MOAT_MEDIA_PORT": str(media_port), "MOAT_GENERAL_WORKERS": "1",
           "MOAT_MEDIA_CANDIDATE_ADDRESSES": "127.0.0.1", "MOAT_NG_PORT": "0",
           "MOAT_HTTP_TOKEN": token, "MOAT_RECORD_ALL_SESSIONS": "true"}
    args = ["run", "-d", "--name", name, *RUN_ARGS, "--network", "host",
            "--ulimit", f"nofile={NOFILE}:{NOFILE}", "-v", f"{recordings}:/var/lib/moat/recordings"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    engine(*args, IMAGE)
    base = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                    health = json.loads(r.read())
                    break
            except OSError:
                state = engine("inspect", name, "--format", "{{.State.Status}}")
                assert state == "running" and time.time() < deadline, engine("logs", name, check=False)
                time.sleep(0.2)
        yield {"name": name, "base": base, "token": token, "health": health,
               "recordings": recordings}
    finally:
        subprocess.run([ENGINE, "rm", "-f", name], capture_output=True, timeout=60)


def test_image(container):
    name, base = container["name"], container["base"]
    # The non-root system user, not a login user's uid.
    pid = int(engine("inspect", name, "--format", "{{.State.Pid}}"))
    uids = [l for l in Path(f"/proc/{pid}/status").read_text().splitlines() if l.startswith("Uid:")]
    assert uids[0].split()[1:] == ["999"] * 4, uids
    assert container["health"]["status"] == "ok", container["health"]
    assert container["health"]["recording"] == {"configured": True, "writable": True}
    with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
        assert b"moat_sessions" in r.read()
    # A WHIP echo through it (the installed echo plugin).
    result = asyncio.run(echo_call(base, seconds=4))
    audio = result["recorders"]["audio"]
    assert audio.frames / result["sent_audio"] >= 0.85, (audio.frames, result["sent_audio"])
    assert result["delete_status"] == 200
    # The session's recording lands in the mounted folder.
    deadline = time.time() + 15
    files = []
    while time.time() < deadline:
        files = [p for p in container["recordings"].glob("*.mkv") if p.stat().st_size > 10000]
        if files:
            break
        time.sleep(0.3)
    assert files, list(container["recordings"].iterdir())
    # SIGTERM ends it within seconds, cleanly.
    started = time.time()
    engine("kill", "--signal", "TERM", name)
    code = engine("wait", name, timeout=30)
    stopped = time.time() - started
    assert int(code.splitlines()[-1]) == 0, engine("logs", name, check=False)
    assert stopped < 5, f"{stopped:.1f} s from SIGTERM to exit"
    size = image_mb()
    print(f"\nimage size: {size:.0f} MB; SIGTERM to exit: {stopped:.2f} s; "
          f"recording: {files[0].name} {files[0].stat().st_size} bytes")
    assert size < MAX_MB, f"image is {size:.0f} MB"
