"""What one ng command may make Moat hold, on the ASan/UBSan gateway in
`make test` (the file name says hostile): the SIP proxy passes on SDPs any
SIP party writes, so a party's answer or offer must not be able to start
threads without bound or leave state nobody was told about.

  * Transcoders: only an offer that carried codec-transcode gets them at
    its answer (before, any answer naming a codec its offer lacked started
    a pipeline per direction and m-line: 60 answers of 8 m-lines ran 960
    pipelines on 1925 threads); [call] max_transcoders caps the pipelines
    (beyond it: that m-line relayed as is, with a warning, counted); a
    transcoder whose thread cannot be made is a warning too, never an
    abort of the gateway (before: GLib-ERROR, core dump).
  * Replies: an offer or answer whose rewritten SDP would not fit one UDP
    datagram is an error reply ("SDP too large") and changes nothing, a
    new call is not kept (before: sendto failed with EMSGSIZE, the proxy
    heard nothing and the call stayed, retransmissions answered by
    nothing); any reply over 65507 bytes becomes an error reply. An answer
    that may be transcoded keeps room for the codec lines transcoding
    writes into its reply after the check (before: a rewritten answer just
    under the bound came back up to 8 x 134 bytes over it, with its
    transcoders running).
  * Cookies: one longer than 256 bytes (its reply could not be cached, so a
    retransmission would run the command again; the reply's room for the
    cookie counts 256) is an error and its command does not run (before:
    it ran, and an offer whose rewritten SDP just passed the size check
    with a 1083-byte cookie was committed, then its reply replaced by
    "reply too large": the proxy heard error, the call held 8 streams'
    ports until the media timeout).
  * The reply cache: bounded in bytes (16 MiB, oldest first) as well as
    entries (before: one call's re-offers with 60 KB SDPs, each with its
    own cookie, kept 4096 replies, 240 MB, for 30 s)."""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import MOAT, Gateway, free_port
from ng_client import NgClient, bdecode, bencode

REFUSED = 'moat_call_transcode_refused_total{reason="%s"}'


def sdp(port, codecs, lines=1):
    """A phone's SDP: `lines` audio m-lines (ports port, port+2, ...), each
    with `codecs` [(payload type, rtpmap)]."""
    text = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
    for i in range(lines):
        text += f"m=audio {port + 2 * i} RTP/AVP {' '.join(str(pt) for pt, _ in codecs)}\r\n"
        text += "".join(f"a=rtpmap:{pt} {name}\r\n" for pt, name in codecs)
    return text


PCMU = [(0, "PCMU/8000")]
PCMA = [(8, "PCMA/8000")]
OPUS = [(111, "opus/48000/2")]


def gateway(ports=200, extra_args=(), binary=None):
    """Moat relaying calls on `ports` loopback media ports."""
    low = free_port(socket.SOCK_DGRAM, ports + 2)
    low += low & 1
    return Gateway(binary=binary,
                   extra_args=["--media-port-min", str(low), "--media-port-max",
                               str(low + ports), "--announced-address", "127.0.0.1",
                               "--call-allow-loopback-destinations", *extra_args])


def stop(gw, client):
    client.close()
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def wait_metric(gw, name, want, seconds=10.0):
    deadline = time.monotonic() + seconds
    while gw.metric(name) != want and time.monotonic() < deadline:
        time.sleep(0.1)
    return gw.metric(name)


def call(client, call_id, offer_codecs, answer_codecs, lines=1, transcode=None):
    """Offer and answer; the answer's reply."""
    extra = {"codec": {"transcode": transcode}} if transcode else {}
    offer = client.command("offer", call_id=call_id, from_tag="a",
                           sdp=sdp(20000, offer_codecs, lines), **extra)
    assert offer["result"] == "ok", offer
    return client.command("answer", call_id=call_id, from_tag="a", to_tag="b",
                          sdp=sdp(22000, answer_codecs, lines))


