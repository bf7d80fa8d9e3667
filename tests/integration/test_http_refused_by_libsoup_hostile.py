"""Requests libsoup's server refuses itself, before any handler of Moat's
sees them, because their body's framing is unreadable: an unknown
Transfer-Encoding (501) or a Content-Length it cannot read (400). Debian's
libsoup 3.2.3 leaked the whole request path of each one: 2000 of them with
60 KB paths took the gateway's RSS up by 117 MB in half a second, from
anyone able to connect. Moat links Debian's libsoup rebuilt with
scripts/patches/libsoup-server-free-path-on-unreadable-body.patch
(scripts/build-libsoup.sh). Under ASan the leak is LeakSanitizer's report at
exit (the fixture's exit status); on the release binary, the RSS."""
import os
import socket

from conftest import MOAT, rss_kib

PATH = b"/whip/" + b"a" * 60000
FORMS = [
    (b"Transfer-Encoding: gzip\r\n", b"501"),
    (b"Content-Length: 0x10\r\n", b"400"),
    (b"Content-Length: 5, 7\r\n", b"400"),
]


def refused(port, header):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"POST " + PATH + b" HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n")
        reply = b""
        while b"\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply


def test_requests_libsoup_refuses_itself_leak_nothing(gateway):
    sanitized = "asan" in str(MOAT)
    rounds = 100 if sanitized else 700
    for header, status in FORMS:  # warm up: the first of each allocates for good
        assert refused(gateway.http_port, header).split(b" ")[1] == status
    before = rss_kib(gateway.process.pid)
    for _ in range(rounds):
        for header, status in FORMS:
            reply = refused(gateway.http_port, header)
            assert reply.split(b" ")[1] == status, reply[:80]
    grown_mib = (rss_kib(gateway.process.pid) - before) / 1024
    leaked_mib = rounds * len(FORMS) * len(PATH) / 2**20
    print(f"{rounds * len(FORMS)} refused requests of {len(PATH)}-byte paths: "
          f"RSS {grown_mib:+.1f} MiB (a leaked path each would be {leaked_mib:.0f} MiB)")
    if not sanitized:  # ASan's quarantine holds freed memory; LSan checks at exit
        assert grown_mib < leaked_mib / 4, grown_mib
    assert gateway.get("/healthz")
    assert os.path.exists(f"/proc/{gateway.process.pid}")
