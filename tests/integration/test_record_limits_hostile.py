"""Recordings are bounded: a client holding a session's id cannot make files
without end by cycling POST/DELETE on its recording ([record]
max_files_per_session, 409 beyond), a file is finished once it holds
[record] max_file_mib of media (counted; the file plays), and a recording is
refused with 507 while the folder's file system has less than [record]
min_free_mib free. Packets longer than the recorder's queue slots (1501 to
1984 bytes) are counted as too_big, not as a full queue, and a recording
whose pipeline fails before writing leaves no empty file. A disk that fills
up mid-recording ends the recording (counted as no_space, the file
finished, DELETE saying so, the next POST allowed) and /healthz says so.
The media is plain RTP to an ingest session, sent from here (Opus frames of
a chosen size)."""
import json
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import Gateway
from test_record import discover
from test_room import api

OPUS = {"audio": {"codec": "opus", "pt": 111}, "source": "127.0.0.1"}


def rtp(seq, ts, payload, pt=111, ssrc=0x1234):
    return struct.pack("!BBHII", 0x80, pt, seq & 0xFFFF, ts & 0xFFFFFFFF, ssrc) + payload


@pytest.fixture
def recording(tmp_path):
    """make(*args, env=, folder=) -> (gateway, recording folder, ingest
    session id, UDP port)."""
    gateways = []

    def make(*args, env=None, folder=None):
        folder = folder or tmp_path / "rec"
        gw = Gateway(workers=1, extra_args=["--record-dir", str(folder), *args], env=env)
        gateways.append(gw)
        status, body = api(gw, "POST", "/api/rooms/live/ingest", OPUS)
        assert status == 201, body
        return gw, folder, body["resource"].rsplit("/", 1)[1], body["port"]

    yield make
    for gw in gateways:
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


class Sender:
    """Opus frames (TOC 0xf8, one 20 ms frame) to the ingest port, every
    `interval` seconds, until stopped."""

    def __init__(self, port, payload=b"\xf8\xff\xfe", interval=0.02):
        self.port, self.payload, self.interval = port, payload, interval
        self.sent = 0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            while self.running:
                s.sendto(rtp(self.sent, self.sent * 960, self.payload), ("127.0.0.1", self.port))
                self.sent += 1
                time.sleep(self.interval)

    def stop(self):
        self.running = False
        self.thread.join()


def test_recording_cycles_on_one_session_are_capped(recording):
    """150 POST/DELETE cycles on one session made 150 files in 6 s; now, at
    the default [record] max_files_per_session (8), the session's ninth start
    is refused (409 too_many_recordings, saying why) and eight files exist."""
    gw, folder, session, port = recording()
    sender = Sender(port)
    try:
        url = f"/api/sessions/{session}/recording"
        for _ in range(8):
            status, body = api(gw, "POST", url)
            assert status == 201, body
            time.sleep(0.1)
            assert api(gw, "DELETE", url)[0] == 200
        for _ in range(5):
            status, body = api(gw, "POST", url)
            assert status == 409 and body["error"] == "too_many_recordings", (status, body)
            assert "max_files_per_session" in json.dumps(body), body
            assert api(gw, "DELETE", url)[0] == 404
    finally:
        sender.stop()
    deadline = time.time() + 15
    while gw.metric("moat_recordings_active") and time.time() < deadline:
        time.sleep(0.1)
    assert len(list(folder.glob("*.mkv"))) == 8, sorted(folder.iterdir())


