"""The kernel prefilter (eBPF socket filter on each worker socket): a forged
SRTP+ flood (prn or chain, moat-flood forging on the call's own 5-tuple and
SSRC) dies in the kernel once the detector enforces, and the kernel's
counters account for what moat-flood sent, while the call keeps its media;
unknown 5-tuples are dropped in the kernel but STUN and DTLS from them still
reach user space; and without CAP_BPF the user-space prefilter takes over and
says so in the log and on /metrics."""
import asyncio
import json
import os
import socket
import stat
import subprocess
import time

import pytest

import conftest
from conftest import ROOT, Gateway

FLOOD = ROOT / "build" / "tools" / "moat-flood"
REASONS = ("unknown_tuple", "unknown_ssrc", "index", "tag", "malformed")


def kernel_drops(gateway):
    m = gateway.metrics()
    return {r: m[f'moat_kernel_dropped_packets_total{{reason="{r}"}}'] for r in REASONS}


def all_drops(gateway):
    m = gateway.metrics()
    return {k.split('"')[1]: v for k, v in m.items() if k.startswith("moat_dropped_packets_total{")}


def run_flood(gateway, scheme):
    result = subprocess.run(
        [str(FLOOD), "--whip", gateway.base + "/whip/echo", "--sessions", "1", "--media", "g711",
         "--srtpplus", scheme, "--attack", "forged-own", "--rate", "20000", "--attack-after", "1.5",
         "--forge-ahead", "1:24", "--attack-for", "2", "--duration", "4", "--json", "--quiet"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def kernel_gateway():
    gw = Gateway(workers=1, extra_args=("--prefilter-kernel", "on"))
    yield gw
    assert gw.stop() == 0


@pytest.mark.parametrize("scheme", ["prn", "chain"])
def test_forged_srtpplus_flood_dies_in_the_kernel(kernel_gateway, scheme):
    gateway = kernel_gateway
    assert gateway.metric("moat_kernel_filter_active") == 1
    report = run_flood(gateway, scheme)
    session = report["sessions"][0]
    assert session["srtpplus"] == scheme
    forged = report["sent"]["forged-own"]
    assert forged > 20000
    kernel = kernel_drops(gateway)
    drops = all_drops(gateway)
    # Until the detector switched on (and the next 10 ms tick published the
    # tags), forgeries reached user space; every later one died in the kernel.
    assert kernel["tag"] >= 0.98 * forged, (kernel, forged)
    assert sum(kernel.values()) <= forged, (kernel, forged)
    # Kernel drops count as drops of the transport too: every forgery is
    # accounted for, in the kernel or in user space, and none reached the
    # plugin.
    forged_drops = drops["tag"] + drops["index"] + drops["auth"] + drops["replay"] + drops["budget"]
    assert forged_drops == forged, (drops, forged)
    assert drops["tag"] >= kernel["tag"]
    # The call and its handshake (STUN, DTLS, consent checks) were unaffected.
    assert session["loss"] < 0.01, session
    assert session["received"] > 150, session
    # The flood's transport switched its detector on (the session has ended by
    # now, so the counter is read from /metrics, not from /api/stats).
    assert gateway.metrics()["moat_detector_switches_on_total"] >= 1


@pytest.mark.parametrize("attack,reason", [
    (("--attack", "forged-own", "--forge-ahead", "8000:20000"), "index"),
    (("--attack", "random-ssrc"), "unknown_ssrc"),
])
def test_floods_on_a_call_without_srtpplus_die_in_the_kernel(kernel_gateway, attack, reason):
    """No SRTP+: the kernel checks the SSRC and the plausibility window around
    the highest authenticated index (the stream guard's)."""
    gateway = kernel_gateway
    result = subprocess.run(
        [str(FLOOD), "--whip", gateway.base + "/whip/echo", "--sessions", "1", "--media", "g711",
         *attack, "--rate", "20000", "--attack-after", "1.5", "--attack-for", "2",
         "--duration", "4", "--json", "--quiet"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    forged = sum(report["sent"].values())
    kernel = kernel_drops(gateway)
    assert kernel[reason] >= 0.98 * forged, (kernel, forged)
    assert gateway.drops(reason) + gateway.drops("auth") + gateway.drops("budget") == forged
    assert report["sessions"][0]["loss"] < 0.01


def test_with_the_detector_off_the_kernel_passes_the_flood():
    """[prefilter] mode = off: the detector never enforces, so the filter
    checks nothing but the free structural rules and the forgeries reach
    srtp_unprotect, as in user space."""
    gateway = Gateway(workers=1, extra_args=("--prefilter-kernel", "on",
                                             "--prefilter-mode", "off"))
    try:
        report = run_flood(gateway, "prn")
        forged = report["sent"]["forged-own"]
        assert sum(kernel_drops(gateway).values()) == 0, kernel_drops(gateway)
        assert gateway.drops("auth") + gateway.drops("replay") >= 0.9 * forged
    finally:
        assert gateway.stop() == 0


def stun_binding_request():
    return (b"\x00\x01\x00\x00" + bytes.fromhex("2112a442") + os.urandom(12))


def test_unknown_tuples_dropped_in_the_kernel_but_stun_and_dtls_pass(kernel_gateway):
    gateway = kernel_gateway
    before_user = all_drops(gateway)
    target = ("127.0.0.1", gateway.media_port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(10):
            s.sendto(b"\x80\x00" + i.to_bytes(2, "big") + os.urandom(100), target)  # RTP
            s.sendto(stun_binding_request(), target)  # STUN, no USERNAME
            s.sendto(b"\x16\xfe\xfd" + os.urandom(60), target)  # DTLS record
            s.sendto(b"\x50" + os.urandom(60), target)  # neither: malformed
    deadline = time.time() + 5
    while time.time() < deadline:
        kernel = kernel_drops(gateway)
        after_user = all_drops(gateway)
        user_seen = sum(after_user.values()) - sum(before_user.values()) - sum(kernel.values())
        if kernel["unknown_tuple"] >= 10 and user_seen >= 20:
            break
        time.sleep(0.1)
    assert kernel["unknown_tuple"] == 10, kernel
    assert kernel["malformed"] == 10, kernel
    # Kernel drops count in moat_dropped_packets_total too, by the same reason
    # user space would have given.
    assert after_user["malformed"] - before_user["malformed"] >= 10
    # STUN (malformed or stun_auth) and DTLS (unknown tuple) reached user space.
    assert user_seen == 20, (before_user, after_user, kernel)


def capless_moat(tmp_path):
    """A wrapper that starts moat without CAP_BPF and CAP_SYS_ADMIN."""
    wrapper = tmp_path / "moat-without-cap-bpf"
    wrapper.write_text("#!/bin/sh\nexec capsh --drop=cap_bpf,cap_sys_admin,cap_perfmon -- "
                       f"-c 'exec \"$0\" \"$@\"' {conftest.MOAT} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def test_without_cap_bpf_the_user_space_prefilter_takes_over(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "MOAT", capless_moat(tmp_path))
    gateway = Gateway(workers=1)
    try:
        m = gateway.metrics()
        assert m["moat_kernel_filter_active"] == 0
        fallback = [k for k in m if k.startswith("moat_kernel_filter_fallback{")]
        assert fallback and "CAP_BPF" in fallback[0], fallback
        assert "kernel filter unavailable" in gateway.log_text()
        report = run_flood(gateway, "prn")
        forged = report["sent"]["forged-own"]
        assert report["sessions"][0]["loss"] < 0.01
        assert sum(kernel_drops(gateway).values()) == 0
        assert gateway.drops("tag") > 0.5 * forged
    finally:
        assert gateway.stop() == 0


def test_kernel_on_without_cap_bpf_refuses_to_start(tmp_path):
    result = subprocess.run(
        [str(capless_moat(tmp_path)), "--prefilter-kernel", "on", "--http-port", str(conftest.free_port()),
         "--media-port", str(conftest.free_port(socket.SOCK_DGRAM)), "--workers", "1"],
        capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert "[prefilter] kernel = on" in result.stdout + result.stderr


def global_ipv6_address():
    """A non-loopback, non-link-local IPv6 address of this host, or None."""
    out = subprocess.run(["ip", "-6", "-o", "addr", "show", "scope", "global"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if "inet6" in fields:
            return fields[fields.index("inet6") + 1].split("/")[0]
    return None


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_legitimate_call_passes_an_always_enforcing_filter(family):
    """aiortc (no SRTP+: SSRC and index window checked in the kernel) with the
    prefilter always enforcing: media flows both ways, the kernel drops
    nothing. Over IPv6 the filter reads the source from the IPv6 header."""
    from aiortc_peer import echo_call
    import asyncio
    address = "127.0.0.1" if family == "ipv4" else global_ipv6_address()
    if address is None:
        pytest.skip("no global IPv6 address on this host")
    gateway = Gateway(workers=1, candidate_addresses=address,
                      extra_args=("--prefilter-mode", "always", "--prefilter-kernel", "on"))
    during = {}

    async def read_drops_before_the_hang_up(pc):
        await asyncio.sleep(3)
        during.update(kernel_drops(gateway))

    try:
        result = asyncio.run(echo_call(gateway.base, 3, on_running=read_drops_before_the_hang_up))
        assert result["sent_audio"] > 100
        m = gateway.metrics()
        assert m["moat_rtp_packets_received_total"] > 200
        # Nothing dropped while the call lasted...
        assert during and sum(during.values()) == 0, during
        # ...and after the hang-up only what aiortc still sent from its
        # now unknown tuple (its last RTCP, in flight at the DELETE).
        after = kernel_drops(gateway)
        assert all(after[r] == 0 for r in REASONS if r != "unknown_tuple"), after
        selected = [line for line in gateway.log_text().splitlines() if "selected pair" in line]
        assert selected and (("[::ffff:" in selected[0]) == (family == "ipv4")), selected
    finally:
        assert gateway.stop() == 0


def test_a_stream_the_sdp_did_not_declare_is_learned_while_enforcing():
    """An aiortc publisher whose offer names no video SSRC (as rid simulcast
    offers do), the filter enforcing from the start: a trickle of the
    unknown SSRC reaches user space, which authenticates and learns it, so
    the video flows (before, the kernel dropped every packet of it as
    unknown_ssrc: 250 dropped, only the audio's 199 received)."""
    received, drops = publish_while_enforcing()
    # Audio alone is about 50 packets/s; the video adds more than that.
    assert received > 350, (received, drops)
    assert drops["unknown_ssrc"] < 20, drops


def test_a_stream_on_ssrc_zero_is_listed_while_enforcing():
    """The same publisher sending its video on SSRC 0 (legal in RFC 3550):
    once a packet of it authenticated, the kernel lists it like any other
    (before, SSRC 0 was never published, taken for 'none declared', and the
    kernel dropped the video as unknown_ssrc: 309 in 6 s)."""
    received, drops = publish_while_enforcing(video_ssrc=0)
    assert received > 350, (received, drops)
    assert drops["unknown_ssrc"] < 20, drops


def without_video_ssrc(sdp):
    lines, video = [], False
    for line in sdp.split("\r\n"):
        if line.startswith("m="):
            video = line.startswith("m=video")
        if not (video and line.startswith("a=ssrc")):
            lines.append(line)
    return "\r\n".join(lines)


def publish_while_enforcing(video_ssrc=None):
    """An aiortc publisher (audio and video, the offer naming no video SSRC;
    video on `video_ssrc` when given) for 4 s on a gateway whose kernel
    filter enforces from the start: the RTP packets the gateway received and
    the kernel's drops."""
    from aiortc import RTCPeerConnection
    from aiortc_peer import PatternTrack, ToneTrack, whip_delete, whip_publish

    gateway = Gateway(workers=1, extra_args=("--prefilter-kernel", "on",
                                             "--prefilter-mode", "always"))
    try:
        async def run():
            pc = RTCPeerConnection()
            pc.addTrack(ToneTrack())
            pc.addTrack(PatternTrack())
            if video_ssrc is not None:
                for sender in pc.getSenders():
                    if sender.track.kind == "video":
                        sender._ssrc = video_ssrc  # aiortc has no API for it
            resource, _ = await whip_publish(pc, gateway.base + "/whip/echo",
                                             mangle_offer=without_video_ssrc)
            await asyncio.sleep(4)
            received = gateway.metric("moat_rtp_packets_received_total")
            await whip_delete(resource)
            await pc.close()
            return received
        received = asyncio.run(run())
        assert gateway.metric("moat_kernel_filter_active") == 1
        return received, kernel_drops(gateway)
    finally:
        assert gateway.stop() == 0
