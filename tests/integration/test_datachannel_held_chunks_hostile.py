"""Memory an authenticated peer can make its SCTP association hold with
messages it never lets the gateway deliver: ordered 1-byte messages with
SSN 1, 2, ... on every stream and never SSN 0, so each waits in usrsctp's
stream queue, every packet padded to 1200 bytes with a PAD chunk (RFC 4820),
before the DATA chunk or after it. The receive window charges a held chunk
its data plus 256 bytes (sctp_calc_rwnd); before
scripts/patches/usrsctp-copy-small-chunks.patch each one kept the received
packet's 2048-byte cluster as well, so a 1 MiB window held about 10 MB
against the 3 MiB a session is charged (MOAT_SCTP_ASSOCIATION_MEMORY), and
[limits] datachannel_total_mib could be exceeded about 3.3 times. A packet
of at most 1040 bytes has no cluster (usrsctp_conninput builds it from plain
256-byte mbufs), and the DATA chunk after the PAD chunk, the packet's last,
took the packet whole: m_adj emptied the mbufs ahead of its byte without
freeing them, so each held chunk kept five mbufs (1280 bytes), about 6.4 MB
a session, until the patch copied last chunks too. Now a small chunk is
copied out of the packet, wherever it lies: the session holds about what it
is charged. Another session still echoes meanwhile.

The release build: RSS is what is measured, and ASan's allocator
(quarantine, redzones) moves it by more than the bound."""
import asyncio
import struct

import pytest

from conftest import ROOT, Gateway, rss_kib
from datachannel_peer import DataChannelPeer
from test_datachannel_hostile import chunk, echoes, sctp_packet

ATTACKERS = 3
SSNS = 4  # per stream: 4 x 2046 streams, more than the 1 MiB window takes
PAD = 0x84
# What a session is charged (3 MiB) and some slack for its DTLS, SCTP
# association and the gateway's own growth; before the fix: about 10 MB
# (1200-byte packets), 6.4 MB (1040-byte packets, PAD first).
MAX_GROWTH_KIB = 4608


def held_chunk_packet(sctp, tsn, stream, ssn, packet, pad_first):
    data = chunk(0, 3, struct.pack("!IHHI", tsn, stream, ssn, 51) + b"A")
    pad = chunk(PAD, 0, b"\0" * (packet - 12 - len(data) - 4))
    return sctp_packet(sctp, pad + data if pad_first else data + pad)


async def attack(gateway, label, packet, pad_first):
    """One session's worth of packets of `packet` bytes, the PAD chunk before
    the DATA chunk (the packet's last chunk, which usrsctp took whole) or
    after it (a reference into the packet): pad_first None alternates."""
    peer = await DataChannelPeer(gateway.base, [{"label": label}]).connect()
    sctp = peer.pc.sctp
    tsn = sctp._local_tsn
    sent = 0
    for ssn in range(1, SSNS + 1):
        for stream in range(2, 2048):
            first = sent % 2 if pad_first is None else pad_first
            await sctp.transport._send_data(held_chunk_packet(sctp, tsn, stream, ssn, packet, first))
            tsn = (tsn + 1) & 0xffffffff
            sent += 1
            if sent % 200 == 0:
                await asyncio.sleep(0.01)
    return peer


async def scenario(gateway, packet, pad_first):
    bystander = await DataChannelPeer(gateway.base, [{"label": "bystander"}]).connect()
    assert await echoes(bystander, "before")
    await asyncio.sleep(0.5)
    before = rss_kib(gateway.process.pid)
    received = gateway.metric("moat_datachannel_messages_received_total")
    peers = []
    for i in range(ATTACKERS):
        peers.append(await attack(gateway, f"held{i}", packet, pad_first))
        await asyncio.sleep(1.0)
    grown = rss_kib(gateway.process.pid) - before
    print(f"held chunks in {packet}-byte packets: RSS grew {grown} KiB for {ATTACKERS} sessions")
    assert grown / ATTACKERS < MAX_GROWTH_KIB, grown
    # Nothing was deliverable: no message reached the echo plugin.
    assert gateway.metric("moat_datachannel_messages_received_total") == received
    assert await echoes(bystander, "after")
    for peer in peers:
        await peer.close()
    await bystander.close()


# 1200 bytes: one 2048-byte cluster a packet, PAD before and after in turn;
# 1040 bytes: the largest packet usrsctp builds without a cluster (five
# plain mbufs), PAD first so the held chunk is the packet's last.
@pytest.mark.parametrize("packet, pad_first", [(1200, None), (1040, True)],
                         ids=["1200-alternating", "1040-pad-first"])
def test_held_small_chunks_pin_no_more_than_charged(packet, pad_first):
    gateway = Gateway(workers=1, binary=ROOT / "build" / "gateway" / "moat")
    try:
        asyncio.run(scenario(gateway, packet, pad_first))
    finally:
        assert gateway.stop() == 0