def test_a_file_reaching_max_file_mib_is_finished(recording):
    """[record] max_file_mib = 1 (set through the environment, as every
    option can be) and a sender of 1.2 KB frames: the file is
    finished near 1 MiB (counted, logged once), plays, and grows no more while
    the session goes on sending; DELETE still answers its name."""
    gw, folder, session, port = recording(env={"MOAT_RECORD_MAX_FILE_MIB": "1"})
    url = f"/api/sessions/{session}/recording"
    status, body = api(gw, "POST", url)
    assert status == 201, body
    path = folder / body["file"]
    sender = Sender(port, payload=b"\xf8" + bytes(1199), interval=0.002)
    try:
        deadline = time.time() + 30
        while sender.sent * 1212 < 3 << 20 and time.time() < deadline:  # three times the limit
            time.sleep(0.1)
        time.sleep(1)
        size = path.stat().st_size
        assert (1 << 20) * 3 // 4 <= size <= (1 << 20) + (64 << 10), size
        time.sleep(1)
        assert path.stat().st_size == size  # finished: it no longer grows
    finally:
        sender.stop()
    assert gw.metric("moat_record_files_at_size_limit_total") == 1
    assert gw.metric('moat_record_dropped_packets_total{reason="queue_full"}') == 0
    assert gw.log_text().count("reached [record] max_file_mib") == 1
    status, body = api(gw, "DELETE", url)
    assert status == 200 and (folder / body["file"]) == path, body
    duration, out = discover(path)
    assert "Opus" in out, out


def test_a_recording_is_refused_when_the_folder_lacks_free_space(recording):
    """min_free_mib above what the disk has free (16 TiB): 507
    insufficient_storage, no file, no server path in the reply, counted."""
    gw, folder, session, port = recording("--record-min-free-mib", str(16 << 20))
    status, body = api(gw, "POST", f"/api/sessions/{session}/recording")
    assert status == 507 and body["error"] == "insufficient_storage", (status, body)
    assert "min_free_mib" in json.dumps(body) and str(folder) not in json.dumps(body), body
    assert list(folder.glob("*.mkv")) == []
    assert gw.metric('moat_record_failures_total{reason="no_space"}') == 1
    assert gw.metric("moat_recordings_active") == 0


def test_packets_too_long_for_the_queue_are_counted_as_too_big(recording):
    """1501-1984-byte packets (the worker takes up to 1984, a queue slot 1500)
    were counted as queue_full: now as too_big, and the queue is never full."""
    gw, folder, session, port = recording()
    status, body = api(gw, "POST", f"/api/sessions/{session}/recording")
    assert status == 201, body
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for seq in range(50):
            s.sendto(rtp(seq, seq * 960, b"\xf8\xff\xfe"), ("127.0.0.1", port))
            time.sleep(0.005)
        sizes = (1500, 1501, 1600, 1983, 1984)
        for seq, size in enumerate(sizes, start=50):
            s.sendto(rtp(seq, seq * 960, b"\xf8" + bytes(size - 13)), ("127.0.0.1", port))
            time.sleep(0.005)
    too_big = 'moat_record_dropped_packets_total{reason="too_big"}'
    deadline = time.time() + 5
    while gw.metric(too_big) < 4 and time.time() < deadline:
        time.sleep(0.05)
    assert gw.metric(too_big) == 4
    assert gw.metric('moat_record_dropped_packets_total{reason="queue_full"}') == 0
    assert "too_big" in gw.get("/metrics").split("# HELP moat_record_dropped_packets_total")[1]
    assert api(gw, "DELETE", f"/api/sessions/{session}/recording")[0] == 200


