"""Soak run: a gateway (the ASan build by default) under churn for a bounded
time, its resident memory and open file descriptors sampled every second and
checked flat after a warm-up, and its exit checked clean (no ASan, LSan or
UBSan report, exit status 0 after SIGTERM).

Load, all on loopback, all bounded by --seconds:
  * aiortc data-channel sessions connecting, echoing messages, hanging up;
  * aiortc media (audio+video echo) calls connecting and hanging up;
  * moat-flood cycles: a few WHIP sessions with media, every other cycle
    with floods (forged SRTP/SRTCP, random SSRCs, STUN, malformed) switched
    on and off inside it;
  * WHIP offers that never connect (pending sessions), deleted later;
  * SFU rooms: a moat-flood publisher and subscribers in a fresh room per
    cycle (WHIP and WHEP), every subscriber's loss checked;
  * SRTP ingest: POST .../ingest with "srtp", authentic SRTP (pylibsrtp,
    the 201's key) and forgeries from a stranger, then DELETE;
  * ng calls: offer, answer, plain RTP both ways, then delete; every other
    call also gets datagrams at the receive buffer's limits (1, 1980, 8192
    and 65507 bytes) and a stranger's RTP at its legs;
  * WebRTC calls over ng (soak_webrtc_calls.py): aiortc to an SDES phone
    and aiortc to aiortc, media both ways, then delete.

Prints one summary line:
  soak seconds=... sessions=... flood_cycles=... rss_mib=start->end fds=start->end asan=clean result=ok
"""
import argparse
import asyncio
import base64
import json
import os
import random
import re
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from aiortc import RTCPeerConnection  # noqa: E402
from pylibsrtp import Policy, Session  # noqa: E402
from aiortc_peer import echo_call, whip_delete, whip_publish  # noqa: E402
from datachannel_peer import DataChannelPeer  # noqa: E402
from ng_client import NgClient  # noqa: E402
from test_room import api  # noqa: E402
from soak_gateway import Gateway, describe_fds, fd_count, rss_kib  # noqa: E402
from soak_webrtc_calls import webrtc_call  # noqa: E402

import socket  # noqa: E402

SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


class Sampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.samples = []  # (t, rss_kib, fds)
        self.stopping = threading.Event()

    def run(self):
        start = time.monotonic()
        while not self.stopping.is_set():
            try:
                self.samples.append((time.monotonic() - start, rss_kib(self.pid),
                                     fd_count(self.pid)))
            except OSError:
                return
            self.stopping.wait(1.0)


