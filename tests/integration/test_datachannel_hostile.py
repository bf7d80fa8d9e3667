"""Hostile data channel input from an authenticated peer (inside its own
DTLS session): malformed DCEP, SCTP packets with lying lengths, random
chunks, messages over the advertised a=max-message-size. The gateway drops
what it cannot use and keeps the channel, or its SCTP stack ends the
association the way RFC 9260 prescribes; either way the session still ends
cleanly, and a second session echoing all along loses nothing.

Crafted input goes through aiortc's internals: RTCSctpTransport._send for
whole messages with any PPID (the SCTP framing stays valid), and the DTLS
transport's _send_data for SCTP packets built here byte by byte."""
import asyncio
import random
import re
import struct
import time

from google_crc32c import value as crc32c

from datachannel_peer import DataChannelPeer, gateway_metrics

SCTP_PORT = 5000
PPID_DCEP, PPID_STRING = 50, 51
LARGEST = 256 * 1024


ENOUGH_ECHOES = 40


class Bystander:
    """Another session on the same gateway, echoing one message every 10 ms
    the whole time; every echo must come back, in order."""

    def __init__(self, base):
        self.peer = DataChannelPeer(base, [{"label": "bystander"}])
        self.sent = []
        self.slowest = 0.0
        self._task = None
        self._stop = False
        self._enough = asyncio.Event()  # set at ENOUGH_ECHOES

    async def start(self):
        await self.peer.connect()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self):
        channel = self.peer.channels[0]
        while not self._stop:
            text = f"bystander {len(self.sent)}"
            started = time.monotonic()
            channel.send(text)
            self.sent.append(text)
            await channel.wait_received(len(self.sent), started + 5)
            self.slowest = max(self.slowest, time.monotonic() - started)
            if len(self.sent) >= ENOUGH_ECHOES:
                self._enough.set()
            await asyncio.sleep(0.01)

    async def stop(self):
        # A last second of echoes after whatever the other session did, and
        # at least 40 in all: under the ASan gateway (make hostile) on a busy
        # machine an echo takes longer, and the scenario may end sooner.
        await asyncio.sleep(1.0)
        try:
            await asyncio.wait_for(asyncio.shield(self._enough.wait()), 20)
        except asyncio.TimeoutError:
            pass  # the count is asserted below
        self._stop = True
        await asyncio.wait_for(self._task, 10)
        received = list(self.peer.channels[0].received)
        status = await self.peer.delete()
        await self.peer.close()
        assert status == 200
        assert len(self.sent) >= ENOUGH_ECHOES, f"the bystander barely ran: {len(self.sent)} echoes"
        assert received == self.sent, f"bystander: {len(received)} of {len(self.sent)} echoed"
        assert self.slowest < 2.0, f"a bystander echo took {self.slowest:.2f} s"


async def victim(base, label="victim"):
    return await DataChannelPeer(base, [{"label": label}]).connect()


async def echoes(peer, text, timeout=5):
    """Whether `text` comes back as the very next message on the channel."""
    channel = peer.channels[0]
    if channel.channel.readyState != "open":
        return False
    before = len(channel.received)
    channel.send(text)
    await channel.wait_received(before + 1, time.monotonic() + timeout)
    return channel.received[before:] == [text]


def session_label(gateway):
    """The public label of the newest session: the gateway's log names
    sessions by label, never by their resource id (a capability). Call it
    right after the peer connected, while no other session is being made."""
    labels = re.findall(r"session (\d+): created", gateway.log_text())
    assert labels, "no session was created"
    return labels[-1]


def sctp_packet(sctp, chunks, verification_tag=None):
    """An SCTP packet from aiortc's association: its ports, the gateway's
    verification tag, a correct CRC32c (RFC 9260 §3.1)."""
    tag = sctp._remote_verification_tag if verification_tag is None else verification_tag
    packet = struct.pack("!HHII", SCTP_PORT, SCTP_PORT, tag, 0) + chunks
    return packet[:8] + struct.pack("<I", crc32c(packet)) + packet[12:]


