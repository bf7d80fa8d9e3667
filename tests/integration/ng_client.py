"""A small client of the ng control protocol (rtpengine's, as Moat serves
it), for tests and benches: bencode, a random cookie per command, one UDP
socket; a lost datagram is retransmitted unchanged (same cookie) until a
reply carrying that cookie arrives or the tries run out (by default three
tries of 2 s, as a SIP proxy's ng module retries: the gateway's cookie cache
answers a retransmitted command with the first reply, so a retry never runs
a command twice). Works against rtpengine and Moat.

    client = NgClient(2223)
    reply = client.command("offer", call_id="c1", from_tag="a", sdp=sdp)
    assert reply["result"] == "ok", reply
"""
import os
import socket
import time


class BencodeError(ValueError):
    pass


class NgTimeout(TimeoutError):
    pass


def bencode(value):
    """str/bytes -> string, int -> integer, list/tuple -> list, dict -> dict
    (keys sorted, as bencode requires)."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return b"i%de" % value
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, (bytes, bytearray)):
        return b"%d:%s" % (len(value), bytes(value))
    if isinstance(value, (list, tuple)):
        return b"l" + b"".join(bencode(v) for v in value) + b"e"
    if isinstance(value, dict):
        items = sorted((k.encode() if isinstance(k, str) else k, v) for k, v in value.items())
        return b"d" + b"".join(bencode(k) + bencode(v) for k, v in items) + b"e"
    raise TypeError(type(value))


def _decode(data, i, depth):
    if depth > 64:
        raise BencodeError("nested too deep")
    c = data[i:i + 1]
    if c == b"i":
        end = data.index(b"e", i)
        return int(data[i + 1:end]), end + 1
    if c in (b"l", b"d"):
        i += 1
        items = []
        while data[i:i + 1] != b"e":
            if i >= len(data):
                raise BencodeError("truncated")
            item, i = _decode(data, i, depth + 1)
            items.append(item)
        if c == b"l":
            return items, i + 1
        if len(items) % 2:
            raise BencodeError("dictionary with a key and no value")
        return {items[k]: items[k + 1] for k in range(0, len(items), 2)}, i + 1
    if not c.isdigit():
        raise BencodeError(f"unexpected {c!r} at {i}")
    colon = data.index(b":", i)
    n = int(data[i:colon])
    if colon + 1 + n > len(data):
        raise BencodeError("string runs past the end")
    raw = data[colon + 1:colon + 1 + n]
    try:
        return raw.decode(), colon + 1 + n
    except UnicodeDecodeError:
        return raw, colon + 1 + n


def bdecode(data, i=0):
    """Returns (value, next index); strings come back as str when UTF-8.
    Malformed input raises BencodeError."""
    try:
        return _decode(bytes(data), i, 0)
    except BencodeError:
        raise
    except ValueError as error:  # int() and index() failures
        raise BencodeError(str(error)) from error


class NgClient:
    def __init__(self, port, host="127.0.0.1", timeout=2.0, tries=3):
        self.address = (host, port)
        self.timeout = timeout
        self.tries = tries
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def raw(self, datagram):
        """Sends a datagram as is; returns the whole reply that starts with
        the datagram's cookie, retransmitting on timeout."""
        prefix = datagram.split(b" ", 1)[0] + b" "
        for _ in range(self.tries):
            self.sock.sendto(datagram, self.address)
            deadline = time.monotonic() + self.timeout
            while (left := deadline - time.monotonic()) > 0:
                self.sock.settimeout(left)
                try:
                    reply = self.sock.recv(65535)
                except socket.timeout:
                    break
                if reply.startswith(prefix):
                    return reply
        raise NgTimeout(f"no ng reply from {self.address[0]}:{self.address[1]}")

    def command(self, command, args=None, **keys):
        """One command; keys as a dict and/or keyword arguments (call_id is
        sent as call-id). Returns the decoded reply dictionary."""
        cookie = os.urandom(6).hex().encode()
        body = dict(args or {})
        body.update({k.replace("_", "-"): v for k, v in keys.items()})
        body["command"] = command
        reply = self.raw(cookie + b" " + bencode(body))
        value, _ = bdecode(reply, len(cookie) + 1)
        return value

    def ping(self):
        return self.command("ping").get("result") == "pong"

    def close(self):
        self.sock.close()


def plain_sdp(address, port, session_id=1, codecs=((0, "PCMU/8000"),)):
    """A one-m-line RTP/AVP audio SDP, as a SIP phone would offer it."""
    payloads = " ".join(str(pt) for pt, _ in codecs)
    lines = ["v=0", f"o=- {session_id} 1 IN IP4 {address}", "s=-", f"c=IN IP4 {address}",
             "t=0 0", f"m=audio {port} RTP/AVP {payloads}"]
    lines += [f"a=rtpmap:{pt} {name}" for pt, name in codecs]
    lines += ["a=ptime:20", "a=sendrecv"]
    return "\r\n".join(lines) + "\r\n"


def sdp_media_address(sdp):
    """(address, port) of the first audio m-line: its c= line, else the
    session-level one."""
    address, port, in_media = None, None, False
    for line in sdp.splitlines():
        if line.startswith("m=audio ") and port is None:
            port, in_media = int(line.split()[1]), True
        elif line.startswith("m="):
            in_media = False
        elif line.startswith("c=IN IP4 ") and (address is None or in_media):
            address = line.split()[2]
    return address, port