class Load:
    def __init__(self, gateway, flood_binary, deadline, seed):
        self.gw = gateway
        self.flood = flood_binary
        self.deadline = deadline
        self.rng = random.Random(seed)
        self.sessions = 0
        self.failures = []
        self.flood_cycles = 0
        self.room_cycles = 0
        self.calls = 0
        self.ingests = 0
        self.webrtc_calls = 0
        self.pending = []

    def left(self):
        return self.deadline - time.monotonic()

    async def datachannel_loop(self):
        while self.left() > 8:
            try:
                peer = await DataChannelPeer(self.gw.base, [{"label": "soak"}]).connect(timeout=15)
                try:
                    channel = peer.channels[0]
                    messages = [self.rng.randbytes(self.rng.randrange(1, 20000)) for _ in range(20)]
                    for m in messages:
                        channel.send(m)
                    await channel.wait_received(len(messages), time.monotonic() + 10)
                    if channel.received != messages:
                        self.failures.append("data channel echo incomplete")
                    await peer.delete()
                finally:
                    await peer.close()
                self.sessions += 1
            except Exception as e:  # noqa: BLE001 - recorded, the soak goes on
                self.failures.append(f"data channel session: {e!r}")
            await asyncio.sleep(self.rng.uniform(0.2, 1.0))

    async def media_loop(self):
        while self.left() > 10:
            try:
                result = await echo_call(self.gw.base, self.rng.uniform(2, 4))
                if result["delete_status"] != 200:
                    self.failures.append(f"media call DELETE {result['delete_status']}")
                self.sessions += 1
            except Exception as e:  # noqa: BLE001
                self.failures.append(f"media call: {e!r}")
            await asyncio.sleep(self.rng.uniform(0.5, 1.5))

    async def pending_loop(self):
        """WHIP offers nobody connects: the gateway holds them until DELETE
        (or its setup timeout in long runs)."""
        while self.left() > 5:
            pc = RTCPeerConnection()
            pc.createDataChannel("never")
            try:
                resource, _ = await whip_publish(pc, self.gw.base + "/whip/echo")
                self.pending.append(resource)
            except Exception as e:  # noqa: BLE001
                self.failures.append(f"pending offer: {e!r}")
            finally:
                await pc.close()
            while len(self.pending) > 10:
                await whip_delete(self.pending.pop(0))
            await asyncio.sleep(self.rng.uniform(0.5, 2.0))

    def run_flood(self, what, args):
        """One moat-flood run; its stdout, or None (the failure recorded)."""
        try:
            result = subprocess.run([str(self.flood), *args], capture_output=True, text=True,
                                    timeout=60)
        except subprocess.TimeoutExpired:
            self.failures.append(f"{what}: moat-flood did not finish")
            return None
        if result.returncode != 0:
            self.failures.append(f"{what}: moat-flood exited {result.returncode}: "
                                 f"{result.stderr.strip()[-300:]}")
            return None
        return result.stdout

    def flood_loop(self):
        while self.left() > 12:
            args = ["--whip", self.gw.base + "/whip/echo", "--sessions", "3",
                    "--media", self.rng.choice(["g711", "opus", "video"]), "--duration", "6",
                    "--quiet", "--setup-timeout", "10"]
            if self.flood_cycles % 2 == 1:
                args += ["--attack", "forged-own,random-ssrc,forged-rtcp,replay,stun-flood,malformed",
                         "--rate", "1500", "--attack-after", "1", "--attack-for", "3"]
            if self.run_flood("flood cycle", args) is not None:
                self.sessions += 3
            self.flood_cycles += 1
            time.sleep(self.rng.uniform(0.5, 1.5))

    def room_loop(self):
        """A room per cycle: one publisher, three subscribers, then all
        leave (the room goes with its last member)."""
        while self.left() > 12:
            room = f"soak{self.room_cycles}"
            out = self.run_flood("room cycle", [
                "--whip", f"{self.gw.base}/whip/room/{room}",
                "--whep", f"{self.gw.base}/whep/room/{room}", "--subscribers", "3",
                "--duration", "5", "--setup-timeout", "10", "--drain", "1", "--json"])
            if out is not None:
                try:
                    received = [s["received"] for s in json.loads(out)["per_subscriber"]]
                except (ValueError, KeyError) as e:
                    received = [repr(e)]
                if len(received) != 3 or min(received) == 0:
                    self.failures.append(f"room subscribers received {received}")
                self.sessions += 4
            self.room_cycles += 1
            time.sleep(self.rng.uniform(0.5, 1.5))

    def one_ingest(self, n):
        """An SRTP ingest: a stranger's forgeries first, then 30 authentic
        packets (the room's publisher counts them), then DELETE."""
        room = f"ingest{n}"
        status, body = api(self.gw, "POST", f"/api/rooms/{room}/ingest", {
            "audio": {"codec": "opus", "pt": 111}, "srtp": {"suite": "AES_CM_128_HMAC_SHA1_80"}})
        if status != 201:
            self.failures.append(f"SRTP ingest: {status} {body}")
            return
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            target = ("127.0.0.1", body["port"])
            forged = srtp_sender(os.urandom(30))
            for seq in range(1, 11):
                stranger.sendto(forged.protect(rtp_packet(seq, 0x7777, pt=111)), target)
            mine = srtp_sender(base64.b64decode(body["srtp"]["key"]))
            for seq in range(100, 130):
                sender.sendto(mine.protect(rtp_packet(seq, 0x7777, pt=111)), target)
            deadline = time.monotonic() + 5
            packets = 0
            while time.monotonic() < deadline and packets < 30:
                time.sleep(0.1)
                _, room_body = api(self.gw, "GET", f"/api/rooms/{room}")
                publishers = (room_body or {}).get("publishers") or [{}]
                packets = publishers[0].get("packets", 0)
            if packets != 30:
                self.failures.append(f"SRTP ingest: the publisher counted {packets} of 30")
            self.sessions += 1
            self.ingests += 1
        finally:
            sender.close()
            stranger.close()
            api(self.gw, "DELETE", body["resource"])

    def ingest_loop(self):
        n = 0
        while self.left() > 8:
            try:
                self.one_ingest(n)
            except Exception as e:  # noqa: BLE001 - recorded, the soak goes on
                self.failures.append(f"SRTP ingest: {e!r}")
            n += 1
            time.sleep(self.rng.uniform(0.5, 1.5))

    def one_call(self, client, call_id, hostile):
        phones = []
        try:
            for _ in range(3):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(("127.0.0.1", 0))
                s.settimeout(1.0)
                phones.append(s)
            caller, callee, stranger = phones
            offer = client.command("offer", call_id=call_id, from_tag="a",
                                   sdp=phone_sdp(caller.getsockname()[1], 1))
            answer = client.command("answer", call_id=call_id, from_tag="a", to_tag="b",
                                    sdp=phone_sdp(callee.getsockname()[1], 2))
            if offer.get("result") != "ok" or answer.get("result") != "ok":
                self.failures.append(f"call {call_id}: {offer.get('error-reason', offer.get('result'))}/"
                                     f"{answer.get('result')}")
                return
            to_callee_leg, to_caller_leg = sdp_port(answer["sdp"]), sdp_port(offer["sdp"])
            if hostile:
                # A stranger on the phones' own IP speaks first: it latches
                # both legs until each phone's exact SDP address speaks
                # (call_learning.h), and gets what is relayed meanwhile.
                for leg in (to_callee_leg, to_caller_leg):
                    for size in (1, 1980, 8192, 65507):
                        stranger.sendto(bytes(size), ("127.0.0.1", leg))
                    stranger.sendto(rtp_packet(0, 0x5555), ("127.0.0.1", leg))
                caller.sendto(rtp_packet(0, 0x1111), ("127.0.0.1", to_callee_leg))
                callee.sendto(rtp_packet(0, 0x2222), ("127.0.0.1", to_caller_leg))
                time.sleep(0.1)
                for s in phones:
                    drain_count(s, 100, timeout=0.1)
            for seq in range(1, 21):
                caller.sendto(rtp_packet(seq, 0x1111), ("127.0.0.1", to_callee_leg))
                callee.sendto(rtp_packet(seq, 0x2222), ("127.0.0.1", to_caller_leg))
            if hostile:
                stranger.sendto(rtp_packet(99, 0x5555), ("127.0.0.1", to_callee_leg))
            got = [drain_count(callee, 20), drain_count(caller, 20)]
            if min(got) < 15:
                self.failures.append(f"call {call_id}: RTP forward/back {got} of 20")
            leaked = drain_count(stranger, 100, timeout=0.1) if hostile else 0
            if leaked:
                self.failures.append(f"call {call_id}: the stranger got {leaked} packets "
                                     "after both phones spoke")
            reply = client.command("delete", call_id=call_id, from_tag="a", delete_delay=0)
            if reply.get("result") != "ok":
                self.failures.append(f"call {call_id} delete: {reply.get('result')}")
            self.calls += 1
        finally:
            for s in phones:
                s.close()

    def call_loop(self):
        client = NgClient(self.gw.ng_port)
        while self.left() > 6:
            try:
                self.one_call(client, f"soak-{self.calls}-{self.rng.getrandbits(32):08x}",
                              hostile=self.calls % 2 == 1)
            except Exception as e:  # noqa: BLE001 - recorded, the soak goes on
                self.failures.append(f"call: {e!r}")
            time.sleep(self.rng.uniform(0.2, 0.8))

    def webrtc_call_loop(self):
        client = NgClient(self.gw.ng_port, timeout=10.0)

        async def calls():
            while self.left() > 8:
                call_id = f"soak-webrtc-{self.webrtc_calls}-{self.rng.getrandbits(32):08x}"
                try:
                    failure = await webrtc_call(client, call_id, self.webrtc_calls % 2 == 0)
                except Exception as e:  # noqa: BLE001 - recorded, the soak goes on
                    failure = repr(e)
                if failure:
                    self.failures.append(f"WebRTC call {call_id}: {failure}")
                self.webrtc_calls += 1
                await asyncio.sleep(self.rng.uniform(0.3, 1.0))
        asyncio.run(calls())

    async def run(self):
        loop = asyncio.get_running_loop()
        default = loop.get_exception_handler()

        def quiet(loop, context):
            # Pending offers are closed before ICE starts: aiortc's connect
            # task then fails with InvalidStateError, which is expected.
            if type(context.get("exception")).__name__ == "InvalidStateError":
                return
            if default:
                default(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(quiet)
        threads = [threading.Thread(target=loop_body, daemon=True)
                   for loop_body in (self.flood_loop, self.room_loop, self.call_loop,
                                     self.ingest_loop, self.webrtc_call_loop)]
        for thread in threads:
            thread.start()
        await asyncio.gather(self.datachannel_loop(), self.media_loop(), self.pending_loop())
        for resource in self.pending:
            await whip_delete(resource)
        self.pending.clear()
        for thread in threads:
            await asyncio.get_running_loop().run_in_executor(None, thread.join)


def phone_sdp(port, session):
    return ("v=0\r\n"
            f"o=- {session} 1 IN IP4 127.0.0.1\r\n"
            "s=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\na=sendrecv\r\n")


def sdp_port(sdp):
    """The m=audio port of a rewritten SDP (a leg of Moat's)."""
    return int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1))