def chunk(kind, flags, body, length=None):
    """A chunk whose length field says `length` (default: the truth)."""
    raw = struct.pack("!BBH", kind, flags, 4 + len(body) if length is None else length) + body
    return raw + b"\0" * (-len(raw) % 4)


def dcep_open(label, protocol=b"", channel_type=0, label_length=None, protocol_length=None):
    return struct.pack("!BBHIHH", 3, channel_type, 256, 0,
                       len(label) if label_length is None else label_length,
                       len(protocol) if protocol_length is None else protocol_length) \
        + label + protocol


def test_malformed_dcep_is_dropped_and_the_channel_keeps_working(gateway):
    async def scenario():
        bystander = Bystander(gateway.base)
        await bystander.start()
        peer = await victim(gateway.base)
        sctp = peer.pc.sctp
        hostile = [
            (0, b"\x00"),                                       # unknown message type
            (0, b"\x03"),                                       # truncated OPEN
            (0, b"\x02\x00"),                                   # ACK with trailing bytes
            (0, dcep_open(b"dup")),                             # OPEN for a channel in use
            (2, dcep_open(b"x", label_length=0xFFFF)),          # label past the end
            (4, dcep_open(b"x", protocol_length=0xFFF0)),       # protocol past the end
            (6, dcep_open(b"x") + b"trailing"),                 # bytes after the protocol
            (8, dcep_open(b"x", channel_type=0x7F)),            # unknown channel type
            (10, dcep_open(b"\xff\xfe\xfd")),                   # label not UTF-8
            (12, dcep_open(b"a\x00b")),                         # NUL in the label
            (14, dcep_open(b"L" * 300)),                        # label over 255 bytes
            (16, b"\x02"),                                      # ACK for no channel
            (18, bytes(random.Random(1).randbytes(65536))),     # 64 KiB of noise
        ]
        try:
            for stream, payload in hostile:
                await sctp._send(stream, PPID_DCEP, payload)
            # A message with an unknown PPID on the channel, and a string on
            # a stream without a channel: neither may be passed on as data.
            await sctp._send(0, 0x1234, b"unknown ppid")
            await sctp._send(20, PPID_STRING, b"no channel here")
            assert await echoes(peer, "still here after the bad DCEP"), \
                f"the victim's channel stopped echoing: {peer.channels[0].received[-3:]}"
            m = await gateway_metrics(gateway.base)
            status = await peer.delete()
            await bystander.stop()
            return m, status
        finally:
            await peer.close()

    m, status = asyncio.run(scenario())
    assert status == 200
    log = gateway.log_text()
    opened = re.findall(r'channel (\d+) \\"([^"\\]*)\\" open', log)
    assert sorted(label for _, label in opened) == ["bystander", "victim"], opened
    assert m["moat_sessions"] == 2


# Each packet below breaks a length rule in a way RFC 9260 tells the
# receiver to ignore; usrsctp drops it and the association carries on.
def ignorable_packets(sctp):
    tsn = struct.pack("!I", sctp._local_tsn)
    return {
        "DATA longer than the packet": chunk(0, 3, tsn + struct.pack("!HHI", 0, 0, 51) + b"abc",
                                             length=0xFFFF),
        "SACK counting gap blocks it lacks": chunk(3, 0, tsn + struct.pack("!IHH", 1 << 20, 500, 500)),
        "HEARTBEAT with an overlong parameter": chunk(4, 0, struct.pack("!HH", 1, 0xFFF0) + b"x" * 8),
        "unknown chunk shorter than its header": chunk(0xC5, 0, b"abc", length=2),
        "FORWARD-TSN of odd length": chunk(192, 0, tsn + b"\x00\x01\x00", length=11),
        "RE-CONFIG listing more streams than it holds": chunk(
            130, 0, struct.pack("!HHIII", 13, 16 + 4000, 1, 2, 3) + b"\x00\x02" * 4),
        "ERROR with an overlong cause": chunk(9, 0, struct.pack("!HH", 1, 0x1000)),
        "SHUTDOWN without its TSN": chunk(7, 0, b"", length=4),
        "COOKIE ECHO of garbage": chunk(10, 0, b"x" * 40),
    }


