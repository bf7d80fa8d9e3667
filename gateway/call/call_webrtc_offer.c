/* Owns Moat's own WebRTC offers to a call party and the session built from
 * the party's answer (call_webrtc_offer.h). */
#include "call/call_webrtc_offer.h"

#include "call/call_sdp.h"
#include "call/call_webrtc_offer_sdp.h"
#include "session/whip_session.h"
#include "dtls/certificate.h"
#include "ice/ice_credentials.h"
#include "sdp/sdp.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

struct moat_call_webrtc_offered {
    char *text;
    char ufrag[MOAT_ICE_UFRAG_LENGTH + 1], pwd[MOAT_ICE_PWD_LENGTH + 1];
    uint32_t ssrcs[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_ssrcs;
};

moat_call_webrtc_offered *moat_call_webrtc_offer_new(const moat_call_webrtc_env *env,
                                                     moat_call_worker *context,
                                                     const moat_ng_request *request, char *error,
                                                     size_t error_size)
{
    if (!env->gateway || !env->calls) {
        snprintf(error, error_size, "WebRTC legs need the gateway's sessions");
        return NULL;
    }
    moat_gateway *gateway = env->gateway;
    const char *fingerprint = moat_certificate_fingerprint(gateway->certificate);
    char *text = moat_call_webrtc_self_offer(
        request->sdp, request->sdp_length, request->codec_transcode.names,
        request->codec_transcode.count, fingerprint, error, error_size);
    if (!text)
        return NULL;
    moat_sdp *offer = moat_sdp_parse(text, strlen(text), error, error_size);
    g_free(text);
    if (!offer)
        return NULL;
    moat_call_webrtc_offered *offered = g_new0(moat_call_webrtc_offered, 1);
    moat_ice_credentials_generate(offered->ufrag, offered->pwd);
    moat_sdp_candidate candidates[MOAT_MAX_CANDIDATE_ADDRESSES];
    size_t n_candidates = moat_gateway_candidates(gateway, moat_call_worker_worker(context),
                                                  candidates, MOAT_MAX_CANDIDATE_ADDRESSES);
    moat_sdp_answer_params params = {
        .ice_ufrag = offered->ufrag,
        .ice_pwd = offered->pwd,
        .fingerprint_sha256 = fingerprint,
        .setup = MOAT_SDP_SETUP_PASSIVE, /* the leg's session is the DTLS server */
        .candidates = candidates,
        .n_candidates = n_candidates,
        .session_id = g_get_real_time(),
        .cname = "moat",
    };
    moat_sdp_negotiation *negotiation = g_new0(moat_sdp_negotiation, 1);
    int status =
        moat_sdp_answer_create(offer, &params, negotiation, &offered->text, error, error_size);
    moat_sdp_free(offer);
    for (size_t i = 0; status == 0 && i < negotiation->n_media && i < MOAT_CALL_SDP_MAX_MEDIA; i++)
        offered->ssrcs[offered->n_ssrcs++] = negotiation->media[i].local_ssrc;
    g_free(negotiation);
    if (status != 0 || !offered->text) {
        moat_call_webrtc_offer_free(offered);
        return NULL;
    }
    return offered;
}

const char *moat_call_webrtc_offer_text(const moat_call_webrtc_offered *offered)
{
    return offered->text;
}

/* The party answered Moat's a=setup:passive: it must be the DTLS client,
 * and its answer carries its ICE credentials and fingerprint (checked by
 * the parser). */
static bool answer_fits(const char *answer, size_t length, char *error, size_t error_size)
{
    moat_sdp *sdp = moat_sdp_parse(answer, length, error, error_size);
    if (!sdp)
        return false;
    bool ok = true;
    for (size_t i = 0; i < sdp->n_media && ok; i++) {
        if (sdp->media[i].setup != MOAT_SDP_SETUP_ACTIVE) {
            snprintf(error, error_size, "m-line %zu: the answer must say a=setup:active", i);
            ok = false;
        }
    }
    moat_sdp_free(sdp);
    return ok;
}

moat_call_webrtc *moat_call_webrtc_answered(const moat_call_webrtc_env *env,
                                            moat_call_worker *context,
                                            const moat_call_webrtc_offered *offered,
                                            const char *answer, size_t length,
                                            moat_call_stream *const *streams, size_t n_streams,
                                            int side, char *error, size_t error_size)
{
    if (!answer_fits(answer, length, error, error_size))
        return NULL;
    moat_whip_local local = {
        .ufrag = offered->ufrag,
        .pwd = offered->pwd,
        .ssrcs = offered->ssrcs,
        .n_ssrcs = offered->n_ssrcs,
    };
    moat_call_webrtc *leg = moat_call_webrtc_new_local(env, context, answer, length, &local,
                                                       streams, n_streams, side, error, error_size);
    if (leg)
        moat_call_webrtc_set_described(leg, offered->text); /* what the party has of Moat */
    return leg;
}

void moat_call_webrtc_offer_free(moat_call_webrtc_offered *offered)
{
    if (!offered)
        return;
    g_free(offered->text);
    explicit_bzero(offered->pwd, sizeof offered->pwd);
    g_free(offered);
}
