"""Traffic inside a moat-tunnel test, run in a peer's namespace with
`ip netns exec` (no ping or iperf3 on the test hosts):

  tunnel_traffic.py ping ADDRESS COUNT        ICMP echo; prints the round trips
                                              and "replies N"
  tunnel_traffic.py sink PORT BYTES           accepts one TCP connection,
                                              prints "received N sha256 H"
  tunnel_traffic.py source ADDRESS PORT BYTES sends BYTES of a seeded
                                              pseudo-random stream, prints its
                                              "sent N sha256 H"
  tunnel_traffic.py sinks PORT FLOWS BYTES    sink on PORT .. PORT+FLOWS-1 at
                                              once (threads): "listening",
                                              then "received I N sha256 H"
                                              per flow I as each ends
  tunnel_traffic.py sources ADDRESS PORT FLOWS BYTES
                                              FLOWS sources at once, one per
                                              port: "sent I N sha256 H"
  tunnel_traffic.py flood SRC DST PORT RATE SECONDS
                                              forged UDP datagrams (source SRC,
                                              random ports: DTLS records, RTP,
                                              STUN-looking junk) at DST:PORT;
                                              prints how many. Only for the
                                              test's own namespaces.
  tunnel_traffic.py inject DEVICE SRC DST PORT TEXT
                                              one UDP datagram from SRC (any
                                              source) to DST:PORT written out
                                              of DEVICE, the peer's own TUN
                                              device (AF_PACKET): its
                                              moat-tunnel carries it as it is;
                                              TEXT "junk": 41 bytes that are
                                              not an IP packet
  tunnel_traffic.py receive PORT SECONDS      UDP on PORT: "listening", then
                                              "got SRC TEXT" per datagram
"""
import hashlib
import os
import random
import socket
import struct
import sys
import threading
import time


PRINT_LOCK = threading.Lock()  # one whole line at a time from the flows' threads


def say(line):
    with PRINT_LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(address, count, timeout=2.0):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.settimeout(timeout)
    ident = os.getpid() & 0xFFFF
    replies = 0
    rtts = []
    for seq in range(count):
        payload = b"moat-tunnel" * 5
        header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        packet = struct.pack("!BBHHH", 8, 0, checksum(header + payload), ident, seq) + payload
        sent_at = time.monotonic()
        sock.sendto(packet, (address, 0))
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                data, _ = sock.recvfrom(2048)
            except socket.timeout:
                break
            icmp = data[(data[0] & 0x0F) * 4:]
            kind, _, _, rid, rseq = struct.unpack("!BBHHH", icmp[:8])
            if kind == 0 and rid == ident and rseq == seq:
                replies += 1
                rtts.append(time.monotonic() - sent_at)
                break
    if rtts:
        print(f"rtt_ms min {min(rtts) * 1e3:.2f} avg {sum(rtts) / len(rtts) * 1e3:.2f}", flush=True)
    print(f"replies {replies}", flush=True)


def stream(n, seed=1234):
    rng = random.Random(seed)
    sent = 0
    while sent < n:
        chunk = rng.randbytes(min(65536, n - sent))
        sent += len(chunk)
        yield chunk


def source(address, port, n, label="", seed=1234):
    h = hashlib.sha256()
    with socket.create_connection((address, port), timeout=60) as s:
        for chunk in stream(n, seed):
            h.update(chunk)
            s.sendall(chunk)
        s.shutdown(socket.SHUT_WR)
        s.recv(1)
    say(f"sent {label}{n} sha256 {h.hexdigest()}")


def listen(port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(1)
    return listener


def sink(port, n, listener=None, label=""):
    h = hashlib.sha256()
    with listener or listen(port) as listener:
        if not label:
            print("listening", flush=True)
        conn, _ = listener.accept()
        conn.settimeout(120)
        got = 0
        with conn:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    break
                h.update(data)
                got += len(data)
    say(f"received {label}{got} sha256 {h.hexdigest()}")


def sinks(port, flows, n):
    listeners = [listen(port + i) for i in range(flows)]
    print("listening", flush=True)
    threads = [threading.Thread(target=sink, args=(port + i, n, listeners[i], f"{i} "))
               for i in range(flows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def sources(address, port, flows, n):
    # Each flow its own stream (seed): a packet of one flow delivered into
    # another would change both digests.
    threads = [threading.Thread(target=source, args=(address, port + i, n, f"{i} ", 1234 + i))
               for i in range(flows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def udp_datagram(src, sport, dst, dport, payload):
    length = 8 + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + length, random.randrange(65536), 0, 64, 17,
                     0, socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ip + struct.pack("!HHHH", sport, dport, length, 0) + payload


def forged_payload(i):
    kind = i % 3
    if kind == 0:  # a DTLS 1.2 application data record, epoch 1
        body = os.urandom(random.randrange(40, 1200))
        return struct.pack("!BHHIHH", 23, 0xFEFD, 1, 0, i & 0xFFFF, len(body)) + body
    if kind == 1:  # RTP
        return struct.pack("!BBHII", 0x80, 111, i & 0xFFFF, i, 0x1234) + os.urandom(160)
    return struct.pack("!HHI", 1, 40, 0x2112A442) + os.urandom(52)  # a STUN-looking request


def flood(src, dst, dport, rate, seconds):
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    sent = 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        due = int((time.monotonic() - start) * rate)
        while sent < due:
            packet = udp_datagram(src, random.randrange(1024, 65536), dst, dport,
                                  forged_payload(sent))
            raw.sendto(packet, (dst, 0))
            sent += 1
        time.sleep(0.001)
    print(sent, flush=True)


def blast(dst, dport, seconds, size):
    """Datagrams of `size` bytes to dst:dport as fast as the socket takes
    them for `seconds`; prints how many went."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setblocking(False)
    payload = b"x" * size
    sent = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(256):
            try:
                s.sendto(payload, (dst, dport))
                sent += 1
            except BlockingIOError:
                pass
    print(sent, flush=True)


def inject(device, src, dst, dport, text):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind((device, 0x0800))
    packet = (b"\x70" + b"x" * 40 if text == "junk"
              else udp_datagram(src, 4000, dst, dport, text.encode()))
    s.send(packet)
    print("injected", len(packet), flush=True)


def receive(port, seconds):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", port))
    u.settimeout(0.2)
    say("listening")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data, source_address = u.recvfrom(65536)
        except socket.timeout:
            continue
        say(f"got {source_address[0]} {data.decode(errors='replace')}")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "ping":
        ping(sys.argv[2], int(sys.argv[3]))
    elif cmd == "source":
        source(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "flood":
        flood(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]))
    elif cmd == "blast":
        blast(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "inject":
        inject(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    elif cmd == "receive":
        receive(int(sys.argv[2]), float(sys.argv[3]))
    elif cmd == "sink":
        sink(int(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "sinks":
        sinks(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "sources":
        sources(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
