"""ICE restarts and WHIP resources as a client can misuse them (PATCH with
new ICE credentials, RFC 9725 §4.3): a second restart before the first was
used keeps answering the credentials the peer still uses (before, they
stopped at once and the session died of consent after 30 s), and an RTP
ingest's id is no WHIP resource: PATCH and DELETE on /whip/resource/<id>
get 404 and the ingest goes on (before, a PATCH bound ICE credentials to
it and a DELETE ended it behind its room's API)."""
import json
import re
import socket
import urllib.error
import urllib.request

from stun_check import binding_request

PEER_UFRAG = "peerUfrag1"
PEER_PWD = "peerPasswordPeerPassword1"
FRAGMENT = "application/trickle-ice-sdpfrag"


def offer():
    return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"
            "m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\n"
            f"a=ice-ufrag:{PEER_UFRAG}\r\na=ice-pwd:{PEER_PWD}\r\n"
            "a=fingerprint:sha-256 " + ":".join(["AB"] * 32) + "\r\n"
            "a=setup:actpass\r\na=mid:0\r\na=sctp-port:5000\r\n")


def request(gw, method, path, body=None, content_type=None, headers=None):
    r = urllib.request.Request(gw.base + path, data=body.encode() if body else None,
                               method=method, headers=dict(headers or {}))
    if content_type:
        r.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(r, timeout=5) as reply:
            return reply.status, dict(reply.headers), reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def answered(s, port, packet):
    s.sendto(packet, ("127.0.0.1", port))
    try:
        s.recv(2048)
        return True
    except socket.timeout:
        return False


def restart(gw, location, ufrag, pwd):
    status, _, body = request(gw, "PATCH", location,
                              f"a=ice-ufrag:{ufrag}\r\na=ice-pwd:{pwd}\r\n", FRAGMENT,
                              {"If-Match": "*"})
    assert status == 200, body
    return (re.search(r"a=ice-ufrag:(\S+)", body).group(1),
            re.search(r"a=ice-pwd:(\S+)", body).group(1))


def test_a_second_restart_keeps_the_credentials_in_use(gateway):
    status, headers, answer = request(gateway, "POST", "/whip/echo", offer(), "application/sdp")
    assert status == 201, answer
    location = headers["Location"]
    ufrag = re.search(r"a=ice-ufrag:(\S+)", answer).group(1)
    pwd = re.search(r"a=ice-pwd:(\S+)", answer).group(1)
    # The session's worker's port, as its candidate says.
    port = int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+)", answer).group(1))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.5)
    try:
        assert answered(s, port, binding_request(ufrag, PEER_UFRAG, pwd, nominate=True))
        restart(gateway, location, "restartA", "a" * 22)
        assert answered(s, port, binding_request(ufrag, PEER_UFRAG, pwd))
        # The client retried (its reply lost): another restart, still unused.
        new_ufrag, new_pwd = restart(gateway, location, "restartB", "b" * 22)
        assert answered(s, port, binding_request(ufrag, PEER_UFRAG, pwd)), \
            "the credentials in use stopped being answered"
        # The peer moves to the newest credentials: the old ones end then.
        assert answered(s, port, binding_request(new_ufrag, "restartB", new_pwd,
                                                    nominate=True))
        assert not answered(s, port, binding_request(ufrag, PEER_UFRAG, pwd))
    finally:
        s.close()
        request(gateway, "DELETE", location)


def test_an_ingest_is_no_whip_resource(gateway):
    status, _, body = request(gateway, "POST", "/api/rooms/ingested/ingest",
                              json.dumps({"audio": {"codec": "opus", "pt": 111}}),
                              "application/json")
    assert status == 201, body
    resource = json.loads(body)["resource"]
    ingest_id = resource.rsplit("/", 1)[1]
    status, _, body = request(gateway, "PATCH", f"/whip/resource/{ingest_id}",
                              "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\n",
                              FRAGMENT, {"If-Match": "*"})
    assert status == 404 and json.loads(body)["error"] == "unknown_session", body
    status, _, body = request(gateway, "DELETE", f"/whip/resource/{ingest_id}")
    assert status == 404, body
    status, _, room = request(gateway, "GET", "/api/rooms/ingested")
    assert status == 200 and json.loads(room)["publisher_count"] == 1, room
    assert request(gateway, "DELETE", resource)[0] == 204
