"""Calls kept over a restart ([cluster] keep_calls): a cluster node writes
each ng call's record (its offer and answer, the ports and SDES keys it
chose) to Redis; killed (SIGKILL) and started again with the same node id,
it replays the records on the same ports with the same keys, so the phones,
which never learn of the restart, go on sending to the ports they have and
hear each other again: a plain RTP call and a plain-to-SDES-SRTP call (the
SRTP party decrypts with the key it was given before the restart). ng
commands for the restored calls work (query, delete; delete removes the
record). A restored call whose parties never send again ends after
restored_call_idle_s. Hostile records (garbage, another version, a step
that is not an offer or answer, ports outside the range) are refused and
counted; the node keeps running and drops them from Redis. Through a Redis
outage calls relay as ever and the hash is rewritten when Redis is back."""
import base64
import os
import socket
import time
import time

import pytest

from cluster_helpers import PASSWORD, Redis, cluster, wait_for
from conftest import Gateway, free_port
from ng_client import NgClient, bdecode, bencode
from test_voip_sdes import crypto_lines, phone_sdp, port_of, rtp, session, udp

IDLE_S = 6


@pytest.fixture
def redis_server():
    r = Redis()
    yield r
    r.stop()


def node(redis, name, low, extra=()):
    return Gateway(workers=1, env={"MOAT_CLUSTER_PASSWORD": PASSWORD}, extra_args=[*extra,
        "--cluster-redis", f"127.0.0.1:{redis.port}", "--cluster-node-id", name,
        "--cluster-lease-ms", "2000", "--cluster-restored-call-idle", str(IDLE_S),
        "--media-port-min", str(low), "--media-port-max", str(low + 39),
        "--call-allow-loopback-destinations"])


def first_node(redis, prefix):
    """A node of its own name and call port range (even-aligned)."""
    low = free_port(socket.SOCK_DGRAM, 40)
    low += low & 1
    name = f"{prefix}-{os.getpid()}"
    return node(redis, name, low), name, low


def restored(gw, outcome):
    return gw.metric(f'moat_calls_restored_total{{outcome="{outcome}"}}')


def record_fields(redis, name):
    """The call-ids of the node's records in Redis."""
    reply = redis.command("HKEYS", f"moat:calls:{name}")
    return {line.decode() for line in reply.split(b"\r\n")
            if line and not line.startswith((b"*", b"$"))}


def relays(a, b, to_port, seq):
    """a sends one RTP packet to Moat's port facing it; b gets it."""
    a.sendto(rtp(seq), ("127.0.0.1", to_port))
    return b.recv(2048)


def plain_call(ng, call_id, caller, callee):
    offer = ng.command("offer", call_id=call_id, from_tag="a",
                       sdp=phone_sdp(caller.getsockname()[1]))
    assert offer["result"] == "ok", offer
    answer = ng.command("answer", call_id=call_id, from_tag="a", to_tag="b",
                        sdp=phone_sdp(callee.getsockname()[1]))
    assert answer["result"] == "ok", answer
    # Moat's port the callee sends to, and the one the caller sends to.
    return port_of(offer["sdp"]), port_of(answer["sdp"])


def sdes_call(ng, call_id, caller, callee):
    offer = ng.command("offer", call_id=call_id, from_tag="plain",
                       sdp=phone_sdp(caller.getsockname()[1]), transport_protocol="RTP/SAVP")
    assert offer["result"] == "ok", offer
    tag, suite, moat_key = crypto_lines(offer["sdp"])[0]
    my_key = os.urandom(30)
    line = f"{tag} {suite} inline:{base64.b64encode(my_key).decode()}"
    answer = ng.command("answer", call_id=call_id, from_tag="plain", to_tag="sdes",
                        sdp=phone_sdp(callee.getsockname()[1], [line]))
    assert answer["result"] == "ok", answer
    return port_of(offer["sdp"]), port_of(answer["sdp"]), suite, moat_key, my_key


