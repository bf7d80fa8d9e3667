"""Peer for test_datachannel_sigterm_drain.py, run in the client netns: sends
count messages to the echo and, once the gateway has them all (its echoes
mostly still queued behind the slow link), signals the gateway (pid) with
SIGTERM instead of hanging up, and SIGINT second_after seconds later when
second_after >= 0. Waits up to wait_s for the channel to close and prints
one JSON line (times on CLOCK_MONOTONIC, shared with the test)."""
import asyncio
import json
import os
import signal
import sys
import time

from datachannel_peer import bulk_session, gateway_metrics


async def main(url, pid, count, size, window, second_after, wait_s):
    deadline = time.monotonic() + 90
    metric = "moat_datachannel_messages_received_total"
    before = (await gateway_metrics(url)).get(metric, 0)
    peer, _ = await bulk_session(url, 0, count, size, window, deadline)
    while time.monotonic() < deadline:
        if (await gateway_metrics(url)).get(metric, 0) - before >= count:
            break
        await asyncio.sleep(0.05)
    channel = peer.channels[0]
    received_at_sigterm = len(channel.received)
    sigterm_at = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    if second_after >= 0:
        await asyncio.sleep(second_after)
        os.kill(pid, signal.SIGINT)
    try:
        await asyncio.wait_for(channel.closed.wait(), wait_s)
    except asyncio.TimeoutError:
        pass
    print(json.dumps({"count": count, "received_at_sigterm": received_at_sigterm,
                      "received": len(channel.received),
                      "closed": channel.closed.is_set(),
                      "closed_after_s": round(time.monotonic() - sigterm_at, 2),
                      "sigterm_at": sigterm_at}), flush=True)
    await peer.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                     int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])))