def rtp_packet(seq, ssrc, pt=8):
    return struct.pack("!BBHII", 0x80, pt, seq, seq * 160, ssrc) + bytes(160)


def srtp_sender(key):
    return Session(Policy(key=key, srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80,
                          ssrc_type=Policy.SSRC_ANY_OUTBOUND))



def drain_count(sock, most, timeout=None):
    got = 0
    if timeout is not None:
        sock.settimeout(timeout)
    try:
        while got < most:
            sock.recvfrom(2048)
            got += 1
    except socket.timeout:
        pass
    return got


def median(values):
    return statistics.median(values) if values else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--moat", default=str(ROOT / "build-asan" / "gateway" / "moat"))
    parser.add_argument("--flood", default=str(ROOT / "build" / "tools" / "moat-flood"))
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--lenient-http", dest="strict_http", action="store_false",
                        default=os.environ.get("SOAK_STRICT_HTTP", "1") != "0",
                        help="only report HTTP connections left in CLOSE_WAIT instead of failing "
                             "(libsoup leaks closed keep-alive connections; the gateway closes "
                             "every connection after its reply to avoid it)")
    args = parser.parse_args()
    seconds = max(30, args.seconds)
    artifacts = ROOT / "tests" / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)

    gw = Gateway(Path(args.moat), artifacts)
    time.sleep(1)
    idle_fds = fd_count(gw.process.pid)
    idle_kinds = describe_fds(gw.process.pid, gw.http_port)
    sampler = Sampler(gw.process.pid)
    sampler.start()
    load = Load(gw, Path(args.flood), time.monotonic() + seconds, args.seed)
    problems = []
    try:
        asyncio.run(load.run())
        # Everything hung up: wait for the sessions to leave the gateway.
        deadline = time.monotonic() + 30
        while gw.metric("moat_sessions") > 0 and time.monotonic() < deadline:
            time.sleep(0.5)
        if gw.metric("moat_sessions") > 0:
            problems.append(f"{gw.metric('moat_sessions'):.0f} sessions left after hang-up")
        for gauge in ("moat_calls", "moat_call_legs"):
            if gw.metric(gauge) > 0:
                problems.append(f"{gauge} {gw.metric(gauge):.0f} after every call was deleted")
        rooms = json.loads(gw.get("/api/rooms")).get("rooms", [])
        if rooms:
            problems.append(f"rooms left after every member left: {rooms[:3]}")
        time.sleep(2)
        end_fds = fd_count(gw.process.pid)
        end_kinds = describe_fds(gw.process.pid, gw.http_port)
        # TCP connections the client closed (CLOSE_WAIT on the HTTP port) or
        # reset (closed sockets in no table) that the gateway still holds.
        http_close_wait = end_kinds.get(f"tcp:{gw.http_port}:08", 0) + \
            end_kinds.get("socket", 0) - idle_kinds.get("socket", 0)
        datachannel_memory = gw.metric("moat_datachannel_memory_bytes")
    finally:
        sampler.stopping.set()
        sampler.join()
        code = gw.stop()

    samples = sampler.samples
    warm = max(10.0, seconds * 0.3)
    after = [s for s in samples if s[0] >= warm]
    third = max(1, len(after) // 3)
    rss_start = median([s[1] for s in after[:third]]) / 1024
    rss_end = median([s[1] for s in after[-third:]]) / 1024
    rss_peak = max((s[1] for s in samples), default=0) / 1024
    fds_peak = max((s[2] for s in samples), default=0)
    # Flat: the last third of the run within 15 % (at least 32 MiB, ASan's
    # allocator caches move in steps) of the first third after warm-up.
    allowed = max(32.0, rss_start * 0.15)
    if rss_end - rss_start > allowed:
        problems.append(f"resident memory grew {rss_start:.0f} -> {rss_end:.0f} MiB "
                        f"(allowed +{allowed:.0f})")
    # Every other descriptor (UDP media sockets, epoll, eventfd, timerfd,
    # files) must be back where it was; HTTP keep-alive connections the
    # clients closed but the gateway did not are counted apart.
    if end_fds - http_close_wait > idle_fds + 2:
        problems.append(f"file descriptors {idle_fds} idle -> {end_fds} after the run "
                        f"({http_close_wait} of them HTTP connections in CLOSE_WAIT); "
                        f"idle {idle_kinds}, after {end_kinds}")
    if args.strict_http and http_close_wait > 0:
        problems.append(f"{http_close_wait} HTTP connections left in CLOSE_WAIT")
    if datachannel_memory != 0:
        problems.append(f"data-channel memory {datachannel_memory:.0f} bytes held with no sessions")
    log = gw.log_path.read_text(errors="replace")
    sanitizer = [m for m in SANITIZER_MARKS if m in log]
    if code != 0:
        problems.append(f"moat exited with {code}")
    if sanitizer:
        problems.append("sanitizer report in " + str(gw.log_path))
    if load.sessions == 0:
        problems.append("no session completed")
    # Load failures are reported; a few (a peer timing out on a loaded host)
    # are tolerated, a systematic failure is not.
    if len(load.failures) > max(3, load.sessions // 5):
        problems.append(f"{len(load.failures)} load failures, first: {load.failures[0]}")
    for failure in load.failures[:5]:
        print(f"# load: {failure}")
    result = "ok" if not problems else "FAILED"
    if min(load.room_cycles, load.calls, load.ingests, load.webrtc_calls) == 0:
        problems.append(f"room cycles {load.room_cycles}, calls {load.calls}, SRTP ingests "
                        f"{load.ingests}, WebRTC calls {load.webrtc_calls}: a loop never ran")
    print(f"soak seconds={seconds} sessions={load.sessions} flood_cycles={load.flood_cycles} "
          f"room_cycles={load.room_cycles} calls={load.calls} webrtc_calls={load.webrtc_calls} "
          f"srtp_ingests={load.ingests} "
          f"rss_mib={rss_start:.0f}->{rss_end:.0f} (peak {rss_peak:.0f}) "
          f"fds={idle_fds}->{end_fds} (peak {fds_peak}, http_close_wait={http_close_wait}) "
          f"asan={'clean' if not sanitizer else 'REPORT'} result={result}")
    for p in problems:
        print(f"soak: {p}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
