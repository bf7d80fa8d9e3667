"""aiortc data channel peers for the data channel tests: open channels on
/whip/echo, send paced message streams, collect what comes back. Also a
command-line entry for peers that must run inside a network namespace
(`ip netns exec <ns> python datachannel_peer.py lossy ...`), which prints
its results as JSON lines."""
import argparse
import asyncio
import json
import os
import re
import sys
import time

import aiohttp
from aiortc import RTCPeerConnection
from aiortc import rtcsctptransport

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import whip_delete, whip_publish  # noqa: E402


def _pop_messages_delivering_all(self):
    """aiortc 1.9's InboundStream.pop_messages with one fix: after a message
    is delivered its start position is forgotten. aiortc keeps it, so the next
    complete message on the stream is taken for a continuation of the
    delivered one and, whenever other streams' chunks sit between the two
    (several channels busy at once), stays stranded until yet another chunk
    arrives on that stream (the same code is werift-webrtc issue #706).
    Without this a test peer with many channels would lose the last messages
    of most channels, through no fault of the gateway."""
    pos = 0
    start_pos = None
    while pos < len(self.reassembly):
        chunk = self.reassembly[pos]
        if start_pos is None:
            ordered = not (chunk.flags & rtcsctptransport.SCTP_DATA_UNORDERED)
            if not (chunk.flags & rtcsctptransport.SCTP_DATA_FIRST_FRAG):
                if ordered:
                    break
                pos += 1
                continue
            if ordered and rtcsctptransport.uint16_gt(chunk.stream_seq, self.sequence_number):
                break
            expected_tsn = chunk.tsn
            start_pos = pos
        elif chunk.tsn != expected_tsn:
            if ordered:
                break
            start_pos = None
            pos += 1
            continue
        if chunk.flags & rtcsctptransport.SCTP_DATA_LAST_FRAG:
            user_data = b"".join(c.user_data for c in self.reassembly[start_pos:pos + 1])
            self.reassembly = self.reassembly[:start_pos] + self.reassembly[pos + 1:]
            if ordered and chunk.stream_seq == self.sequence_number:
                self.sequence_number = rtcsctptransport.uint16_add(self.sequence_number, 1)
            pos = start_pos
            start_pos = None
            yield (chunk.stream_id, chunk.protocol, user_data)
            continue
        pos += 1
        expected_tsn = rtcsctptransport.tsn_plus_one(expected_tsn)


rtcsctptransport.InboundStream.pop_messages = _pop_messages_delivering_all

# Echoed bytes a sender may be ahead of: bounds what waits in the gateway's
# send queue and in aiortc's, whatever the relative speed of the two.
DEFAULT_WINDOW_BYTES = 2 * 1024 * 1024


