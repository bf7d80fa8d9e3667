"""Forged encrypted DTLS records while a peer's handshake runs.

Anyone who can send from (or spoof) a peer's address can send records of
epoch 1 once the gateway has chosen its cipher. OpenSSL keeps each one it
cannot read yet in a 16.7 KB read buffer, so the gateway takes at most 16
of them before the handshake completes (test_dtls_handshake_memory_hostile).
That cap was a lifetime count: sixteen forged records filled it, and every
later datagram with an encrypted record was refused, the client's own
Finished and its retransmissions with it, so the handshake never completed.

The cap now bounds what OpenSSL holds: the records before the client's
Finished (its ChangeCipherSpec) are read first, OpenSSL then reads the
Finished at once and discards the forgeries it held. The client here is a
hand-made pyOpenSSL one (test_dtls_handshake_memory_hostile's), so the
forgeries land exactly between the gateway's flight and the client's."""
import os
import time

import pytest
from OpenSSL import SSL

from conftest import Gateway
from test_dtls_handshake_memory_hostile import (DTLS_DROPS, Peer, client_context, client_hello,
                                                completes, pump, record)

pytestmark = pytest.mark.hostile

CAP = 16  # MOAT_DTLS_MAX_EARLY_PROTECTED


def forged(count, content_type=22, epoch=1):
    """`count` records of noise, room for an AEAD nonce and tag each."""
    return b"".join(record(content_type, epoch, int.from_bytes(os.urandom(4), "big"),
                           os.urandom(40)) for _ in range(count))


def split_after_change_cipher_spec(datagram):
    """(records up to and including the ChangeCipherSpec, the rest)."""
    at = 0
    while at + 13 <= len(datagram):
        end = at + 13 + int.from_bytes(datagram[at + 11:at + 13], "big")
        if datagram[at] == 20:
            return datagram[:end], datagram[end:]
        at = end
    return None


def to_second_flight(ctx, gateway):
    """A peer that sent its ClientHello and read the gateway's flight (the
    gateway has its cipher); returns it, the connection and the client's
    second flight, not yet sent."""
    peer = Peer(gateway, ctx.fingerprint)
    connection = client_hello(ctx, peer)
    flight = []
    deadline = time.monotonic() + 5
    while not flight and time.monotonic() < deadline:
        for datagram in peer.drain(0.2):
            connection.bio_write(datagram)
        try:
            connection.do_handshake()
        except SSL.WantReadError:
            pass
        flight = pump(connection)
    assert flight, "the gateway's flight never came"
    return peer, connection, flight


@pytest.fixture
def one_worker():
    gw = Gateway(workers=1)
    yield gw
    assert gw.stop() == 0


@pytest.fixture(scope="module")
def ctx():
    context, fingerprint = client_context()
    context.fingerprint = fingerprint
    return context


def test_forged_records_before_the_clients_flight_do_not_block_it(one_worker, ctx):
    gateway = one_worker
    peer, connection, flight = to_second_flight(ctx, gateway)
    drops = gateway.metric(DTLS_DROPS)
    handshakes = gateway.metric("moat_dtls_handshakes_total")
    # The cap's worth in one datagram (OpenSSL holds them: it cannot read
    # epoch 1 yet), then three more datagrams the cap refuses.
    peer.send(forged(CAP))
    for _ in range(3):
        peer.send(forged(1))
    for datagram in flight:
        peer.send(datagram)
    assert completes(connection, peer), "the client's Finished was refused"
    assert gateway.metric("moat_dtls_handshakes_total") == handshakes + 1
    # The cap still held: the three were dropped, nothing of the client's.
    assert gateway.metric(DTLS_DROPS) - drops == 3


def test_forged_records_between_change_cipher_spec_and_finished(one_worker, ctx):
    gateway = one_worker
    peer, connection, flight = to_second_flight(ctx, gateway)
    drops = gateway.metric(DTLS_DROPS)
    handshakes = gateway.metric("moat_dtls_handshakes_total")
    for i, datagram in enumerate(flight):
        halves = split_after_change_cipher_spec(datagram)
        if halves is None:
            peer.send(datagram)
            continue
        head, finished = halves
        assert finished, "the Finished is not after the ChangeCipherSpec"
        peer.send(head)
        time.sleep(0.1)
        # Application data OpenSSL would keep until the Finished (were it
        # genuine), then a record of epoch 2: the cap refuses the latter.
        peer.send(forged(CAP, content_type=23))
        peer.send(forged(1, epoch=2))
        time.sleep(0.1)
        peer.send(finished)
        for rest in flight[i + 1:]:
            peer.send(rest)
        break
    else:
        pytest.fail("no ChangeCipherSpec in the client's flight")
    assert completes(connection, peer), "the client's Finished was refused"
    assert gateway.metric("moat_dtls_handshakes_total") == handshakes + 1
    assert gateway.metric(DTLS_DROPS) - drops == 1
