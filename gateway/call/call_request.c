/* Checks of an ng offer or answer before a call changes: the ids it must
 * carry, its SDP, the transports Moat bridges and the media destinations
 * it may send to; each failure writes the reply's rtpengine-style error.
 * Control thread (the ng socket's). */
#include "call/call_request.h"

#include "call/call_transcode_plan.h"
#include "ng/ng_server.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

bool moat_call_request_fail(moat_call_reply *reply, const char *format, const char *detail)
{
    snprintf(reply->error, sizeof reply->error, format, detail ? detail : "");
    return false;
}

bool moat_call_request_transcode_offer(const moat_ng_request *request, moat_call_reply *reply)
{
    char error[160];
    if (moat_call_transcode_offer(request, &reply->sdp, error, sizeof error))
        return true;
    return moat_call_request_fail(reply, "Failed to add codecs: %s", error);
}

/* An ok reply beside its SDP: the cookie and a space, then "d6:result2:ok",
 * "7:warning<length>:<warning>", "3:sdp<length>:" and "e" (under 64 bytes
 * without the warning's text). An SDP within MOAT_NG_MAX_REPLY_SDP is then
 * a reply within one datagram. */
#define MOAT_CALL_REPLY_BESIDE_SDP                                                                 \
    (MOAT_NG_MAX_COOKIE + 1 + 64 + sizeof(((moat_call_reply *)NULL)->warning))
G_STATIC_ASSERT(MOAT_NG_MAX_REPLY_SDP + MOAT_CALL_REPLY_BESIDE_SDP <= MOAT_NG_MAX_REPLY);

bool moat_call_request_check_reply_size(moat_call_reply *reply, size_t growth)
{
    size_t length = reply->sdp ? strlen(reply->sdp) : 0;
    if (length + growth <= MOAT_NG_MAX_REPLY_SDP)
        return true;
    moat_call_reply_clear(reply);
    if (growth)
        snprintf(reply->error, sizeof reply->error,
                 "SDP too large for an ng reply (%zu bytes rewritten and up to %zu of "
                 "transcoding's codec lines, at most %d)",
                 length, growth, MOAT_NG_MAX_REPLY_SDP);
    else
        snprintf(reply->error, sizeof reply->error,
                 "SDP too large for an ng reply (%zu bytes rewritten, at most %d)", length,
                 MOAT_NG_MAX_REPLY_SDP);
    return false;
}

bool moat_call_request_check_ids(const moat_ng_request *request, bool need_to_tag,
                                 moat_call_reply *reply)
{
    if (!request->call_id || !*request->call_id)
        return moat_call_request_fail(reply, "No call-id in message%s", NULL);
    if (!request->from_tag || !*request->from_tag)
        return moat_call_request_fail(reply, "No from-tag in message%s", NULL);
    if (need_to_tag && (!request->to_tag || !*request->to_tag))
        return moat_call_request_fail(reply, "No to-tag in message%s", NULL);
    if (!request->sdp || request->sdp_length == 0)
        return moat_call_request_fail(reply, "No SDP body in message%s", NULL);
    return true;
}

/* Every address a party's SDP would have its leg send to (c= with each
 * m= port, and RTCP: a=rtcp or port + 1) must be an allowed destination
 * (call_address.h); WebRTC parties are reached through their session.
 * RTCP is checked even where the SDP offers a=rtcp-mux: whether the leg
 * muxes is only settled by the answer (and rtcp-mux-demux). */
bool moat_call_request_check_destinations(const moat_call_destination_policy *destinations,
                                          const moat_call_sdp *sdp, moat_call_reply *reply)
{
    char reason[160];
    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_call_sdp_media *media = &sdp->media[i];
        if (media->port == 0 || media->rtp.sin6_family != AF_INET6)
            continue; /* disabled, or held (0.0.0.0, ::): Moat sends nothing */
        struct sockaddr_in6 to = media->rtp;
        if (moat_call_destination_check(destinations, &to, reason, sizeof reason) != 0)
            return moat_call_request_fail(reply, "Refused media destination: %s", reason);
        if (moat_call_rtcp_destination(media, &to) &&
            moat_call_destination_check(destinations, &to, reason, sizeof reason) != 0)
            return moat_call_request_fail(reply, "Refused media destination: %s", reason);
    }
    return true;
}

bool moat_call_request_parse_sdp(const moat_ng_request *request, moat_call_sdp *sdp,
                                 moat_call_reply *reply)
{
    char error[160];
    if (moat_call_sdp_parse(request->sdp, request->sdp_length, sdp, error, sizeof error) != 0)
        return moat_call_request_fail(reply, "Failed to parse SDP: %s", error);
    return true;
}

/* ICE=force or a DTLS transport: the SDP is for a WebRTC party. */
bool moat_call_request_wants_webrtc(const moat_ng_request *request)
{
    const char *wanted = request->transport_protocol;
    return request->ice == MOAT_NG_ICE_FORCE || (wanted && strstr(wanted, "TLS"));
}

/* Which WebRTC legs Moat runs: a WebRTC offerer (its session answers it)
 * or a WebRTC answerer (Moat offers it a session: `offering`), facing a
 * plain or SDES phone or another WebRTC party (each has its own session;
 * Moat relays between them), so ICE=force or a DTLS transport are
 * accepted for an offer and for the answer back to a WebRTC offerer
 * (`to_webrtc`). SDES-SRTP is terminated (call_sdes.h) or, without a
 * transport change, relayed end to end as is. */
bool moat_call_request_check_transport(const moat_ng_request *request, const moat_call_sdp *sdp,
                                       bool to_webrtc, bool offering, moat_call_reply *reply)
{
    bool wants = moat_call_request_wants_webrtc(request);
    char error[160];
    if (moat_call_sdp_is_webrtc(sdp)) {
        if (moat_call_sdp_check_webrtc(sdp, error, sizeof error) != 0)
            return moat_call_request_fail(reply, "Failed to parse SDP: %s", error);
        return true;
    }
    if (wants && !to_webrtc && !offering)
        return moat_call_request_fail(
            reply, "A plain answer cannot get a WebRTC leg (ICE, DTLS-SRTP)%s", NULL);
    return true;
}
