"""Runs inside a network namespace (test_voip_defaults.py): two plain RTP
phones on ADDRESS set up a call over Moat's ng socket on 127.0.0.1:NG_PORT
and send RTP to whatever the rewritten SDPs name. Prints one JSON object:
the c= address of each rewritten SDP and how many packets each phone got.

    python ng_call_probe.py ADDRESS NG_PORT"""
import json
import re
import socket
import struct
import sys

from ng_client import NgClient


def phone_sdp(address, port, session):
    return ("v=0\r\n"
            f"o=- {session} 1 IN IP4 {address}\r\n"
            f"s=-\r\nc=IN IP4 {address}\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\na=sendrecv\r\n")


def media(sdp):
    """(c= address, m=audio port) of an SDP."""
    return (re.search(r"^c=IN IP4 (\S+)", sdp, re.M).group(1),
            int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1)))


def received(sock, count):
    got = 0
    try:
        for _ in range(count):
            sock.recvfrom(2048)
            got += 1
    except socket.timeout:
        pass
    return got


def main():
    address, ng_port = sys.argv[1], int(sys.argv[2])
    phones = []
    for _ in range(2):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((address, 0))
        s.settimeout(2)
        phones.append(s)
    caller, callee = phones
    client = NgClient(ng_port)
    offer = client.command("offer", call_id="defaults-1", from_tag="a",
                           sdp=phone_sdp(address, caller.getsockname()[1], 1))
    answer = client.command("answer", call_id="defaults-1", from_tag="a", to_tag="b",
                            sdp=phone_sdp(address, callee.getsockname()[1], 2))
    if offer.get("result") != "ok" or answer.get("result") != "ok":
        print(json.dumps({"error": [str(offer), str(answer)]}))
        return
    to_callee, to_caller = media(offer["sdp"]), media(answer["sdp"])
    rtp = [struct.pack("!BBHII", 0x80, 8, seq, seq * 160, 0x1234) + bytes(160) for seq in range(20)]
    for packet in rtp:
        caller.sendto(packet, to_caller)
    forward = received(callee, 20)
    for packet in rtp:
        callee.sendto(packet, to_callee)
    back = received(caller, 20)
    client.command("delete", call_id="defaults-1", from_tag="a", delete_delay=0)
    print(json.dumps({"offer_c": to_callee[0], "answer_c": to_caller[0],
                      "forward": forward, "back": back}))


if __name__ == "__main__":
    main()