def test_an_answer_without_codec_transcode_starts_no_transcoder():
    """A PCMU offer without codec-transcode answered with PCMA on 8
    m-lines is relayed as is: no pipeline, the answer's own codec goes back
    to the offerer. The same call re-offered with codec-transcode PCMA
    transcodes; the proxy asked for it, so a later re-INVITE whose offer
    does not repeat the flag keeps transcoding."""
    gw = gateway()
    client = NgClient(gw.ng_port, timeout=30.0)
    try:
        answer = call(client, "plain", PCMU, PCMA, lines=8)
        assert answer["result"] == "ok" and "warning" not in answer, answer
        assert len(re.findall(r"^m=audio \d+ RTP/AVP 8\r$", answer["sdp"], re.M)) == 8, answer
        assert gw.metric("moat_transcoders") == 0
        assert gw.metric(REFUSED % "limit") == 0

        answer = call(client, "plain", PCMU, PCMA, lines=8, transcode=["PCMA"])
        assert answer["result"] == "ok" and "warning" not in answer, answer
        assert len(re.findall(r"^m=audio \d+ RTP/AVP 0\r$", answer["sdp"], re.M)) == 8, answer
        assert gw.metric("moat_transcoders") == 16

        answer = call(client, "plain", PCMU, PCMA, lines=8)
        assert answer["result"] == "ok" and "warning" not in answer, answer
        assert len(re.findall(r"^m=audio \d+ RTP/AVP 0\r$", answer["sdp"], re.M)) == 8, answer
        assert wait_metric(gw, "moat_transcoders", 16) == 16
    finally:
        stop(gw, client)


def test_transcoders_are_capped():
    """[call] max_transcoders 6: a call of two transcoded m-lines runs 4
    pipelines; a second one gets its first m-line transcoded and its second
    relayed as is, with a warning, counted as `limit`. A re-answer at the
    limit keeps its transcoding (its own pair makes room). Once the first
    call is deleted, a new call transcodes again."""
    gw = gateway(extra_args=["--call-max-transcoders", "6"])
    client = NgClient(gw.ng_port, timeout=30.0)
    try:
        first = call(client, "t1", PCMU, OPUS, lines=2, transcode=["opus"])
        assert first["result"] == "ok" and "warning" not in first, first
        assert gw.metric("moat_transcoders") == 4
        second = call(client, "t2", PCMU, OPUS, lines=2, transcode=["opus"])
        assert second["result"] == "ok", second
        assert "max_transcoders" in second.get("warning", ""), second
        lines = re.findall(r"^m=audio \d+ RTP/AVP (\d+)\r$", second["sdp"], re.M)
        assert lines == ["0", "111"], second["sdp"]  # transcoded; relayed as is
        assert gw.metric("moat_transcoders") == 6
        assert gw.metric(REFUSED % "limit") == 1

        again = client.command("answer", call_id="t1", from_tag="a", to_tag="b",
                               sdp=sdp(22000, OPUS, 2))
        assert again["result"] == "ok" and "warning" not in again, again
        assert gw.metric(REFUSED % "limit") == 1

        assert client.command("delete", call_id="t1", delete_delay=0)["result"] == "ok"
        assert wait_metric(gw, "moat_transcoders", 2) == 2
        third = call(client, "t3", PCMU, OPUS, lines=2, transcode=["opus"])
        assert third["result"] == "ok" and "warning" not in third, third
        assert gw.metric("moat_transcoders") == 6
    finally:
        stop(gw, client)


NOBODY = 65534


