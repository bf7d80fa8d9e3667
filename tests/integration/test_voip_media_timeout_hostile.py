"""The media timeout ([call] media_timeout_s, silent_timeout_s): a call whose
delete never comes (its BYE lost, the proxy restarted) must not hold its
ports forever. With --call-media-timeout 2, an answered call on which no
party sends ends about 2 s after its answer, as an ng delete with
delete-delay 0 would end it (query: unknown call-id; legs and ports back),
counted and logged; a call whose parties keep sending stays, and ends about
2 s after their last packet, although a stranger on their IP keeps sending
to a leg (dropped: a packet must be accepted to count). A call not answered
yet, or held, gets the silent timeout instead (set through the environment
here). A call with a WebRTC leg (an aiortc client) ends the same way once
both parties stop, its leg's session with it."""
import socket
import threading
import time

from conftest import Gateway, free_port
from ng_client import NgClient
from test_voip_ng import establish, phone_sdp, rtp
from voip_peers import sdp_port, udp_phone

TIMEOUT_S = 2
SLACK_S = 2.5  # two sweep periods (0.5 s) and a slow (ASan) gateway


def timeout_gateway(env=None):
    """Moat relaying calls on 10 port pairs with --call-media-timeout
    TIMEOUT_S (relay_gateway's options, and `env`)."""
    low = free_port(socket.SOCK_DGRAM, 20)
    low += low & 1
    return Gateway(env=env, extra_args=[
        "--media-port-min", str(low), "--media-port-max", str(low + 19),
        "--announced-address", "127.0.0.1", "--call-allow-loopback-destinations",
        "--call-media-timeout", str(TIMEOUT_S)])


def gone(client, call_id):
    reply = client.command("query", call_id=call_id)
    if reply["result"] == "ok":
        return False
    assert reply.get("error-reason") == "Unknown call-id", reply
    return True


