"""A small client of the ng control protocol (rtpengine's, as Moat serves
it): bencode, a cookie per command, one UDP socket."""
import os
import socket


def bencode(value):
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


def bdecode(data, i=0):
    """Returns (value, next index); strings come back as str when UTF-8."""
    c = data[i:i + 1]
    if c == b"i":
        end = data.index(b"e", i)
        return int(data[i + 1:end]), end + 1
    if c == b"l":
        i += 1
        out = []
        while data[i:i + 1] != b"e":
            v, i = bdecode(data, i)
            out.append(v)
        return out, i + 1
    if c == b"d":
        i += 1
        out = {}
        while data[i:i + 1] != b"e":
            k, i = bdecode(data, i)
            v, i = bdecode(data, i)
            out[k] = v
        return out, i + 1
    colon = data.index(b":", i)
    n = int(data[i:colon])
    raw = data[colon + 1:colon + 1 + n]
    try:
        return raw.decode(), colon + 1 + n
    except UnicodeDecodeError:
        return raw, colon + 1 + n


class NgClient:
    def __init__(self, port, host="127.0.0.1"):
        self.address = (host, port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(3)

    def raw(self, datagram):
        self.sock.sendto(datagram, self.address)
        return self.sock.recv(65535)

    def command(self, command, **keys):
        cookie = os.urandom(6).hex().encode()
        body = {"command": command}
        body.update({k.replace("_", "-"): v for k, v in keys.items()})
        reply = self.raw(cookie + b" " + bencode(body))
        assert reply.startswith(cookie + b" "), reply
        value, _ = bdecode(reply, len(cookie) + 1)
        return value

    def close(self):
        self.sock.close()