def user_tasks(uid):
    """Threads of every process of `uid` now (what RLIMIT_NPROC counts)."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/status") as f:
                    if re.search(rf"^Uid:\t{uid}\t", f.read(), re.M):
                        count += 1
        except OSError:
            pass
    return count


def as_nobody(folder, max_tasks):
    """A wrapper that starts the gateway under test as user nobody with at
    most `max_tasks` tasks for that user (what a service manager's
    TasksMax or a container's pids limit does to a gateway)."""
    sanitized = "asan" in str(MOAT)
    wrapper = Path(folder) / ("moat-asan-limited" if sanitized else "moat-limited")
    wrapper.write_text("#!/bin/bash\n"
                       f"ulimit -u {max_tasks} || exit 1\n"
                       f"exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups "
                       f"{MOAT} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv (the gateway runs as nobody, thread-limited)")
def test_no_thread_for_a_transcoder_is_a_warning_not_an_abort():
    """The gateway as nobody, 16 tasks above what that user runs now (the
    gateway takes about 5): answers that each need a transcoder pair (two
    pipelines of two threads) meet the limit within a few calls. Each is
    answered, the m-line relayed as is with a warning, counted as
    `failed`; the gateway answers ping and stops cleanly (before:
    g_thread_new aborted it, or GStreamer, unable to make the streaming
    thread, hung the control thread in gst_task_join)."""
    if subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                       str(MOAT), "--version"], capture_output=True).returncode != 0:
        pytest.skip(f"user nobody cannot run {MOAT}")
    with tempfile.TemporaryDirectory() as folder:
        wrapper = as_nobody(folder, user_tasks(NOBODY) + 16)
        gw = gateway(extra_args=["--call-max-transcoders", "4096"], binary=wrapper)
        client = NgClient(gw.ng_port, timeout=20.0)
        try:
            warnings = []
            for k in range(12):
                answer = call(client, f"n{k}", PCMU, OPUS, transcode=["opus"])
                assert gw.process.poll() is None, gw.log_text()[-2000:]
                assert answer["result"] == "ok", answer
                if "warning" in answer:
                    warnings.append(answer["warning"])
                    if len(warnings) >= 3:
                        break
            assert warnings, "the thread limit was never met"
            assert all("relayed as is" in w and "thread" in w for w in warnings), warnings
            assert client.command("ping")["result"] == "pong"
            assert gw.metric(REFUSED % "failed") == len(warnings)
            assert gw.metric("moat_transcoders") == 2 * (k + 1 - len(warnings))
        finally:
            stop(gw, client)


