"""The ng side of a cluster node (rtpengine's behaviour at its session
limit): [ng] max_calls refuses a new call with result "load limit" when the
offer's "supports" list names it (Kamailio then tries its next node), else
with the error "Parallel session limit reached"; calls already relayed go on
(answer, re-offer, delete). A draining cluster node refuses new calls the
same way and keeps its calls."""
import socket
import time
import urllib.request

from conftest import Gateway, free_port
from ng_client import NgClient, plain_sdp
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