class EchoChannel:
    """One data channel and what came back on it, in arrival order."""

    def __init__(self, channel):
        self.channel = channel
        self.received = []
        self.received_bytes = 0
        self.sent = 0
        self.sent_bytes = 0
        self.opened = asyncio.Event()
        self.closed = asyncio.Event()
        # How many messages had arrived when the channel reported closed.
        self.received_when_closed = None
        self._changed = asyncio.Event()
        channel.on("open", self._on_open)
        channel.on("message", self._on_message)
        channel.on("close", self._on_close)
        if channel.readyState == "open":
            self.opened.set()

    def _on_open(self):
        self.opened.set()

    def _on_message(self, message):
        self.received.append(message)
        self.received_bytes += payload_length(message)
        self._changed.set()

    def _on_close(self):
        if self.received_when_closed is None:
            self.received_when_closed = len(self.received)
        self.closed.set()
        self._changed.set()

    async def _wait_change(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))
        except asyncio.TimeoutError:
            pass
        return True

    def send(self, message):
        self.channel.send(message)
        self.sent += 1
        self.sent_bytes += payload_length(message)

    async def send_paced(self, messages, deadline, window_bytes=DEFAULT_WINDOW_BYTES):
        """Sends every message, never more than window_bytes ahead of the
        echoes; returns how many were sent before the deadline."""
        for message in messages:
            while (self.sent_bytes - self.received_bytes > window_bytes
                   and not self.closed.is_set()):
                if not await self._wait_change(deadline):
                    return self.sent
            if self.closed.is_set():
                return self.sent
            self.send(message)
            # Let aiortc move data to SCTP and read echoes between sends.
            if self.sent % 32 == 0:
                await asyncio.sleep(0)
        return self.sent

    async def send_buffered(self, messages, deadline, high_water, low_water):
        """Sends every message as a browser application does: while the
        channel's bufferedAmount is above high_water it waits for
        bufferedamountlow (bufferedAmountLowThreshold = low_water), whatever
        comes back. Returns how many were sent before the deadline."""
        low = asyncio.Event()
        self.channel.bufferedAmountLowThreshold = low_water
        self.channel.on("bufferedamountlow", low.set)
        for message in messages:
            while self.channel.bufferedAmount > high_water and not self.closed.is_set():
                low.clear()
                if self.channel.bufferedAmount <= low_water:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return self.sent
                try:
                    await asyncio.wait_for(low.wait(), min(remaining, 0.5))
                except asyncio.TimeoutError:
                    pass
            if self.closed.is_set():
                return self.sent
            self.send(message)
            if self.sent % 16 == 0:
                await asyncio.sleep(0)
        return self.sent

    async def wait_received(self, count, deadline):
        while len(self.received) < count and not self.closed.is_set():
            if not await self._wait_change(deadline):
                break
        return len(self.received)


async def gateway_metrics(base):
    """The gateway's /metrics as {name: value}, read without blocking the
    event loop the peers run on."""
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "/metrics") as r:
            text = await r.text()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def rfc8841_offer(sdp, max_message_size=256 * 1024):
    """aiortc offers data channels in the pre-RFC 8841 form
    (`m=application <port> DTLS/SCTP 5000` with a=sctpmap), which Moat does
    not answer; this rewrites the offer to the RFC 8841 form that browsers
    use (aiortc understands the answer either way). aiortc also announces a
    max-message-size of 64 KiB although it reassembles messages of any size;
    the test peers announce max_message_size instead, Chromium's 256 KiB."""
    sdp = re.sub(r"(?m)^m=application (\d+) DTLS/SCTP 5000\r$",
                 r"m=application \1 UDP/DTLS/SCTP webrtc-datachannel\r", sdp)
    sdp = re.sub(r"(?m)^a=sctpmap:5000 webrtc-datachannel \d+\r$", "a=sctp-port:5000\r", sdp)
    return re.sub(r"(?m)^a=max-message-size:\d+\r$", f"a=max-message-size:{max_message_size}\r",
                  sdp)


def payload_length(message):
    return len(message.encode("utf-8")) if isinstance(message, str) else len(message)


class DataChannelPeer:
    """An aiortc PeerConnection on /whip/echo with data channels only.

    channel_specs: dicts of createDataChannel keyword arguments (label,
    ordered, maxRetransmits, ...), all created before the offer.

    aiortc picks DCEP stream ids by its ICE role where RFC 8832 §6 says the
    DTLS role decides: as the offerer it takes odd ids although it is the
    DTLS client (Moat answers a=setup:passive), and Moat rightly ignores
    OPENs of the wrong parity. So every channel gets an explicit even id
    (still opened with DCEP)."""

    def __init__(self, base, channel_specs):
        self.base = base
        self.pc = RTCPeerConnection()
        self.channels = []
        for index, spec in enumerate(channel_specs):
            spec = {"id": 2 * index, **spec}
            self.channels.append(EchoChannel(self.pc.createDataChannel(**spec)))
        self.resource = None

    async def connect(self, timeout=15):
        self.resource, _ = await whip_publish(self.pc, self.base + "/whip/echo",
                                              mangle_offer=rfc8841_offer)
        await asyncio.wait_for(asyncio.gather(*(c.opened.wait() for c in self.channels)), timeout)
        return self

    async def delete(self):
        return await whip_delete(self.resource)

    async def close(self):
        await self.pc.close()


