"""HTTP requests from a chosen loopback source address (127.0.0.x), for tests
that play several clients, and the minimal WebRTC offer they send."""
import http.client
import json
import os


def offer():
    """A minimal WebRTC audio offer (no ICE will follow: the session stays
    pending until its timeout)."""
    fingerprint = ":".join("%02X" % b for b in os.urandom(32))
    lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
             "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd",
             "a=ice-pwd:abcdefghijklmnopqrstuvwx", "a=fingerprint:sha-256 " + fingerprint,
             "a=setup:actpass", "a=mid:0", "a=sendrecv", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2"]
    return ("\r\n".join(lines) + "\r\n").encode()


def request(gw, method, path, body=None, headers=None, source="127.0.0.1"):
    """(status, headers, parsed JSON body or raw bytes) of one request sent
    from `source`; never raises for an HTTP error status."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **(headers or {})}
    connection = http.client.HTTPConnection("127.0.0.1", gw.http_port, timeout=10,
                                            source_address=(source, 0))
    try:
        connection.request(method, path, body=body, headers=headers or {})
        reply = connection.getresponse()
        data = reply.read()
        kind = reply.getheader("Content-Type") or ""
        parsed = json.loads(data) if data and kind.startswith("application/json") else data
        return reply.status, reply.headers, parsed
    finally:
        connection.close()


def post_offer(gw, path="/whip/echo", headers=None, source="127.0.0.1"):
    return request(gw, "POST", path, offer(), {"Content-Type": "application/sdp", **(headers or {})},
                   source=source)
