"""A hostile or broken cluster Redis (gateway/cluster/): what one bad key or
a silent network does to every node. A node's key that is not a string, or
an index of nodes that is not a set, is thrown out of the registry (counted)
instead of failing the register script on every node, every tick.
redis-server and the nodes are this test's own (loopback, free ports)."""
import shutil

import pytest

from cluster_helpers import cluster, nodes_factory, redis, wait_for  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed")


def listed(gw):
    return {n["id"] for n in cluster(gw)["nodes"]}


def in_index(redis, node_id):
    return redis.command("SISMEMBER", "moat:nodes", node_id) == b":1\r\n"


def test_a_wrong_typed_node_key_leaves_the_registry(redis, nodes_factory):
    """`HSET moat:node:bad; SADD moat:nodes bad` made the register script's
    GET fail (WRONGTYPE) on every node, every tick: nodes started after were
    never listed. Now the id leaves the index, counted; a wrong-typed index
    is replaced."""
    a = nodes_factory(redis, "n0")
    wait_for("n0 listed", lambda: listed(a) == {"n0"})
    redis.command("HSET", "moat:node:bad", "x", "y")
    redis.command("SADD", "moat:nodes", "bad")
    b = nodes_factory(redis, "n1")
    wait_for("n1 listed by both", lambda: listed(a) == listed(b) == {"n0", "n1"})
    wait_for("the bad id out of the index", lambda: not in_index(redis, "bad"))
    assert a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total") >= 1
    assert cluster(a)["redis"]["command_errors"] == 0

    # The index itself of the wrong type: replaced, every node back in it.
    rejected = a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total")
    redis.command("EVAL", "redis.call('DEL', KEYS[1]) return redis.call('HSET', KEYS[1], 'x', 'y')",
                  "1", "moat:nodes")
    c = nodes_factory(redis, "n2")
    wait_for("n2 listed by all", lambda: listed(a) == listed(b) == listed(c) ==
             {"n0", "n1", "n2"})
    assert redis.command("TYPE", "moat:nodes") == b"+set\r\n"
    assert a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total") + \
        c.metric("moat_cluster_records_rejected_total") > rejected


def test_a_huge_node_record_is_not_read(redis, nodes_factory):
    """A record of megabytes under a listed id was returned whole by the
    register script to every node, every tick, to be refused by the parser
    (> 4 KiB) only after hiredis had read it all; at 200 MB that took the
    link past its timeout, over and over. Now the script measures it
    (STRLEN) and takes the id out of the index without reading it."""
    a = nodes_factory(redis, "n0")
    wait_for("n0 listed", lambda: listed(a) == {"n0"})
    redis.command("SETRANGE", "moat:node:big", str(4 * 1024 * 1024 - 1), "x")
    redis.command("SADD", "moat:nodes", "big")
    b = nodes_factory(redis, "n1")
    wait_for("the huge record's id out of the index", lambda: not in_index(redis, "big"))
    wait_for("n1 listed by both", lambda: listed(a) == listed(b) == {"n0", "n1"})
    # Refused once, by the script, not read and refused every tick.
    rejected = a.metric("moat_cluster_records_rejected_total") + \
        b.metric("moat_cluster_records_rejected_total")
    assert rejected == 1
    for gw in (a, b):
        link = cluster(gw)["redis"]
        assert link["up"] and link["reconnects"] == 0 and link["command_timeouts"] == 0, link
