"""aiortc room peers for tests whose peers run inside network namespaces
(`ip netns exec <ns> python room_lossy_peer.py publish|subscribe ...`):
a publisher of the moving video pattern on /whip/room/<room>, and a
subscriber on /whep/room/<room> that records the sequence numbers of the
video it receives. Each prints JSON lines: publish prints {"published": ...}
once up, subscribe prints {"received": ..., "expected": ...} for its
measuring window; both leave (DELETE) on a line on stdin."""
import argparse
import asyncio
import json
import os
import sys

import aiohttp
from aiortc import RTCPeerConnection, RTCSessionDescription

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import PatternTrack, whip_delete, whip_publish  # noqa: E402


def say(obj):
    print(json.dumps(obj), flush=True)


async def wait_stdin():
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)


async def publish(args):
    pc = RTCPeerConnection()
    pc.addTrack(PatternTrack())
    resource, answer = await whip_publish(pc, f"{args.url}/whip/room/{args.room}")
    say({"published": resource, "rtx": "rtx/90000" in answer})
    await wait_stdin()
    say({"delete_status": await whip_delete(resource)})
    await pc.close()


async def subscribe(args):
    pc = RTCPeerConnection()
    pc.addTransceiver("video", direction="recvonly")
    first = asyncio.get_running_loop().create_future()
    seen = {"seqs": set(), "highest": None}

    @pc.on("track")
    def on_track(track):
        async def drain():
            while True:
                await track.recv()  # decode, as a viewer would
        asyncio.ensure_future(drain())

    await pc.setLocalDescription(await pc.createOffer())
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{args.url}/whep/room/{args.room}", data=pc.localDescription.sdp,
                             headers={"Content-Type": "application/sdp"}) as r:
            body = await r.text()
            assert r.status == 201, f"WHEP answered {r.status}: {body}"
            resource = args.url + r.headers["Location"]
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    receiver = next(t.receiver for t in pc.getTransceivers() if t.kind == "video")
    handle = receiver._handle_rtp_packet

    async def recording(packet, arrival_time_ms):
        # Sequence numbers of the media stream extended over wraps, media
        # only (no padding); an RTX packet (another SSRC) counts for the
        # original sequence number it carries.
        seen.setdefault("ssrc", packet.ssrc)
        seq = packet.sequence_number
        if packet.ssrc != seen["ssrc"]:
            if len(packet.payload) <= 2:
                await handle(packet, arrival_time_ms)
                return
            seq = packet.payload[0] << 8 | packet.payload[1]
        highest = seen["highest"]
        if highest is None:
            ext = seq
        else:
            delta = (seq - highest) % 65536
            ext = highest + delta if delta < 32768 else highest + delta - 65536
        if packet.ssrc == seen["ssrc"] and (highest is None or ext > highest):
            seen["highest"] = ext
        if packet.payload:
            seen["seqs"].add(ext)
        if not first.done():
            first.set_result(True)
        await handle(packet, arrival_time_ms)

    receiver._handle_rtp_packet = recording
    await asyncio.wait_for(first, 20)
    await asyncio.sleep(args.settle)
    start = seen["highest"]
    await asyncio.sleep(args.seconds)
    end = seen["highest"]
    await asyncio.sleep(1.0)  # repairs of the window's last packets may come
    received = sum(1 for e in seen["seqs"] if start < e <= end)
    say({"received": received, "expected": end - start})
    await wait_stdin()
    async with aiohttp.ClientSession() as http:
        async with http.delete(resource) as r:
            say({"delete_status": r.status})
    await pc.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["publish", "subscribe"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(publish(args) if args.mode == "publish" else subscribe(args))


if __name__ == "__main__":
    main()
