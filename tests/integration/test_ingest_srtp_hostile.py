"""SRTP ingest under attack (against the ASan/UBSan gateway in `make
hostile`): the "srtp" member of POST /api/rooms/<room>/ingest and the
ingest's UDP port.

  * bad "srtp" members (not an object, an unknown suite, a key of the wrong
    length, not base64, with whitespace, a number) get 400 bad_srtp with a
    JSON body, and no session is made;
  * the sender's own key is used when given (pylibsrtp protects with it);
  * a stranger who writes first (forged SRTP from another address) is
    dropped before or by the HMAC and latches nothing: the real sender's
    packets are the publisher's; after the latch the stranger's copies of
    authentic packets are dropped as an unknown tuple, and the sender's own
    replays as replays;
  * datagrams of 1, 11, 12, 1500, 1984, 1985, 8192 and 65507 bytes, and a
    burst of forged packets from the sender's own address: the gateway
    lives, drops them with reasons, and authentic packets still arrive."""
import base64
import os
import socket

from pylibsrtp import Policy, Session

from test_ingest import publisher_packets, wait_for
from test_room import api

AUDIO = {"audio": {"codec": "opus", "pt": 111}}


def rtp(sequence, ssrc=0x5EED, pt=111, size=40):
    header = bytes([0x80, pt, (sequence >> 8) & 0xFF, sequence & 0xFF, 0, 0, sequence >> 8 & 0xFF,
                    sequence & 0xFF, ssrc >> 24, (ssrc >> 16) & 0xFF, (ssrc >> 8) & 0xFF,
                    ssrc & 0xFF])
    return header + b"\xfc" + bytes(size - 13)


def protector(key):
    return Session(Policy(key=key, srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80,
                          ssrc_type=Policy.SSRC_ANY_OUTBOUND))


def udp(address):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((address, 0))
    return s


def sessions(gateway):
    return gateway.metric("moat_sessions")


def test_bad_srtp_members_get_400(gateway):
    key = base64.b64encode(os.urandom(30)).decode()
    cases = [
        "AES_CM_128_HMAC_SHA1_80",
        {},
        {"suite": "AES_CM_256_HMAC_SHA1_80"},
        {"suite": 80},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": base64.b64encode(os.urandom(29)).decode()},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": base64.b64encode(os.urandom(31)).decode()},
        {"suite": "AEAD_AES_128_GCM", "key": key},  # 30 bytes where GCM takes 28
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": key[:-1] + "*"},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": key[:20] + " " + key[21:]},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": key + "\n"},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": 12345},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": ""},
        {"suite": "AES_CM_128_HMAC_SHA1_80", "key": "A" * 60000},
    ]
    before = sessions(gateway)
    for srtp in cases:
        status, reply = api(gateway, "POST", "/api/rooms/bad/ingest", dict(AUDIO, srtp=srtp))
        assert status == 400, (srtp if len(str(srtp)) < 200 else "long key", status, reply)
        assert reply["error"] == "bad_srtp" and reply["status"] == 400, reply
    assert sessions(gateway) == before


def test_stranger_first_latches_nothing_and_replays_are_dropped(gateway):
    key = os.urandom(30)
    status, body = api(gateway, "POST", "/api/rooms/guarded/ingest",
                       dict(AUDIO, srtp={"suite": "AES_CM_128_HMAC_SHA1_80",
                                         "key": base64.b64encode(key).decode()}))
    assert status == 201, body
    assert base64.b64decode(body["srtp"]["key"]) == key  # the sender's own key, used
    port = body["port"]
    sender, stranger = udp("127.0.0.1"), udp("127.0.0.2")
    # The stranger writes first: forged SRTP (right header, no valid tag).
    forged = protector(os.urandom(30))
    auth_before = gateway.drops("auth")
    for seq in range(1, 21):
        stranger.sendto(forged.protect(rtp(seq)), ("127.0.0.1", port))
    assert wait_for(lambda: gateway.drops("auth") - auth_before >= 1)
    assert publisher_packets(gateway, "guarded") == 0
    # The real sender: its authentic packets are the publisher's.
    mine = protector(key)
    sent = [mine.protect(rtp(seq)) for seq in range(100, 130)]
    for packet in sent:
        sender.sendto(packet, ("127.0.0.1", port))
    assert wait_for(lambda: publisher_packets(gateway, "guarded") == 30)
    # Latched: the stranger's copies of authentic packets are another tuple,
    # the sender's own copies are replays.
    tuple_before, replay_before = gateway.drops("unknown_tuple"), gateway.drops("replay")
    for packet in sent[:10]:
        stranger.sendto(packet, ("127.0.0.1", port))
        sender.sendto(packet, ("127.0.0.1", port))
    assert wait_for(lambda: gateway.drops("unknown_tuple") - tuple_before >= 10)
    assert wait_for(lambda: gateway.drops("replay") - replay_before >= 10)
    assert publisher_packets(gateway, "guarded") == 30
    assert api(gateway, "DELETE", body["resource"])[0] == 204
    sender.close()
    stranger.close()


def test_sizes_and_forged_burst_leave_the_ingest_working(gateway):
    status, body = api(gateway, "POST", "/api/rooms/sizes/ingest",
                       dict(AUDIO, srtp={"suite": "AES_CM_128_HMAC_SHA1_80"}))
    assert status == 201, body
    port, key = body["port"], base64.b64decode(body["srtp"]["key"])
    sender = udp("127.0.0.1")
    sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    mine = protector(key)
    for seq in range(1, 11):
        sender.sendto(mine.protect(rtp(seq)), ("127.0.0.1", port))
    assert wait_for(lambda: publisher_packets(gateway, "sizes") == 10)
    for size in (1, 11, 12, 1500, 1984, 1985, 8192, 65507):
        sender.sendto(rtp(1000, size=size) if size >= 13 else bytes(size), ("127.0.0.1", port))
    # A burst of forged packets from the sender's own address.
    forged = protector(os.urandom(30))
    for seq in range(2000, 4000):
        sender.sendto(forged.protect(rtp(seq)), ("127.0.0.1", port))
    for seq in range(11, 21):
        sender.sendto(mine.protect(rtp(seq)), ("127.0.0.1", port))
    assert wait_for(lambda: publisher_packets(gateway, "sizes") == 20, timeout=10)
    assert gateway.drops("truncated") >= 2  # 8192 and 65507 bytes
    assert api(gateway, "GET", "/healthz")[0] == 200
    assert api(gateway, "DELETE", body["resource"])[0] == 204
    sender.close()
