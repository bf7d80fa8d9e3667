"""An aiortc peer of a tunnel (or of one of its lanes): one data channel
named "tunnel", what it receives kept in order."""
import asyncio
import time

from aiortc import RTCPeerConnection

from aiortc_peer import whip_delete, whip_publish


class TunnelPeer:
    def __init__(self, url, token=None):
        self.url = url
        self.token = token
        self.pc = RTCPeerConnection()
        self.channel = self.pc.createDataChannel("tunnel")
        self.received = []
        self.channel.on("message", self.received.append)
        self.opened = asyncio.Event()
        self.channel.on("open", self.opened.set)

    async def connect(self):
        self.resource, _ = await whip_publish(self.pc, self.url, token=self.token)
        await asyncio.wait_for(self.opened.wait(), 15)
        return self

    async def wait_for(self, n, timeout=10):
        deadline = time.monotonic() + timeout
        while len(self.received) < n and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return len(self.received) >= n

    async def close(self):
        await whip_delete(self.resource)
        await self.pc.close()
