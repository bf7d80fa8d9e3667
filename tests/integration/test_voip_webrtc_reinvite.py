"""Re-INVITEs in calls with a WebRTC party (hold and resume; a session
timer's refresh is the same exchange): the WebRTC party's session goes on.
Moat gives it the description it already has (same ICE credentials,
fingerprint, DTLS role and SSRC), with each m-line's direction taken from
the other party's SDP and the o= version one higher when that changes it;
a new offer from the WebRTC party that keeps its ICE credentials and
fingerprint keeps its session too. Before, every re-INVITE made a new
session with new ICE credentials, and the call's media stopped (aiortc does
not restart ICE for it). An answer that restarts ICE is refused and the
session keeps running. aiortc on the WebRTC side, a PCMU phone (a UDP
socket) on the other; tones both ways after the resume."""
import asyncio
import re
import threading

from aiortc import RTCSessionDescription

from test_voip_transcode import udp, voip  # noqa: F401 (fixture)
from test_voip_webrtc import phone_answer, run_phone, webrtc_offer
from test_voip_webrtc_callee import client_answer, moat_offer, sdp_port, webrtc_answer

SECONDS = 3


def attribute(sdp, name):
    found = re.search(rf"^a={name}:(.*)$", sdp, re.M)
    return found.group(1).strip() if found else None


def direction(sdp):
    found = re.findall(r"^a=(sendrecv|sendonly|recvonly|inactive)\r?$", sdp, re.M)
    return found[-1] if found else "sendrecv"


def version(sdp):
    return int(re.search(r"^o=\S+ \S+ (\d+) ", sdp, re.M).group(1))


def held(sdp, how="sendonly"):
    return re.sub(r"^a=(sendrecv|sendonly|recvonly|inactive)\r\n", "", sdp,
                  flags=re.M) + f"a={how}\r\n"


def same_session(first, second):
    for name in ("ice-ufrag", "ice-pwd", "fingerprint", "setup"):
        assert attribute(first, name) == attribute(second, name), (name, second)
    assert re.findall(r"^a=ssrc:(\d+) ", first, re.M) == re.findall(r"^a=ssrc:(\d+) ",
                                                                      second, re.M)


async def talk(phone, port):
    received, stop = [], threading.Event()
    thread = threading.Thread(target=run_phone, args=(phone, port, received, stop))
    thread.start()
    try:
        await asyncio.sleep(SECONDS)
    finally:
        stop.set()
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
    return [p for p in received if len(p) > 12 and p[1] & 0x7F == 0]


async def talk_after_resume(phone, port, tracks):
    """Both ways once more: what the phone got, and what the newest of
    aiortc's received tracks (a hold may end one) heard meanwhile."""
    recorder = tracks[-1] if tracks else None
    before = len(recorder.samples) if recorder else 0
    pcmu = await talk(phone, port)
    if tracks and tracks[-1] is not recorder:
        recorder, before = tracks[-1], 0
    if not recorder or len(recorder.samples) <= before:
        return pcmu, 0, 0
    recorder.samples = recorder.samples[before:]
    return pcmu, recorder.dominant_frequency(skip_seconds=0), len(recorder.samples)


def test_phone_holds_and_resumes_a_webrtc_callee(voip):
    gw, client = voip
    phone = udp()

    async def scenario():
        first = moat_offer(client, "ri-1", phone)
        assert first["result"] == "ok", first
        pc, tracks = await webrtc_answer(first["sdp"])
        answer = client_answer(client, "ri-1", pc.localDescription.sdp)
        assert answer["result"] == "ok", answer
        to_moat = sdp_port(answer["sdp"])
        assert len(await talk(phone, to_moat)) > 50
        offers = [first["sdp"]]
        for how in ("sendonly", "sendrecv"):  # hold, then resume
            sdp = held(phone_answer(phone.getsockname()[1]), how)
            offer = client.command("offer", call_id="ri-1", from_tag="phone", sdp=sdp,
                                   ICE="force", DTLS="passive",
                                   transport_protocol="UDP/TLS/RTP/SAVPF",
                                   codec={"transcode": ["opus"]})
            assert offer["result"] == "ok", offer
            same_session(first["sdp"], offer["sdp"])
            assert direction(offer["sdp"]) == how, offer["sdp"]
            assert version(offer["sdp"]) == version(offers[-1]) + 1
            offers.append(offer["sdp"])
            await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            reply = client_answer(client, "ri-1", pc.localDescription.sdp)
            assert reply["result"] == "ok", reply
            assert gw.metric("moat_sessions") == 1
        pcmu, heard, samples = await talk_after_resume(phone, to_moat, tracks)
        # An answer that restarts ICE: refused, the session goes on.
        restarted = pc.localDescription.sdp.replace(attribute(pc.localDescription.sdp,
                                                              "ice-ufrag"), "zzzz")
        refused = client_answer(client, "ri-1", restarted)
        await pc.close()
        return pcmu, heard, samples, refused

    pcmu, heard, samples, refused = asyncio.run(scenario())
    assert len(pcmu) > 50, f"after the resume the phone got {len(pcmu)} PCMU packets"
    assert samples > 0 and abs(heard - 660) < 15, (samples, heard)
    assert refused["result"] == "error" and "restarts ICE" in refused["error-reason"], refused
    assert client.command("delete", call_id="ri-1", delete_delay=0)["result"] == "ok"