@pytest.mark.hostile  # the records it plants: restored by the ASan/UBSan build
def test_calls_survive_a_restart_on_their_ports_and_keys(redis_server):
    gw, name, low = first_node(redis_server, "calls")
    ng = NgClient(gw.ng_port)
    caller, callee = udp(), udp()
    s_caller, s_callee = udp(), udp()
    g_caller, g_callee = udp(), udp()
    try:
        wait_for("the node's Redis link", lambda: cluster(gw)["redis"]["up"])
        to_callee, to_caller = plain_call(ng, "plain-1", caller, callee)
        s_to_callee, s_to_caller, suite, moat_key, my_key = sdes_call(ng, "sdes-1", s_caller,
                                                                       s_callee)
        plain_call(ng, "gone-1", g_caller, g_callee)  # its parties never come back
        receive = session(suite, moat_key, False)
        send = session(suite, my_key, True)

        def media_crosses(sequences):
            """Plain both ways; SRTP out decrypted with the key given at the
            answer, SRTP in with the callee's own key."""
            for seq in sequences:
                assert relays(caller, callee, to_caller, seq) == rtp(seq)
                assert relays(callee, caller, to_callee, seq) == rtp(seq)
                assert receive.unprotect(relays(s_caller, s_callee, s_to_caller, seq)) == rtp(seq)
                s_callee.sendto(send.protect(rtp(seq)), ("127.0.0.1", s_to_callee))
                assert s_caller.recv(2048) == rtp(seq)

        media_crosses(range(1, 4))
        wait_for("three records in Redis",
                 lambda: record_fields(redis_server, name) == {"plain-1", "sdes-1", "gone-1"})
        # Records that must not become calls, and must not stop the others.
        def record(call_id, steps, ports, version=1):
            return bencode({"v": version, "call-id": call_id, "created": 0,
                            "steps": [bencode(step) for step in steps], "ports": ports,
                            "keys": []})
        offer = {"command": "offer", "call-id": "off-range", "from-tag": "a",
                 "sdp": phone_sdp(9)}
        # The restarted node's own media socket (chosen here): a replayed
        # offer goes through the same destination checks as a live one.
        own_port = free_port(socket.SOCK_DGRAM)
        at_self = {"command": "offer", "call-id": "at-self", "from-tag": "a",
                   "sdp": phone_sdp(own_port)}
        hostile = {
            "garbage": b"\x00not bencode",
            "other-version": record("other-version", [offer], [], version=99),
            "ping-step": record("ping-step", [{"command": "ping"}], []),
            "off-range": record("off-range", [offer], [2, 4]),  # not Moat's ports
            "at-self": record("at-self", [at_self], []),
            # Its one step would make a call of another id.
            "other-call": record("other-call", [{**offer, "call-id": "stray"}], []),
            # Over the record limit (512 KiB): refused before parsing.
            "oversized": record("oversized", [{**offer, "call-id": "oversized",
                                                "pad": "x" * (512 * 1024)}], []),
        }
        for field, value in hostile.items():
            redis_server.command("HSET", f"moat:calls:{name}", field, value)

        gw.process.kill()
        gw.process.wait(timeout=10)
        # Same node id: its records are read back.
        gw = node(redis_server, name, low, extra=["--media-port", str(own_port)])
        ng.close()
        ng = NgClient(gw.ng_port)
        wait_for("the calls restored", lambda: restored(gw, "restored") == 3)
        assert restored(gw, "failed") == len(hostile), "each hostile record refused"
        assert ng.command("query", call_id="stray")["result"] == "error"
        assert gw.process.poll() is None

        # The phones send to the ports they had; media crosses both ways.
        media_crosses(range(4, 8))

        query = ng.command("query", call_id="plain-1")
        assert query["result"] == "ok", query
        assert ng.command("delete", call_id="plain-1", delete_delay=0)["result"] == "ok"
        wait_for("the deleted call's record gone",
                 lambda: "plain-1" not in record_fields(redis_server, name))

        # The call nobody came back to ends after restored_call_idle_s; the
        # one with media stays.
        wait_for("the idle restored call ended", lambda: restored(gw, "idle") == 1,
                 timeout=IDLE_S + 10)
        assert ng.command("query", call_id="gone-1")["result"] == "error"
        assert ng.command("query", call_id="sdes-1")["result"] == "ok"
        assert record_fields(redis_server, name) == {"sdes-1"}
    finally:
        ng.close()
        for s in (caller, callee, s_caller, s_callee, g_caller, g_callee):
            s.close()
        assert gw.stop() == 0, f"log in {gw.log_path}"


