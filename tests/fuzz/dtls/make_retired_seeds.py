#!/usr/bin/env python3
"""Writes tests/fuzz/seeds/fuzz_dtls_retired: for each AEAD suite (the
target's first byte), a close_notify, a fatal alert and a warning alert of
epoch 1 sealed with the target's fixed keys, one datagram with two records,
and an epoch 0 alert. Run from the repository root."""
import os
import struct

from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

KEY = bytes(range(1, 33))
IV = bytes(range(0x40, 0x4C))
SUITES = [("aes128gcm", 16), ("aes256gcm", 32), ("chacha", 32)]


def record(suite, epoch, seq, alert, content_type=21):
    name, key_length = SUITES[suite]
    seqnum = struct.pack(">H", epoch) + seq.to_bytes(6, "big")
    aad = seqnum + bytes([content_type, 0xFE, 0xFD]) + struct.pack(">H", len(alert))
    if name == "chacha":
        nonce = bytes(a ^ b for a, b in zip(IV, bytes(4) + seqnum))
        body = ChaCha20Poly1305(KEY).encrypt(nonce, alert, aad)
    else:
        explicit = seqnum
        body = explicit + AESGCM(KEY[:key_length]).encrypt(IV[:4] + explicit, alert, aad)
    header = bytes([content_type, 0xFE, 0xFD]) + seqnum + struct.pack(">H", len(body))
    return header + body


def main():
    out = "tests/fuzz/seeds/fuzz_dtls_retired"
    os.makedirs(out, exist_ok=True)
    for suite, (name, _) in enumerate(SUITES):
        seeds = {
            "close_notify": record(suite, 1, 5, b"\x01\x00"),
            "fatal": record(suite, 1, 6, b"\x02\x28"),
            "warning": record(suite, 1, 7, b"\x01\x5a"),
            "two_records": record(suite, 1, 8, b"\x01\x5a") + record(suite, 1, 9, b"\x01\x00"),
            "epoch0": record(suite, 0, 1, b"\x02\x28"),
        }
        for what, datagram in seeds.items():
            with open(os.path.join(out, f"{name}_{what}"), "wb") as f:
                f.write(bytes([suite]) + datagram)


if __name__ == "__main__":
    main()