def filled_sdp(pad):
    """8 audio m-lines padded with a= lines to about `pad` bytes."""
    text = "v=0\r\no=- 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\n"
    text += "".join(f"m=audio {20000 + 2 * i} RTP/AVP 0\r\n" for i in range(8))
    return text + ("a=x:" + "y" * 200 + "\r\n") * (pad // 206) + "a=" + "z" * (pad % 206 + 1) + "\r\n"


def full_datagram(command, target=65507):
    """`command` (a dict with "sdp" set to a callable of the padding) as the
    largest ng datagram an IPv4 proxy can send: cookie and all, `target`."""
    make = command.pop("sdp")

    def datagram(pad):
        return b"big1 " + bencode({**command, "sdp": make(pad)})

    pad = 60000
    pad += target - len(datagram(pad))
    while len(datagram(pad)) > target:
        pad -= 1
    return datagram(pad)


def exchange(sock, port, datagram):
    sock.sendto(datagram, ("127.0.0.1", port))
    reply = sock.recv(70000)
    cookie = datagram.split(b" ", 1)[0] + b" "
    assert reply.startswith(cookie), reply[:100]
    return reply, bdecode(reply[len(cookie):])[0]


@pytest.mark.parametrize("transcode", [False, True], ids=["plain", "codec-transcode"])
def test_an_offer_whose_reply_cannot_fit_is_refused(transcode):
    """An offer that fills a 65507-byte datagram: its rewritten SDP (Moat's
    address, a=rtcp lines, the codecs codec-transcode adds) no longer fits
    a reply. It gets the error at once, no call is kept, and the proxy's
    retransmission gets the same bytes."""
    gw = gateway()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(5)
    try:
        command = {"command": "offer", "call-id": "big", "from-tag": "a", "sdp": filled_sdp}
        if transcode:
            command["codec"] = {"transcode": ["opus", "PCMA", "G722"]}
        datagram = full_datagram(command)
        assert len(datagram) == 65507
        raw, reply = exchange(sock, gw.ng_port, datagram)
        assert reply["result"] == "error" and "SDP too large" in reply["error-reason"], reply
        assert gw.metric("moat_calls") == 0
        assert exchange(sock, gw.ng_port, datagram)[0] == raw
        assert gw.metric('moat_ng_errors_total{reason="send_failed"}') == 0
        assert gw.metric("moat_ng_retransmissions_total") == 1
    finally:
        sock.close()
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def test_an_answer_whose_reply_cannot_fit_is_refused():
    """The same for an answer: an error, and the call goes on; an answer
    that fits is taken afterwards."""
    gw = gateway()
    client = NgClient(gw.ng_port, timeout=10.0)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(5)
    try:
        offer = client.command("offer", call_id="big", from_tag="a", sdp=sdp(20000, PCMU, 8))
        assert offer["result"] == "ok", offer
        datagram = full_datagram({"command": "answer", "call-id": "big", "from-tag": "a",
                                  "to-tag": "b", "sdp": filled_sdp})
        _, reply = exchange(sock, gw.ng_port, datagram)
        assert reply["result"] == "error" and "SDP too large" in reply["error-reason"], reply
        assert gw.metric("moat_calls") == 1
        answer = client.command("answer", call_id="big", from_tag="a", to_tag="b",
                                sdp=sdp(22000, PCMU, 8))
        assert answer["result"] == "ok", answer
        assert gw.metric('moat_ng_errors_total{reason="send_failed"}') == 0
    finally:
        sock.close()
        stop(gw, client)


def test_the_reply_cache_is_bounded_in_bytes():
    """400 re-offers of one call, each a 60 KB SDP with its own cookie
    (24 MB of replies): the cache holds at most 16 MiB of them, every offer
    is answered, and the latest retransmission still gets its cached
    reply."""
    gw = gateway()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    try:
        body = sdp(20000, PCMU) + ("a=x:" + "y" * 200 + "\r\n") * 290
        for k in range(400):
            datagram = b"k%d " % k + bencode({"command": "offer", "call-id": "one",
                                              "from-tag": "a", "sdp": body})
            sock.sendto(datagram, ("127.0.0.1", gw.ng_port))
            reply = sock.recv(70000)
            assert reply.startswith(b"k%d d6:result2:ok" % k), reply[:200]
        held = gw.metric("moat_ng_reply_cache_bytes")
        assert 12 << 20 < held <= 16 << 20, held
        sock.sendto(datagram, ("127.0.0.1", gw.ng_port))
        assert sock.recv(70000) == reply
        assert gw.metric("moat_ng_retransmissions_total") == 1
        assert gw.metric("moat_calls") == 1
    finally:
        sock.close()
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def test_a_cookie_longer_than_the_cache_keeps_runs_nothing():
    """The reviewer's case: an 8-m-line offer whose rewritten SDP is just
    under the SDP bound (64483 bytes) sent with a 1083-byte cookie, the
    request exactly 65507 bytes. Before, the offer passed the SDP check,
    the call was made, then the whole reply (cookie and all) was over a
    datagram and replaced by "reply too large": the proxy was told error
    but call "big" held 8 streams' ports. Now the cookie is refused before
    the command runs: an error, no call, nothing replaced; so is a 257-byte
    cookie on a small offer, every time it comes (nothing cached, nothing
    run), while a 256-byte one runs once and its retransmission is
    answered from the cache."""
    gw = gateway()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(5)
    try:
        # How much Moat's rewrite adds to filled_sdp (probe call, deleted).
        probe = {"command": "offer", "call-id": "probe", "from-tag": "a", "sdp": filled_sdp(60000)}
        _, reply = exchange(sock, gw.ng_port, b"p1 " + bencode(probe))
        assert reply["result"] == "ok", reply
        growth = len(reply["sdp"]) - len(filled_sdp(60000))
        exchange(sock, gw.ng_port, b"p2 " + bencode({"command": "delete", "call-id": "probe",
                                                     "from-tag": "a", "delete-delay": 0}))
        assert wait_metric(gw, "moat_calls", 0) == 0
        pad = 60000
        while len(filled_sdp(pad + 1)) + growth <= 64483 - 2:
            pad += 1
        command = {"command": "offer", "call-id": "big", "from-tag": "a", "sdp": filled_sdp(pad)}
        cookie = b"c" * (65507 - 1 - len(bencode(command)))
        assert len(cookie) > 1000
        datagram = cookie + b" " + bencode(command)
        assert len(datagram) == 65507
        raw, reply = exchange(sock, gw.ng_port, datagram)
        assert reply == {"result": "error",
                         "error-reason": f"cookie too long ({len(cookie)} bytes, at most 256)"}, \
            (reply, len(raw))
        assert gw.metric("moat_calls") == 0
        assert gw.metric('moat_ng_errors_total{reason="reply_too_large"}') == 0
        small = bencode({"command": "offer", "call-id": "small", "from-tag": "a",
                         "sdp": sdp(20000, PCMU)})
        for _ in range(2):
            _, reply = exchange(sock, gw.ng_port, b"c" * 257 + b" " + small)
            assert reply["result"] == "error" and "cookie too long" in reply["error-reason"], reply
        assert gw.metric("moat_calls") == 0
        assert gw.metric('moat_ng_errors_total{reason="cookie_too_long"}') == 3
        first, reply = exchange(sock, gw.ng_port, b"c" * 256 + b" " + small)
        assert reply["result"] == "ok", reply
        assert exchange(sock, gw.ng_port, b"c" * 256 + b" " + small)[0] == first
        assert gw.metric("moat_ng_retransmissions_total") == 1
        assert gw.metric('moat_ng_requests_total{command="offer"}') == 2
        assert gw.metric("moat_calls") == 1
    finally:
        sock.close()
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


OPUS_DTMF = [(127, "opus/48000/2"), (126, "telephone-event/48000")]


def test_an_answer_keeps_room_for_transcodings_codec_lines():
    """An offer of opus and telephone-event on 8 m-lines with
    codec-transcode PCMU, answered with static PCMU (no rtpmap) padded so
    that its rewritten SDP is just under the SDP bound (64483 bytes): the
    reply restricts each m-line to opus again (formats, a=rtpmap and the
    telephone-event lines, 86 bytes an m-line), after the size check.
    Before, the reply came back "ok" with a 65,100-byte SDP (over the bound
    every reply is sized by) and 16 pipelines running; now the check keeps
    room for those lines (134 bytes an m-line, transcode_sdp.h): an error,
    no transcoder, and the call goes on to take an answer that fits."""
    gw = gateway()
    client = NgClient(gw.ng_port, timeout=30.0)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(10)
    try:
        # What the rewrite adds to filled_sdp, on a call without transcoding.
        offer = client.command("offer", call_id="probe", from_tag="a", sdp=sdp(20000, OPUS_DTMF, 8))
        assert offer["result"] == "ok", offer
        _, reply = exchange(sock, gw.ng_port, b"p1 " + bencode(
            {"command": "answer", "call-id": "probe", "from-tag": "a", "to-tag": "b",
             "sdp": filled_sdp(60000)}))
        assert reply["result"] == "ok", reply
        growth = len(reply["sdp"]) - len(filled_sdp(60000))
        assert client.command("delete", call_id="probe", delete_delay=0)["result"] == "ok"
        assert wait_metric(gw, "moat_calls", 0) == 0

        offer = client.command("offer", call_id="big", from_tag="a", sdp=sdp(20000, OPUS_DTMF, 8),
                               codec={"transcode": ["PCMU"]})
        assert offer["result"] == "ok", offer
        pad = 60000
        while len(filled_sdp(pad + 1)) + growth <= 64483 - 8:
            pad += 1
        answer = {"command": "answer", "call-id": "big", "from-tag": "a", "to-tag": "b",
                  "sdp": filled_sdp(pad)}
        _, reply = exchange(sock, gw.ng_port, b"a1 " + bencode(answer))
        assert reply["result"] == "error", (reply["result"], len(reply.get("sdp", "")))
        assert "transcoding's codec lines" in reply["error-reason"], reply
        assert gw.metric("moat_transcoders") == 0
        assert gw.metric("moat_calls") == 1

        fits = client.command("answer", call_id="big", from_tag="a", to_tag="b",
                              sdp=sdp(22000, PCMU, 8))
        assert fits["result"] == "ok" and "warning" not in fits, fits
        assert len(re.findall(r"^m=audio \d+ RTP/AVP 127 126\r$", fits["sdp"], re.M)) == 8, fits
        assert gw.metric("moat_transcoders") == 16
    finally:
        sock.close()
        stop(gw, client)