def test_a_recording_that_fails_before_writing_leaves_no_empty_file(recording):
    """H.264 MTAP16 packets (NAL type 26, which rtph264depay refuses) fail the
    pipeline before the muxer writes a byte: the empty .mkv made at the start
    used to stay; now it goes, and the failure is counted."""
    gw, folder, _, _ = recording()
    status, body = api(gw, "POST", "/api/rooms/h264/ingest",
                       {"video": {"codec": "h264", "pt": 96}, "source": "127.0.0.1"})
    assert status == 201, body
    session, port = body["resource"].rsplit("/", 1)[1], body["port"]
    status, body = api(gw, "POST", f"/api/sessions/{session}/recording")
    assert status == 201, body
    assert (folder / body["file"]).exists()
    failed = 'moat_record_failures_total{reason="write"}'
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for seq in range(100):
            s.sendto(rtp(seq, seq * 3000, bytes([26]) + bytes(99), pt=96), ("127.0.0.1", port))
            time.sleep(0.01)
            if seq % 10 == 9 and gw.metric(failed):
                break
    assert gw.metric(failed) == 1
    assert api(gw, "DELETE", f"/api/sessions/{session}/recording")[0] == 200
    deadline = time.time() + 15
    while gw.metric("moat_recordings_active") and time.time() < deadline:
        time.sleep(0.1)
    assert gw.metric("moat_recordings_active") == 0
    assert list(folder.glob("*.mkv")) == []


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs (root only: mount(8)), unmounted after the test."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    folder = tmp_path / "small"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "moat-test", str(folder)],
                   check=True)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def healthz(gw):
    try:
        with urllib.request.urlopen(gw.base + "/healthz", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def header_duration_ms(path):
    """The Matroska Segment Info's Duration (EBML id 0x4489, a float in
    milliseconds at matroskamux's default timecode scale), 0 when absent."""
    head = path.read_bytes()[:4096]
    at = head.find(b"\x44\x89")
    if at < 0:
        return 0
    size = head[at + 2] & 0x7F
    return struct.unpack(">d" if size == 8 else ">f", head[at + 3:at + 3 + size])[0]


def wait_for(predicate, seconds):
    deadline = time.time() + seconds
    while not predicate() and time.time() < deadline:
        time.sleep(0.1)
    return predicate()


def test_a_disk_filling_up_mid_recording_ends_the_recording(small_disk, recording):
    """A 2 MiB file system, [record] min_free_mib 1 and 1.2 KB frames at
    ~500/s: the disk fills mid-recording. That was counted as a write
    failure (no_space 0), the recording stayed active and kept its slot (a
    POST got 409 already_recording), its DELETE answered as if all went well,
    the file's header was never finished and /healthz said writable. Now:
    counted as no_space, the recording ends (moat_recordings_active 0), the
    file is finished and plays for the seconds it holds, /healthz is 503 for
    want of space, a POST meets the free-space check (507, not 409), the
    DELETE says it failed and why, and once space is freed the room's POST
    starts a new recording."""
    gw, folder, session, port = recording("--record-min-free-mib", "1", folder=small_disk)
    url = f"/api/sessions/{session}/recording"
    status, body = api(gw, "POST", url)
    assert status == 201, body
    path = folder / body["file"]
    no_space = 'moat_record_failures_total{reason="no_space"}'
    sender = Sender(port, payload=b"\xf8" + bytes(1199), interval=0.002)
    try:
        assert wait_for(lambda: gw.metric(no_space) == 1, 30), (
            gw.metrics(), sorted(folder.iterdir()))
        assert gw.metric('moat_record_failures_total{reason="write"}') == 0
        assert wait_for(lambda: gw.metric("moat_recordings_active") == 0, 10), gw.metrics()
        assert "No space left" in gw.log_text()
        size = path.stat().st_size
        time.sleep(0.5)
        assert path.stat().st_size == size  # the recording writes nothing more
        status, health = healthz(gw)
        assert status == 503 and health["recording"]["writable"] is False, health
        assert "short of space" in health["detail"] and str(folder) not in json.dumps(health)
        # The failed recording holds no slot: the next start meets the
        # free-space check.
        status, body = api(gw, "POST", url)
        assert status == 507 and body["error"] == "insufficient_storage", (status, body)
    finally:
        sender.stop()
    status, body = api(gw, "DELETE", url)
    assert status == 200 and folder / body["file"] == path, body
    assert body["failed"] == "no_space" and "filled up" in body["detail"], body
    assert str(folder) not in json.dumps(body)
    # The header was rewritten (an unfinished one says 0 and an unknown
    # segment size, and gst-discoverer guesses a fraction of a second).
    assert header_duration_ms(path) >= 1000, header_duration_ms(path)
    duration, out = discover(path)
    assert "Opus" in out and duration >= 1.0, out
    # Space again: the room's recording (the same code) starts and stops.
    path.unlink()
    assert wait_for(lambda: healthz(gw)[0] == 200, 5), healthz(gw)
    status, body = api(gw, "POST", "/api/rooms/live/recording")
    assert status == 201, body
    status, body = api(gw, "DELETE", "/api/rooms/live/recording")
    assert status == 200 and "failed" not in body, body
    assert gw.metric(no_space) == 2  # the disk filling up, the start refused