# These are protocol violations that RFC 9260 answers with ABORT (DATA
# without user data, a chunk of length 0, I-DATA never negotiated, an INIT
# with initiate tag 0): the association ends, the session must not.
FATAL_PACKETS = ["DATA of length 0", "DATA of length 8", "DATA without user data",
                 "chunk of length 0 after a HEARTBEAT", "I-DATA, never negotiated",
                 "INIT with initiate tag 0"]


def fatal_packet(name, sctp):
    """(chunks, verification tag or None for the association's own)."""
    tsn = struct.pack("!I", sctp._local_tsn)
    return {
        "DATA of length 0": (chunk(0, 3, b"", length=0), None),
        "DATA of length 8": (chunk(0, 3, tsn, length=8), None),
        "DATA without user data": (chunk(0, 3, tsn + struct.pack("!HHI", 0, 5, 51)), None),
        "chunk of length 0 after a HEARTBEAT": (
            chunk(4, 0, struct.pack("!HH", 1, 8) + b"abcd") + struct.pack("!BBH", 0, 0, 0), None),
        "I-DATA, never negotiated": (chunk(64, 3, tsn + struct.pack("!HHII", 0, 0, 0, 51) + b"zz"),
                                     None),
        # An INIT travels with verification tag 0.
        "INIT with initiate tag 0": (chunk(1, 0, struct.pack("!IIHHI", 0, 100000, 10, 10, 1)), 0),
    }[name]


def test_bad_sctp_chunks_inside_dtls(gateway):
    async def scenario():
        bystander = Bystander(gateway.base)
        await bystander.start()
        outcomes = {}
        # One association takes every ignorable packet in turn.
        peer = await victim(gateway.base, "survivor")
        dtls = peer.pc.sctp.transport
        for name, chunks in ignorable_packets(peer.pc.sctp).items():
            await dtls._send_data(sctp_packet(peer.pc.sctp, chunks))
            outcomes[name] = await echoes(peer, "after " + name)
        # Not SCTP at all: shorter than the common header, a wrong checksum,
        # a wrong verification tag.
        await dtls._send_data(b"\x13\x88\x13\x88\x00")
        broken = bytearray(sctp_packet(peer.pc.sctp, chunk(0, 3, b"", length=0)))
        broken[8] ^= 0xFF
        await dtls._send_data(bytes(broken))
        await dtls._send_data(sctp_packet(peer.pc.sctp, chunk(0, 3, b"", length=0),
                                          verification_tag=0x12345678))
        outcomes["not SCTP"] = await echoes(peer, "after packets that are not SCTP")
        assert await peer.delete() == 200
        await peer.close()

        # A fresh association for each fatal packet.
        ended = {}
        for name in FATAL_PACKETS:
            peer = await victim(gateway.base, "doomed")
            label = session_label(gateway)
            chunks, tag = fatal_packet(name, peer.pc.sctp)
            await peer.pc.sctp.transport._send_data(sctp_packet(peer.pc.sctp, chunks, tag))
            ended[name] = await association_down(gateway, label)
            assert await peer.delete() == 200  # the session itself ends normally
            await peer.close()
        await bystander.stop()
        return outcomes, ended

    outcomes, ended = asyncio.run(scenario())
    assert all(outcomes.values()), {k: v for k, v in outcomes.items() if not v}
    assert all(ended.values()), {k: v for k, v in ended.items() if not v}
    m = gateway.metrics()
    assert m["moat_sessions"] == 0


