"""A peer that moves leaves its old 5-tuple behind, and another client may
later get that tuple from the NAT (CGNAT port reuse). The old session must
let go of it: once an ICE restart from the new network has moved the media
(at once), or one consent timeout after the peer's last check there (NAT
rebinding without a restart). Before, the tuple stayed the old session's
for as long as that session lived: every check the new client sent from it
was dropped as `ice_pair` (and its media went to the old session).
Raw STUN on one worker, so that both sessions share its tuple table."""
import re
import socket
import time

from conftest import Gateway
from stun_check import binding_request
from test_ice_restart_hostile import PEER_UFRAG, answered, offer, request, restart

CONSENT_S = 5


def session(gw):
    status, headers, answer = request(gw, "POST", "/whip/echo", offer(), "application/sdp")
    assert status == 201, answer
    ufrag = re.search(r"a=ice-ufrag:(\S+)", answer).group(1)
    pwd = re.search(r"a=ice-pwd:(\S+)", answer).group(1)
    port = int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+)", answer).group(1))
    return headers["Location"], ufrag, pwd, port


def udp(port=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(0.5)
    s.bind(("127.0.0.1", port))
    return s


def new_client_on(gw, tuple_port):
    """A second session whose peer checks from the first one's old tuple:
    whether it is answered (once in three tries)."""
    _, ufrag, pwd, port = session(gw)
    c = udp(tuple_port)
    try:
        return any(answered(c, port, binding_request(ufrag, PEER_UFRAG, pwd, nominate=True))
                   for _ in range(3))
    finally:
        c.close()


def test_an_ice_restart_from_a_new_network_releases_the_old_tuple():
    gw = Gateway(workers=1)
    try:
        location, ufrag, pwd, port = session(gw)
        a = udp()
        a_port = a.getsockname()[1]
        b = udp()
        assert answered(a, port, binding_request(ufrag, PEER_UFRAG, pwd, nominate=True))
        new_ufrag, new_pwd = restart(gw, location, "movedUfrag", "m" * 22)
        assert answered(b, port, binding_request(new_ufrag, "movedUfrag", new_pwd, nominate=True))
        a.close()  # the client left A; the NAT gives A's mapping to another
        refused = gw.drops("ice_pair")
        assert new_client_on(gw, a_port), \
            "the moved session still holds its old tuple after its ICE restart"
        assert gw.drops("ice_pair") == refused
        assert gw.metric("moat_ice_pairs_expired_total") >= 1
        # The first session goes on from its new tuple.
        assert answered(b, port, binding_request(new_ufrag, "movedUfrag", new_pwd))
        b.close()
    finally:
        assert gw.stop() == 0, gw.log_path


def test_a_rebound_peers_old_tuple_is_released_after_the_consent_timeout():
    gw = Gateway(workers=1, extra_args=["--consent-timeout", str(CONSENT_S)])
    try:
        _, ufrag, pwd, port = session(gw)
        a = udp()
        a_port = a.getsockname()[1]
        b = udp()
        assert answered(a, port, binding_request(ufrag, PEER_UFRAG, pwd, nominate=True))
        left = time.monotonic()
        a.close()
        # NAT rebinding: the same candidate (same priority) from a new mapping.
        assert answered(b, port, binding_request(ufrag, PEER_UFRAG, pwd, nominate=True))
        # Within the consent timeout the old tuple is still the session's.
        assert not new_client_on(gw, a_port)
        # The peer keeps consent from its new tuple past the timeout.
        while time.monotonic() - left < CONSENT_S + 1.5:
            assert answered(b, port, binding_request(ufrag, PEER_UFRAG, pwd))
            time.sleep(0.5)
        refused = gw.drops("ice_pair")
        assert new_client_on(gw, a_port), \
            "the moved session still holds its old tuple one consent timeout after its last check"
        assert gw.drops("ice_pair") == refused
        assert gw.metric("moat_ice_pairs_expired_total") >= 1
        # The first session lives on at its new tuple (its credentials answer).
        assert answered(b, port, binding_request(ufrag, PEER_UFRAG, pwd))
        b.close()
    finally:
        assert gw.stop() == 0, gw.log_path
