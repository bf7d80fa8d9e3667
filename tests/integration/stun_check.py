"""STUN Binding requests as an ICE peer sends them (RFC 8445 §7.1, RFC 5389):
USERNAME, PRIORITY, a role, USE-CANDIDATE when nominating,
MESSAGE-INTEGRITY with the gateway's ICE password, FINGERPRINT; for tests
that drive a session's ICE by hand."""
import hashlib
import hmac
import os
import struct
import zlib

COOKIE = 0x2112A442


def attribute(kind, value):
    return struct.pack("!HH", kind, len(value)) + value + b"\0" * ((4 - len(value) % 4) % 4)


def binding_request(local_ufrag, remote_ufrag, password, nominate=False):
    """A check to the gateway: USERNAME is "<its ufrag>:<ours>"."""
    transaction = os.urandom(12)
    body = (attribute(0x0006, f"{local_ufrag}:{remote_ufrag}".encode())
            + attribute(0x0024, struct.pack("!I", 0x6E001EFF))
            + attribute(0x802A, os.urandom(8)))  # ICE-CONTROLLING
    if nominate:
        body += attribute(0x0025, b"")
    header = struct.pack("!HHI", 0x0001, len(body) + 24, COOKIE) + transaction
    body += attribute(0x0008, hmac.new(password.encode(), header + body, hashlib.sha1).digest())
    header = struct.pack("!HHI", 0x0001, len(body) + 8, COOKIE) + transaction
    crc = (zlib.crc32(header + body) ^ 0x5354554E) & 0xFFFFFFFF
    body += attribute(0x8028, struct.pack("!I", crc))
    return struct.pack("!HHI", 0x0001, len(body), COOKIE) + transaction + body