async def association_down(gateway, label, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if f"session {label}: SCTP association down" in gateway.log_text():
            return True
        await asyncio.sleep(0.05)
    return False


PACKETS = 300


def test_random_sctp_chunks_never_hurt_the_gateway(gateway):
    rng = random.Random(4242)
    # Chunk types that end an association on purpose (ABORT, SHUTDOWN
    # family) are left out: the point is malformed input, not a hang-up.
    ending = {6, 7, 8, 14}
    kinds = [k for k in list(range(16)) + [64, 128, 130, 192, 0xC5, 0xFF] if k not in ending]

    def random_chunks():
        out = b""
        for _ in range(rng.randrange(1, 4)):
            body = rng.randbytes(rng.randrange(0, 64))
            length = rng.choice([None, 0, 1, 3, 4, rng.randrange(65536)])
            out += chunk(rng.choice(kinds), rng.randrange(256), body, length)
        return out

    async def scenario():
        bystander = Bystander(gateway.base)
        await bystander.start()
        sessions = []  # (echoed afterwards, association down, DELETE status)
        sent = 0
        # Random chunks end many associations (usrsctp aborts on protocol
        # violations); each time, a new session takes the rest.
        while sent < PACKETS and len(sessions) < 40:
            peer = await victim(gateway.base, "fuzzed")
            label = session_label(gateway)
            sctp = peer.pc.sctp
            while sent < PACKETS and sctp.state == "connected":
                await sctp.transport._send_data(sctp_packet(sctp, random_chunks()))
                sent += 1
                await asyncio.sleep(0.005)
            survived = sctp.state == "connected" and await echoes(peer, "after random chunks")
            down = await association_down(gateway, label, timeout=0.5 if survived else 3)
            sessions.append((survived, down, await peer.delete()))
            await peer.close()
        await bystander.stop()
        return sent, sessions

    sent, sessions = asyncio.run(scenario())
    print(f"{sent} random packets, {len(sessions)} sessions, "
          f"{sum(d for _, d, _ in sessions)} associations ended by the gateway")
    assert sent == PACKETS
    # Each association either lived through it or was ended by the gateway's
    # SCTP stack (one that echoed may still be ended by a packet it took just
    # before); every session ends on DELETE like any other.
    assert all(survived or down for survived, down, _ in sessions), sessions
    assert all(status == 200 for _, _, status in sessions), sessions
    assert gateway.get("/healthz")
    assert gateway.metric("moat_sessions") == 0


def test_oversized_messages_are_dropped_not_echoed(gateway):
    async def scenario():
        bystander = Bystander(gateway.base)
        await bystander.start()
        peer = await victim(gateway.base)
        channel = peer.channels[0]
        before = await gateway_metrics(gateway.base)
        # aiortc does not hold itself to the a=max-message-size it was given.
        channel.send(b"\x01" * (LARGEST + 1))
        channel.send("s" * (LARGEST + 1000))
        channel.send(bytes(1024 * 1024 + 7))
        channel.send(b"\x02" * LARGEST)  # exactly the limit: fine
        channel.send("after the oversized ones")
        await channel.wait_received(2, time.monotonic() + 20)
        await asyncio.sleep(0.5)  # anything else would have come by now
        received = list(channel.received)
        after = await gateway_metrics(gateway.base)
        assert await echoes(peer, "and the channel still works")
        assert await peer.delete() == 200
        await peer.close()
        await bystander.stop()
        return received, before, after

    received, before, after = asyncio.run(scenario())
    assert received == [b"\x02" * LARGEST, "after the oversized ones"], \
        [(type(m).__name__, len(m)) for m in received]
    # Only the last two messages reached the plugin (besides the bystander's
    # few bytes each); any oversized one would add more than 256 KiB.
    grew = after["moat_datachannel_bytes_received_total"] - before["moat_datachannel_bytes_received_total"]
    expected = LARGEST + len("after the oversized ones")
    assert expected <= grew < expected + 64 * 1024, grew