def test_webrtc_caller_holds_and_resumes(voip):
    gw, client = voip
    phone = udp()

    async def scenario():
        pc, tracks = await webrtc_offer(True)
        flags = dict(transport_protocol="RTP/AVP", ICE="remove", DTLS="off",
                     codec={"transcode": ["PCMU"]})
        back = dict(ICE="force", DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF")
        offer = client.command("offer", call_id="ri-2", from_tag="webrtc",
                               sdp=pc.localDescription.sdp, **flags)
        assert offer["result"] == "ok", offer
        first = client.command("answer", call_id="ri-2", from_tag="webrtc", to_tag="phone",
                               sdp=phone_answer(phone.getsockname()[1]), **back)
        assert first["result"] == "ok", first
        await pc.setRemoteDescription(RTCSessionDescription(sdp=first["sdp"], type="answer"))
        to_moat = sdp_port(offer["sdp"])
        assert len(await talk(phone, to_moat)) > 50
        answers = [first["sdp"]]
        for how, phone_how in (("sendonly", "recvonly"), ("sendrecv", "sendrecv")):
            pc.getTransceivers()[0].direction = how
            await pc.setLocalDescription(await pc.createOffer())
            offer = client.command("offer", call_id="ri-2", from_tag="webrtc",
                                   sdp=pc.localDescription.sdp, **flags)
            assert offer["result"] == "ok", offer
            assert direction(offer["sdp"]) == how, offer["sdp"]
            reply = client.command("answer", call_id="ri-2", from_tag="webrtc", to_tag="phone",
                                   sdp=held(phone_answer(phone.getsockname()[1]), phone_how),
                                   **back)
            assert reply["result"] == "ok", reply
            same_session(first["sdp"], reply["sdp"])
            assert direction(reply["sdp"]) == phone_how, reply["sdp"]
            assert version(reply["sdp"]) == version(answers[-1]) + 1
            answers.append(reply["sdp"])
            await pc.setRemoteDescription(RTCSessionDescription(sdp=reply["sdp"], type="answer"))
            assert gw.metric("moat_sessions") == 1
        pcmu, heard, samples = await talk_after_resume(phone, to_moat, tracks)
        await pc.close()
        return pcmu, heard, samples

    pcmu, heard, samples = asyncio.run(scenario())
    assert len(pcmu) > 50, f"after the resume the phone got {len(pcmu)} PCMU packets"
    assert samples > 0 and abs(heard - 660) < 15, (samples, heard)
    assert client.command("delete", call_id="ri-2", delete_delay=0)["result"] == "ok"


def test_phone_holds_and_resumes_a_webrtc_caller(voip):
    """The phone, callee of a WebRTC caller, sends the re-INVITEs: the
    caller gets Moat's answer as the offer (its session's ICE credentials,
    fingerprint and DTLS role), with the phone's directions."""
    gw, client = voip
    phone = udp()

    async def scenario():
        pc, tracks = await webrtc_offer(True)
        flags = dict(transport_protocol="RTP/AVP", ICE="remove", DTLS="off",
                     codec={"transcode": ["PCMU"]})
        back = dict(ICE="force", DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF")
        offer = client.command("offer", call_id="ri-3", from_tag="webrtc",
                               sdp=pc.localDescription.sdp, **flags)
        assert offer["result"] == "ok", offer
        first = client.command("answer", call_id="ri-3", from_tag="webrtc", to_tag="phone",
                               sdp=phone_answer(phone.getsockname()[1]), **back)
        assert first["result"] == "ok", first
        await pc.setRemoteDescription(RTCSessionDescription(sdp=first["sdp"], type="answer"))
        to_moat = sdp_port(offer["sdp"])
        assert len(await talk(phone, to_moat)) > 50
        for how, caller_how in (("sendonly", "recvonly"), ("sendrecv", "sendrecv")):
            again = client.command("offer", call_id="ri-3", from_tag="phone", to_tag="webrtc",
                                   sdp=held(phone_answer(phone.getsockname()[1]), how), **back)
            assert again["result"] == "ok", again
            same_session(first["sdp"], again["sdp"])
            assert direction(again["sdp"]) == how, again["sdp"]
            await pc.setRemoteDescription(RTCSessionDescription(sdp=again["sdp"], type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            reply = client.command("answer", call_id="ri-3", from_tag="phone", to_tag="webrtc",
                                   sdp=pc.localDescription.sdp, **flags)
            assert reply["result"] == "ok", reply
            assert direction(reply["sdp"]) == caller_how, reply["sdp"]
            assert gw.metric("moat_sessions") == 1
        pcmu, heard, samples = await talk_after_resume(phone, to_moat, tracks)
        await pc.close()
        return pcmu, heard, samples

    pcmu, heard, samples = asyncio.run(scenario())
    assert len(pcmu) > 50, f"after the resume the phone got {len(pcmu)} PCMU packets"
    assert samples > 0 and abs(heard - 660) < 15, (samples, heard)
    assert client.command("delete", call_id="ri-3", delete_delay=0)["result"] == "ok"
