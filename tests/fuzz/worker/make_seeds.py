#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_worker_receive (and, with --call, of
fuzz_call_leg_receive): valid-looking RTP, RTCP, STUN and DTLS datagrams
for each session, at every buffer's size limit. Record format: see the
targets' header comments ([target][flags][length hi][length lo][bytes])."""
import os
import struct
import sys

LIMITS = [0, 1, 12, 1499, 1500, 1501, 1563, 1564, 1565, 1983, 1984]


def rtp(length, pt=96, ssrc=0x11223344, seq=1):
    head = struct.pack("!BBHII", 0x80, pt, seq, seq * 3000, ssrc)
    body = bytes((i * 7) & 0xFF for i in range(max(0, length - 12)))
    return (head + body)[:length]


def rtcp_rr():
    return struct.pack("!BBHI", 0x81, 201, 7, 0x11223344) + bytes(24)


def stun(ufrag):
    user = (ufrag + ":peerufrag").encode()
    pad = (-len(user)) % 4
    attrs = struct.pack("!HH", 0x0006, len(user)) + user + bytes(pad)
    return struct.pack("!HHI", 0x0001, len(attrs), 0x2112A442) + bytes(12) + attrs


def dtls_hello(length=120):
    body = bytes([1]) + struct.pack("!I", length - 25)[1:] + bytes(length - 25 - 4)
    return bytes([22, 0xFE, 0xFD]) + bytes(8) + struct.pack("!H", len(body)) + body


def record(target, flags, data, declared=None):
    n = len(data) if declared is None else declared
    return bytes([target, flags]) + struct.pack("!H", n) + data


def write(folder, name, payload):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(payload)


def worker_seeds(folder):
    names = ["echo", "pub-r", "ingest-i", "pub-q", "sub-r0", "sub-r1", "sub-i0", "sub-q0"]
    for t, name in enumerate(names):
        plain = name.startswith("ingest")
        for n in LIMITS:
            # stamped RTP; protected (SRTP) for the WebRTC sessions
            flags = 0x01 if plain else 0x03
            size = n if plain or n < 12 else min(n, 1974)
            write(folder, f"{name}-rtp-{n}", record(t, flags, rtp(size)))
        write(folder, f"{name}-rtcp", record(t, 0x05, rtcp_rr()))
        write(folder, f"{name}-stun", record(t, 0x00, stun("uf" + name)))
        write(folder, f"{name}-dtls", record(t, 0x00, dtls_hello()))
        write(folder, f"{name}-other-source", record(t | 0x10, 0x01, rtp(200)))
        # the limit selector: declared length % 10 picks LIMITS in the target
        for k in range(10):
            write(folder, f"{name}-limit-{k}", record(t, 0x09, rtp(20 + k)))
    write(folder, "mixed", b"".join(record(t, 0x03 if t != 2 else 0x01, rtp(300, seq=t))
                                    for t in range(8)))


def call_seeds(folder):
    # TARGETS in fuzz_call_leg_receive.c
    names = ["plain-a", "plain-b", "sdes-c", "sdes-d", "webrtc-e", "webrtc-leg", "webrtc-party"]
    for t, name in enumerate(names):
        keyed = name in ("sdes-d", "webrtc-party")
        ssrc = 0x11223344 if name == "webrtc-party" else 0x0A0B0C0D
        for n in LIMITS + [1985, 2048, 4096]:
            flags = 0x03 if keyed else 0x01
            size = min(n, 1974) if keyed and n >= 12 else n
            write(folder, f"{name}-rtp-{n}", record(t, flags, rtp(size, pt=8, ssrc=ssrc)))
        write(folder, f"{name}-rtcp", record(t, 0x05 if keyed else 0x00, rtcp_rr()))
        write(folder, f"{name}-rtcp-socket", record(t | 0x08, 0x05 if keyed else 0x00, rtcp_rr()))
        write(folder, f"{name}-other-port", record(t | 0x10, 0x01, rtp(172, pt=8)))
        write(folder, f"{name}-other-address", record(t | 0x20, 0x01, rtp(172, pt=8)))
        for k in range(12):
            write(folder, f"{name}-limit-{k}", record(t, 0x09, rtp(24 + k, pt=8)))
    write(folder, "stun-party", record(6, 0x00, stun("gwufrag1")))
    write(folder, "dtls-party", record(6, 0x00, dtls_hello()))
    write(folder, "both-ways", b"".join(record(t, 0x01, rtp(172, pt=8, seq=t)) for t in range(8)))


if __name__ == "__main__":
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seeds")
    targets = (("fuzz_worker_receive", worker_seeds), ("fuzz_call_leg_receive", call_seeds))
    for name, make in targets:
        folder = os.path.join(root, name)
        os.makedirs(folder, exist_ok=True)
        make(folder)
