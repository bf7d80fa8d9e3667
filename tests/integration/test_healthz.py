"""/healthz tells the truth: 200 only while what the configuration asks for
works (media workers going round, the recording folder writable when
recording is configured), 503 with a JSON reason otherwise; the kernel
filter's state and TLS are reported. It names no server path."""
import json
import time
import urllib.error
import urllib.request

from conftest import Gateway


def healthz(gw):
    try:
        with urllib.request.urlopen(gw.base + "/healthz", timeout=5, context=gw.ssl) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_healthy_gateway_reports_its_parts():
    gw = Gateway(workers=2, extra_args=("--prefilter-kernel", "off"))
    try:
        status, body = healthz(gw)
        assert status == 200 and body["status"] == "ok", body
        assert body["worker_state"] == {"configured": 2, "running": 2}, body
        assert body["recording"] == {"configured": False}, body
        assert body["kernel_filter"] == {"mode": "off", "active": False,
                                         "reason": "off by configuration"}, body
        assert body["tls"] is False and body["problems"] == []
    finally:
        assert gw.stop() == 0


def test_record_dir_is_created_at_start(tmp_path):
    folder = tmp_path / "a" / "recordings"
    gw = Gateway(workers=1, extra_args=("--record-dir", str(folder)))
    try:
        status, body = healthz(gw)
        assert status == 200 and body["recording"] == {"configured": True, "writable": True}, body
        assert folder.is_dir() and list(folder.iterdir()) == [], "probe file left behind"
    finally:
        assert gw.stop() == 0


def test_unwritable_record_dir_fails_health_until_fixed(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    folder = blocker / "recordings"
    gw = Gateway(workers=1, extra_args=("--record-dir", str(folder)))
    try:
        # A loud line at start and 503 with the reason.
        log = gw.log_text()
        assert "level=error component=record" in log and "is not writable" in log, log
        status, body = healthz(gw)
        assert status == 503, body
        assert body["status"] == "unhealthy" and body["error"] == "unhealthy"
        assert body["recording"]["writable"] is False
        assert "[record] dir is not writable" in body["detail"], body
        assert body["problems"] == [body["detail"]]
        assert str(tmp_path) not in json.dumps(body), "healthz names a server path"
        # Fixed while running: healthy again, without a restart. The folder
        # is missing and its parent writable: the recorder creates it at the
        # first recording; /healthz does not.
        blocker.unlink()
        status, body = healthz(gw)
        assert status == 200 and body["recording"] == {"configured": True, "writable": True}, body
        assert not folder.exists(), "/healthz created the recording folder"
    finally:
        assert gw.stop() == 0


def test_healthz_neither_probes_per_request_nor_recreates_the_folder(tmp_path):
    """Every unauthenticated GET /healthz created and removed a file in the
    recording folder on the control thread, and created the folder again
    when it had been deleted. The probe file now comes at most once per 5 s
    whatever the request rate (the folder's mtime stays put), and a deleted
    folder stays deleted (writable while its parent is: the recorder
    creates it at the first recording)."""
    folder = tmp_path / "recordings"
    gw = Gateway(workers=1, extra_args=("--record-dir", str(folder)))
    try:
        status, body = healthz(gw)
        assert status == 200 and body["recording"] == {"configured": True, "writable": True}, body
        before = folder.stat().st_mtime_ns
        time.sleep(0.05)  # past the filesystem's timestamp granularity
        for _ in range(20):
            status, body = healthz(gw)
            assert status == 200, body
        assert folder.stat().st_mtime_ns == before, "/healthz created a file per request"
        folder.rmdir()
        for _ in range(3):
            status, body = healthz(gw)
            assert status == 200 and body["recording"]["writable"] is True, body
        assert not folder.exists(), "/healthz created the recording folder again"
    finally:
        assert gw.stop() == 0


def test_record_dir_nobody_can_write_is_unhealthy():
    # /proc exists and is a folder, but nobody (root included) creates files in it.
    gw = Gateway(workers=1, extra_args=("--record-dir", "/proc"))
    try:
        status, body = healthz(gw)
        assert status == 503 and "cannot create a file there" in body["detail"], body
    finally:
        assert gw.stop() == 0


def test_kernel_filter_state_is_reported():
    gw = Gateway(workers=1)
    try:
        status, body = healthz(gw)
        assert status == 200
        kernel = body["kernel_filter"]
        assert kernel["mode"] == "auto"
        # Active, or off with the reason /metrics gives too.
        metrics = gw.metrics()
        assert kernel["active"] == (metrics["moat_kernel_filter_active"] == 1), (kernel, metrics)
        assert kernel["active"] or kernel["reason"]
    finally:
        assert gw.stop() == 0