def wait_gone(client, call_id, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if gone(client, call_id):
            return time.time()
        time.sleep(0.05)
    raise AssertionError(f"{call_id} still there after {seconds} s")


def wait_metric(gw, name, value, seconds=5):
    deadline = time.time() + seconds
    while gw.metric(name) != value and time.time() < deadline:
        time.sleep(0.1)
    assert gw.metric(name) == value, (name, gw.metric(name), value)


class Sender(threading.Thread):
    """Sends RTP every 40 ms from each (socket, port) pair until stopped;
    `last` is when it sent its last packet."""

    def __init__(self, pairs):
        super().__init__(daemon=True)
        self.pairs, self.stopped, self.last = pairs, threading.Event(), None

    def run(self):
        seq = 0
        while not self.stopped.is_set():
            for sock, port in self.pairs:
                sock.sendto(rtp(seq), ("127.0.0.1", port))
            self.last = time.time()
            seq += 1
            time.sleep(0.04)

    def stop(self):
        self.stopped.set()
        self.join()
        return self.last


def test_calls_without_media_end_and_free_their_ports():
    gw = timeout_gateway()
    client = NgClient(gw.ng_port)
    phones = [udp_phone(2) for _ in range(5)]
    quiet_caller, quiet_callee, caller, callee, stranger = phones
    talkers = stranger_flood = None
    try:
        free = gw.metric("moat_call_ports_free")
        establish(client, "quiet", quiet_caller, quiet_callee)
        quiet_answered = time.time()
        offer_sdp, answer_sdp = establish(client, "talking", caller, callee)
        to_callee, to_caller = sdp_port(offer_sdp), sdp_port(answer_sdp)
        talkers = Sender([(caller, to_caller), (callee, to_callee)])
        talkers.start()

        # Nobody sends on "quiet": it ends about TIMEOUT_S after its answer.
        ended = wait_gone(client, "quiet", TIMEOUT_S + SLACK_S + 2)
        assert TIMEOUT_S - 0.2 <= ended - quiet_answered <= TIMEOUT_S + SLACK_S
        metrics = gw.metrics()
        assert metrics["moat_calls"] == 1 and metrics["moat_call_legs"] == 2, metrics
        assert metrics['moat_calls_timed_out_total{timeout="media"}'] == 1
        assert "quiet" not in client.command("list")["calls"]

        # "talking" stays while its parties send, well past the timeout.
        time.sleep(max(0.0, quiet_answered + 2 * TIMEOUT_S + 1 - time.time()))
        query = client.command("query", call_id="talking")
        assert query["result"] == "ok", query
        assert query["totals"]["RTP"]["packets"] > 50

        # They stop; a stranger on their IP keeps sending to the caller's
        # (latched) leg: dropped, so the call still ends after the timeout.
        last = talkers.stop()
        dropped = gw.metric('moat_call_dropped_packets_total{reason="source"}')
        stranger_flood = Sender([(stranger, to_caller)])
        stranger_flood.start()
        ended = wait_gone(client, "talking", TIMEOUT_S + SLACK_S + 2)
        assert TIMEOUT_S - 0.2 <= ended - last <= TIMEOUT_S + SLACK_S
        stranger_flood.stop()
        assert gw.metric('moat_call_dropped_packets_total{reason="source"}') > dropped + 10

        # Both ended as a delete with delete-delay 0 ends a call.
        metrics = gw.metrics()
        assert metrics["moat_calls"] == 0 and metrics["moat_call_legs"] == 0, metrics
        assert metrics['moat_calls_timed_out_total{timeout="media"}'] == 2
        wait_metric(gw, "moat_call_ports_free", free)
        log = gw.log_text()
        for call_id in ("quiet", "talking"):
            assert f'call_id="{call_id}" timeout=media' in log, log[-3000:]
        # The ports are free again: a new call gets them.
        establish(client, "again", quiet_caller, quiet_callee)
    finally:
        for sender in (talkers, stranger_flood):
            if sender and sender.is_alive():
                sender.stop()
        client.close()
        for s in phones:
            s.close()
        code = gw.stop()
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def test_ringing_and_held_calls_get_the_silent_timeout():
    silent_s = 4
    gw = timeout_gateway(env={"MOAT_CALL_SILENT_TIMEOUT_S": str(silent_s)})
    client = NgClient(gw.ng_port)
    phones = [udp_phone(2) for _ in range(3)]
    try:
        ringing = client.command("offer", call_id="ringing", from_tag="caller-tag",
                                 sdp=phone_sdp(phones[0].getsockname()[1]))
        assert ringing["result"] == "ok", ringing
        start = time.time()
        offer = client.command("offer", call_id="held", from_tag="caller-tag",
                               sdp=phone_sdp(phones[1].getsockname()[1]))
        assert offer["result"] == "ok", offer
        held_sdp = phone_sdp(phones[2].getsockname()[1], "2").replace("a=sendrecv", "a=sendonly")
        answer = client.command("answer", call_id="held", from_tag="caller-tag",
                                to_tag="callee-tag", sdp=held_sdp)
        assert answer["result"] == "ok", answer
        time.sleep(TIMEOUT_S + 1.5)
        assert not gone(client, "ringing") and not gone(client, "held")
        for call_id in ("ringing", "held"):
            ended = wait_gone(client, call_id, silent_s + SLACK_S + 2 - (time.time() - start))
            assert silent_s - 0.2 <= ended - start <= silent_s + SLACK_S
        metrics = gw.metrics()
        assert metrics['moat_calls_timed_out_total{timeout="silent"}'] == 2, metrics
        assert metrics['moat_calls_timed_out_total{timeout="media"}'] == 0, metrics
        assert metrics["moat_call_legs"] == 0, metrics
    finally:
        client.close()
        for s in phones:
            s.close()
        code = gw.stop()
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def test_call_with_a_webrtc_leg_times_out_and_ends_its_session():
    """Phone to an aiortc client (Moat's WebRTC offer): while both send, the
    call stays; when both stop (the client closed, the phone silent), it
    ends after the timeout, its WebRTC leg's session with it."""
    import asyncio

    from test_voip_webrtc import run_phone, wait_sessions_gone
    from test_voip_webrtc_callee import client_answer, moat_offer, webrtc_answer

    gw = timeout_gateway()
    client = NgClient(gw.ng_port)
    phone = udp_phone(0.002)

    async def scenario():
        offer = moat_offer(client, "webrtc", phone)
        assert offer["result"] == "ok", offer
        pc, tracks = await webrtc_answer(offer["sdp"])
        answer = client_answer(client, "webrtc", pc.localDescription.sdp)
        assert answer["result"] == "ok", answer
        received, stop = [], threading.Event()
        thread = threading.Thread(target=run_phone,
                                  args=(phone, sdp_port(answer["sdp"]), received, stop))
        thread.start()
        try:
            await asyncio.sleep(TIMEOUT_S + 2)
            alive = client.command("query", call_id="webrtc")["result"] == "ok"
            sessions = gw.metric("moat_sessions")
        finally:
            stop.set()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
            await pc.close()
        return alive, sessions, len(received), time.time()

    try:
        alive, sessions, received, stopped = asyncio.run(scenario())
        assert alive and sessions == 1 and received > 50, (alive, sessions, received)
        ended = wait_gone(client, "webrtc", TIMEOUT_S + SLACK_S + 2)
        assert ended - stopped <= TIMEOUT_S + SLACK_S
        assert gw.metric("moat_call_webrtc_legs") == 0
        wait_sessions_gone(gw)
        assert gw.metric('moat_calls_timed_out_total{timeout="media"}') == 1
    finally:
        client.close()
        phone.close()
        code = gw.stop()
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
