"""The ng side of a cluster node (rtpengine's behaviour at its session
limit): [ng] max_calls refuses a new call with result "load limit" when the
offer's "supports" list names it (Kamailio then tries its next node), else
with the error "Parallel session limit reached"; calls already relayed go on
(answer, re-offer, delete). A draining cluster node refuses new calls the
same way and keeps its calls. [ng] max_load refuses new calls the same way
while the workers' CPU load is over it."""
import socket
import struct
import threading
import time
import urllib.request

from conftest import Gateway, free_port
from ng_client import NgClient, plain_sdp, sdp_media_address
from cluster_helpers import PASSWORD, Redis, cluster, wait_for

LIMIT = "Parallel session limit reached"


def relay(extra=(), env=None):
    low = free_port(socket.SOCK_DGRAM, 20)
    low += low & 1
    return Gateway(workers=1, env=env, extra_args=[
        "--media-port-min", str(low), "--media-port-max", str(low + 19),
        "--announced-address", "127.0.0.1", "--call-allow-loopback-destinations", *extra])


def call_ids(name):
    return {"call-id": f"{name}-{time.monotonic_ns()}", "from-tag": "caller"}


def offer(ng, call, supports=None):
    keys = {"sdp": plain_sdp("127.0.0.1", 40000)}
    if supports is not None:
        keys["supports"] = supports
    return ng.command("offer", call, **keys)


def test_max_calls_answers_load_limit_or_the_error():
    gw = relay(["--ng-max-calls", "1"])
    ng = NgClient(gw.ng_port)
    try:
        first = call_ids("first")
        assert offer(ng, first)["result"] == "ok"
        refused = offer(ng, call_ids("second"), supports=["load limit"])
        assert refused["result"] == "load limit", refused
        assert refused["message"] == LIMIT
        plain = offer(ng, call_ids("third"))
        assert plain == {"result": "error", "error-reason": LIMIT}, plain
        other = offer(ng, call_ids("fourth"), supports=["something else"])
        assert other["result"] == "error"
        # The call already relayed goes on: a re-offer, its answer.
        assert offer(ng, first, supports=["load limit"])["result"] == "ok"
        answer = ng.command("answer", first, to_tag="callee", sdp=plain_sdp("127.0.0.1", 40002))
        assert answer["result"] == "ok", answer
        assert gw.metric("moat_calls_refused_load_limit_total") == 3
        # Its end frees the slot.
        assert ng.command("delete", first, delete_delay=0)["result"] == "ok"
        assert offer(ng, call_ids("fifth"), supports=["load limit"])["result"] == "ok"
    finally:
        ng.close()
        assert gw.stop() == 0


def test_max_load_answers_load_limit_while_the_worker_is_busy():
    """[ng] max_load: an RTP flood through a call's legs keeps the one
    worker busy over 2 % of a core; new calls then get "load limit", the
    call already relayed goes on, and once the flood stops new calls are
    taken again."""
    gw = relay(["--ng-max-load", "2"])
    ng = NgClient(gw.ng_port)
    stop = threading.Event()

    def new_call_result(name):
        """A new call's result; an admitted one is deleted at once (its ports back)."""
        call = call_ids(name)
        reply = offer(ng, call, supports=["load limit"])
        if reply["result"] == "ok":
            assert ng.command("delete", call, delete_delay=0)["result"] == "ok"
        return reply

    try:
        first = call_ids("busy")
        offered = offer(ng, first)
        assert offered["result"] == "ok", offered  # idle: admitted (and the first sample)
        answered = ng.command("answer", first, to_tag="callee",
                              sdp=plain_sdp("127.0.0.1", 40002))
        assert answered["result"] == "ok", answered
        ports = [sdp_media_address(offered["sdp"])[1], sdp_media_address(answered["sdp"])[1]]

        def flood():
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                seq = 0
                payload = bytes(160)
                while not stop.is_set():
                    seq = (seq + 1) & 0xFFFF
                    packet = struct.pack("!BBHII", 0x80, 0, seq, seq * 160, 0x1234) + payload
                    for port in ports:
                        try:
                            s.sendto(packet, ("127.0.0.1", port))
                        except OSError:
                            pass
        sender = threading.Thread(target=flood, daemon=True)
        sender.start()
        refused = wait_for("a new call refused for load", lambda: (
            lambda r: r if r["result"] == "load limit" else None)(new_call_result("loaded")),
            timeout=20)
        assert refused["message"] == LIMIT
        assert gw.metric("moat_ng_worker_load_percent") > 2
        assert gw.metric("moat_calls_refused_worker_load_total") >= 1
        # The call already relayed goes on.
        assert offer(ng, first, supports=["load limit"])["result"] == "ok"
        stop.set()
        sender.join()
        wait_for("new calls admitted once the flood stopped",
                 lambda: new_call_result("calm")["result"] == "ok", timeout=20)
    finally:
        stop.set()
        ng.close()
        assert gw.stop() == 0


def test_a_draining_node_refuses_new_calls_and_keeps_its_own():
    redis = Redis()
    gw = relay(["--cluster-redis", f"127.0.0.1:{redis.port}", "--cluster-node-id", "ng0"],
               env={"MOAT_CLUSTER_PASSWORD": PASSWORD})
    ng = NgClient(gw.ng_port)
    try:
        wait_for("registered", lambda: cluster(gw)["redis"]["up"])
        kept = call_ids("kept")
        assert offer(ng, kept)["result"] == "ok"
        request = urllib.request.Request(gw.base + "/api/cluster/drain", method="POST")
        urllib.request.urlopen(request, timeout=5).close()
        refused = offer(ng, call_ids("new"), supports=["load limit"])
        assert refused["result"] == "load limit", refused
        assert offer(ng, call_ids("new2"))["error-reason"] == LIMIT
        answer = ng.command("answer", kept, to_tag="callee", sdp=plain_sdp("127.0.0.1", 40002))
        assert answer["result"] == "ok", answer
        # The registry shows the call count of the draining node.
        wait_for("calls in the record", lambda: [
            n["calls"] for n in cluster(gw)["nodes"] if n["id"] == "ng0"] == [1])
        request = urllib.request.Request(gw.base + "/api/cluster/drain", method="DELETE")
        urllib.request.urlopen(request, timeout=5).close()
        assert offer(ng, call_ids("after"))["result"] == "ok"
        assert ng.command("delete", kept, delete_delay=0)["result"] == "ok"
    finally:
        ng.close()
        assert gw.stop() == 0
        redis.stop()