def test_calls_relay_through_a_redis_outage_and_their_records_are_rewritten(redis_server):
    """Redis stopped for 10 s: an established call's media keeps flowing; a
    call made and one deleted meanwhile cannot be written (counted); when
    Redis is back (empty: it keeps nothing on disk) the node rewrites the
    hash to exactly the calls it has."""
    gw, name, low = first_node(redis_server, "outage")
    ng = NgClient(gw.ng_port)
    sockets = [udp() for _ in range(6)]
    try:
        wait_for("the node's Redis link", lambda: cluster(gw)["redis"]["up"])
        to_callee, to_caller = plain_call(ng, "kept", sockets[0], sockets[1])
        plain_call(ng, "ended", sockets[2], sockets[3])
        wait_for("two records", lambda: record_fields(redis_server, name) == {"kept", "ended"})
        redis_server.stop()
        wait_for("Redis seen down", lambda: not cluster(gw)["redis"]["up"])
        failed_before = gw.metric("moat_cluster_call_writes_failed_total")
        plain_call(ng, "during", sockets[4], sockets[5])
        assert ng.command("delete", call_id="ended", delete_delay=0)["result"] == "ok"
        assert gw.metric("moat_cluster_call_writes_failed_total") >= failed_before + 3
        deadline = time.monotonic() + 10
        seq = 0
        while time.monotonic() < deadline:  # the outage: media as ever
            seq += 1
            assert relays(sockets[0], sockets[1], to_caller, seq) == rtp(seq)
            assert relays(sockets[1], sockets[0], to_callee, seq) == rtp(seq)
            time.sleep(0.02)
        redis_server.start()
        wait_for("the hash rewritten", lambda: record_fields(redis_server, name) ==
                 {"kept", "during"}, timeout=20)
        assert cluster(gw)["calls"]["loaded"]
    finally:
        ng.close()
        for s in sockets:
            s.close()
        assert gw.stop() == 0, f"log in {gw.log_path}"


def record_of(redis, name, call_id):
    """The call's record in Redis, decoded."""
    reply = redis.command("HGET", f"moat:calls:{name}", call_id)
    if reply.startswith(b"$-1"):
        return None
    header, rest = reply.split(b"\r\n", 1)
    value, _ = bdecode(rest[:int(header[1:])])
    return value


def test_an_sdes_call_past_its_rollover_survives_a_restart(redis_server):
    """SRTP's packet index is the rollover counter and the sequence number,
    and the counter is in no packet: a process that restarts with ROC 0 on a
    stream that wrapped fails every packet. Both SRTP streams of an SDES leg
    wrap (sequence numbers from 65,000); the node writes where they stand;
    killed and started again, it resumes them at rollover 1, and the SRTP
    party, which never restarted, keeps decrypting and being decrypted."""
    gw, name, low = first_node(redis_server, "roc")
    ng = NgClient(gw.ng_port)
    caller, callee = udp(), udp()
    try:
        wait_for("the node's Redis link", lambda: cluster(gw)["redis"]["up"])
        to_callee, to_caller, suite, moat_key, my_key = sdes_call(ng, "roc-1", caller, callee)
        receive = session(suite, moat_key, False)
        send = session(suite, my_key, True)

        def crosses(sequence):
            for n in sequence:
                seq = n & 0xFFFF
                assert receive.unprotect(relays(caller, callee, to_caller, seq)) == rtp(seq)
                callee.sendto(send.protect(rtp(seq)), ("127.0.0.1", to_callee))
                assert caller.recv(2048) == rtp(seq)

        crosses(range(65000, 65536 + 300))  # both streams wrap: rollover 1

        def rollovers():
            record = record_of(redis_server, name, "roc-1") or {}
            return [(entry[3], entry[6]) for entry in record.get("srtp", [])]
        wait_for("both streams' rollover written", lambda: rollovers() == [(1, 1)])

        gw.process.kill()
        gw.process.wait(timeout=10)
        gw = node(redis_server, name, low)
        wait_for("the call restored", lambda: restored(gw, "restored") == 1)
        crosses(range(65536 + 300, 65536 + 400))
    finally:
        ng.close()
        caller.close()
        callee.close()
        assert gw.stop() == 0, f"log in {gw.log_path}"
