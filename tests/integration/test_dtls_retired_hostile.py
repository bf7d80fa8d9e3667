"""Hostile DTLS at a retired transport, sent from the peer's own 5-tuple (so
the tuple check passes): the peer's authentic application data, a forged
alert of epoch 1, a plaintext fatal alert of epoch 0, a handshake record and
a truncated record are each dropped and counted, and so is a datagram of the
worker's whole receive capacity (1984 bytes) packed with 50 forged alerts
(two are opened, the rest dropped unopened) and one a byte longer (dropped
by the worker as truncated); the session lives on, media flows, and DELETE
still closes it with close_notify."""
import asyncio
import os
import time

from test_dtls_retired import (RETIRE_WITHIN_S, audio_session, dtls_of, media_keeps_flowing,
                               metrics, wait_metric)
from aiortc_peer import whip_delete

DTLS_DROPS = 'moat_dropped_packets_total{reason="dtls"}'
TRUNCATED = 'moat_dropped_packets_total{reason="truncated"}'
RECEIVE_CAPACITY = 1984  # the worker's receive buffer (docs/SECURITY.md)


def record(content_type, epoch, body):
    return (bytes([content_type, 0xFE, 0xFD]) + epoch.to_bytes(2, "big") + (99).to_bytes(6, "big")
            + len(body).to_bytes(2, "big") + body)


def test_records_a_retired_transport_drops(gateway):
    async def scenario():
        pc, resource, recorders = await audio_session(gateway)
        try:
            assert await wait_metric(gateway, "moat_dtls_retired_total", 1, RETIRE_WITHIN_S)
            dtls = dtls_of(pc)
            drops = (await metrics(gateway)).get(DTLS_DROPS, 0.0)
            await dtls._send_data(b"x" * 40)  # authentic, epoch 1, application data
            forged = [
                record(21, 1, os.urandom(26)),       # an alert the peer's key does not seal
                record(21, 0, b"\x02\x28"),          # a plaintext fatal alert
                record(22, 0, os.urandom(60)),       # a handshake record
                record(21, 1, os.urandom(26))[:30],  # cut short
                # the receive capacity exactly: 50 forged alerts and a short one
                b"".join(record(21, 1, os.urandom(26)) for _ in range(50))
                + record(21, 1, os.urandom(21)),
            ]
            assert len(forged[-1]) == RECEIVE_CAPACITY
            for datagram in forged:
                await dtls.transport._send(datagram)
            counted = await wait_metric(gateway, DTLS_DROPS, drops + 1 + len(forged), 5)
            truncated = (await metrics(gateway)).get(TRUNCATED, 0.0)
            await dtls.transport._send(forged[-1] + b"\x00")  # one byte past the capacity
            counted = counted and await wait_metric(gateway, TRUNCATED, truncated + 1, 5)
            m = await metrics(gateway)
            alive = m["moat_sessions"] == 1 and dtls.state == "connected"
            flowing = await media_keeps_flowing(gateway, recorders)
            status = await whip_delete(resource)
            deadline = time.monotonic() + 5
            while dtls.state != "closed" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return counted, alive, flowing, status, dtls.state
        finally:
            await pc.close()

    counted, alive, flowing, status, dtls_state = asyncio.run(scenario())
    assert counted, "not every hostile record was counted as a dtls drop"
    assert alive, "a hostile record ended the retired session"
    assert flowing
    assert status == 200
    assert dtls_state == "closed"
