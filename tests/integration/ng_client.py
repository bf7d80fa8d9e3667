"""A minimal client for rtpengine's ng control protocol, for tests and
benches: bencode encode/decode and one command over UDP (`<cookie> <dict>`)
with a random cookie, retransmitted unchanged until a reply carrying that
cookie arrives or the tries run out. Works against rtpengine and Moat.

    ng = NgClient("127.0.0.1", 2223)
    reply = ng.command("offer", {"call-id": "c1", "from-tag": "a", "sdp": sdp})
    assert reply["result"] == "ok", reply
"""
import secrets
import socket
import time


class BencodeError(ValueError):
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
    raise TypeError(f"cannot bencode {type(value).__name__}")


def _decode(data, pos, depth):
    if depth > 64:
        raise BencodeError("nested too deep")
    if pos >= len(data):
        raise BencodeError("truncated")
    lead = data[pos:pos + 1]
    if lead == b"i":
        end = data.index(b"e", pos)
        return int(data[pos + 1:end]), end + 1
    if lead in (b"l", b"d"):
        pos += 1
        items = []
        while data[pos:pos + 1] != b"e":
            if pos >= len(data):
                raise BencodeError("truncated")
            item, pos = _decode(data, pos, depth + 1)
            items.append(item)
        if lead == b"l":
            return items, pos + 1
        if len(items) % 2:
            raise BencodeError("dictionary with a key and no value")
        return {items[i]: items[i + 1] for i in range(0, len(items), 2)}, pos + 1
    if lead.isdigit():
        colon = data.index(b":", pos)
        length = int(data[pos:colon])
        start = colon + 1
        if start + length > len(data):
            raise BencodeError("string runs past the end")
        return _text(data[start:start + length]), start + length
    raise BencodeError(f"unexpected byte {lead!r} at {pos}")


def _text(raw):
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return raw


def bdecode(data):
    """Strings decode to str when they are UTF-8, else stay bytes."""
    try:
        value, end = _decode(bytes(data), 0, 0)
    except ValueError as error:  # also int() and index() failures
        raise BencodeError(str(error)) from error
    if end != len(data):
        raise BencodeError("trailing bytes after the value")
    return value


class NgTimeout(TimeoutError):
    pass


class NgClient:
    def __init__(self, host="127.0.0.1", port=2223, timeout=1.0, tries=3):
        self.address = (host, port)
        self.timeout = timeout
        self.tries = tries
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def raw(self, datagram, cookie):
        """Send a datagram as is and return the raw reply that starts with
        `cookie ` (bytes), retransmitting the same datagram on timeout."""
        prefix = cookie + b" "
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
                    return reply[len(prefix):]
        raise NgTimeout(f"no ng reply from {self.address[0]}:{self.address[1]}")

    def command(self, command, args=None, cookie=None):
        """One ng command; returns the decoded reply dictionary."""
        cookie = (cookie or secrets.token_hex(8)).encode()
        body = dict(args or {}, command=command)
        return bdecode(self.raw(cookie + b" " + bencode(body), cookie))

    def ping(self):
        return self.command("ping").get("result") == "pong"


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
