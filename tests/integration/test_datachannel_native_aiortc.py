"""aiortc as it is, no SDP rewriting: its pre-RFC 8841 data channel m-line
("DTLS/SCTP 5000" with a=sctpmap) is answered in kind, and its in-band OPEN,
whose stream id follows its ICE role rather than its DTLS role, is accepted
while the id is free."""
import asyncio
import os

from aiortc import RTCPeerConnection

from aiortc_peer import whip_delete, whip_publish


def test_unmodified_aiortc_data_channel_echoes(gateway):
    async def scenario():
        pc = RTCPeerConnection()
        channel = pc.createDataChannel("native")
        received = []
        opened = asyncio.Event()
        done = asyncio.Event()
        channel.on("open", opened.set)

        @channel.on("message")
        def on_message(message):
            received.append(message)
            if len(received) == 60:
                done.set()

        resource, answer = await whip_publish(pc, gateway.base + "/whip/echo")
        await asyncio.wait_for(opened.wait(), 10)
        sent = []
        for i in range(60):
            message = f"text {i}" if i % 2 else os.urandom(i * 500)
            sent.append(message)
            channel.send(message)
        await asyncio.wait_for(done.wait(), 10)
        await whip_delete(resource)
        await pc.close()
        return answer, sent, received

    answer, sent, received = asyncio.run(scenario())
    assert "DTLS/SCTP 5000" in answer and "a=sctpmap:5000 webrtc-datachannel" in answer
    assert received == sent
    assert gateway.metric("moat_datachannel_messages_received_total") == 60