PRINTABLE = bytes(0x20 + (b % 95) for b in range(256))


def random_message(rng, size=None, max_size=65536):
    """A str or bytes message of `size` payload bytes (UTF-8 bytes for str),
    random when not given: spread log-uniformly over 0..max_size so that
    every order of magnitude is well represented."""
    if size is None:
        size = max(0, min(max_size, int(2 ** rng.uniform(0, 16.0001)) - 1))
    if rng.random() < 0.5:
        return rng.randbytes(size)
    # Some four-byte UTF-8 characters at the end; the byte length stays size.
    wide = rng.randrange(0, min(size // 4, 8) + 1)
    return rng.randbytes(size - 4 * wide).translate(PRINTABLE).decode("ascii") + "\U0001F600" * wide


async def lossy_run(url, count, size, rate, settle_s, timeout_s):
    """Unordered with maxRetransmits=0: sends count numbered messages of size
    bytes, rate per second, and waits settle_s for stragglers. Then prints the
    results as one JSON line and waits for a line on stdin (the caller reads
    the gateway's live metrics meanwhile) before it hangs up with DELETE."""
    peer = DataChannelPeer(url, [{"label": "lossy", "ordered": False, "maxRetransmits": 0}])
    await peer.connect(timeout=min(timeout_s, 20))
    channel = peer.channels[0]
    deadline = time.monotonic() + timeout_s
    filler = "x" * size
    started = time.monotonic()
    sent = 0
    for i in range(count):
        if time.monotonic() > deadline:
            break
        channel.send(f"{i:08d}:{filler}"[:max(size, 9)])
        sent += 1
        ahead = started + sent / rate - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)
    await asyncio.sleep(settle_s)
    ids = [int(m.split(":", 1)[0]) for m in channel.received]
    print(json.dumps({
        "sent": sent,
        "received": len(ids),
        "unique": len(set(ids)),
        "unknown": len([i for i in ids if not 0 <= i < sent]),
        "reordered": sum(1 for a, b in zip(ids, ids[1:]) if b < a),
    }), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    status = await peer.delete()
    await asyncio.sleep(0.5)
    await peer.close()
    print(json.dumps({"delete_status": status}), flush=True)


def bulk_message(session, index, size):
    """Message index of session: numbered, its bytes follow from both."""
    head = f"{session:02d}:{index:07d}:".encode()
    return head + bytes((session * 31 + index * 7 + k) % 256 for k in range(size - len(head)))


async def pmtu_searches_done(base, token):
    """True once every up data channel on the gateway has ended its path
    MTU search (/api/stats, each transport's datachannel.pmtu.state)."""
    headers = {"Authorization": "Bearer " + token} if token else {}
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "/api/stats", headers=headers) as r:
            r.raise_for_status()
            stats = await r.json(content_type=None)
    states = [t["datachannel"]["pmtu"]["state"] for t in stats.get("transports", [])
              if t.get("datachannel") and t["datachannel"].get("up")]
    return bool(states) and all(state in ("search_complete", "off") for state in states)


async def wait_pmtu_searches(base, limit_s):
    """Waits (at most limit_s) for the gateway's path MTU searches to end;
    the API token, when the gateway has one, comes in MOAT_API_TOKEN."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            if await pmtu_searches_done(base, os.environ.get("MOAT_API_TOKEN")):
                return
        except (aiohttp.ClientError, ValueError, KeyError):
            pass
        await asyncio.sleep(0.2)


async def bulk_session(url, session, count, size, window_bytes, deadline, wait_pmtu=0.0):
    peer = await DataChannelPeer(url, [{"label": f"bulk{session}"}]).connect()
    channel = peer.channels[0]
    # The gateway's path MTU discovery ends before the transfer starts.
    if wait_pmtu > 0:
        await wait_pmtu_searches(url, wait_pmtu)
    messages = [bulk_message(session, i, size) for i in range(count)]
    await channel.send_paced(messages, deadline, window_bytes=window_bytes)
    return peer, messages


async def bulk_run(url, sessions, count, size, window_bytes, timeout_s, wait_pmtu=0.0,
                   hang_up_at=0.9):
    """sessions peers at once, each sending count messages of size bytes
    (never more than window_bytes ahead of its echoes). Once the gateway has
    every message and a fraction hang_up_at of the echoes are back (the rest
    must drain while the peer keeps acknowledging), all hang up with
    DELETE, and each must
    still get every echo, byte-exact and in order, before its channel
    closes. Prints one JSON line and exits."""
    deadline = time.monotonic() + timeout_s
    # The counter is the gateway's total since it started: earlier runs on
    # the same gateway count in it (without this baseline, a second run hung
    # up while its last messages were still on their way to the gateway,
    # which then could not echo them into a closing association).
    before = (await gateway_metrics(url)).get("moat_datachannel_messages_received_total", 0)
    started = await asyncio.gather(*(bulk_session(url, s, count, size, window_bytes, deadline,
                                                  wait_pmtu)
                                     for s in range(sessions)))
    while time.monotonic() < deadline:
        metrics = await gateway_metrics(url)
        if (metrics.get("moat_datachannel_messages_received_total", 0) - before >= sessions * count
                and all(len(peer.channels[0].received) >= hang_up_at * count
                        for peer, _ in started)):
            break
        await asyncio.sleep(0.05)
    hung_up = time.monotonic()
    statuses = await asyncio.gather(*(peer.delete() for peer, _ in started))
    results = []
    for peer, messages in started:
        channel = peer.channels[0]
        remaining = max(0.1, deadline - time.monotonic())
        try:
            await asyncio.wait_for(channel.closed.wait(), remaining)
        except asyncio.TimeoutError:
            pass
        results.append({
            "sent": channel.sent,
            "received": len(channel.received),
            "received_when_closed": channel.received_when_closed,
            "exact": channel.received == messages,
            "closed_after_hang_up_s": round(time.monotonic() - hung_up, 2),
        })
        await peer.close()
    print(json.dumps({"delete_statuses": statuses, "sessions": results}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    lossy = sub.add_parser("lossy", help="unordered, maxRetransmits=0 echo run")
    lossy.add_argument("--url", required=True)
    lossy.add_argument("--count", type=int, default=2000)
    lossy.add_argument("--size", type=int, default=200)
    lossy.add_argument("--rate", type=float, default=100.0, help="messages per second")
    lossy.add_argument("--settle", type=float, default=3.0)
    lossy.add_argument("--timeout", type=float, default=30.0)
    bulk = sub.add_parser("bulk", help="reliable ordered bulk echo on several sessions")
    bulk.add_argument("--url", required=True)
    bulk.add_argument("--sessions", type=int, default=1)
    bulk.add_argument("--count", type=int, default=2000)
    bulk.add_argument("--size", type=int, default=4096)
    bulk.add_argument("--window", type=int, default=4 * 1024 * 1024,
                      help="bytes a sender may be ahead of its echoes")
    bulk.add_argument("--timeout", type=float, default=60.0)
    bulk.add_argument("--wait-pmtu", type=float, default=0.0,
                      help="wait at most this long after the channel opens for the "
                           "gateway's path MTU searches to end (/api/stats)")
    bulk.add_argument("--hang-up-at", type=float, default=0.9,
                      help="hang up once the gateway has every message and this "
                           "fraction of the echoes is back")
    args = parser.parse_args()
    if args.command == "bulk":
        asyncio.run(bulk_run(args.url, args.sessions, args.count, args.size, args.window,
                             args.timeout, args.wait_pmtu, args.hang_up_at))
        return
    asyncio.run(lossy_run(args.url, args.count, args.size, args.rate, args.settle, args.timeout))


if __name__ == "__main__":
    main()
